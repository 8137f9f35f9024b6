"""Edges of nested runs: a busy nested team, an interrupt before a child starts, JSON inputs,
nested hooks that refuse or fail, routed hand-backs, broken nesting the checker reports."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from rxagent import (
    BaseEvent,
    HandoffEvent,
    PostActingEvent,
    PostCallEvent,
    PreActingEvent,
    PreCallEvent,
    ReActAgent,
    hook,
)
from rxagent.errors import EventProtocolError, HookFailedError, Reject
from rxagent.hooks import HookChain
from rxagent.messages import Msg
from rxagent.multiagent import MsgHub, SequentialPipeline, handoff
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call


async def collect(agent: Any, msg: str = "go", **kwargs: Any) -> list[BaseEvent]:
    return [e async for e in agent.events(msg, **kwargs)]


def slow_agent(name: str, started: asyncio.Event, release: asyncio.Event) -> ReActAgent:
    async def fn(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await release.wait()
        return f"{name} done"

    return ReActAgent(name, "", FunctionModel(fn))


async def test_a_busy_nested_team_gives_an_error_result() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    team = SequentialPipeline([slow_agent("a", started, release)], name="team")
    boss = ReActAgent(
        "boss", "",
        ScriptedModel([[tool_call("team", input="x"), tool_call("team", input="y")], "ok"]),
        tools=[team.as_tool()],
    )  # fmt: skip
    task = asyncio.create_task(collect(boss))
    await started.wait()
    release.set()
    events = await task
    results = [e.result for e in events if isinstance(e, PostActingEvent)]
    assert sorted(r.is_error for r in results) == [False, True]
    assert any("SessionBusyError" in r.text for r in results)


async def test_a_child_started_after_an_interrupt_stops_at_once() -> None:
    child = ReActAgent("child", "", ScriptedModel(["never said"]))
    boss = ReActAgent(
        "boss", "",
        ScriptedModel([[tool_call("child", input="x"), tool_call("child2", input="y")], "no"]),
        tools=[child.as_tool(), child.as_tool("child2")],
        interrupt_tools="wait",
    )  # fmt: skip

    @hook(PreActingEvent)
    def stop_on_second(event: PreActingEvent) -> None:
        if event.tool_call.name == "child2":
            boss.interrupt("s", "stop")

    boss.hooks.add(stop_on_second)
    events = await collect(boss, session_id="s")
    assert_event_protocol(events)
    child_post = next(e for e in events if isinstance(e, PostCallEvent) and len(e.path) == 2)
    assert child_post.result.interrupted
    assert events[-1].result.interrupted  # type: ignore[attr-defined]


async def test_a_list_input_is_sent_as_json() -> None:
    seen: list[str] = []

    def fn(messages: list[Msg], tools: Any, options: Any) -> str:
        seen.append(messages[-1].text)
        return "ok"

    child = ReActAgent("child", "", FunctionModel(fn))
    boss = ReActAgent("boss", "", ScriptedModel([tool_call("child", input=[1, 2]), "done"]),
                      tools=[child.as_tool(input_type=list[int])])  # fmt: skip
    await boss.call("go")
    assert seen == ["[1, 2]"]


async def test_nested_hooks_that_refuse_or_propagate() -> None:
    @hook(PreCallEvent, nested=True)
    def refuse(event: PreCallEvent) -> None:
        raise Reject("no")

    @hook(PreCallEvent, nested=True, on_error="propagate")
    def explode(event: PreCallEvent) -> None:
        raise ValueError("boom")

    @hook(PreCallEvent, nested=True)
    async def broken(event: PreCallEvent) -> None:
        raise ValueError("quiet")

    nested = PreCallEvent(input=[Msg.user("x")], path=("a", "b"))
    with pytest.raises(Reject) as info:
        await HookChain([refuse]).dispatch_nested(nested)
    assert info.value.hook == "refuse"
    with pytest.raises(HookFailedError):
        await HookChain([explode]).dispatch_nested(nested)
    await HookChain([broken]).dispatch_nested(nested)  # logged, not raised


async def test_a_routed_turn_handed_back_goes_on_with_the_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR)
    front = ReActAgent("front", "", ScriptedModel([]))
    back = ReActAgent("back", "", ScriptedModel(["I take it.", tool_call("transfer_to_front")]),
                      tools=[handoff(front)])  # fmt: skip
    front.toolkit.add(handoff(back))
    front.model = ScriptedModel([tool_call("transfer_to_back"), "Front again."])
    assert (await front.call("one", session_id="s")).text == "I take it."
    events = await collect(front, "two", session_id="s")
    assert_event_protocol(events)
    assert [(e.from_agent, e.to_agent) for e in events if isinstance(e, HandoffEvent)] == [
        ("front", "back"), ("back", "front"),
    ]  # fmt: skip
    assert events[-1].reply.text == "Front again."  # type: ignore[attr-defined]


async def test_an_interrupted_hub_skips_the_rest() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    hub = MsgHub([slow_agent("a", started, release), ReActAgent("b", "", ScriptedModel([]))])
    task = asyncio.create_task(collect(hub, session_id="s"))
    await started.wait()
    assert hub.interrupt("s")
    events = await task
    assert_event_protocol(events)
    assert events[-1].result.interrupted  # type: ignore[attr-defined]
    assert ("hub", "b") not in {e.path for e in events}


async def test_team_approvals_search_every_member_team() -> None:
    from rxagent.tools import tool

    @tool(needs_approval=True)
    def pay(amount: int) -> str:
        """Pay.

        Args:
            amount: How much.
        """
        return "paid"

    first = SequentialPipeline([ReActAgent("x", "", ScriptedModel(["fine"]))], name="first")
    clerk = ReActAgent("clerk", "", ScriptedModel([tool_call("pay", amount=1), "Paid."]),
                       tools=[pay])  # fmt: skip
    outer = SequentialPipeline([first, SequentialPipeline([clerk], name="second")], name="o")
    waiting = await outer.call("go", session_id="s")
    assert waiting.stop_reason == "approval_pending"
    resumed = await outer.approve(waiting.pending_approvals[0], session_id="s")
    assert resumed is not None
    assert resumed.text == "Paid."


async def test_the_checker_reports_a_child_outliving_its_parent() -> None:
    team = SequentialPipeline([ReActAgent("a", "", ScriptedModel(["one"]))], name="t")
    events = await collect(team)
    child_end = next(e for e in events if isinstance(e, PostCallEvent) and len(e.path) == 2)
    late = [e for e in events if e is not child_end] + [child_end]
    with pytest.raises(EventProtocolError, match="has ended"):
        assert_event_protocol(late)
    child = ReActAgent("child", "", ScriptedModel(["c"]))
    boss = ReActAgent("boss", "", ScriptedModel([tool_call("child", input="x"), "ok"]),
                      tools=[child.as_tool()])  # fmt: skip
    events = await collect(boss)
    child_end = next(e for e in events if isinstance(e, PostCallEvent) and len(e.path) == 2)
    post_acting = next(i for i, e in enumerate(events) if isinstance(e, PostActingEvent))
    moved = [e for e in events[: post_acting + 1] if e is not child_end]
    moved += [child_end, *events[post_acting + 1 :]]
    with pytest.raises(EventProtocolError, match="has closed"):
        assert_event_protocol(moved)


async def test_a_nested_hook_cancelled_or_naming_itself() -> None:
    @hook(PreCallEvent, nested=True)
    def cancelled(event: PreCallEvent) -> None:
        raise asyncio.CancelledError

    @hook(PreCallEvent, nested=True)
    def named(event: PreCallEvent) -> None:
        refusal = Reject("no")
        refusal.hook = "gate"  # as a hook chain further in would have named it
        raise refusal

    nested = PreCallEvent(input=[Msg.user("x")], path=("a", "b"))
    with pytest.raises(asyncio.CancelledError):
        await HookChain([cancelled]).dispatch_nested(nested)
    with pytest.raises(Reject) as info:
        await HookChain([named]).dispatch_nested(nested)
    assert info.value.hook == "gate"


async def test_a_slow_consumer_slows_nested_runs() -> None:
    child = ReActAgent("child", "", ScriptedModel(["a long answer " * 20], chunk_size=2))
    boss = ReActAgent("boss", "", ScriptedModel([tool_call("child", input="x"), "ok"]),
                      tools=[child.as_tool()])  # fmt: skip
    events = boss.events("go", session_id="s", buffer=1)
    async for event in events:
        if event.path == ("boss", "child"):
            break
    for _ in range(50):  # the child would finish in a few ticks if nothing held it
        await asyncio.sleep(0)
    assert child.is_running("s/child")
    rest = [e async for e in events]
    assert rest[-1].path == ("boss",)
    assert not child.is_running("s/child")
    member = ReActAgent("a", "", ScriptedModel(["word " * 40], chunk_size=2))
    stream = SequentialPipeline([member]).events("go", session_id="t", buffer=1)
    assert isinstance(await anext(stream), PreCallEvent)
    assert (await anext(stream)).path == ("sequential", "a")
    for _ in range(50):  # the member would finish in a few ticks if nothing held it
        await asyncio.sleep(0)
    assert member.is_running("t/a")
    rest = [e async for e in stream]
    assert rest[-1].path == ("sequential",)
    assert not member.is_running("t/a")
