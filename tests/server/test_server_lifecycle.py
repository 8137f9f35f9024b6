"""Disconnects cancel runs; graceful shutdown interrupts them; control subscriptions come and go."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from server_helpers import (  # type: ignore[import-not-found]
    Gate,
    RunnerTestServer,
    gated_agent,
    memory_is_paired,
    parse_sse,
    read_frames_until,
    rxagent_tasks,
    serving,
)

from rxagent import AgentResult, InMemoryStore, ReActAgent
from rxagent.server import SERVER_KEY, ServerConfig, create_app
from rxagent.state import ControlMessage
from rxagent.testing import ScriptedModel

RUNS = "/v1/agents/bot/runs"


@pytest.mark.parametrize("handler_cancellation", [False, True])
async def test_a_client_that_disconnects_cancels_the_run(handler_cancellation: bool):
    gate = Gate()
    store = InMemoryStore()
    agent = gated_agent(gate, store=store)
    app = create_app(agent, config=ServerConfig(keepalive_s=0.01))
    ctx = app[SERVER_KEY]
    async with serving(app, handler_cancellation=handler_cancellation) as client:
        stream = await client.post(RUNS + ":stream", json={"input": "go", "session_id": "s1"})
        await read_frames_until(stream, "pre_acting")
        stream.close()  # drop the connection mid-run
        await gate.cancelled.wait()
        assert await ctx.wait_idle(timeout=10)
        assert not rxagent_tasks()
        assert not agent.is_running("s1")
        assert await store.lease_holder("bot", "s1") is None
        stored = await store.load("bot", "s1")
        assert stored is not None
        assert memory_is_paired(stored.state.model_dump(mode="json")["memory"])
        metrics = await (await client.get("/metrics")).text()
        assert 'rxagent_runs_total{agent="bot",outcome="cancelled"} 1.0' in metrics
        # the session is usable again, and continues from the saved memory
        gate.release.set()
        again = await client.post(RUNS, json={"input": "again", "session_id": "s1"})
        assert AgentResult[Any].model_validate(await again.json()).text == "done"
    stored = await store.load("bot", "s1")
    assert stored is not None
    texts = [m.text for m in stored.state.memory if m.role == "user"]
    assert texts == ["go", "again"]


async def test_shutdown_interrupts_runs_whose_streams_end_with_post_call():
    gate = Gate()
    store = InMemoryStore()
    agent = gated_agent(gate, store=store)
    app = create_app(agent)
    client = TestClient(RunnerTestServer(app))
    await client.start_server()
    try:
        stream = await client.post(RUNS + ":stream", json={"input": "go", "session_id": "s1"})
        await read_frames_until(stream, "pre_acting")
        # graceful shutdown, while the stream is open
        shutdown = asyncio.ensure_future(client.server.close())
        frames = parse_sse((await stream.read()).decode())
        await shutdown
    finally:
        await client.close()
    assert frames[-1][0] == "post_call"
    result = AgentResult[Any].model_validate(frames[-1][1]["result"])
    assert result.interrupted
    assert result.text == "the server is shutting down"
    stored = await store.load("bot", "s1")
    assert stored is not None
    assert memory_is_paired(stored.state.model_dump(mode="json")["memory"])
    assert await store.lease_holder("bot", "s1") is None
    assert gate.cancelled.is_set()


async def test_shutdown_gives_up_after_its_timeout_and_cancels_what_is_left():
    gate = Gate()
    store = InMemoryStore()
    agent = gated_agent(gate, store=store, interrupt_tools="wait")  # the tool ignores interrupts
    app = create_app(agent, config=ServerConfig(shutdown_timeout_s=0.05))
    ctx = app[SERVER_KEY]
    client = TestClient(RunnerTestServer(app, shutdown_timeout=0.05))
    await client.start_server()
    try:
        stream = await client.post(RUNS + ":stream", json={"input": "go", "session_id": "s1"})
        await read_frames_until(stream, "pre_acting")
        await client.server.close()
        stream.close()
    finally:
        await client.close()
    assert await ctx.wait_idle(timeout=10)
    assert gate.cancelled.is_set()
    assert not rxagent_tasks()
    assert await store.lease_holder("bot", "s1") is None
    stored = await store.load("bot", "s1")
    assert stored is not None
    assert memory_is_paired(stored.state.model_dump(mode="json")["memory"])


async def test_a_shutting_down_server_refuses_new_runs_with_503():
    agent = ReActAgent("bot", "", ScriptedModel(["x"]))
    app = create_app(agent)
    async with serving(app) as client:
        app[SERVER_KEY].shutting_down = True
        response = await client.post(RUNS, json={"input": "hi"})
        assert response.status == 503
        assert (await response.json())["error"]["code"] == "shutting_down"
        health = await client.get("/healthz")
        assert health.status == 503
        app[SERVER_KEY].shutting_down = False
        assert await (await client.get("/healthz")).json() == {"status": "ok"}
    assert await agent.store.list_sessions("bot") == []


async def test_the_app_subscribes_to_each_store_channel_while_it_runs():
    store = InMemoryStore()
    a = ReActAgent("a", "", ScriptedModel([]), store=store)
    b = ReActAgent("b", "", ScriptedModel([]), store=store)
    c = ReActAgent("c", "", ScriptedModel([]))
    channel = store.control()
    assert not channel._subscribers  # type: ignore[attr-defined]
    async with serving(create_app([a, b, c])):
        assert len(channel._subscribers) == 1  # type: ignore[attr-defined]
        assert len(c.store.control()._subscribers) == 1  # type: ignore[attr-defined]
        await channel.publish(ControlMessage(agent="a", session_id="idle"))  # ignored: no run
    assert not channel._subscribers  # type: ignore[attr-defined]
