"""The session routes: show, delete, interrupt (here and through the control channel), approvals."""

from __future__ import annotations

from typing import Any

from server_helpers import (  # type: ignore[import-not-found]
    Gate,
    gated_agent,
    memory_is_paired,
    parse_sse,
    read_frames_until,
    serving,
    snapshot,
)

from rxagent import AgentResult, AgentState, InMemoryStore, ReActAgent, tool
from rxagent.server import OWNER_KEY, SERVER_KEY, create_app
from rxagent.testing import ScriptedModel, tool_call

RUNS = "/v1/agents/bot/runs"


async def expect_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status == status, await response.text()
    error = (await response.json())["error"]
    assert error["code"] == code
    return dict(error)


async def test_show_session_gives_state_version_agent_and_running():
    gate = Gate()
    agent = gated_agent(gate)
    async with serving(create_app(agent)) as client:
        stream = await client.post(RUNS + ":stream", json={"input": "go", "session_id": "s1"})
        await read_frames_until(stream, "pre_acting")
        busy = await (await client.get("/v1/sessions/s1")).json()
        assert busy["running"] is True
        gate.release.set()
        await stream.read()
        info = await (await client.get("/v1/sessions/s1")).json()
    assert info["session_id"] == "s1"
    assert info["agent"] == "bot"
    assert info["running"] is False
    state = AgentState.model_validate(info["state"])
    assert next(m.text for m in state.memory) == "go"
    stored = await agent.store.load("bot", "s1")
    assert stored is not None
    assert info["version"] == stored.version
    assert state.extra[OWNER_KEY] == "anonymous"


async def test_unknown_session_is_404():
    agent = ReActAgent("bot", "", ScriptedModel([]))
    async with serving(create_app(agent)) as client:
        for response in (
            await client.get("/v1/sessions/nope"),
            await client.delete("/v1/sessions/nope"),
            await client.post("/v1/sessions/nope/interrupt"),
        ):
            error = await expect_error(response, 404, "session_not_found")
            assert error["field"] == "session_id"


async def test_a_session_id_of_two_agents_needs_the_agent_query():
    store = InMemoryStore()
    a = ReActAgent("a", "", ScriptedModel(["from a"]), store=store)
    b = ReActAgent("b", "", ScriptedModel(["from b"]), store=store)
    async with serving(create_app([a, b])) as client:
        for name in ("a", "b"):
            body = {"input": "hi", "session_id": "same"}
            assert (await client.post(f"/v1/agents/{name}/runs", json=body)).status == 200
        error = await expect_error(await client.get("/v1/sessions/same"), 409, "ambiguous_session")
        assert error["field"] == "agent"
        info = await (await client.get("/v1/sessions/same?agent=b")).json()
        assert info["agent"] == "b"
        assert info["state"]["memory"][-1]["content"][0]["text"] == "from b"
        await expect_error(await client.get("/v1/sessions/same?agent=zz"), 404, "agent_not_found")
        assert (await client.delete("/v1/sessions/same?agent=a")).status == 200
        assert (await client.get("/v1/sessions/same")).status == 200  # only b's is left


async def test_delete_removes_the_session_and_refuses_while_running():
    gate = Gate()
    store = InMemoryStore()
    agent = gated_agent(gate, store=store)
    async with serving(create_app(agent)) as client:
        stream = await client.post(RUNS + ":stream", json={"input": "go", "session_id": "s1"})
        await read_frames_until(stream, "pre_acting")
        before = snapshot(store)
        await expect_error(await client.delete("/v1/sessions/s1"), 409, "session_busy")
        assert snapshot(store) == before
        gate.release.set()
        await stream.read()
        response = await client.delete("/v1/sessions/s1")
        assert await response.json() == {"deleted": True, "session_id": "s1"}
        await expect_error(await client.get("/v1/sessions/s1"), 404, "session_not_found")
    assert snapshot(store) == ({}, {})


async def test_delete_refuses_a_session_leased_by_another_process():
    store = InMemoryStore()
    agent = ReActAgent("bot", "", ScriptedModel([]), store=store)
    await store.save("bot", "s1", AgentState())
    assert await store.acquire_lease("bot", "s1", "run-elsewhere", 60)
    async with serving(create_app(agent)) as client:
        before = snapshot(store)
        await expect_error(await client.delete("/v1/sessions/s1"), 409, "session_busy")
        assert snapshot(store) == before


async def test_interrupt_stops_a_local_run_which_saves_paired_state():
    gate = Gate()
    agent = gated_agent(gate)
    async with serving(create_app(agent)) as client:
        stream = await client.post(RUNS + ":stream", json={"input": "go", "session_id": "s1"})
        await read_frames_until(stream, "pre_acting")
        response = await client.post("/v1/sessions/s1/interrupt", json={"reason": "stop now"})
        assert response.status == 202
        assert await response.json() == {"interrupted": True, "where": "local"}
        frames = parse_sse((await stream.read()).decode())
        kinds = [kind for kind, _ in frames]
        assert "interrupted" in kinds
        assert kinds[-1] == "post_call"
        result = AgentResult[Any].model_validate(frames[-1][1]["result"])
        assert result.interrupted
        assert result.text == "stop now"
        info = await (await client.get("/v1/sessions/s1")).json()
    assert gate.cancelled.is_set()
    assert info["running"] is False
    assert memory_is_paired(info["state"]["memory"])
    assert await agent.store.lease_holder("bot", "s1") is None


async def test_interrupt_without_a_run_is_409_not_running():
    store = InMemoryStore()
    agent = ReActAgent("bot", "", ScriptedModel(["ok"]), store=store)
    async with serving(create_app(agent)) as client:
        await client.post(RUNS, json={"input": "hi", "session_id": "s1"})
        before = snapshot(store)
        error = await expect_error(
            await client.post("/v1/sessions/s1/interrupt"), 409, "not_running"
        )
        assert error["field"] == "session_id"
        bad = await client.post("/v1/sessions/s1/interrupt", json={"reason": 5})
        assert (await expect_error(bad, 422, "invalid_body"))["field"] == "reason"
        assert snapshot(store) == before


async def test_interrupt_reaches_a_run_of_another_server_through_the_control_channel():
    gate = Gate()
    store = InMemoryStore()  # shared: one control channel, as PostgreSQL would give
    runner = gated_agent(gate, store=store)
    other = ReActAgent("bot", "", ScriptedModel([]), store=store)
    async with serving(create_app(runner)) as b, serving(create_app(other)) as a:
        stream = await b.post(RUNS + ":stream", json={"input": "go", "session_id": "s1"})
        await read_frames_until(stream, "pre_acting")
        response = await a.post("/v1/sessions/s1/interrupt", json={"reason": "from A"})
        assert response.status == 202
        assert await response.json() == {"interrupted": True, "where": "remote"}
        frames = parse_sse((await stream.read()).decode())
    result = AgentResult[Any].model_validate(frames[-1][1]["result"])
    assert result.interrupted
    assert result.text == "from A"
    assert not runner.is_running("s1")


@tool(needs_approval=True)
def wire_money(amount: int) -> str:
    """Send money.

    Args:
        amount: How much.
    """
    WIRED.append(amount)
    return f"sent {amount}"


WIRED: list[int] = []


def _banker(turns: list[Any]) -> ReActAgent:
    return ReActAgent("bot", "", ScriptedModel(turns), tools=[wire_money])


async def _park(client: Any, batch: int) -> tuple[str, list[str]]:
    response = await client.post("/v1/agents/bot/runs", json={"input": "pay", "session_id": None})
    assert response.status == 200
    parked = AgentResult[Any].model_validate(await response.json())
    assert parked.ok
    assert parked.stop_reason == "approval_pending"
    assert len(parked.pending_approvals) == batch
    return parked.session_id, list(parked.pending_approvals)


async def test_approvals_resume_the_parked_run_once_the_batch_is_decided():
    WIRED.clear()
    calls = [tool_call("wire_money", amount=5), tool_call("wire_money", amount=7)]
    async with serving(create_app(_banker([calls, "paid one"]))) as client:
        session, (first, second) = await _park(client, 2)
        response = await client.post(
            f"/v1/sessions/{session}/approvals/{first}", json={"approved": True}
        )
        assert response.status == 200
        body = await response.json()
        assert (body["approved"], body["approval_id"], body["result"]) == (True, first, None)
        response = await client.post(
            f"/v1/sessions/{session}/approvals/{second}",
            json={"approved": False, "reason": "too much"},
        )
        resumed = AgentResult[Any].model_validate((await response.json())["result"])
        assert resumed.ok
        assert resumed.text == "paid one"
        again = await client.post(
            f"/v1/sessions/{session}/approvals/{first}", json={"approved": True}
        )
        await expect_error(again, 404, "approval_not_found")  # used: nothing runs twice
        state = (await (await client.get(f"/v1/sessions/{session}")).json())["state"]
        metrics = await (await client.get("/metrics")).text()
    assert WIRED == [5]
    results = [b for m in state["memory"] if m["role"] == "tool" for b in m["content"]]
    assert [r["is_error"] for r in results] == [False, True]
    assert "too much" in str(results[1]["output"])
    assert 'rxagent_runs_total{agent="bot",outcome="pending_approval"} 1.0' in metrics


async def test_approval_errors_are_typed_and_change_nothing():
    WIRED.clear()
    async with serving(create_app(_banker([tool_call("wire_money", amount=1)]))) as client:
        session, (pending,) = await _park(client, 1)
        agent_store = client.app[SERVER_KEY].agents["bot"].store
        before = snapshot(agent_store)
        unknown = await client.post(
            f"/v1/sessions/{session}/approvals/nope", json={"approved": True}
        )
        error = await expect_error(unknown, 404, "approval_not_found")
        assert error["field"] == "approval_id"
        for body in ({}, {"approved": "maybe"}, {"approved": True, "reason": 3}):
            bad = await client.post(f"/v1/sessions/{session}/approvals/{pending}", json=body)
            await expect_error(bad, 422, "invalid_body")
        assert await agent_store.acquire_lease("bot", session, "run-elsewhere", 60)
        busy = await client.post(
            f"/v1/sessions/{session}/approvals/{pending}", json={"approved": True}
        )
        await expect_error(busy, 409, "session_busy")
        await agent_store.release_lease("bot", session, "run-elsewhere")
        assert snapshot(agent_store) == before
    assert WIRED == []


async def test_interrupt_of_a_session_leased_elsewhere_is_published():
    # a session whose lease is held elsewhere but has no subscriber: the interrupt is published
    store = InMemoryStore()
    agent = ReActAgent("bot", "", ScriptedModel([]), store=store)
    await store.save("bot", "s1", AgentState(extra={OWNER_KEY: "anonymous"}))
    assert await store.acquire_lease("bot", "s1", "run-elsewhere", 60)
    seen: list[Any] = []
    subscription = await store.control().subscribe(seen.append)
    try:
        async with serving(create_app(agent)) as client:
            response = await client.post("/v1/sessions/s1/interrupt", json={"reason": "r"})
            assert (await response.json())["where"] == "remote"
    finally:
        await subscription.close()
    assert [(m.agent, m.session_id, m.reason) for m in seen] == [("bot", "s1", "r")]
