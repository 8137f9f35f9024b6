"""A run's events for a route: a cancel-safe iterator fed by one pump task per run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Final, final

if TYPE_CHECKING:
    from rxagent.events import AgentEvent, BaseEvent

__all__ = ["Batches", "Heartbeat", "RunEvents"]

_BUFFER: Final = 64
_EARLY: Final = 0.001  # a timer may run this much before its time (the loop's clock resolution)


@final
class _End:
    """The pump's last item: the run's events are over (`error`: it could not start)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


@final
class _KeepAlive:
    """Put in the queue by the keep-alive timer to wake a `batch` that waited long enough."""

    __slots__ = ()


_KEEPALIVE: Final = _KeepAlive()


@final
class RunEvents(AsyncIterator["AgentEvent"]):
    """Iterate a run's events; waiting on it may be cancelled without harming the run.

    A pump task reads the agent's bounded event iterator into a small queue, so a slow
    client still slows the run (back-pressure), and `asyncio.wait_for(anext(events), t)` can
    time out to send a keep-alive without cancelling anything. `aclose()` cancels a run that is
    still going (the agent then saves consistent state) and waits for the pump to end.
    """

    __slots__ = (
        "_ahead",
        "_deadline",
        "_done",
        "_error",
        "_loop",
        "_observe",
        "_queue",
        "_source",
        "_task",
        "_timer",
        "_waiting",
    )

    def __init__(
        self,
        source: AsyncIterator[BaseEvent],
        observe: Callable[[BaseEvent], BaseEvent | None],
    ) -> None:
        self._source = source
        self._observe = observe
        self._queue: asyncio.Queue[BaseEvent | _End | _KeepAlive] = asyncio.Queue(_BUFFER)
        self._ahead: list[BaseEvent] = []  # read already, returned before the queue's
        self._done = False
        self._error: BaseException | None = None  # what ended the events, once a batch saw it
        # The keep-alive moments of `batch`: one timer per run, armed for the earliest deadline
        # and moved on lazily, instead of a timeout (a timer armed and cancelled) per wait.
        self._waiting = False  # a batch waits on the queue
        self._deadline = 0.0  # when the waiting batch returns [] (loop time)
        self._timer: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._pump())

    async def _pump(self) -> None:
        source = self._source
        try:
            async for event in source:
                shown = self._observe(event)  # what the client sees (None: the event itself)
                await self._queue.put(event if shown is None else shown)
        except Exception as exc:  # a run that cannot start (a busy session): the reader raises it
            await self._queue.put(_End(exc))
        else:
            await self._queue.put(_End(None))
        finally:
            # the end is queued: no keep-alive is needed, and a pending timer would keep this
            # object (and through `_source`, the finished run) alive until it was due
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            aclose: Any = getattr(source, "aclose", None)
            if aclose is not None:  # disposes the run when the pump was cancelled mid-way
                await aclose()

    async def start(self) -> BaseEvent | None:
        """Wait for the first event (PreCall), raising what stopped the run from starting.

        None when the events ended without one (a decision that resumes no run yet).

        Raises:
            SessionBusyError: When the session has a run here or in another process.
        """
        item = await self._next()
        if isinstance(item, _End):
            self._done = True
            if item.error is not None:
                raise item.error
            return None
        self._ahead.append(item)
        return item

    async def _next(self) -> BaseEvent | _End:
        """The next item of the queue, past a keep-alive left by a batch that was cancelled."""
        item = await self._queue.get()
        while item is _KEEPALIVE:
            item = await self._queue.get()
        return item  # type: ignore[return-value]

    async def read_ahead(self, more: Callable[[BaseEvent], bool]) -> list[BaseEvent]:
        """Read events while `more(event)` holds, and the first one for which it does not.

        They are kept and come out of the iteration (or `batch`) again, first. Returns every
        event read ahead so far, oldest first.
        """
        while not self._done:
            if self._take(await self._next(), self._ahead):  # type: ignore[arg-type]
                break
            if not more(self._ahead[-1]):
                break
        return list(self._ahead)

    def __aiter__(self) -> RunEvents:
        return self

    async def __anext__(self) -> AgentEvent:
        if self._ahead:
            return self._ahead.pop(0)  # type: ignore[return-value]
        if self._done:
            self._ended()
            raise StopAsyncIteration
        item = await self._next()
        if isinstance(item, _End):
            self._done = True
            if item.error is not None:
                raise item.error
            raise StopAsyncIteration
        return item  # type: ignore[return-value]

    async def batch(self, interval: float) -> list[AgentEvent] | None:
        """Wait up to `interval` seconds for an event; return it with every event queued behind it.

        Returns:
            The events (oldest first); `[]` when `interval` passed without one (a keep-alive
            moment); None once the run's events are over. Writing a batch as one frame group
            saves a socket write per event when a run is ahead of its client.

        Raises:
            Exception: What ended the run's events (a run that could not start, a store that
                went down), once the events before it have been returned.
        """
        out: list[AgentEvent] = list(self._ahead)  # type: ignore[arg-type]
        self._ahead.clear()
        if self._done:
            if not out:
                self._ended()
            return out or None
        queue = self._queue
        if not out and queue.empty():
            deadline = self._loop.time() + interval
            self._deadline = deadline
            timer = self._timer
            if timer is None or timer.when() > deadline:
                if timer is not None:
                    timer.cancel()
                self._timer = self._loop.call_at(deadline, self._keepalive)
            self._waiting = True
            try:
                item = await queue.get()
            finally:
                self._waiting = False
            if self._take(item, out):
                if not out:
                    self._ended()
                return out or None
        while not queue.empty():
            if self._take(queue.get_nowait(), out):
                break
        return out

    def _keepalive(self) -> None:
        """The timer: wake a batch that has waited `interval` with `[]`, or move the timer on.

        The waiting batch's deadline may be later than the timer (the wait began after it was
        armed): the timer is then armed again for that deadline. A batch that is not waiting
        (its events are being written) arms the timer again when it next waits.
        """
        self._timer = None
        if not self._waiting or self._done:
            return
        if self._loop.time() + _EARLY < self._deadline:
            self._timer = self._loop.call_at(self._deadline, self._keepalive)
        elif self._queue.empty():  # an event in the queue is on its way to the batch instead
            self._queue.put_nowait(_KEEPALIVE)

    def _take(self, item: BaseEvent | _End | _KeepAlive, out: list[AgentEvent]) -> bool:
        """Append an event to `out`; at the end, mark it done (keeping its error): True."""
        if item is _KEEPALIVE:  # the waiting batch's keep-alive moment: nothing to add
            return False
        if isinstance(item, _End):
            self._done = True
            self._error = item.error
            return True
        out.append(item)  # type: ignore[arg-type]
        return False

    def _ended(self) -> None:
        """The events are over: raise what ended them, once, if anything did."""
        error, self._error = self._error, None
        if error is not None:
            raise error

    @property
    def finished(self) -> bool:
        """Whether the pump has read the run's last event (or the run could not start)."""
        return self._task.done()

    async def aclose(self) -> None:
        """Cancel the run if it is still going and wait until the pump has ended."""
        self._done = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task = self._task
        if not task.done():
            task.cancel()
        await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # retrieved: the pump keeps its errors in the queue


class Batches(AsyncIterator["list[AgentEvent]"]):
    """Iterate a run's events in batches (`RunEvents.batch`); `[]` is a keep-alive moment."""

    __slots__ = ("_events", "_interval")

    def __init__(self, events: RunEvents, interval: float) -> None:
        self._events = events
        self._interval = interval

    def __aiter__(self) -> Batches:
        return self

    async def __anext__(self) -> list[AgentEvent]:
        batch = await self._events.batch(self._interval)
        if batch is None:
            raise StopAsyncIteration
        return batch


class Heartbeat(AsyncIterator["AgentEvent | None"]):
    """Iterate events, with a None whenever `interval` seconds pass without one (cancel-safe)."""

    __slots__ = ("_events", "_interval")

    def __init__(self, events: AsyncIterator[AgentEvent], interval: float) -> None:
        self._events = events
        self._interval = interval

    def __aiter__(self) -> Heartbeat:
        return self

    async def __anext__(self) -> AgentEvent | None:
        try:
            async with asyncio.timeout(self._interval):
                return await anext(self._events)
        except TimeoutError:
            return None
