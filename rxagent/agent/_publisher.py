"""Publishing a run's events: build, dispatch through the hooks, deliver, drain what was emitted.

`Publisher` owns the run's event sequence: the `seq` counter, the queue of events hooks and
tools emit (`current_run().emit(...)`, from any thread), the observer events are delivered to,
and the drainer task that delivers emitted events while the run's own task is suspended in a
tool or in the model.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pydantic import ValidationError

from rxagent._fast import plain_defaults
from rxagent.errors import ErrorCode, HookFailedError, Reject
from rxagent.events import BaseEvent, ErrorEvent

if TYPE_CHECKING:
    import contextvars
    from collections.abc import Callable

    from reactivex import abc

    from rxagent.context import RunContext
    from rxagent.hooks import Hook, HookChain

__all__ = ["NESTED_ROOM", "EventT", "Publisher"]

EventT = TypeVar("EventT", bound=BaseEvent)

logger: Final = logging.getLogger("rxagent.agent")

NESTED_ROOM: Final = 64
"""How many events of nested runs may wait for delivery before those runs wait too."""


class Publisher:
    """The events of one run, in order: the only writer of `seq` and of the emitted-event queue.

    Args:
        ctx: The run's context (the common fields of every event come from it).
        chain: The agent's hooks.
        gate: Cleared while a bounded consumer is full (`events()`); publishing waits for it.
        pyctx: The run's context variables, for the drainer task.
    """

    __slots__ = (
        "_loop_thread",
        "_reporting_hook_error",
        "_seq",
        "chain",
        "closed",
        "ctx",
        "drainer",
        "gate",
        "observer",
        "on_pending",
        "only",
        "pending",
        "pyctx",
        "room",
        "waiter",
    )

    def __init__(
        self,
        ctx: RunContext,
        chain: HookChain,
        gate: asyncio.Event | None,
        pyctx: contextvars.Context,
    ) -> None:
        self.ctx = ctx
        self.chain = chain
        self.gate = gate
        self.pyctx = pyctx
        self.observer: abc.ObserverBase[BaseEvent] | None = None
        # the event types the subscriber reads, None for all (`call()` reads PostCall only):
        # other types are still built for hooks that see them, but not delivered
        self.only: frozenset[type[BaseEvent]] | None = None
        self.closed = False  # the subscriber went away: nothing more is delivered
        # what hooks and tools emitted, and the events of nested runs (forwarded as they are)
        self.pending: deque[tuple[type[BaseEvent], dict[str, Any]] | BaseEvent] = deque()
        self.waiter: asyncio.Future[None] | None = None  # the run waits for tools on it
        self.on_pending: Callable[[], None] | None = None  # called when an event is queued
        self.drainer: asyncio.Task[None] | None = None
        # cleared while nested runs' events wait here in numbers: those runs wait on it
        self.room = asyncio.Event()
        self.room.set()
        self._seq = 0
        self._reporting_hook_error = False
        self._loop_thread = threading.get_ident()

    # -- building --------------------------------------------------------------------------------

    def next_seq(self) -> int:
        """Take the next `seq`."""
        seq = self._seq
        self._seq = seq + 1
        return seq

    def _common(self) -> dict[str, Any]:
        ctx = self.ctx
        return {
            "run_id": ctx.run_id,
            "session_id": ctx.session_id,
            "agent": ctx.agent,
            "path": ctx.path,
            "step": ctx.step,
            "seq": self.next_seq(),
            "timestamp": time.time(),
            "modified_by": (),
            "changes": (),
        }

    def wants(self, event_type: type[BaseEvent]) -> bool:
        """Whether anyone sees an event of `event_type`: the subscriber, or a hook.

        An event nobody sees need not be built: `skip()` takes its place.
        """
        only = self.only
        return only is None or event_type in only or self.chain.has_hooks(event_type)

    def skip(self) -> bool:
        """Stand in for an event nobody sees: take its `seq`; True when emitted events wait.

        The `seq` of every later event is then what it would have been, and a caller that gets
        True drains the waiting events (`await drain()`) where the event would have been
        published.
        """
        self._seq += 1
        return bool(self.pending)

    def make(self, event_type: type[EventT], **payload: Any) -> EventT:
        """Build an event of the run from trusted values, without validation (the hot path)."""
        return event_type._construct({**plain_defaults(event_type), **self._common(), **payload})

    def _make_emitted(self, event_type: type[BaseEvent], payload: dict[str, Any]) -> BaseEvent:
        """Build an event a hook or tool emitted (validated); a bad payload becomes an error."""
        fields = self._common()
        try:
            return event_type.model_validate({**fields, **payload})
        except ValidationError as exc:
            fields.update(
                type="error",
                code=ErrorCode.UNKNOWN,
                message=f"emit({event_type.__name__}, ...) got an invalid payload: {exc}",
                source="agent",
                recoverable=True,
                exception="ValidationError",
            )
            return ErrorEvent._construct(fields)

    # -- emitted events --------------------------------------------------------------------------

    def emit(self, event_type: type[BaseEvent], payload: dict[str, Any]) -> None:
        """Queue an event a hook or tool emitted; safe from any thread."""
        if threading.get_ident() != self._loop_thread:
            self.ctx.loop.call_soon_threadsafe(self.enqueue, event_type, payload)
        else:
            self.enqueue(event_type, payload)

    def enqueue(self, event_type: type[BaseEvent], payload: dict[str, Any]) -> None:
        """Queue an event (on the loop's thread) and wake whoever delivers it."""
        self.pending.append((event_type, payload))
        self.notify()

    def forward(self, event: BaseEvent) -> None:
        """Queue a nested run's event (on the loop's thread); it is delivered as it is.

        With `NESTED_ROOM` events waiting, `room` is cleared: the nested run (whose gate it
        is) waits until this run has delivered them, so a slow consumer slows it too.
        """
        pending = self.pending
        pending.append(event)
        if len(pending) >= NESTED_ROOM:
            self.room.clear()
        self.notify()

    def notify(self) -> None:
        """Wake the run's task if it waits for tools (an event arrived, a tool ended)."""
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        elif self.on_pending is not None:
            self.on_pending()

    def fail_later(
        self,
        code: ErrorCode,
        message: str,
        *,
        source: str,
        exception: str,
        recoverable: bool = True,
    ) -> None:
        """Queue an `ErrorEvent`, delivered after the event being published now."""
        self.enqueue(
            ErrorEvent,
            {
                "code": code,
                "message": message,
                "source": source,
                "recoverable": recoverable,
                "exception": exception,
            },
        )

    # -- publishing ------------------------------------------------------------------------------

    async def publish(self, event: EventT) -> EventT:
        """Run `event` through the hooks, deliver it, then deliver what that produced.

        A refused event (`Reject`, or a propagating hook failure) is still delivered, as it was
        made, before the refusal propagates: subscribers see what was refused.
        """
        try:
            if self.chain.has_hooks(type(event)):  # most chunks have no hooks: no coroutine
                event = await self.chain.dispatch(event, report=self.report_hook_error)
        except (Reject, HookFailedError):
            self.deliver(event)
            if self.pending:
                await self.drain(quiet=True)
            raise
        self.deliver(event)
        if self.pending:
            await self.drain()
        gate = self.gate
        if gate is not None and not gate.is_set():
            await gate.wait()
        return event

    def deliver(self, event: BaseEvent) -> None:
        """Hand `event` to the subscriber (nothing after it went away, or that it does not read)."""
        if not self.closed and self.observer is not None:
            only = self.only
            if only is None or type(event) in only:
                self.observer.on_next(event)

    async def drain(self, *, quiet: bool = False) -> None:
        """Deliver the events hooks and tools emitted, in emission order, through the hooks.

        With `quiet` (the run is ending), a hook refusing one is logged instead of raised.
        """
        pending = self.pending
        while pending:
            item = pending.popleft()
            if len(pending) < NESTED_ROOM and not self.room.is_set():
                self.room.set()
            if isinstance(item, BaseEvent):  # a nested run's: its own run saw it through
                await self.chain.dispatch_nested(item, report=self.report_hook_error)
                self.deliver(item)
            else:
                await self._drain_emitted(item, quiet)
            gate = self.gate
            if gate is not None and not gate.is_set():  # a slow consumer slows emitters too
                await gate.wait()

    async def _drain_emitted(
        self, item: tuple[type[BaseEvent], dict[str, Any]], quiet: bool
    ) -> None:
        """Build an emitted event, run it through the hooks and deliver it."""
        event = self._make_emitted(*item)
        self._reporting_hook_error = isinstance(event, ErrorEvent) and event.source.startswith(
            "hook:"
        )
        try:
            dispatched = await self.chain.dispatch(event, report=self.report_hook_error)
        except (Reject, HookFailedError) as exc:
            if not quiet:
                self.deliver(event)
                raise
            logger.error("a hook refused %s while the run was ending: %s", event.type, exc)
            dispatched = event
        finally:
            self._reporting_hook_error = False
        self.deliver(dispatched)

    def report_hook_error(self, hook: Hook, exc: Exception) -> None:
        """Queue a recoverable `ErrorEvent` for a failed hook (only logged while reporting one)."""
        if self._reporting_hook_error:  # a hook failing on a hook-failure report: log only
            logger.error("hook %r failed on an ErrorEvent: %r", hook.name, exc)
            return
        self.fail_later(
            ErrorCode.UNKNOWN,
            f"hook {hook.name!r} failed: {type(exc).__name__}: {exc}",
            source=f"hook:{hook.name}",
            exception=type(exc).__name__,
        )

    # -- while the run's task is suspended in a tool or the model ---------------------------------

    def start_drainer(self) -> None:
        """Deliver what a tool or the model emits while the run's own task waits in it."""
        if self.drainer is None or self.drainer.done():
            self.drainer = self.ctx.loop.create_task(self.drain(), context=self.pyctx)

    async def join_drainer(self) -> None:
        """Wait for the drainer to deliver what it holds (an interrupt never cancels it)."""
        drainer, self.drainer = self.drainer, None
        if drainer is not None:
            await drainer

    async def wait_for(self, task: asyncio.Task[Any]) -> None:
        """Wait for `task` (a tool), delivering the events emitted meanwhile."""
        while True:
            if self.pending:
                await self.drain()
            elif task.done():
                return
            else:
                waiter = self.waiter = self.ctx.loop.create_future()
                try:
                    await waiter
                finally:
                    self.waiter = None
