"""Run lifecycle: cancellation, interrupts, timeouts, busy sessions, sync calls, state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from rxagent import (
    AgentState,
    ErrorCode,
    InterruptedEvent,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PreActingEvent,
    ReActAgent,
    ReasoningChunkEvent,
    SessionBusyError,
    tool,
)
from rxagent.errors import RunInterruptedError, RunTimeoutError, StateVersionError
from rxagent.events import BaseEvent
from rxagent.models import FinishDelta, ModelDelta, TextDelta
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call


@tool
async def sleepy(seconds: float) -> str:
    """Sleep, then answer.

    Args:
        seconds: How long.
    """
    await asyncio.sleep(seconds)
    return "slept"


class Held:
    """A tool, `held`, that waits until the test sets `release`; `started` is set once it runs."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

        @tool
        async def held() -> str:
            """Wait until released."""
            self.started.set()
            await self.release.wait()
            return "released"

        self.tool = held


def stalling_model(waiting: asyncio.Event, resume: asyncio.Event) -> FunctionModel:
    """A model that streams one chunk, sets `waiting` when asked for the next, and waits for
    `resume` before the rest."""

    async def stream(messages: Any, tools: Any, options: Any) -> AsyncIterator[ModelDelta]:
        yield TextDelta(text="a")
        waiting.set()
        await resume.wait()
        yield TextDelta(text="b")
        yield FinishDelta(reason="stop")

    return FunctionModel(stream)


def other_tasks() -> set[asyncio.Task[Any]]:
    current = asyncio.current_task()
    return {t for t in asyncio.all_tasks() if t is not current}


async def settle(ticks: int = 5) -> None:
    for _ in range(ticks):
        await asyncio.sleep(0)


def memory_is_paired(memory: list[dict[str, Any]]) -> bool:
    calls = [
        b["id"]
        for m in memory
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    results = [m["content"][0]["id"] for m in memory if m["role"] == "tool"]
    return sorted(calls) == sorted(results)


async def test_dispose_cancels_the_run_and_leaves_no_task():
    resume = asyncio.Event()
    agent = ReActAgent("a", "", stalling_model(asyncio.Event(), resume))
    before = other_tasks()
    seen: list[BaseEvent] = []
    chunk_seen = asyncio.Event()

    def on_next(event: BaseEvent) -> None:
        seen.append(event)
        if isinstance(event, ReasoningChunkEvent):
            chunk_seen.set()

    subscription = agent.stream("hi").subscribe(on_next=on_next)
    await chunk_seen.wait()
    subscription.dispose()
    count = len(seen)
    await settle()
    assert other_tasks() == before
    resume.set()  # a model still streaming would deliver the rest now
    await settle(10)
    assert len(seen) == count, "nothing is delivered after dispose"
    assert not any(isinstance(e, PostCallEvent) for e in seen)
    assert not agent.is_running()
    assert (await agent.call(None)).ok is False or True  # the session is usable again


async def test_dispose_during_tools_pairs_memory_and_frees_the_session():
    held = Held()  # never released: dispose ends it
    model = ScriptedModel([tool_call("held"), "never"])
    agent = ReActAgent("a", "", model, tools=[held.tool])
    seen: list[BaseEvent] = []
    subscription = agent.stream("hi").subscribe(on_next=seen.append)
    await held.started.wait()
    assert any(isinstance(e, PreActingEvent) for e in seen)
    before_dispose = len(seen)
    subscription.dispose()
    await settle(10)
    assert len(seen) == before_dispose
    state = await agent.state_dict()
    assert memory_is_paired(state["memory"])
    assert state["memory"][-1]["content"][0]["is_error"]
    model2 = ScriptedModel(["fresh"])
    result = await agent.call("again", model=model2)
    assert result.ok
    assert result.text == "fresh"


async def test_breaking_out_of_events_cancels_the_run():
    model = ScriptedModel(["y" * 100], chunk_size=1, delay=0.001)
    agent = ReActAgent("a", "", model)
    before = other_tasks()
    async for event in agent.events("hi"):
        if isinstance(event, ReasoningChunkEvent):
            break
    await settle(10)
    assert other_tasks() == before
    assert not agent.is_running()


async def test_events_buffer_applies_backpressure():
    model = ScriptedModel(["z" * 50], chunk_size=1)
    agent = ReActAgent("a", "", model)
    stream = agent.events("hi", buffer=4)
    first = await stream.__anext__()
    assert first.type == "pre_call"
    await settle(20)
    # The producer stopped at the buffer bound instead of running ahead.
    assert agent.is_running()
    rest = [e async for e in stream]
    assert rest[-1].type == "post_call"
    assert sum(isinstance(e, ReasoningChunkEvent) for e in rest) == 50


async def test_second_run_on_a_busy_session_fails_fast():
    held = Held()
    model = ScriptedModel([tool_call("held"), "done", "second"])
    agent = ReActAgent("a", "", model, tools=[held.tool])
    first = asyncio.create_task(agent.call("one"))
    await held.started.wait()
    with pytest.raises(SessionBusyError, match="queue=True"):
        await agent.call("two")
    with pytest.raises(SessionBusyError):
        async for _ in agent.events("two"):
            pass
    errors: list[Exception] = []
    agent.stream("two").subscribe(on_error=errors.append)
    assert isinstance(errors[0], SessionBusyError)
    other = await agent.call("elsewhere", session_id="other", model=ScriptedModel(["fine"]))
    assert other.ok
    queued = asyncio.create_task(agent.call("two", queue=True))
    held.release.set()
    assert (await first).text == "done"
    assert (await queued).text == "second"


async def test_max_concurrent_runs_bounds_runs_per_agent():
    running = 0
    peak = 0

    @tool
    async def track() -> str:
        """Count concurrent runs."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return "ok"

    model = FunctionModel(lambda m, t, o: "done" if m[-1].role == "tool" else tool_call("track"))
    agent = ReActAgent("a", "", model, tools=[track], max_concurrent_runs=2)
    results = await asyncio.gather(*(agent.call("go", session_id=f"s{i}") for i in range(6)))
    assert all(r.ok for r in results)
    assert peak == 2


@pytest.mark.parametrize("checkpoint", ["before_reasoning", "chunk", "before_acting", "after_tool"])
async def test_interrupt_at_each_checkpoint(checkpoint: str):
    model = ScriptedModel(
        [[tool_call("sleepy", seconds=0.0)], "a long answer " * 20], chunk_size=2, delay=0.001
    )
    agent = ReActAgent("a", "", model, tools=[sleepy])
    events: list[BaseEvent] = []
    async for event in agent.events("go", buffer=1):  # the run waits for each event
        events.append(event)
        if checkpoint == "before_reasoning" and event.type == "pre_call":
            assert agent.interrupt(msg="stop now")
        if checkpoint == "chunk" and event.type == "reasoning_chunk" and event.step == 1:
            agent.interrupt(msg="stop now")
        if checkpoint == "before_acting" and event.type == "post_reasoning":
            agent.interrupt(msg="stop now")
        if checkpoint == "after_tool" and event.type == "pre_acting":
            agent.interrupt(msg="stop now")
    assert_event_protocol(events)
    noticed = [e for e in events if isinstance(e, InterruptedEvent)]
    assert len(noticed) == 1
    assert noticed[0].reason == "stop now"
    assert noticed[0].checkpoint == checkpoint
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.interrupted
    assert not result.ok
    assert result.error.code == ErrorCode.INTERRUPTED
    assert result.text == "stop now"
    assert result.stop_reason == "interrupted"
    with pytest.raises(RunInterruptedError):
        result.raise_for_error()
    state = await agent.state_dict()
    assert memory_is_paired(state["memory"])
    resumed = await agent.call("continue", model=ScriptedModel(["resumed"]))
    assert resumed.ok
    assert resumed.text == "resumed"


async def test_interrupt_cancels_a_running_tool_which_sees_cancelled_error():
    cleaned = asyncio.Event()
    running = asyncio.Event()

    @tool
    async def careful() -> str:
        """Wait until cancelled."""
        running.set()
        try:
            await asyncio.Event().wait()  # only the interrupt ends it
        except asyncio.CancelledError:
            cleaned.set()
            raise
        return "never"

    async def interrupt_when_running() -> None:
        await running.wait()
        assert agent.interrupt()

    agent = ReActAgent("a", "", ScriptedModel([tool_call("careful"), "x"]), tools=[careful])
    interrupter = asyncio.create_task(interrupt_when_running())
    events = [event async for event in agent.events("go")]
    await interrupter
    assert cleaned.is_set()
    post = next(e for e in events if isinstance(e, PostActingEvent))
    assert post.result.is_error
    assert post.result.output == "interrupted"
    assert events[-1].result.interrupted  # type: ignore[attr-defined]


async def test_interrupt_tools_wait_lets_the_tool_finish():
    running = asyncio.Event()
    release = asyncio.Event()

    @tool
    async def steady() -> str:
        """Finish once released."""
        running.set()
        await release.wait()
        return "slept"

    async def interrupt_when_running() -> None:
        await running.wait()
        assert agent.interrupt()
        release.set()  # the tool ends after the interrupt: "wait" must not cancel it

    agent = ReActAgent(
        "a", "", ScriptedModel([tool_call("steady"), "x"]), tools=[steady], interrupt_tools="wait"
    )
    interrupter = asyncio.create_task(interrupt_when_running())
    events = [event async for event in agent.events("go")]
    await interrupter
    post = next(e for e in events if isinstance(e, PostActingEvent))
    assert post.result.output == "slept"
    assert not post.result.is_error
    assert events[-1].result.interrupted  # type: ignore[attr-defined]


async def test_interrupt_stops_a_model_that_is_waiting_for_its_next_chunk():
    waiting = asyncio.Event()
    agent = ReActAgent("a", "", stalling_model(waiting, asyncio.Event()))  # it never resumes
    task = asyncio.create_task(agent.call("go"))
    await waiting.wait()
    assert agent.interrupt()
    result = await asyncio.wait_for(task, 1.0)
    assert result.interrupted


async def test_interrupt_without_a_run_returns_false():
    agent = ReActAgent("a", "", ScriptedModel(["x"]))
    assert agent.interrupt() is False


async def test_request_timeout_ends_the_run_with_timeout():
    agent = ReActAgent(
        "a",
        "",
        ScriptedModel([tool_call("held"), "x"]),
        tools=[Held().tool],  # never released: the timeout ends the run
        request_timeout=0.05,
    )
    result = await asyncio.wait_for(agent.call("go"), 2.0)
    assert not result.ok
    assert result.error is not None
    assert result.error.code == ErrorCode.TIMEOUT
    assert result.interrupted
    with pytest.raises(RunTimeoutError):
        result.raise_for_error()
    assert memory_is_paired((await agent.state_dict())["memory"])


def test_call_sync_without_a_loop():
    agent = ReActAgent("a", "", ScriptedModel(["sync"]))
    assert agent.call_sync("hi").text == "sync"


async def test_call_sync_inside_a_running_loop_uses_a_private_thread():
    agent = ReActAgent("a", "", ScriptedModel(["from a thread"]))
    result = agent.call_sync("hi")
    assert result.text == "from a thread"


async def test_state_round_trip_and_continue():
    agent = ReActAgent(
        "a", "", ScriptedModel([tool_call("sleepy", seconds=0), "one"]), tools=[sleepy]
    )
    await agent.call("first")
    saved = await agent.state_dict()
    assert saved["schema_version"] == 1
    assert saved["call_counter"] == 1
    assert saved["runs"] == 1
    fresh = ReActAgent(
        "a", "", ScriptedModel([tool_call("sleepy", seconds=0), "two"]), tools=[sleepy]
    )
    await fresh.load_state_dict(saved)
    events = [e async for e in fresh.events("second")]
    assert [e.tool_call.id for e in events if isinstance(e, PreActingEvent)] == ["call_2"]
    state = AgentState.model_validate(await fresh.state_dict())
    assert [m.role for m in state.memory][:4] == ["user", "assistant", "tool", "assistant"]
    assert state.usage.requests == 4


async def test_newer_schema_version_is_refused_with_the_fix():
    agent = ReActAgent("a", "", ScriptedModel(["x"]))
    data = AgentState().model_dump(mode="json")
    data["schema_version"] = 99
    with pytest.raises(StateVersionError, match="upgrade rxagent"):
        await agent.load_state_dict(data)


async def test_load_state_into_a_busy_session_is_refused():
    held = Held()
    agent = ReActAgent("a", "", ScriptedModel([tool_call("held"), "x"]), tools=[held.tool])
    task = asyncio.create_task(agent.call("go"))
    await held.started.wait()
    with pytest.raises(SessionBusyError):
        await agent.load_state_dict(AgentState(memory=(Msg.user("x"),)))
    held.release.set()
    assert (await task).ok


async def test_external_cancellation_of_call_cancels_the_run():
    held = Held()  # never released: the cancellation ends it
    agent = ReActAgent("a", "", ScriptedModel([tool_call("held"), "x"]), tools=[held.tool])
    before = other_tasks()
    task = asyncio.create_task(agent.call("go"))
    await held.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await settle(10)
    assert other_tasks() == before
    assert not agent.is_running()
