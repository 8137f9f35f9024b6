"""Sequential and parallel pipelines: composition, results, interrupts, disposal, state."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import reactivex

from rxagent import BaseEvent, PostCallEvent, PreCallEvent, ReActAgent
from rxagent.errors import ConfigurationError, InvalidInputError, SessionBusyError
from rxagent.messages import Msg
from rxagent.multiagent import ParallelPipeline, SequentialPipeline
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call


def agent(name: str, *turns: Any) -> ReActAgent:
    return ReActAgent(name, "", ScriptedModel(list(turns)))


def echo(name: str) -> ReActAgent:
    return ReActAgent(name, "", FunctionModel(lambda m, t, o: f"{name}({m[-1].text})"))


async def collect(team: Any, msg: Any = "go", **kwargs: Any) -> list[BaseEvent]:
    return [e async for e in team.events(msg, **kwargs)]


async def test_sequential_passes_each_reply_on() -> None:
    team = SequentialPipeline([echo("a"), echo("b"), echo("c")], name="abc")
    events = await collect(team, "x")
    assert_event_protocol(events)
    assert isinstance(events[0], PreCallEvent)
    assert events[0].path == ("abc",)
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.path == ("abc",)
    assert last.reply.text == "c(b(a(x)))"
    assert last.result.steps == 3
    assert last.result.usage.requests == 3
    members = [e.path for e in events if isinstance(e, PreCallEvent)][1:]
    assert members == [("abc", "a"), ("abc", "b"), ("abc", "c")]


async def test_sequential_input_builder() -> None:
    def build(previous: Any, inputs: tuple[Msg, ...]) -> str:
        return f"{inputs[0].text} + {previous.text}"

    team = SequentialPipeline([echo("a"), echo("b")], input_builder=build)
    assert (await team.call("x")).text == "b(x + a(x))"


async def test_sequential_stops_at_a_failing_member() -> None:
    def broken(messages: Any, tools: Any, options: Any) -> str:
        raise RuntimeError("down")

    team = SequentialPipeline([ReActAgent("a", "", FunctionModel(broken)), echo("b")])
    result = await team.call("x")
    assert not result.ok
    assert result.stop_reason == "error"
    assert result.steps == 1
    assert not (await team.state_dict())["members"]["b"]["memory"]


async def test_parallel_runs_members_concurrently_and_merges() -> None:
    started: dict[str, asyncio.Event] = {"a": asyncio.Event(), "b": asyncio.Event()}

    def waiting(name: str, other: str) -> ReActAgent:
        async def fn(messages: Any, tools: Any, options: Any) -> str:
            started[name].set()
            await started[other].wait()  # both are running at once, or this never returns
            return name.upper()

        return ReActAgent(name, "", FunctionModel(fn))

    team = ParallelPipeline(
        [waiting("a", "b"), waiting("b", "a")],
        merger=lambda results: "+".join(r.text for r in results),
        name="fan",
    )
    events = await asyncio.wait_for(collect(team), timeout=10)
    assert_event_protocol(events)
    assert events[-1].reply.text == "A+B"  # type: ignore[attr-defined]


async def test_parallel_default_and_agent_mergers() -> None:
    plain = ParallelPipeline([agent("a", "one"), agent("b", "two")])
    assert (await plain.call("x")).text == "a: one\n\nb: two"
    judge = echo("judge")
    team = ParallelPipeline([agent("a", "one"), agent("b", "two")], merger=judge)
    assert team.members[-1] is judge
    events = await collect(team, "x")
    assert_event_protocol(events)
    assert events[-1].reply.text == "judge(a: one\n\nb: two)"  # type: ignore[attr-defined]


def test_bad_teams_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="at least 1"):
        SequentialPipeline([])
    with pytest.raises(ConfigurationError, match="agents or teams"):
        SequentialPipeline(["a"])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="unique names"):
        SequentialPipeline([agent("a"), agent("a")])
    with pytest.raises(ConfigurationError, match="name"):
        SequentialPipeline([agent("a")], name="a/b")
    with pytest.raises(ConfigurationError, match="merger"):
        ParallelPipeline([agent("a")], merger=3)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="member's name"):
        ParallelPipeline([agent("a")], merger=agent("a"))


async def test_bad_input_and_busy_session() -> None:
    team = SequentialPipeline([echo("a")])
    with pytest.raises(InvalidInputError):
        await team.call(3)  # type: ignore[arg-type]
    blocker = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        await blocker.wait()
        return "done"

    slow_team = SequentialPipeline([ReActAgent("s", "", FunctionModel(slow))])
    task = asyncio.create_task(slow_team.call("x", session_id="busy"))
    while not slow_team.is_running("busy"):
        await asyncio.sleep(0)
    with pytest.raises(SessionBusyError):
        await slow_team.call("y", session_id="busy")
    blocker.set()
    assert (await task).text == "done"
    assert not slow_team.interrupt("busy")


async def test_an_interrupt_stops_the_running_member_and_skips_the_rest() -> None:
    started = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    team = SequentialPipeline([ReActAgent("a", "", FunctionModel(slow)), echo("b")], name="t")
    events: list[BaseEvent] = []

    async def consume() -> None:
        events.extend(await collect(team, "x", session_id="s"))

    task = asyncio.create_task(consume())
    await started.wait()
    assert team.interrupt("s", "stop now")
    await task
    assert_event_protocol(events)
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.interrupted
    assert result.stop_reason == "interrupted"
    assert events[-1].reply.text == "stop now"  # type: ignore[attr-defined]
    assert ("t", "b") not in {e.path for e in events}
    state = await team.state_dict("s")
    memory = state["members"]["a"]["memory"]
    assert next(m["role"] for m in memory) == "user"


async def test_disposing_the_team_cancels_every_member() -> None:
    started = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    a = ReActAgent("a", "", FunctionModel(slow))
    b = ReActAgent("b", "", FunctionModel(slow))
    team = ParallelPipeline([a, b])
    seen: list[BaseEvent] = []
    subscription = team.stream("x", session_id="s").subscribe(seen.append)
    await started.wait()
    subscription.dispose()
    assert await a.wait_idle(timeout=5)
    assert await b.wait_idle(timeout=5)
    assert not team.is_running("s")
    assert not any(isinstance(e, PostCallEvent) for e in seen)


async def test_state_round_trip_and_nested_teams() -> None:
    inner = SequentialPipeline([echo("a"), echo("b")], name="inner")
    outer = SequentialPipeline([echo("x"), inner], name="outer")
    events = await collect(outer, "go", session_id="s")
    assert_event_protocol(events)
    assert ("outer", "inner", "b") in {e.path for e in events}
    assert events[-1].reply.text == "b(a(x(go)))"  # type: ignore[attr-defined]
    saved = await outer.state_dict("s")
    assert saved["members"]["inner"]["members"]["a"]["memory"][0]["content"] == "x(go)"
    other = SequentialPipeline([echo("x"), SequentialPipeline([echo("a"), echo("b")],
                               name="inner")], name="outer")  # fmt: skip
    await other.load_state_dict(saved, "s")
    assert await other.state_dict("s") == saved


async def test_a_team_as_a_tool_and_call_sync_in_a_loop() -> None:
    team = SequentialPipeline([echo("a"), echo("b")], name="desk")
    made = team.as_tool(description="A writing desk.")
    assert made.name == "desk"
    boss = ReActAgent("boss", "", ScriptedModel([tool_call("desk", input="t"), "done"]),
                      tools=[made])  # fmt: skip
    events = [e async for e in boss.events("go")]
    assert_event_protocol(events)
    assert ("boss", "desk", "b") in {e.path for e in events}
    assert "SequentialPipeline 'desk'" in repr(team)
    result = await asyncio.to_thread(team.call_sync, "y")
    assert result.text == "b(a(y))"
    assert team.call_sync("z").text == "b(a(z))"  # inside this running loop


def test_call_sync_without_a_loop() -> None:
    assert SequentialPipeline([echo("a")]).call_sync("q").text == "a(q)"


async def test_the_stream_is_cold() -> None:
    team = SequentialPipeline([echo("a")])
    observable = team.stream("q")
    assert isinstance(observable, reactivex.Observable)
    assert team.is_running("default") is False


async def test_wait_idle_and_loading_a_busy_or_partial_state() -> None:
    release = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        await release.wait()
        return "done"

    team = SequentialPipeline([ReActAgent("s", "", FunctionModel(slow)), echo("e")])
    task = asyncio.create_task(team.call("x", session_id="busy"))
    while not team.is_running("busy"):
        await asyncio.sleep(0)
    assert not await team.wait_idle(timeout=0.01, session_id="busy")
    with pytest.raises(SessionBusyError):
        await team.load_state_dict({"team": {}, "members": {}}, "busy")
    release.set()
    assert await team.wait_idle(timeout=5)
    await task
    saved = await team.state_dict("busy")
    del saved["members"]["e"]
    await team.load_state_dict(saved, "other")
    assert (await team.state_dict("other"))["members"]["s"] == saved["members"]["s"]
