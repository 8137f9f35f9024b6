"""The pump's keep-alive moments come from one lazily moved timer per run, not one per wait."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from rxagent.events import BaseEvent, CustomEvent
from rxagent.server._pump import RunEvents


def _event(n: int) -> BaseEvent:
    return CustomEvent(name=f"e{n}", data={"n": n}, agent="bot")


async def _paced(pauses: list[float]) -> AsyncIterator[BaseEvent]:
    for n, pause in enumerate(pauses):
        await asyncio.sleep(pause)
        yield _event(n)


def _names(batch: list[Any] | None) -> list[str]:
    assert batch is not None
    return [e.name for e in batch]


async def test_a_long_wait_gets_a_keepalive_moment_each_interval_and_loses_no_event():
    events = RunEvents(_paced([0.0, 0.25, 0.0]), lambda e: None)
    seen: list[str] = []
    empty = 0
    while (batch := await events.batch(0.04)) is not None:
        if batch == []:
            empty += 1
        seen += _names(batch)
    await events.aclose()
    assert seen == ["e0", "e1", "e2"]  # in order, none lost or doubled
    assert 2 <= empty <= 8  # 0.25 s of silence at 0.04 s: about six keep-alive moments


async def test_events_that_keep_coming_arm_one_timer_for_the_whole_run(
    monkeypatch: pytest.MonkeyPatch,
):
    loop = asyncio.get_running_loop()
    armed: list[float] = []
    call_at = loop.call_at

    def counting(when: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        if getattr(callback, "__name__", "") == "_keepalive":
            armed.append(when)
        return call_at(when, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counting)
    events = RunEvents(_paced([0.001] * 20), lambda e: None)
    seen: list[str] = []
    while (batch := await events.batch(5.0)) is not None:
        assert batch != []  # events come well within the interval
        seen += _names(batch)
    await events.aclose()
    assert len(seen) == 20
    assert len(armed) == 1  # a timeout per wait would have armed one timer per batch


async def test_a_shorter_interval_than_the_armed_timer_still_gets_its_moment_in_time():
    gate = asyncio.Event()

    async def source() -> AsyncIterator[BaseEvent]:
        yield _event(0)
        await gate.wait()
        yield _event(1)

    events = RunEvents(source(), lambda e: None)
    assert _names(await events.batch(30.0)) == ["e0"]  # arms nothing: an event was there
    waiter = asyncio.ensure_future(events.batch(30.0))  # arms a timer 30 s out
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert await asyncio.wait_for(events.batch(0.02), 1.0) == []  # re-armed for 0.02 s
    gate.set()
    assert _names(await events.batch(1.0)) == ["e1"]
    assert await events.batch(1.0) is None
    await events.aclose()


async def test_a_keepalive_left_by_a_cancelled_batch_is_never_an_event():
    gate = asyncio.Event()

    async def source() -> AsyncIterator[BaseEvent]:
        await gate.wait()
        yield _event(0)

    events = RunEvents(source(), lambda e: None)
    waiter = asyncio.ensure_future(events.batch(0.01))
    await asyncio.sleep(0)  # the batch waits on the queue
    events._keepalive()  # its moment has not come: the timer is moved on, nothing is queued
    assert events._queue.empty()
    events._deadline = 0.0
    events._keepalive()  # now it has: the keep-alive wakes the batch ...
    waiter.cancel()  # ... which is cancelled before it runs, leaving the keep-alive queued
    with pytest.raises(asyncio.CancelledError):
        await waiter
    gate.set()
    assert [getattr(e, "name", e.type) async for e in events] == ["e0"]
    await events.aclose()


async def test_a_finished_run_leaves_no_keepalive_timer_behind():
    """The timer holds the pump (and what it read); once the run's end is queued, it goes."""
    events = RunEvents(_paced([0.0, 0.05]), lambda e: None)
    seen: list[str] = []
    while (batch := await events.batch(30.0)) is not None:  # the first wait arms a 30 s timer
        seen += _names(batch)
    assert seen == ["e0", "e1"]
    assert events._timer is None  # cancelled when the end was queued, not left for 30 s
    await events.aclose()
