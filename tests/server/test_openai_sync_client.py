"""`POST /v1/chat/completions` through the official sync `openai` client (server on a thread),
and a property: any OpenAI-format history reaches the agent as the equivalent messages.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from openai import OpenAI

from rxagent import ReActAgent, current_run, tool
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.server import create_app
from rxagent.testing import FunctionModel, ScriptedModel, tool_call

KEY = "sk-sync"


class ThreadedServer:
    """Serve an aiohttp app on 127.0.0.1 (a free port) from a thread with its own loop."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ThreadedServer:
        started = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = self._loop = asyncio.new_event_loop()
            runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                loop.run_until_complete(runner.setup())
                sock.bind(("127.0.0.1", 0))
                loop.run_until_complete(web.SockSite(runner, sock).start())
            except BaseException as exc:  # reported to the starting thread
                failure.append(exc)
                sock.close()
                started.set()
                loop.close()
                return
            self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
            started.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=serve, name="openai-test-server", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            raise failure[0]
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None
        assert self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def client(self, **kw: Any) -> OpenAI:
        return OpenAI(
            base_url=f"{self.url}/v1",
            api_key=KEY,
            max_retries=0,
            _strict_response_validation=True,
            **kw,
        )


@tool
async def lookup(city: str) -> str:
    """Look up the weather.

    Args:
        city: The city.
    """
    current_run().progress({"looking": city})
    return f"sunny in {city}"


def weather_agent() -> ReActAgent:
    model = ScriptedModel([tool_call("lookup", city="Oslo"), "It is sunny in Oslo."] * 2)
    return ReActAgent("weather", "", model, tools=[lookup])


@pytest.fixture(scope="module")
def echo() -> Iterator[tuple[OpenAI, FunctionModel]]:
    model = FunctionModel(lambda messages, tools, options: "ok")
    with ThreadedServer(create_app(ReActAgent("echo", "", model), auth=[KEY])) as server:
        with server.client() as client:
            yield client, model


def test_sync_client_whole_and_streamed_with_tool_progress():
    with (
        ThreadedServer(create_app(weather_agent(), auth=[KEY])) as server,
        server.client() as client,
    ):
        messages: Any = [{"role": "user", "content": "Weather in Oslo?"}]
        completion = client.chat.completions.create(model="weather", messages=messages)
        assert completion.choices[0].message.content == "It is sunny in Oslo."
        assert completion.choices[0].message.tool_calls is None
        events = (completion.model_extra or {})["rxagent"]["events"]
        assert [e["type"] for e in events] == ["pre_acting", "acting_chunk", "post_acting"]

        with client.chat.completions.create(
            model="weather", messages=messages, stream=True
        ) as stream:
            chunks = list(stream)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "It is sunny in Oslo."
        progress = [
            (c.model_extra or {})["rxagent"]["event"]
            for c in chunks
            if "event" in (c.model_extra or {}).get("rxagent", {})
        ]
        assert [e["chunk"] for e in progress if e["type"] == "acting_chunk"] == [
            {"looking": "Oslo"}
        ]
        assert progress[-1]["result"]["output"] == "sunny in Oslo"
        assert chunks[-1].choices[0].finish_reason == "stop"


def test_sync_client_errors():
    with (
        ThreadedServer(create_app(weather_agent(), auth=[KEY])) as server,
        server.client() as client,
    ):
        with pytest.raises(openai.NotFoundError) as info:
            client.chat.completions.create(
                model="nope", messages=[{"role": "user", "content": "?"}]
            )
        assert info.value.code == "model_not_found"
        with pytest.raises(openai.UnprocessableEntityError) as bad:
            client.chat.completions.create(
                model="weather", messages=[{"role": "tool", "tool_call_id": "x", "content": "?"}]
            )
        assert bad.value.param == "messages[0].tool_call_id"


# -- the property ----------------------------------------------------------------------------------

WORDS = st.text(alphabet=st.sampled_from("abc xyz.!é"), max_size=12)
NAMES = st.none() | st.sampled_from(["ann", "bob"])


TEXT_PARTS = WORDS | st.lists(
    WORDS.map(lambda t: {"type": "text", "text": t}), min_size=1, max_size=3
)


def joined(content: Any, sep: str = "") -> str:
    if isinstance(content, str):
        return content
    return sep.join(p.get("text") or p.get("refusal") or "" for p in content)


@st.composite
def user_message(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    name = draw(NAMES)
    parts = draw(
        st.lists(
            st.one_of(
                WORDS.map(lambda t: ("text", t)),
                st.sampled_from(["https://img.example/a.png", "data:image/png;base64,AAAA"]).map(
                    lambda u: ("image", u)
                ),
            ),
            max_size=3,
        )
        | WORDS
    )
    wire: dict[str, Any] = {"role": "user"}
    if name:
        wire["name"] = name
    if isinstance(parts, str):
        wire["content"] = parts
        return wire, ("user", name, parts)
    wire["content"] = [
        {"type": "text", "text": v}
        if k == "text"
        else {"type": "image_url", "image_url": {"url": v}}
        for k, v in parts
    ]
    blocks: list[Block] = []
    for kind, value in parts:
        if kind == "text":
            blocks.append(TextBlock(text=value))
        elif value.startswith("data:"):
            blocks.append(ImageBlock(data="AAAA", media_type="image/png"))
        else:
            blocks.append(ImageBlock(url=value))
    return wire, ("user", name, tuple(blocks))


@st.composite
def assistant_turn(draw: st.DrawFn, turn: int) -> list[tuple[dict[str, Any], Any]]:
    """An assistant message, and the tool messages answering its calls (in some order)."""
    name = draw(NAMES)
    content = draw(st.none() | TEXT_PARTS | st.just([{"type": "refusal", "refusal": "no"}]))
    reasoning = draw(st.none() | WORDS)
    calls = [
        (
            f"call_{turn}_{i}",
            draw(st.sampled_from(["add", "find"])),
            draw(st.dictionaries(st.sampled_from("abc"), st.integers(-5, 5) | WORDS, max_size=2)),
        )
        for i in range(draw(st.integers(0, 3)))
    ]
    wire: dict[str, Any] = {"role": "assistant", "content": content}
    if name:
        wire["name"] = name
    if reasoning is not None:
        wire["reasoning_content"] = reasoning
    if calls:
        wire["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in calls
        ]
    text = joined(content or "")
    blocks: list[Block] = []
    if reasoning:
        blocks.append(ThinkingBlock(thinking=reasoning))
    if blocks or calls:
        if text:
            blocks.append(TextBlock(text=text))
        blocks.extend(ToolUseBlock(id=i, name=n, input=a) for i, n, a in calls)
        expected: Any = ("assistant", name, tuple(blocks))
    else:
        expected = ("assistant", name, text)
    out = [(wire, expected)]
    for i, n, _ in draw(st.permutations(calls)):
        output = draw(TEXT_PARTS)
        error = draw(st.booleans())
        if error:
            output = "Error: " + joined(output, "\n")
        tool_wire = {"role": "tool", "tool_call_id": i, "content": output}
        result_text = joined(output, "\n")
        result = ToolResultBlock(
            id=i, name=n, output=result_text.removeprefix("Error: "), is_error=error
        )
        out.append((tool_wire, ("tool", None, (result,))))
    return out


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[Any]]:
    items: list[tuple[dict[str, Any], Any]] = []
    for _ in range(draw(st.integers(0, 2))):
        role = draw(st.sampled_from(["system", "developer"]))
        content = draw(TEXT_PARTS)
        items.append(({"role": role, "content": content}, ("system", None, joined(content))))
    for turn in range(draw(st.integers(0, 3))):
        items.append(draw(user_message()))
        items.extend(draw(assistant_turn(turn)))
    items.append(draw(user_message()))
    return [w for w, _ in items], [e for _, e in items]


@given(histories())
def test_any_history_reaches_the_agent_as_the_equivalent_messages(
    echo: tuple[OpenAI, FunctionModel], history: tuple[list[dict[str, Any]], list[Any]]
):
    client, model = echo
    wire, expected = history
    completion = client.chat.completions.create(model="echo", messages=wire)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "ok"
    received: list[Msg] = model.requests[-1].messages  # type: ignore[assignment]
    assert [(m.role, m.name, m.content) for m in received] == expected
