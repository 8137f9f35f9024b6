"""The routes a client's UI needs: the agents served, the caller's sessions, decisions as SSE."""

from __future__ import annotations

from typing import Any

import pytest
from server_helpers import bearer, parse_sse, serving  # type: ignore[import-not-found]

from rxagent import EVENT_ADAPTER, PostCallEvent, ReActAgent, tool
from rxagent.errors import ApprovalError, ConfigurationError
from rxagent.multiagent import SequentialPipeline
from rxagent.server import AgentList, ServerConfig, SessionList, create_app
from rxagent.state import AgentState
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call

paid: list[int] = []


@tool(needs_approval=True)
def pay(amount: int) -> str:
    """Pay an amount.

    Args:
        amount: How much.
    """
    paid.append(amount)
    return f"paid {amount}"


def clerk(*replies: Any, name: str = "clerk") -> ReActAgent:
    return ReActAgent(name, "You pay bills.", ScriptedModel(list(replies)), tools=[pay])


def reply(frames: list[tuple[str, dict[str, Any]]]) -> str:
    last = EVENT_ADAPTER.validate_python(frames[-1][1])
    assert isinstance(last, PostCallEvent)
    return last.result.text


def kinds(frames: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [kind for kind, _ in frames]


async def test_the_agents_route_names_agents_and_teams() -> None:
    notary = ReActAgent("notary", "", ScriptedModel(["Noted."]))
    team = SequentialPipeline([clerk("x"), notary], name="desk")
    solo = clerk("y", name="solo")
    async with serving(create_app([solo, team], auth=["k1"])) as client:
        assert (await client.get("/v1/agents")).status == 401
        response = await client.get("/v1/agents", headers=bearer("k1"))
        listed = AgentList.model_validate(await response.json())
    by_name = {a.name: a for a in listed.agents}
    assert list(by_name) == ["desk", "solo"]
    assert by_name["solo"].kind == "agent"
    assert by_name["solo"].tools == ("pay",)
    assert by_name["solo"].description == "You pay bills."
    assert by_name["solo"].model == "scripted"
    assert by_name["solo"].record_changes is True  # the playground's server records changes
    assert by_name["desk"].kind == "team"
    assert by_name["desk"].members == ("clerk", "notary")
    assert by_name["desk"].record_changes is True
    assert notary.record_changes is True  # set on the team's members too


async def test_sessions_are_listed_for_their_owner_only() -> None:
    agent = ReActAgent("bot", "", ScriptedModel(["a", "b", "c"]))
    async with serving(create_app(agent, auth={"k1": "ada", "k2": "bob"})) as client:
        for key, session, text in (("k1", "s1", "first   words"), ("k1", "s2", "x" * 200)):
            body = {"input": text, "session_id": session}
            response = await client.post("/v1/agents/bot/runs", json=body, headers=bearer(key))
            assert response.status == 200
        await client.post("/v1/agents/bot/runs", json={"input": "hi"}, headers=bearer("k2"))
        response = await client.get("/v1/sessions", headers=bearer("k1"))
        listed = SessionList.model_validate(await response.json())
        limited = await client.get("/v1/sessions?agent=bot&limit=1", headers=bearer("k1"))
        first = SessionList.model_validate(await limited.json())
        bad = await client.get("/v1/sessions?limit=0", headers=bearer("k1"))
        bad_body = await bad.json()
        unknown = await client.get("/v1/sessions?agent=nobody", headers=bearer("k1"))
    assert [s.session_id for s in listed.sessions] == ["s1", "s2"]
    assert listed.truncated is False
    one = listed.sessions[0]
    assert (one.agent, one.messages, one.runs, one.running) == ("bot", 2, 1, False)
    assert one.title == "first words"
    assert len(listed.sessions[1].title) == 80
    assert listed.sessions[1].title.endswith("…")
    assert [s.session_id for s in first.sessions] == ["s1"]
    assert first.truncated is True
    assert bad.status == 422
    assert bad_body["error"]["field"] == "limit"
    assert unknown.status == 404


async def test_listing_sessions_of_several_agents_needs_the_agent() -> None:
    agents = [ReActAgent(n, "", ScriptedModel(["hi"])) for n in ("a", "b")]
    async with serving(create_app(agents)) as client:
        response = await client.get("/v1/sessions")
        body = await response.json()
    assert response.status == 422
    assert body["error"]["code"] == "agent_required"
    assert "'a', 'b'" in body["error"]["message"]


async def test_a_decision_streams_the_resumed_run() -> None:
    paid.clear()
    agent = clerk(tool_call("pay", amount=5), "Paid 5.")
    async with serving(create_app(agent)) as client:
        body = {"input": "pay 5", "session_id": "s"}
        parked = await (await client.post("/v1/agents/clerk/runs", json=body)).json()
        (approval_id,) = parked["pending_approvals"]
        listed = await (await client.get("/v1/sessions")).json()
        url = f"/v1/sessions/s/approvals/{approval_id}:stream"
        response = await client.post(url, json={"approved": True})
        frames = parse_sse(await response.text())
        again = await client.post(url, json={"approved": True})
        again_body = await again.json()
    assert listed["sessions"][0]["pending_approvals"] == [approval_id]
    assert response.status == 200
    assert response.headers["X-Session-Id"] == "s"
    assert response.headers["Content-Type"].startswith("text/event-stream")
    assert kinds(frames)[0] == "pre_call"
    assert kinds(frames)[-1] == "post_call"
    acted = [data for kind, data in frames if kind == "post_acting"]
    assert [a["result"]["output"] for a in acted] == ["paid 5"]
    assert reply(frames) == "Paid 5."
    assert paid == [5]
    assert again.status == 404
    assert again_body["error"]["code"] == "approval_not_found"


async def test_a_decision_that_leaves_the_batch_waiting_streams_nothing() -> None:
    paid.clear()
    both = [tool_call("pay", amount=1), tool_call("pay", amount=2)]
    agent = clerk(both, "Paid both.")
    async with serving(create_app(agent)) as client:
        body = {"input": "pay", "session_id": "s"}
        parked = await (await client.post("/v1/agents/clerk/runs", json=body)).json()
        first, second = parked["pending_approvals"]
        base = "/v1/sessions/s/approvals/"
        waiting = await client.post(f"{base}{first}:stream", json={"approved": False})
        waiting_text = await waiting.text()
        done = await client.post(f"{base}{second}:stream", json={"approved": True})
        frames = parse_sse(await done.text())
    assert waiting.status == 200
    assert waiting_text == ""
    assert kinds(frames)[-1] == "post_call"
    results = sorted(d["result"]["output"] for k, d in frames if k == "post_acting")
    assert results == ["paid 2"]
    assert paid == [2]


async def test_decisions_are_for_the_sessions_owner() -> None:
    agent = clerk(tool_call("pay", amount=5), "Paid 5.")
    async with serving(create_app(agent, auth={"k1": "ada", "k2": "bob"})) as client:
        body = {"input": "pay 5", "session_id": "s"}
        response = await client.post("/v1/agents/clerk/runs", json=body, headers=bearer("k1"))
        (approval_id,) = (await response.json())["pending_approvals"]
        url = f"/v1/sessions/s/approvals/{approval_id}:stream"
        other = await client.post(url, json={"approved": True}, headers=bearer("k2"))
        other_body = await other.json()
        bad = await client.post(url, json={"approved": "yes"}, headers=bearer("k1"))
        still = await (await client.get("/v1/sessions/s", headers=bearer("k1"))).json()
    assert other.status == 404
    assert other_body["error"]["code"] == "session_not_found"
    assert bad.status == 422
    assert still["state"]["pending_approvals"][0]["approval_id"] == approval_id


async def test_a_team_decision_streams_the_resumed_team_run() -> None:
    notary = ReActAgent("notary", "", ScriptedModel(["Noted: paid."]))
    team = SequentialPipeline([clerk(tool_call("pay", amount=3), "Paid 3."), notary], name="desk")
    async with serving(create_app(team)) as client:
        body = {"input": "pay 3", "session_id": "t"}
        parked = await (await client.post("/v1/agents/desk/runs", json=body)).json()
        (approval_id,) = parked["pending_approvals"]
        url = f"/v1/sessions/t/approvals/{approval_id}:stream"
        frames = parse_sse(await (await client.post(url, json={"approved": True})).text())
    paths = [tuple(data["path"]) for _, data in frames]
    assert paths[0] == ("desk",)
    assert paths[-1] == ("desk",)
    assert ("desk", "clerk") in paths
    assert ("desk", "notary") in paths
    assert reply(frames) == "Noted: paid."


async def test_decision_events_on_the_agent_itself() -> None:
    paid.clear()
    agent = clerk(tool_call("pay", amount=7), "Not paid.")
    parked = await agent.call("pay 7", session_id="s")
    (approval_id,) = parked.pending_approvals
    events = [
        e async for e in agent.decision_events(approval_id, False, "too much", session_id="s")
    ]
    assert_event_protocol(events)
    assert paid == []
    state = AgentState.model_validate(await agent.state_dict("s"))
    rejected = [r for m in state.memory for r in m.tool_results]
    assert rejected[-1].is_error
    assert rejected[-1].text == "The tool call was rejected: too much"


async def test_without_the_playground_there_is_no_page() -> None:
    agent = ReActAgent("bot", "", ScriptedModel(["hi"]))
    async with serving(create_app(agent, config=ServerConfig(playground=False))) as client:
        page = await client.get("/playground")
        home = await (await client.get("/")).text()
        document = await (await client.get("/openapi.json")).json()
    assert page.status == 404
    assert "/playground" not in home
    assert "/playground" not in document["paths"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("ap_1", "yes"), "approved"),
        (("ap_1", False, 3), "reason"),
        (("", True), "approval_id"),
    ],
)
def test_decision_events_refuses_bad_arguments_at_once(args: tuple[Any, ...], field: str) -> None:
    team = SequentialPipeline([clerk("x")], name="desk")
    for decider in (clerk("x"), team):
        with pytest.raises(ConfigurationError, match=field):
            decider.decision_events(*args)
        with pytest.raises(ConfigurationError, match="buffer"):
            decider.decision_events("ap_1", True, buffer=0)


async def test_decision_events_for_an_unknown_approval_raise_when_read() -> None:
    team = SequentialPipeline([clerk("x")], name="desk")
    for decider in (clerk("x"), team):
        with pytest.raises(ApprovalError):
            async for _ in decider.decision_events("ap_unknown", True, session_id="s"):
                pass
