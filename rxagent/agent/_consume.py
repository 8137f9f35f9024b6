"""Consuming a run: as a bounded async iterator of events, or as its final result."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Any

from reactivex import abc

from rxagent.events import BaseEvent, PostCallEvent

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from reactivex import Observable

    from rxagent.result import AgentResult

__all__ = ["ResultObserver", "bounded_events", "final_result", "optional_result"]


async def bounded_events(
    make: Callable[[asyncio.Event], Observable[BaseEvent]], size: int
) -> AsyncIterator[BaseEvent]:
    """Iterate a run's events through a buffer of `size`; a full buffer pauses the run.

    `make(gate)` builds the run's Observable; the run waits on `gate` while it is clear. Closing
    the iterator early (a `break`, an exception) disposes the subscription, which cancels the run.
    """
    items: deque[BaseEvent] = deque()
    signal = asyncio.Event()
    gate = asyncio.Event()
    gate.set()
    failure: list[BaseException] = []
    finished: list[bool] = []

    def on_next(event: BaseEvent) -> None:
        items.append(event)
        if len(items) >= size:
            gate.clear()
        signal.set()

    def on_error(exc: Exception) -> None:
        failure.append(exc)
        signal.set()

    def on_completed() -> None:
        finished.append(True)
        signal.set()

    subscription = make(gate).subscribe(on_next, on_error, on_completed)
    try:
        while True:
            while items:
                event = items.popleft()
                if not gate.is_set() and len(items) < size:
                    gate.set()
                yield event
            if failure:
                raise failure[0]
            if finished:
                return
            signal.clear()
            if not (items or failure or finished):
                await signal.wait()
    finally:
        subscription.dispose()


async def final_result(observable: Observable[BaseEvent]) -> AgentResult[Any]:
    """Run to the end and return the result the PostCallEvent carries.

    A run that cannot start raises what arrived as `on_error`; cancelling the caller disposes the
    subscription, which cancels the run.
    """
    result = await optional_result(observable)
    if result is None:  # pragma: no cover - the loop always ends with PostCall
        raise RuntimeError("the run ended without a PostCallEvent")
    return result


async def optional_result(observable: Observable[BaseEvent]) -> AgentResult[Any] | None:
    """`final_result`, or None when the observable completes without a run (a recorded decision)."""
    observer = ResultObserver(asyncio.get_running_loop().create_future())
    subscription = observable.subscribe(observer)
    try:
        return await observer.done
    finally:
        subscription.dispose()


class ResultObserver(abc.ObserverBase[BaseEvent]):
    """Keeps the result of a run's PostCall and resolves `done` when the run is over.

    `done` gets the result, None when the run completed without a PostCall (a recorded
    decision that started no run), or the error that arrived instead.
    """

    __slots__ = ("done", "result")

    def __init__(self, done: asyncio.Future[AgentResult[Any] | None]) -> None:
        self.done = done
        self.result: AgentResult[Any] | None = None

    def on_next(self, value: BaseEvent) -> None:
        if type(value) is PostCallEvent:
            self.result = value.result

    def on_error(self, error: Exception) -> None:
        if not self.done.done():
            self.done.set_exception(error)

    def on_completed(self) -> None:
        if not self.done.done():
            self.done.set_result(self.result)
