"""The run routes: JSON results, SSE event streams, sessions and their owners."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from aiohttp import web
from server_helpers import Gate, bearer, gated_agent, parse_sse, read_frames_until, serving  # type: ignore[import-not-found]

from rxagent import EVENT_ADAPTER, AgentResult, InMemoryStore, Msg, ReActAgent, tool
from rxagent.events import CustomEvent
from rxagent.server import OWNER_KEY, SERVER_KEY, ServerConfig, create_app, key_id_of, sse_frame
from rxagent.testing import EventRecorder, ScriptedModel, tool_call

HEX_ID = re.compile(r"^[0-9a-f]{32}$")


async def test_a_json_run_answers_its_result_with_a_fresh_session_id():
    agent = ReActAgent("bot", "", ScriptedModel(["Hello!"]))
    async with serving(create_app(agent)) as client:
        response = await client.post("/v1/agents/bot/runs", json={"input": "hi"})
        assert response.status == 200
        result = AgentResult[Any].model_validate(await response.json())
    assert result.ok
    assert result.text == "Hello!"
    assert HEX_ID.match(result.session_id)
    assert response.headers["X-Session-Id"] == result.session_id
    stored = await agent.store.load("bot", result.session_id)
    assert stored is not None
    assert stored.state.extra[OWNER_KEY] == "anonymous"
    assert [m.text for m in stored.state.memory] == ["hi", "Hello!"]


async def test_a_second_run_continues_the_session():
    agent = ReActAgent("bot", "", ScriptedModel(["one", "two"]))
    async with serving(create_app(agent)) as client:
        first = await (await client.post("/v1/agents/bot/runs", json={"input": "a"})).json()
        body = {"input": "b", "session_id": first["session_id"]}
        second = await (await client.post("/v1/agents/bot/runs", json=body)).json()
    assert second["session_id"] == first["session_id"]
    stored = await agent.store.load("bot", first["session_id"])
    assert stored is not None
    assert [m.text for m in stored.state.memory] == ["a", "one", "b", "two"]


async def test_a_client_chosen_session_id_is_created_for_its_key():
    agent = ReActAgent("bot", "", ScriptedModel(["ok"]))
    async with serving(create_app(agent, auth=["k1"])) as client:
        body = {"input": "hi", "session_id": "my-chat.1"}
        response = await client.post("/v1/agents/bot/runs", json=body, headers=bearer("k1"))
        assert (await response.json())["session_id"] == "my-chat.1"
    stored = await agent.store.load("bot", "my-chat.1")
    assert stored is not None
    assert stored.state.extra[OWNER_KEY] == key_id_of("k1")


async def test_message_and_message_list_inputs_are_accepted():
    agent = ReActAgent("bot", "", ScriptedModel(["one", "two"]))
    async with serving(create_app(agent)) as client:
        one = {"input": {"role": "user", "content": "as a message"}}
        assert (await client.post("/v1/agents/bot/runs", json=one)).status == 200
        many = {
            "input": [Msg.user("first").model_dump(mode="json"), {"role": "user", "content": "x"}]
        }
        response = await client.post("/v1/agents/bot/runs", json=many)
        assert response.status == 200
        session_id = (await response.json())["session_id"]
    stored = await agent.store.load("bot", session_id)
    assert stored is not None
    assert [m.text for m in stored.state.memory] == ["first", "x", "two"]


async def test_sse_frames_are_exactly_the_runs_events():
    recorder = EventRecorder()

    async def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: One.
            b: Two.
        """
        return a + b

    model = ScriptedModel([tool_call("add", a=1, b=2), "three"], chunk_size=2)
    agent = ReActAgent("bot", "", model, tools=[tool(add)], hooks=[recorder])
    async with serving(create_app(agent)) as client:
        response = await client.post("/v1/agents/bot/runs:stream", json={"input": "1+2?"})
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        text = await response.text()
    frames = parse_sse(text)
    events = [EVENT_ADAPTER.validate_python(data) for _, data in frames]
    assert [kind for kind, _ in frames] == [e.type for e in events]
    assert events == recorder.recorded
    assert frames[0][0] == "pre_call"
    assert frames[-1][0] == "post_call"
    assert frames[-1][1]["result"]["session_id"] == response.headers["X-Session-Id"]

    # the same script in process gives the same sequence of event types
    script = ScriptedModel([tool_call("add", a=1, b=2), "three"], chunk_size=2)
    again = ReActAgent("bot", "", script, tools=[tool(add)])
    in_process = [e.type async for e in again.events("1+2?")]
    assert [kind for kind, _ in frames] == in_process


async def test_sse_sends_keepalive_comments_while_the_run_is_quiet():
    gate = Gate()
    agent = gated_agent(gate)
    config = ServerConfig(keepalive_s=0.01)
    async with serving(create_app(agent, config=config)) as client:
        response = await client.post("/v1/agents/bot/runs:stream", json={"input": "go"})
        await read_frames_until(response, "pre_acting")
        line = await response.content.readuntil(b"\n\n")
        while not line.startswith(b":"):
            line = await response.content.readuntil(b"\n\n")
        assert line == b": keep-alive\n\n"
        gate.release.set()
        frames = parse_sse((await response.read()).decode())
    assert frames[-1][0] == "post_call"
    assert frames[-1][1]["result"]["ok"]


async def test_a_json_run_that_fails_is_still_a_200_with_the_error_in_the_result():
    agent = ReActAgent("bot", "", ScriptedModel([]))  # the script is empty: the model fails
    async with serving(create_app(agent)) as client:
        response = await client.post("/v1/agents/bot/runs", json={"input": "hi"})
        assert response.status == 200
        result = AgentResult[Any].model_validate(await response.json())
    assert not result.ok
    assert result.error is not None


async def test_an_ephemeral_run_deletes_its_session_afterwards():
    agent = ReActAgent("bot", "", ScriptedModel(["stateless"]))
    app = create_app(agent)
    seen: list[str] = []

    async def stateless(request: web.Request) -> web.Response:
        ctx = request.app[SERVER_KEY]
        principal = ctx.authenticate(request)
        async with ctx.open_run(request, principal, agent, "hi", None, ephemeral=True) as handle:
            seen.append(handle.session_id)
            async for _ in handle.events:
                pass
            assert handle.result is not None  # set once PostCall has been seen
        return web.json_response({"text": handle.result.text})

    app.router.add_post("/stateless", stateless)
    async with serving(app) as client:
        response = await client.post("/stateless")
        assert await response.json() == {"text": "stateless"}
    assert seen
    assert seen[0].startswith("ephemeral-")
    assert await agent.store.list_sessions("bot") == []


async def test_handle_batches_are_empty_while_the_run_waits():
    gate = Gate()
    agent = gated_agent(gate)
    app = create_app(agent)
    kinds: list[str | None] = []

    async def beats(request: web.Request) -> web.Response:
        ctx = request.app[SERVER_KEY]
        principal = ctx.authenticate(request)
        async with ctx.open_run(request, principal, agent, "go", None) as handle:
            async for batch in handle.batches(0.005):
                kinds.extend(event.type for event in batch)
                if not batch and "pre_acting" in kinds:  # the run waits at the gate
                    kinds.append(None)
                    gate.release.set()
        return web.json_response({"ok": True})

    app.router.add_post("/beats", beats)
    async with serving(app) as client:
        assert (await client.post("/beats")).status == 200
    assert kinds[0] == "pre_call"
    assert kinds[-1] == "post_call"
    # an empty batch came while the tool waited at the gate, and opened it
    assert kinds.index("pre_acting") < kinds.index(None) < kinds.index("post_acting")


def test_sse_frame_of_a_custom_event_and_a_built_in_one():
    frame = sse_frame(CustomEvent(name="progress", data={"pct": 50}))
    ((kind, data),) = parse_sse(frame.decode())
    assert kind == "custom"
    assert data["data"] == {"pct": 50}


async def test_the_store_given_to_create_app_replaces_default_stores_only():
    shared, own = InMemoryStore(), InMemoryStore()

    class OtherStore(InMemoryStore):
        pass

    custom = OtherStore()
    a = ReActAgent("a", "", ScriptedModel(["x"]))
    b = ReActAgent("b", "", ScriptedModel(["x"]), store=own)
    c = ReActAgent("c", "", ScriptedModel(["x"]), store=custom)
    create_app([a, b, c], store=shared, config=ServerConfig(lease_ttl_s=7.0))
    assert a.store is shared
    assert b.store is shared
    assert c.store is custom
    assert a.lease_ttl_s == b.lease_ttl_s == c.lease_ttl_s == 7.0


async def test_agents_under_route_names_of_a_mapping():
    agent = ReActAgent("internal-name", "", ScriptedModel(["routed"]))
    async with serving(create_app({"public": agent})) as client:
        response = await client.post("/v1/agents/public/runs", json={"input": "hi"})
        result = await response.json()
        assert result["reply"]["content"][0]["text"] == "routed"
        info = await (await client.get(f"/v1/sessions/{result['session_id']}")).json()
    assert info["agent"] == "public"


async def test_runs_of_different_sessions_run_concurrently():
    gate = Gate()
    agent = gated_agent(gate)
    async with serving(create_app(agent)) as client:

        async def run() -> Any:
            return await (await client.post("/v1/agents/bot/runs", json={"input": "go"})).json()

        first = asyncio.create_task(run())
        second = asyncio.create_task(run())
        await gate.reached(2)
        gate.release.set()
        results = await asyncio.gather(first, second)
    assert {r["reply"]["content"][0]["text"] for r in results} == {"done"}
    assert results[0]["session_id"] != results[1]["session_id"]
