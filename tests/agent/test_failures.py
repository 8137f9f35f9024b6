"""Hooks that refuse or fail anywhere, store conflicts, leases: the run always ends cleanly."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from virtual_time import VirtualTimeLoop, run_in_virtual_time  # type: ignore[import-not-found]

from rxagent import (
    CustomEvent,
    ErrorCode,
    ErrorEvent,
    InMemoryStore,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreCallEvent,
    ReActAgent,
    ReasoningChunkEvent,
    Reject,
    SessionBusyError,
    current_run,
    hook,
    tool,
)
from rxagent.events import BaseEvent
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call


@tool
async def nap(seconds: float) -> str:
    """Sleep.

    Args:
        seconds: How long.
    """
    await asyncio.sleep(seconds)
    return "ok"


async def collect(agent: ReActAgent, msg: Any = "hi", **kw: Any) -> list[BaseEvent]:
    return [e async for e in agent.events(msg, **kw)]


@pytest.mark.parametrize(
    "event_type", [PostReasoningEvent, ReasoningChunkEvent, PostActingEvent, ErrorEvent]
)
async def test_reject_outside_pre_events_fails_the_run_cleanly(event_type: type[BaseEvent]):
    @hook(event_type, name="refuser")
    def refuse(event: Any) -> None:
        raise Reject("no")

    @hook(PostActingEvent, priority=1)
    def error_maker(event: PostActingEvent) -> None:
        raise ValueError("to produce an ErrorEvent")

    hooks = [refuse, error_maker] if event_type is ErrorEvent else [refuse]
    model = ScriptedModel([tool_call("nap", seconds=0), "done", "again"])
    agent = ReActAgent("a", "", model, tools=[nap], hooks=hooks)
    events = await collect(agent)
    assert_event_protocol(events)
    result = events[-1].result  # type: ignore[attr-defined]
    assert not result.ok
    assert result.error.code == ErrorCode.HOOK_REJECTED
    assert result.error.source == "hook:refuser"
    agent.hooks.remove(refuse)
    assert (await agent.call("again")).ok  # the session was released


async def test_a_propagating_post_call_hook_fails_the_run_once():
    @hook(PostCallEvent, on_error="propagate")
    def strict(event: PostCallEvent) -> None:
        raise RuntimeError("no reply for you")

    agent = ReActAgent("a", "", ScriptedModel(["x"]), hooks=[strict])
    events = await asyncio.wait_for(collect(agent), 2.0)
    assert_event_protocol(events)
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1
    assert errors[0].source == "hook:strict"
    result = events[-1].result  # type: ignore[attr-defined]
    assert not result.ok
    assert "no reply for you" in result.error.message


@pytest.mark.parametrize("event_type", [PreCallEvent, PostActingEvent])
async def test_a_propagating_failure_still_delivers_the_event(event_type: type[BaseEvent]):
    @hook(event_type, on_error="propagate")
    def strict(event: Any) -> None:
        raise RuntimeError("boom")

    model = ScriptedModel([tool_call("nap", seconds=0), "done"])
    agent = ReActAgent("a", "", model, tools=[nap], hooks=[strict])
    events = await collect(agent)
    assert_event_protocol(events)
    assert any(isinstance(e, event_type) for e in events)
    assert not events[-1].result.ok  # type: ignore[attr-defined]


def test_the_lease_is_renewed_while_the_run_steps():
    ttl = 30.0  # a real TTL: the loop's clock is virtual, so its minutes take no time

    async def main(loop: VirtualTimeLoop) -> None:
        checked = asyncio.Event()

        def step(messages: Any, tools: Any, options: Any) -> Any:
            """Steps of a quarter of the TTL each, until the test has checked the lease."""
            return "done" if checked.is_set() else tool_call("nap", seconds=ttl / 4)

        store = InMemoryStore(clock=loop.time)
        first = ReActAgent(
            "bot",
            "",
            FunctionModel(step),
            tools=[nap],
            store=store,
            lease_ttl_s=ttl,
            max_iters=1000,
            request_timeout=None,
        )
        second = ReActAgent("bot", "", ScriptedModel(["intruder"]), store=store, lease_ttl_s=ttl)
        running = asyncio.create_task(first.call("long"))
        await asyncio.sleep(2 * ttl)  # the behaviour: beyond one TTL, only renewal keeps it
        with pytest.raises(SessionBusyError):
            await second.call("me too")
        checked.set()
        assert (await running).ok

    run_in_virtual_time(main)


async def test_a_conflicting_save_fails_the_run_instead_of_raising():
    store = InMemoryStore()

    @tool
    async def meddle() -> str:
        """Write the session behind the run's back."""
        stored = await store.load("a", "default")
        assert stored is not None
        await store.save("a", "default", stored.state)
        return "meddled"

    agent = ReActAgent(
        "a", "", ScriptedModel([tool_call("meddle"), "done"]), tools=[meddle], store=store
    )
    await agent.load_state_dict({"schema_version": 1})
    events = await collect(agent)
    assert_event_protocol(events)
    result = events[-1].result  # type: ignore[attr-defined]
    assert not result.ok
    assert "version" in result.error.message
    assert not agent.is_running()


async def test_an_invalid_emitted_payload_becomes_one_error_event():
    @hook(PreCallEvent)
    def bad(event: PreCallEvent) -> None:
        current_run().emit(CustomEvent, nme="typo")

    events = await collect(ReActAgent("a", "", ScriptedModel(["x"]), hooks=[bad]))
    assert_event_protocol(events)
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.exception == "ValidationError"
    assert "emit(CustomEvent" in error.message
    seqs = [e.seq for e in events]
    assert seqs == list(range(len(events)))
