"""Regressions: races and edge cases found by an adversarial review of the loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel
from virtual_time import VirtualTimeLoop, run_in_virtual_time  # type: ignore[import-not-found]

from rxagent import (
    ActingChunkEvent,
    ErrorCode,
    InMemoryStore,
    Msg,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreReasoningEvent,
    ReActAgent,
    SessionBusyError,
    ToolUseBlock,
    current_run,
    hook,
    tool,
)
from rxagent.events import BaseEvent
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call


def other_tasks() -> set[asyncio.Task[Any]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


async def settle(ticks: int = 5) -> None:
    for _ in range(ticks):
        await asyncio.sleep(0)


async def until(condition: Callable[[], bool], ticks: int = 1000) -> None:
    """Yield to the loop until `condition()` holds (at most `ticks` times)."""
    for _ in range(ticks):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"still false after {ticks} ticks of the loop")


async def test_an_interrupt_while_a_tools_progress_is_delivered_is_an_interrupt():
    @tool
    async def crawl() -> str:
        """Report progress, then wait: only the interrupt ends it."""
        for i in range(100):
            current_run().progress(i)
            await asyncio.sleep(0)
        await asyncio.Event().wait()
        return "done"

    agent = ReActAgent("a", "", ScriptedModel([tool_call("crawl"), "ok"]), tools=[crawl])
    events: list[BaseEvent] = []
    async for event in agent.events("go"):
        events.append(event)
        if isinstance(event, ActingChunkEvent) and event.chunk == 3:
            agent.interrupt(msg="enough")
    assert_event_protocol(events)
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.stop_reason == "interrupted"
    assert result.error.code == ErrorCode.INTERRUPTED


@pytest.mark.parametrize("failing", [PreActingEvent, "post_acting_of_first"])
async def test_a_propagating_hook_mid_batch_stops_every_tool_and_closes_every_call(failing: Any):
    log: list[str] = []
    release = asyncio.Event()  # holds job 2 until after the run

    @tool
    async def work(n: int) -> str:
        """Work.

        Args:
            n: Which.
        """
        log.append(f"start {n}")
        if n == 2:
            await release.wait()
        log.append(f"finished {n}")
        return "ok"

    if failing is PreActingEvent:

        @hook(PreActingEvent, on_error="propagate")
        def guard(event: PreActingEvent) -> None:
            if event.tool_call.input["n"] == 2:
                raise RuntimeError("policy store down")

    else:

        @hook("post_acting", on_error="propagate")
        def guard(event: Any) -> None:
            if event.tool_call.input["n"] == 1:
                raise RuntimeError("audit down")

    model = ScriptedModel([[tool_call("work", n=1), tool_call("work", n=2)], "x"])
    agent = ReActAgent("a", "", model, tools=[work], hooks=[guard])
    before = other_tasks()
    events = [e async for e in agent.events("go")]
    assert_event_protocol(events)
    assert not events[-1].result.ok  # type: ignore[attr-defined]
    await settle()
    assert other_tasks() <= before
    release.set()  # a job 2 left running after the run would finish now
    await settle()
    assert "finished 2" not in log  # cancelled, not left running after the run


async def test_a_cancelled_queued_run_hands_its_place_on():
    asked: list[str] = []
    release = asyncio.Event()

    async def slow(messages, tools, options):
        asked.append(messages[-1].text)
        await release.wait()
        return "reply to " + messages[-1].text

    model = FunctionModel(slow)
    agent = ReActAgent("a", "", model)
    a = asyncio.create_task(agent.call("A", queue=True))
    await until(lambda: asked == ["A"])
    b = asyncio.create_task(agent.call("B", queue=True))
    await settle()  # B waits behind A
    c = asyncio.create_task(agent.call("C", queue=True))
    await settle()  # C waits behind B
    assert asked == ["A"]
    b.cancel()
    await settle()
    assert agent.is_running()
    assert asked == ["A"]  # C still waits for A
    release.set()
    assert (await a).text == "reply to A"
    assert (await c).text == "reply to C"
    assert asked == ["A", "C"]
    with pytest.raises(asyncio.CancelledError):
        await b


def test_the_lease_is_kept_through_a_long_tool():
    ttl = 30.0  # a real TTL: the loop's clock is virtual, so its minutes take no time

    async def main(loop: VirtualTimeLoop) -> None:
        started = asyncio.Event()
        release = asyncio.Event()

        @tool
        async def slow() -> str:
            """Run until released."""
            started.set()
            await release.wait()
            return "x"

        store = InMemoryStore(clock=loop.time)
        first = ReActAgent(
            "bot",
            "",
            ScriptedModel([tool_call("slow"), "done"]),
            tools=[slow],
            store=store,
            lease_ttl_s=ttl,
            request_timeout=None,
        )
        second = ReActAgent("bot", "", ScriptedModel(["no"]), store=store, lease_ttl_s=ttl)
        running = asyncio.create_task(first.call("one"))
        await started.wait()
        await asyncio.sleep(2 * ttl)  # the behaviour: time passes inside one tool call
        with pytest.raises(SessionBusyError):
            await second.call("two")
        release.set()
        assert (await running).ok

    run_in_virtual_time(main)


async def test_a_slow_consumer_bounds_what_tools_emit():
    @tool
    async def chatty() -> str:
        """Emit a lot."""
        for i in range(300):
            current_run().progress(i)
            await asyncio.sleep(0)
        return "done"

    agent = ReActAgent("a", "", ScriptedModel([tool_call("chatty"), "ok"]), tools=[chatty])
    stream = agent.events("go", buffer=4)
    most = 0
    async for _ in stream:
        frame = stream.ag_frame  # type: ignore[attr-defined]
        if frame is not None:
            most = max(most, len(frame.f_locals.get("items", ())))
        await asyncio.sleep(0)
    assert most <= 5


async def test_non_json_extra_is_reported_and_the_rest_is_saved():
    @hook(PostReasoningEvent)
    def remember(event: PostReasoningEvent) -> None:
        current_run().extra["good"] = [1, 2]
        current_run().extra["bad"] = {1, 2}

    agent = ReActAgent("a", "", ScriptedModel(["hi"]), hooks=[remember])
    events = [e async for e in agent.events("x")]
    assert_event_protocol(events)
    assert any(e.type == "error" and "bad" in e.message for e in events)  # type: ignore[attr-defined]
    state = await agent.state_dict()
    assert state["extra"] == {"good": [1, 2]}
    assert [m["role"] for m in state["memory"]] == ["user", "assistant"]


@pytest.mark.parametrize("where", ["stop_when", "sys_prompt"])
async def test_a_failing_user_callable_fails_the_run_as_data(where: str):
    def broken(ctx: Any) -> Any:
        raise KeyError("oops")

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    kwargs: dict[str, Any] = {"stop_when": [broken]} if where == "stop_when" else {}
    prompt: Any = broken if where == "sys_prompt" else ""
    agent = ReActAgent("a", prompt, ScriptedModel([tool_call("ping"), "x"]), tools=[ping], **kwargs)
    events = [e async for e in agent.events("go")]
    assert_event_protocol(events)
    result = events[-1].result  # type: ignore[attr-defined]
    assert not result.ok
    assert result.error.source == where
    assert "oops" in result.error.message


async def test_an_interrupt_during_pre_reasoning_hooks_skips_the_model():
    in_hook = asyncio.Event()
    release = asyncio.Event()

    @hook(PreReasoningEvent)
    async def slow_hook(event: PreReasoningEvent) -> None:
        in_hook.set()
        await release.wait()

    model = FunctionModel(lambda m, t, o: "never")
    agent = ReActAgent("a", "", model, hooks=[slow_hook])
    task = asyncio.create_task(agent.call("x"))
    await in_hook.wait()
    assert agent.interrupt(msg="stop")
    release.set()
    result = await task
    assert result.interrupted
    assert model.calls == 0


async def test_output_is_read_from_the_reply_post_call_hooks_leave():
    class Out(BaseModel):
        a: int

    @hook(PostCallEvent)
    def edit(event: PostCallEvent) -> PostCallEvent:
        return event.replace(reply=Msg.assistant('{"a": 2}'))

    agent = ReActAgent("a", "", ScriptedModel(['{"a": 1}']), hooks=[edit])
    result = await agent.call("x", output_type=Out)
    assert result.output == Out(a=2)
    assert result.text == '{"a": 2}'


async def test_loaded_state_is_made_consistent():
    state = {
        "memory": [
            Msg.user("hi").model_dump(mode="json"),
            Msg.assistant([ToolUseBlock(id="call_1", name="t")]).model_dump(mode="json"),
        ]
    }
    model = ScriptedModel([tool_call("t"), "ok"])

    @tool
    def t() -> str:
        """T."""
        return "x"

    agent = ReActAgent("a", "", model, tools=[t])
    await agent.load_state_dict(state)
    await agent.call("again")
    first = model.requests[0].messages
    assert [m.role for m in first] == ["user", "assistant", "tool", "user"]
    memory = (await agent.state_dict())["memory"]
    ids = [
        b["id"]
        for m in memory
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] in ("tool_use", "tool_result")
    ]
    assert ids == ["call_1", "call_1", "call_2", "call_2"]


async def test_no_tool_budget_offers_no_tools_and_a_bad_output_type_is_refused_at_once():
    from rxagent.errors import InvalidInputError

    @tool
    def t() -> str:
        """T."""
        return "x"

    model = ScriptedModel(["plain answer"])
    agent = ReActAgent("a", "", model, tools=[t], max_tool_calls=0)
    assert (await agent.call("go")).ok
    assert model.requests[0].tools == ()
    with pytest.raises(InvalidInputError, match="output_type"):
        await agent.call("go", output_type=42)
    assert model.calls == 1


async def test_a_run_waiting_for_a_slot_can_be_interrupted():
    called = asyncio.Event()
    release = asyncio.Event()

    async def slow(messages, tools, options):
        called.set()
        await release.wait()
        return "done"

    model = FunctionModel(slow)
    agent = ReActAgent("a", "", model, max_concurrent_runs=1)
    first = asyncio.create_task(agent.call("one", session_id="s1"))
    await called.wait()  # "one" holds the only slot
    waiting = asyncio.create_task(agent.call("two", session_id="s2"))
    await until(lambda: agent.is_running("s2"))
    assert agent.interrupt("s2", msg="never mind")
    release.set()
    assert (await first).ok
    result = await waiting
    assert result.interrupted
    assert model.calls == 1
