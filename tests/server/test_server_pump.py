"""The per-run event pump: batches, keep-alive moments, the end, and errors at start."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from rxagent import Msg
from rxagent.errors import SessionBusyError
from rxagent.events import BaseEvent, CustomEvent, PreCallEvent
from rxagent.server import RunHandle
from rxagent.server._pump import RunEvents


def _event(n: int) -> BaseEvent:
    return CustomEvent(name=f"e{n}", data={"n": n}, agent="bot")


async def _source(gate: asyncio.Event, before: int, after: int) -> AsyncIterator[BaseEvent]:
    yield PreCallEvent(input=[Msg.user("hi")], agent="bot")
    for n in range(before):
        yield _event(n)
    await gate.wait()
    for n in range(before, before + after):
        yield _event(n)


def _names(batch: Sequence[BaseEvent] | None) -> list[str]:
    assert batch is not None
    return [getattr(e, "name", e.type) for e in batch]


async def test_batches_hold_what_is_queued_then_an_empty_batch_then_the_end() -> None:
    gate = asyncio.Event()
    events = RunEvents(_source(gate, 3, 2), lambda e: None)
    first = await events.start()
    assert first is not None
    assert first.type == "pre_call"
    await asyncio.sleep(0)  # let the pump queue what it has
    while events._queue.qsize() < 3:
        await asyncio.sleep(0)
    assert _names(await events.batch(1.0)) == ["pre_call", "e0", "e1", "e2"]
    assert await events.batch(0.01) == []  # nothing for a while: a keep-alive moment
    gate.set()
    seen: list[str] = []
    while (batch := await events.batch(1.0)) is not None:
        seen += _names(batch)
    assert seen == ["e3", "e4"]
    assert await events.batch(1.0) is None  # stays over
    await events.aclose()


async def test_handle_batches_work_for_the_pump_and_for_plain_iterators() -> None:
    gate = asyncio.Event()
    gate.set()
    pumped = RunHandle("s1", RunEvents(_source(gate, 2, 0), lambda e: None))
    got = [name async for batch in pumped.batches(1.0) for name in _names(batch)]
    assert got == ["pre_call", "e0", "e1"]

    async def plain() -> AsyncIterator[BaseEvent]:  # not cancel-safe: one event per batch
        yield _event(7)
        yield _event(8)

    handle = RunHandle("s2", plain())  # type: ignore[arg-type]
    batches = [batch async for batch in handle.batches(1.0)]
    assert [_names(b) for b in batches] == [["e7"], ["e8"]]


async def test_a_run_that_cannot_start_raises_from_batch() -> None:
    async def busy() -> AsyncIterator[BaseEvent]:  # raises before its first event
        for n in range(1):
            if n == 0:
                raise SessionBusyError("bot", "s1")
            yield _event(n)

    events = RunEvents(busy(), lambda e: None)
    with pytest.raises(SessionBusyError):
        await events.batch(1.0)
    assert await events.batch(1.0) is None
    await events.aclose()


async def test_events_before_a_failure_come_out_before_it() -> None:
    async def breaks_off() -> AsyncIterator[BaseEvent]:  # a run whose store goes down mid-way
        for n in range(3):
            yield _event(n)
        raise ConnectionError("the store went away")

    events = RunEvents(breaks_off(), lambda e: None)
    await events.start()
    while not events.finished:  # let the pump queue everything, the failure included
        await asyncio.sleep(0)
    assert _names(await events.batch(1.0)) == ["e0", "e1", "e2"]
    with pytest.raises(ConnectionError):
        await events.batch(1.0)
    assert await events.batch(1.0) is None
    await events.aclose()
