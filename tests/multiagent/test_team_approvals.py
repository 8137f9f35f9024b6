"""A member's approval request parks its team; the team's `approve()` resumes the whole team."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from reactivex import Observable

from rxagent import BaseEvent, PreCallEvent, ReActAgent
from rxagent.agent import AgentLike
from rxagent.agent._nesting import agent_tool
from rxagent.errors import ApprovalError, SessionBusyError
from rxagent.messages import Msg
from rxagent.multiagent import MsgHub, Orchestrator, ParallelPipeline, SequentialPipeline
from rxagent.multiagent._team_run import PARKED_KEY, TeamRun
from rxagent.result import AgentResult
from rxagent.state import AgentState, SQLiteStore
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call
from rxagent.tools import tool

paid: list[int] = []


@tool(needs_approval=True)
def pay(amount: int) -> str:
    """Pay.

    Args:
        amount: How much.
    """
    paid.append(amount)
    return f"paid {amount}"


def echo(prefix: str) -> FunctionModel:
    """A model that answers with `prefix` and the last message it was given."""

    def answer(messages: Any, tools: Any, options: Any) -> str:
        return f"{prefix}({messages[-1].text})"

    return FunctionModel(answer)


def clerk(*script: Any, name: str = "b", store: Any = None) -> ReActAgent:
    return ReActAgent(name, "", ScriptedModel(list(script)), tools=[pay], store=store)


async def collect(stream: Observable[BaseEvent]) -> list[BaseEvent]:
    """Every event of a (decision) stream, once it completed."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    events: list[BaseEvent] = []
    stream.subscribe(events.append, done.set_exception, lambda: done.set_result(None))
    await done
    return events


def paired(state: dict[str, Any]) -> bool:
    memory = AgentState.model_validate(state).memory
    uses = {b.id for m in memory for b in m.tool_calls}
    return uses == {r.id for m in memory for r in m.tool_results}


async def settled(team: Orchestrator, session: str) -> None:
    """Every member's memory is paired and nothing waits for a human any more."""
    check_settled(await team.state_dict(session))


def check_settled(state: dict[str, Any]) -> None:
    if "members" in state:  # a team's: its own, and each member's
        assert PARKED_KEY not in state["team"]["extra"]
        for member_state in state["members"].values():
            check_settled(member_state)
        return
    assert paired(state)
    assert state["pending_approvals"] == []


def pipeline(store: Any = None, **script: Any) -> SequentialPipeline:
    a = ReActAgent("a", "", echo("a"), store=store)
    b = clerk(*script.get("b", (tool_call("pay", amount=5), "b paid")), store=store)
    c = ReActAgent("c", "", echo("c"), store=store)
    return SequentialPipeline([a, b, c], name="team", store=store)


async def test_approve_resumes_the_member_inside_a_team_run_and_the_pipeline_goes_on() -> None:
    paid.clear()
    team = pipeline()
    parked = await team.call("go", session_id="s")
    assert parked.stop_reason == "approval_pending"
    assert parked.text == ""  # b's reply: it has not answered yet
    (approval_id,) = parked.pending_approvals
    assert not paid
    events = await collect(team.nested_decision_stream(
        approval_id, True, None, session_id="s", parent_path=()
    ))  # fmt: skip
    assert_event_protocol(events)
    assert events[0].path == ("team",)
    assert isinstance(events[0], PreCallEvent)
    result = events[-1].result  # type: ignore[attr-defined]
    assert events[-1].path == ("team",)
    assert result.text == "c(b paid)"  # c ran on b's reply, as if b had not parked
    assert result.ok
    assert result.stop_reason == "no_tool_calls"
    assert not result.pending_approvals
    assert paid == [5]
    paths = {e.path for e in events}
    assert paths == {("team",), ("team", "b"), ("team", "c")}  # a does not run again
    await settled(team, "s")


async def test_approve_returns_the_teams_result() -> None:
    team = pipeline()
    parked = await team.call("go", session_id="s")
    result = await team.approve(parked.pending_approvals[0], session_id="s")
    assert result is not None
    assert result.text == "c(b paid)"
    assert result.session_id == "s"
    assert result.tools_used == ("pay",)
    with pytest.raises(ApprovalError, match="no member"):  # decided: nothing waits
        await team.approve(parked.pending_approvals[0], session_id="s")


async def test_reject_continues_the_member_with_the_rejection_then_the_pipeline() -> None:
    paid.clear()
    team = pipeline(b=(tool_call("pay", amount=7), "b did not pay"))
    parked = await team.call("go", session_id="s")
    result = await team.reject(parked.pending_approvals[0], "too much", session_id="s")
    assert result is not None
    assert result.text == "c(b did not pay)"
    assert not paid
    b_state = AgentState.model_validate(await team.members[1].state_dict("s/b"))
    rejected = next(r for m in b_state.memory for r in m.tool_results)
    assert rejected.is_error
    assert "too much" in rejected.text
    await settled(team, "s")


async def test_a_member_that_parks_again_parks_the_team_again() -> None:
    paid.clear()
    team = pipeline(b=(tool_call("pay", amount=1), tool_call("pay", amount=2), "b paid twice"))
    first = await team.call("go", session_id="s")
    again = await team.approve(first.pending_approvals[0], session_id="s")
    assert again is not None
    assert again.stop_reason == "approval_pending"
    (second,) = again.pending_approvals
    assert second != first.pending_approvals[0]
    state = await team.state_dict("s")
    assert PARKED_KEY in state["team"]["extra"]
    done = await team.approve(second, session_id="s")
    assert done is not None
    assert done.text == "c(b paid twice)"
    assert paid == [1, 2]
    await settled(team, "s")


async def test_a_batch_resumes_the_team_on_its_last_decision() -> None:
    team = pipeline(b=([tool_call("pay", amount=1), tool_call("pay", amount=2)], "b paid"))
    parked = await team.call("go", session_id="s")
    first, second = parked.pending_approvals
    assert await team.approve(first, session_id="s") is None  # recorded; b's batch waits
    assert not team.is_running("s")
    done = await team.reject(second, "no", session_id="s")
    assert done is not None
    assert done.text == "c(b paid)"
    await settled(team, "s")


async def test_the_last_member_parking_and_a_nested_team() -> None:
    inner = SequentialPipeline([clerk(tool_call("pay", amount=3), "b paid")], name="inner")
    outer = SequentialPipeline([ReActAgent("a", "", echo("a")), inner], name="outer")
    parked = await outer.call("go", session_id="s")
    events = await collect(outer.nested_decision_stream(
        parked.pending_approvals[0], True, None, session_id="s", parent_path=("host",)
    ))  # fmt: skip
    assert_event_protocol(events)
    assert events[0].path == ("host", "outer")
    assert ("host", "outer", "inner", "b") in {e.path for e in events}
    assert events[-1].result.text == "b paid"  # type: ignore[attr-defined]
    await settled(outer, "s")


async def test_a_parallel_member_parks_and_the_merger_runs_once_all_are_done() -> None:
    merged: list[str] = []

    def merge(results: Any) -> str:
        merged.append(" + ".join(r.text for r in results))
        return merged[-1]

    x = clerk(tool_call("pay", amount=1), "x paid", name="x")
    y = ReActAgent("y", "", ScriptedModel(["y said"]))
    z = clerk(tool_call("pay", amount=2), "z paid", name="z")
    team = ParallelPipeline([x, y, z], merger=merge, name="fan")
    parked = await team.call("go", session_id="s")
    assert parked.stop_reason == "approval_pending"
    assert not merged  # the merger waits for every member
    assert len(parked.pending_approvals) == 2
    members = (await team.state_dict("s"))["members"]
    (x_id,) = [p["approval_id"] for p in members["x"]["pending_approvals"]]
    (z_id,) = [p["approval_id"] for p in members["z"]["pending_approvals"]]
    assert set(parked.pending_approvals) == {x_id, z_id}
    half = await team.approve(z_id, session_id="s")
    assert half is not None
    assert half.stop_reason == "approval_pending"
    assert half.pending_approvals == (x_id,)
    assert not merged
    done = await team.approve(x_id, session_id="s")
    assert done is not None
    assert merged == ["x paid + y said + z paid"]
    assert done.text == merged[0]
    assert done.ok
    assert not done.pending_approvals
    await settled(team, "s")


async def test_a_parallel_pipeline_with_a_merger_agent_that_parks() -> None:
    x = clerk(tool_call("pay", amount=1), "x paid", name="x")
    merger = clerk(tool_call("pay", amount=9), "merged", name="m")
    team = ParallelPipeline([x, ReActAgent("y", "", echo("y"))], merger=merger, name="fan")
    parked = await team.call("go", session_id="s")
    assert not (await team.state_dict("s"))["members"]["m"]["memory"]  # it has not run
    at_merger = await team.approve(parked.pending_approvals[0], session_id="s")
    assert at_merger is not None
    assert at_merger.stop_reason == "approval_pending"  # now the merger waits
    events = await collect(team.nested_decision_stream(
        at_merger.pending_approvals[0], True, None, session_id="s", parent_path=()
    ))  # fmt: skip
    assert_event_protocol(events)
    assert {e.path for e in events} == {("fan",), ("fan", "m")}
    assert events[-1].result.text == "merged"  # type: ignore[attr-defined]
    await settled(team, "s")


async def test_the_parallel_default_reply_while_parked_and_once_resumed() -> None:
    x = clerk(tool_call("pay", amount=1), "x paid", name="x")
    team = ParallelPipeline([x, ReActAgent("y", "", ScriptedModel(["y said"]))], name="fan")
    parked = await team.call("go", session_id="s")
    assert parked.text == "x: \n\ny: y said"
    done = await team.approve(parked.pending_approvals[0], session_id="s")
    assert done is not None
    assert done.text == "x: x paid\n\ny: y said"
    assert done.usage.requests == 1  # y's earlier request is not counted again


async def test_a_team_persisted_in_a_store_resumes_in_a_new_process(tmp_path: Path) -> None:
    paid.clear()
    async with SQLiteStore(tmp_path / "s.db") as store:
        parked = await pipeline(store).call("go", session_id="s")
    async with SQLiteStore(tmp_path / "s.db") as store:
        fresh = pipeline(store, b=("b paid",))  # b's model continues after its tool call
        done = await fresh.approve(parked.pending_approvals[0], session_id="s")
        assert done is not None
        assert done.text == "c(b paid)"
        assert paid == [5]
        await settled(fresh, "s")


async def test_the_saved_input_feeds_the_input_builder_after_a_restart() -> None:
    def build(previous: AgentResult[Any], inputs: tuple[Msg, ...]) -> str:
        return f"{inputs[0].text} / {previous.text}"

    a = ReActAgent("a", "", ScriptedModel(["a said"]))
    b = clerk(tool_call("pay", amount=1), "b paid")
    team = SequentialPipeline([a, b, ReActAgent("c", "", echo("c"))], input_builder=build)
    parked = await team.call("the task", session_id="s")
    done = await team.approve(parked.pending_approvals[0], session_id="s")
    assert done is not None
    assert done.text == "c(the task / b paid)"


async def test_a_hub_resumes_its_parked_participant_inside_a_hub_run() -> None:
    b = clerk(tool_call("pay", amount=1), "b paid")
    hub = MsgHub([ReActAgent("a", "", echo("a")), b], name="hub")
    parked = await hub.call("go", session_id="s")
    events = await collect(hub.nested_decision_stream(
        parked.pending_approvals[0], True, None, session_id="s", parent_path=()
    ))  # fmt: skip
    assert_event_protocol(events)
    assert {e.path for e in events} == {("hub",), ("hub", "b")}
    assert events[-1].result.text == "b paid"  # type: ignore[attr-defined]
    await hub.call("next", session_id="s")  # b's resumed reply reaches a on the next run
    a_memory = AgentState.model_validate(await hub.members[0].state_dict("s/a")).memory
    heard = [m for m in a_memory if m.name == "b"]
    assert [m.text for m in heard] == ["b paid"]


async def test_deciding_while_the_team_runs_is_refused() -> None:
    team = pipeline()
    parked = await team.call("go", session_id="s")
    team._running["s"] = TeamRun(team, (), "s", ("team",), None)
    with pytest.raises(SessionBusyError):
        await team.approve(parked.pending_approvals[0], session_id="s")
    del team._running["s"]


async def test_a_member_that_cannot_resume_nested_is_named() -> None:
    plain = Plain(clerk(tool_call("pay", amount=1), "b paid"))
    assert isinstance(plain, AgentLike)
    team = SequentialPipeline([plain], name="team")
    parked = await team.call("go", session_id="s")
    with pytest.raises(ApprovalError, match="cannot resume inside a team run"):
        await team.approve(parked.pending_approvals[0], session_id="s")


async def test_a_fan_out_called_as_a_tool_parks_its_caller_until_every_member_is_decided() -> None:
    x = clerk(tool_call("pay", amount=1), "x paid", name="x")
    z = clerk(tool_call("pay", amount=2), "z paid", name="z")
    team = ParallelPipeline([x, z], merger=lambda rs: " & ".join(r.text for r in rs), name="fan")
    boss = ReActAgent("boss", "", ScriptedModel([tool_call("fan", input="pay"), "Both paid."]),
                      tools=[team.as_tool()])  # fmt: skip
    parked = await boss.call("go", session_id="s")
    assert parked.stop_reason == "approval_pending"
    first, second = parked.pending_approvals
    assert await boss.approve(first, session_id="s") is None
    events = await collect(boss.nested_decision_stream(
        second, True, None, session_id="s", parent_path=()
    ))  # fmt: skip
    assert_event_protocol(events)
    team_runs = [e for e in events if isinstance(e, PreCallEvent) and e.path == ("boss", "fan")]
    assert len(team_runs) == 2  # one per member's decision: the first parks the team again
    assert events[-1].result.text == "Both paid."  # type: ignore[attr-defined]
    memory = AgentState.model_validate(await boss.state_dict("s")).memory
    assert next(r for m in memory for r in m.tool_results).text == "x paid & z paid"
    await settled(team, "s/fan")


class Plain:
    """An AgentLike without nested decisions: it wraps an agent and hides that method."""

    def __init__(self, agent: ReActAgent) -> None:
        self.agent = agent
        self.name = agent.name

    def __getattr__(self, name: str) -> Any:
        if name == "nested_decision_stream":
            raise AttributeError(name)
        return getattr(self.agent, name)


async def test_a_child_that_cannot_resume_nested_gives_its_caller_an_error_result() -> None:
    plain = Plain(clerk(tool_call("pay", amount=1), "b paid"))
    boss = ReActAgent("boss", "", ScriptedModel([tool_call("b", input="pay"), "It waits."]),
                      tools=[agent_tool(plain)])  # fmt: skip
    result = await boss.call("go", session_id="s")
    assert result.stop_reason == "no_tool_calls"  # the caller does not park
    memory = AgentState.model_validate(await boss.state_dict("s")).memory
    error = next(r for m in memory for r in m.tool_results)
    assert error.is_error
    assert "'s/b'" in error.text


async def test_a_hub_participant_that_parks_again_is_not_heard_yet() -> None:
    b = clerk(tool_call("pay", amount=1), tool_call("pay", amount=2), "b paid")
    hub = MsgHub([ReActAgent("a", "", echo("a")), b], name="hub")
    parked = await hub.call("go", session_id="s")
    again = await hub.approve(parked.pending_approvals[0], session_id="s")
    assert again is not None
    assert again.stop_reason == "approval_pending"
    assert (await hub.state_dict("s"))["team"]["extra"]["rxagent.hub.pending"]["a"] == []


def test_a_team_run_no_member_answered_in_replies_with_nothing() -> None:
    team = pipeline()
    reply, output = team._reply(TeamRun(team, (), "s", ("team",), None))
    assert reply.text == ""
    assert reply.role == "assistant"
    assert output is None
