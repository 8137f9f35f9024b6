"""`POST /v1/chat/completions` through the official async `openai` client, strictly validated."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import openai
import pytest
from aiohttp.test_utils import TestServer
from openai import AsyncOpenAI

from rxagent import ReActAgent, current_run, tool
from rxagent.server import ServerConfig, create_app
from rxagent.testing import FunctionModel, ScriptedModel, thinking, tool_call

KEY = "sk-test-1"
HOLD: dict[str, asyncio.Event] = {}


@asynccontextmanager
async def openai_client(
    *agents: ReActAgent, config: ServerConfig | None = None
) -> AsyncIterator[tuple[AsyncOpenAI, TestServer]]:
    """An AsyncOpenAI client (strict validation, no retries) of a test server on this loop."""
    app = create_app(list(agents), auth=[KEY], config=config)
    server = TestServer(app, host="127.0.0.1")
    async with server:
        client = AsyncOpenAI(
            base_url=str(server.make_url("/v1")),
            api_key=KEY,
            max_retries=0,
            _strict_response_validation=True,
        )
        async with client:
            yield client, server


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers, reporting progress.

    Args:
        a: The first number.
        b: The second number.
    """
    current_run().progress({"adding": [a, b]})
    await asyncio.sleep(0)
    return a + b


def calc_agent(**kw: Any) -> ReActAgent:
    model = ScriptedModel([["Adding.", tool_call("add", a=2, b=3)], "2 + 3 = 5"], chunk_size=4)
    return ReActAgent("calc", "You add.", model, tools=[add], **kw)


class Gate:
    """A tool that holds a run open until released."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    def agent(self, name: str = "slow", *, runs: int = 1) -> ReActAgent:
        gate = self

        @tool
        async def wait_here() -> str:
            """Wait for the test."""
            gate.started.set()
            try:
                await gate.release.wait()
            except asyncio.CancelledError:
                gate.cancelled.set()
                raise
            return "released"

        turns: list[Any] = []
        for _ in range(runs):
            turns += [tool_call("wait_here"), "done"]
        return ReActAgent(name, "", ScriptedModel(turns), tools=[wait_here])


# -- answers ---------------------------------------------------------------------------------------


async def test_a_completion_with_a_server_side_tool():
    async with openai_client(calc_agent()) as (client, _):
        completion = await client.chat.completions.create(
            model="calc", messages=[{"role": "user", "content": "2 + 3?"}]
        )
    assert completion.id.startswith("chatcmpl-")
    assert completion.model == "calc"
    choice = completion.choices[0]
    assert choice.message.content == "2 + 3 = 5"
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    extension = (completion.model_extra or {})["rxagent"]
    assert extension["tools_used"] == ["add"]
    assert extension["session_id"] is None
    kinds = [e["type"] for e in extension["events"]]
    assert kinds == ["pre_acting", "acting_chunk", "post_acting"]
    assert extension["events"][1]["chunk"] == {"adding": [2, 3]}
    assert extension["events"][2]["result"]["output"] == "5"


async def test_a_stream_with_a_server_side_tool():
    async with openai_client(calc_agent()) as (client, _):
        stream = await client.chat.completions.create(
            model="calc",
            messages=[{"role": "user", "content": "2 + 3?"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert len({c.id for c in chunks}) == 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Adding.\n\n2 + 3 = 5"
    assert all(c.choices[0].delta.tool_calls is None for c in chunks if c.choices)
    progress = [
        (c.model_extra or {})["rxagent"]["event"]
        for c in chunks
        if "event" in (c.model_extra or {}).get("rxagent", {})
    ]
    assert [e["type"] for e in progress] == ["pre_acting", "acting_chunk", "post_acting"]
    assert progress[0]["tool_call"]["name"] == "add"
    assert progress[0]["tool_call"]["input"] == {"a": 2, "b": 3}
    assert progress[2]["result"]["output"] == "5"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop"
    assert set(finishes[:-1]) == {None}
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens > 0


async def test_plain_stream_without_usage_has_one_choice_per_chunk():
    agent = ReActAgent("bot", "", ScriptedModel(["Hello there!"], chunk_size=3))
    async with openai_client(agent) as (client, _):
        stream = await client.chat.completions.create(
            model="bot", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        chunks = [chunk async for chunk in stream]
    assert all(len(c.choices) == 1 for c in chunks)
    assert all(c.usage is None for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Hello there!"


async def test_thinking_is_reasoning_content():
    def turns() -> ScriptedModel:
        return ScriptedModel([[thinking("Hmm."), "Yes."]], chunk_size=2)

    async with openai_client(ReActAgent("bot", "", turns())) as (client, _):
        completion = await client.chat.completions.create(
            model="bot", messages=[{"role": "user", "content": "?"}]
        )
    message = completion.choices[0].message
    assert (message.content, (message.model_extra or {})["reasoning_content"]) == ("Yes.", "Hmm.")
    async with openai_client(ReActAgent("bot", "", turns())) as (client, _):
        stream = await client.chat.completions.create(
            model="bot", messages=[{"role": "user", "content": "?"}], stream=True
        )
        deltas = [c.choices[0].delta async for c in stream]
    reasoning = "".join((d.model_extra or {}).get("reasoning_content", "") for d in deltas)
    assert reasoning == "Hmm."
    assert "".join(d.content or "" for d in deltas) == "Yes."


async def test_sampling_options_reach_the_model_and_system_messages_follow_the_agents():
    model = ScriptedModel(["ok"])
    agent = ReActAgent("bot", "Agent rules.", model)
    async with openai_client(agent) as (client, _):
        await client.chat.completions.create(
            model="bot",
            messages=[
                {"role": "system", "content": "Client rules."},
                {"role": "user", "content": "hi"},
            ],
            temperature=0.3,
            max_tokens=50,
            stop=["END"],
            seed=11,
            top_p=0.5,
            response_format={"type": "json_object"},
        )
    request = model.requests[0]
    assert [(m.role, m.text) for m in request.messages] == [
        ("system", "Agent rules."),
        ("system", "Client rules."),
        ("user", "hi"),
    ]
    options = request.options
    assert (options.temperature, options.max_output_tokens) == (0.3, 50)
    assert (options.stop, options.seed) == (("END",), 11)
    assert options.response_format == {"type": "json_object"}
    assert "top_p" not in options.extra


async def test_models_lists_the_agents():
    agents = (calc_agent(), ReActAgent("bot", "", ScriptedModel([])))
    async with openai_client(*agents) as (client, _):
        page = await client.models.list()
        assert sorted(m.id for m in page.data) == ["bot", "calc"]
        assert (await client.models.retrieve("calc")).owned_by == "rxagent"
        with pytest.raises(openai.NotFoundError) as info:
            await client.models.retrieve("nope")
    assert info.value.code == "model_not_found"


# -- statelessness and sessions --------------------------------------------------------------------


async def test_without_a_session_each_call_is_stateless():
    model = ScriptedModel(["one", "two"])
    agent = ReActAgent("bot", "S", model)
    async with openai_client(agent) as (client, _):
        first = [{"role": "user", "content": "a"}]
        await client.chat.completions.create(model="bot", messages=first)  # type: ignore[arg-type]
        second = [
            {"role": "user", "content": "b"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": "c"},
        ]
        await client.chat.completions.create(model="bot", messages=second)  # type: ignore[arg-type]
    assert [m.text for m in model.requests[1].messages] == ["S", "b", "x", "c"]
    assert await agent.store.list_sessions("bot") == []


async def test_a_session_keeps_the_history_across_calls():
    model = ScriptedModel(["Hello!", "Fine."])
    agent = ReActAgent("bot", "S", model)
    headers = {"X-Session-Id": "chat-1"}
    async with openai_client(agent) as (client, _):
        history: list[Any] = [
            {"role": "system", "content": "Client rules."},
            {"role": "user", "content": "hi"},
        ]
        raw = await client.chat.completions.with_raw_response.create(
            model="bot", messages=history, extra_headers=headers
        )
        assert raw.headers["X-Session-Id"] == "chat-1"
        first = raw.parse()
        assert (first.model_extra or {})["rxagent"]["session_id"] == "chat-1"
        history += [
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": "how are you?"},
        ]
        stream = await client.chat.completions.create(
            model="bot", messages=history, extra_headers=headers, stream=True
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        assert text == "Fine."
        # only the new message, without the history, continues the session as well
        with pytest.raises(openai.InternalServerError):  # the script is over: the run fails
            await client.chat.completions.create(
                model="bot", messages=[{"role": "user", "content": "bye"}], extra_headers=headers
            )
    assert [(m.role, m.text) for m in model.requests[1].messages] == [
        ("system", "S"),
        ("system", "Client rules."),
        ("user", "hi"),
        ("assistant", "Hello!"),
        ("user", "how are you?"),
    ]
    assert [m.text for m in model.requests[2].messages][-2:] == ["Fine.", "bye"]
    assert await agent.store.list_sessions("bot") == ["chat-1"]


async def test_a_new_session_takes_the_whole_history():
    model = ScriptedModel(["ok"])
    async with openai_client(ReActAgent("bot", "", model)) as (client, _):
        await client.chat.completions.create(
            model="bot",
            messages=[
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b"},
                {"role": "user", "content": "c"},
            ],
            extra_headers={"X-Session-Id": "imported"},
        )
    assert [m.text for m in model.requests[0].messages] == ["a", "b", "c"]


# -- errors ----------------------------------------------------------------------------------------


async def test_a_wrong_key_is_401():
    async with openai_client(calc_agent()) as (client, _):
        with pytest.raises(openai.AuthenticationError) as info:
            await client.with_options(api_key="sk-wrong").chat.completions.create(
                model="calc", messages=[{"role": "user", "content": "hi"}]
            )
    assert info.value.status_code == 401
    assert info.value.code == "invalid_api_key"
    assert "bearer token is not valid" in info.value.message


async def test_an_unknown_model_is_404():
    async with openai_client(calc_agent()) as (client, _):
        with pytest.raises(openai.NotFoundError) as info:
            await client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
            )
    error = info.value
    assert (error.code, error.param, error.type) == (
        "model_not_found",
        "model",
        "invalid_request_error",
    )
    assert "'gpt-4o' does not exist" in error.message
    assert "calc" in error.message


async def test_a_bad_parameter_is_422_naming_it():
    async with openai_client(calc_agent()) as (client, _):
        with pytest.raises(openai.UnprocessableEntityError) as info:
            await client.chat.completions.create(
                model="calc", messages=[{"role": "user", "content": "hi"}], temperature=9
            )
    assert (info.value.param, info.value.code) == ("temperature", "invalid_value")
    assert "out of range" in info.value.message


async def test_client_tools_are_400():
    async with openai_client(calc_agent()) as (client, _):
        with pytest.raises(openai.BadRequestError) as info:
            await client.chat.completions.create(
                model="calc",
                messages=[{"role": "user", "content": "hi"}],
                tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
            )
    assert (info.value.param, info.value.code) == ("tools", "unsupported_parameter")
    assert "runs its own tools on the server" in info.value.message


async def test_a_body_over_the_limit_is_413():
    config = ServerConfig(max_body_bytes=2_000)
    async with openai_client(calc_agent(), config=config) as (client, _):
        with pytest.raises(openai.APIStatusError) as info:
            await client.chat.completions.create(
                model="calc", messages=[{"role": "user", "content": "x" * 5_000}]
            )
    assert info.value.status_code == 413
    assert "larger than the limit" in info.value.message


async def test_a_bad_session_header_is_422():
    async with openai_client(calc_agent()) as (client, _):
        with pytest.raises(openai.UnprocessableEntityError) as info:
            await client.chat.completions.create(
                model="calc",
                messages=[{"role": "user", "content": "hi"}],
                extra_headers={"X-Session-Id": "-bad id"},
            )
    assert info.value.param == "X-Session-Id"


async def read_until_progress(stream: Any) -> None:
    async for chunk in stream:
        if "event" in (chunk.model_extra or {}).get("rxagent", {}):
            return


async def test_a_busy_session_is_409_and_too_many_runs_429():
    gate = Gate()
    config = ServerConfig(max_runs_per_key=1)
    async with openai_client(gate.agent(runs=2), config=config) as (client, _):
        headers = {"X-Session-Id": "s1"}
        messages: Any = [{"role": "user", "content": "hi"}]
        stream = await client.chat.completions.create(
            model="slow", messages=messages, stream=True, extra_headers=headers
        )
        await read_until_progress(stream)
        with pytest.raises(openai.RateLimitError) as limited:
            await client.chat.completions.create(model="slow", messages=messages)
        assert "runs in progress" in limited.value.message
        gate.release.set()
        rest = [c async for c in stream]
        assert rest[-1].choices[0].finish_reason == "stop"
    async with openai_client(gate.agent(runs=2)) as (client, _):
        gate.release.clear()
        stream = await client.chat.completions.create(
            model="slow", messages=messages, stream=True, extra_headers=headers
        )
        await read_until_progress(stream)
        with pytest.raises(openai.ConflictError) as busy:
            await client.chat.completions.create(
                model="slow", messages=messages, extra_headers=headers
            )
        assert "already has a run in progress" in busy.value.message
        gate.release.set()
        await stream.close()


async def test_a_failed_run_is_an_error_whole_or_streamed():
    def broken(messages: Any, tools: Any, options: Any) -> Any:
        raise RuntimeError("model exploded")

    agent = ReActAgent("bot", "", FunctionModel(broken))
    async with openai_client(agent) as (client, _):
        with pytest.raises(openai.InternalServerError) as whole:
            await client.chat.completions.create(
                model="bot", messages=[{"role": "user", "content": "hi"}]
            )
        assert "The agent 'bot' failed" in whole.value.message
        stream = await client.chat.completions.create(
            model="bot", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        with pytest.raises(openai.APIError) as streamed:
            _ = [c async for c in stream]
        assert "The agent 'bot' failed" in streamed.value.message


# -- the wire, without the client ------------------------------------------------------------------


async def test_error_bodies_are_openai_shaped():
    async with openai_client(calc_agent()) as (_, server):
        async with aiohttp.ClientSession() as http:
            url = server.make_url("/v1/chat/completions")
            auth = {"Authorization": f"Bearer {KEY}"}
            async with http.post(url, data=b"{not json", headers=auth) as bad:
                assert bad.status == 422
                body = await bad.json()
            async with http.post(url, json={"model": "calc"}) as anonymous:
                assert anonymous.status == 401
                assert anonymous.headers["WWW-Authenticate"] == "Bearer"
                denied = await anonymous.json()
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["code"] == "invalid_json"
    assert denied["error"]["code"] == "invalid_api_key"


async def test_keepalives_flow_and_a_client_that_leaves_cancels_the_run():
    gate = Gate()
    config = ServerConfig(keepalive_s=0.01)
    async with openai_client(gate.agent(), config=config) as (_, server):
        async with aiohttp.ClientSession() as http:
            response = await http.post(
                server.make_url("/v1/chat/completions"),
                json={
                    "model": "slow",
                    "messages": [{"role": "user", "content": "hi"}],
                    "stream": True,
                },
                headers={"Authorization": f"Bearer {KEY}"},
            )
            assert response.headers["Content-Type"].startswith("text/event-stream")
            seen = b""
            while b": keep-alive" not in seen:
                seen += await response.content.readuntil(b"\n\n")
            frames = [
                json.loads(line[6:]) for line in seen.split(b"\n") if line.startswith(b"data: ")
            ]
            assert frames[0]["choices"][0]["delta"]["role"] == "assistant"
            response.close()
            await asyncio.wait_for(gate.cancelled.wait(), 10)


async def test_an_interrupted_session_run_ends_its_stream_with_the_interrupt_message():
    gate = Gate()
    async with openai_client(gate.agent()) as (client, server):
        stream = await client.chat.completions.create(
            model="slow",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            extra_headers={"X-Session-Id": "s2"},
        )
        await read_until_progress(stream)
        async with aiohttp.ClientSession() as http:
            async with http.post(
                server.make_url("/v1/sessions/s2/interrupt"),
                json={"reason": "Stopped by the user."},
                headers={"Authorization": f"Bearer {KEY}"},
            ) as response:
                assert response.status == 202
        rest = [c async for c in stream]
    text = "".join(c.choices[0].delta.content or "" for c in rest if c.choices)
    assert text == "Stopped by the user."
    assert rest[-1].choices[0].finish_reason == "stop"
    assert (rest[-1].model_extra or {})["rxagent"]["stop_reason"] == "interrupted"
    assert gate.cancelled.is_set()


async def test_model_names_are_the_apps_route_names():
    model = ScriptedModel(["one", "two"])
    app = create_app({"assistant": ReActAgent("bot", "", model)}, auth=[KEY])
    server = TestServer(app, host="127.0.0.1")
    async with (
        server,
        AsyncOpenAI(
            base_url=str(server.make_url("/v1")), api_key=KEY, _strict_response_validation=True
        ) as client,
    ):
        assert [m.id for m in (await client.models.list()).data] == ["assistant"]
        assert (await client.models.retrieve("assistant")).id == "assistant"
        headers = {"X-Session-Id": "r1"}
        history: Any = [{"role": "user", "content": "a"}]
        first = await client.chat.completions.create(
            model="assistant", messages=history, extra_headers=headers
        )
        assert first.model == "assistant"
        history += [{"role": "assistant", "content": "one"}, {"role": "user", "content": "b"}]
        await client.chat.completions.create(
            model="assistant", messages=history, extra_headers=headers
        )
    assert [m.text for m in model.requests[1].messages] == ["a", "one", "b"]
