"""The owners of a run's state: each is the only writer of its data (see `_run.py`)."""

from __future__ import annotations

import contextvars
import logging
from typing import TYPE_CHECKING, Any, Final, Literal

from rxagent.errors import SessionBusyError
from rxagent.tokens._bound import MESSAGE_OVERHEAD, message_bound

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Sequence

    from rxagent.messages import Msg, ToolUseBlock
    from rxagent.result import ErrorInfo, StopReason
    from rxagent.state import SessionStore

__all__ = ["UNSET", "Budget", "Interrupt", "Lease", "Outcome", "RequestBound"]

logger: Final = logging.getLogger("rxagent.agent")

UNSET: Final = object()
"""`Outcome.output` before a valid answer was read."""


class Outcome:
    """How a run ends: its stop reason, error, reply and structured output.

    Only `stop()`, `fail()` and `interrupt()` write them (and `settle()` the final reply, at
    PostCall); `ended` tells the loop to stop.
    """

    __slots__ = ("ended", "error", "output", "reply", "stop_reason")

    def __init__(self) -> None:
        self.ended = False
        self.stop_reason: StopReason = "no_tool_calls"
        self.error: ErrorInfo | None = None
        self.reply: Msg | None = None
        self.output: Any = UNSET

    def stop(self, reason: StopReason, reply: Msg | None = None, output: Any = UNSET) -> None:
        """End the run for `reason`, with `reply` (default: chosen at the end) and `output`."""
        self.ended = True
        self.stop_reason = reason
        if reply is not None:
            self.reply = reply
        if output is not UNSET:
            self.output = output

    def fail(self, error: ErrorInfo) -> None:
        """End the run as failed with `error` (also to amend the error of a failed run)."""
        self.ended = True
        self.stop_reason = "error"
        self.error = error

    def interrupt(self, error: ErrorInfo) -> None:
        """End the run as interrupted (by a caller, or by its `request_timeout`)."""
        self.ended = True
        self.stop_reason = "interrupted"
        self.error = error

    def settle(self, reply: Msg) -> None:
        """Fix the final reply: the one PostCall hooks left."""
        self.reply = reply


class Lease:
    """A run's lease on its session, so the session cannot run twice, even across processes.

    It is acquired at the start of the run, renewed while the run lives (a timer every third of
    the TTL, and after each save, each at most once per quarter of the TTL), and released at
    the end.
    """

    __slots__ = (
        "_context",
        "_loop",
        "_renewed_at",
        "_store",
        "_task",
        "_timer",
        "_ttl",
        "_who",
        "held",
    )

    def __init__(
        self,
        store: SessionStore,
        agent: str,
        session_id: str,
        run_id: str,
        ttl: float,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self._store = store
        self._who = (agent, session_id, run_id)
        self._ttl = ttl
        self._loop = loop
        self.held = False
        self._renewed_at = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._context = contextvars.Context()  # the run's, from `acquire()`: renewals run in it

    async def acquire(self) -> None:
        """Take the session's lease and keep it alive.

        Raises:
            SessionBusyError: Another run (maybe in another process) holds it.
        """
        agent, session_id, run_id = self._who
        if not await self._store.acquire_lease(agent, session_id, run_id, self._ttl):
            raise SessionBusyError(agent, session_id)
        self.held = True
        self._renewed_at = self._loop.time()
        self._context = contextvars.copy_context()  # a renewal's log records name the run
        self._schedule()

    def _schedule(self) -> None:
        # The timer gets a context of its own: a cancelled timer stays on the loop until it is
        # due, and the run's context would keep the run alive that long.
        self._timer = self._loop.call_later(
            self._ttl / 3, self._keep, context=contextvars.Context()
        )

    async def renew(self) -> None:
        """Extend the lease if a quarter of its TTL passed since it was last renewed."""
        now = self._loop.time()
        if self.held and now - self._renewed_at > self._ttl / 4:
            self._renewed_at = now
            if not await self._store.renew_lease(*self._who, self._ttl):
                logger.warning("lost the lease on session %r", self._who[1])

    def _keep(self) -> None:
        if not self.held:
            return
        if self._task is None or self._task.done():
            self._task = self._loop.create_task(self.renew(), context=self._context)
        self._schedule()

    async def release(self) -> None:
        """Give the lease back to the store, if held."""
        if self.held:
            self.held = False
            self.stop()
            await self._store.release_lease(*self._who)

    def stop(self) -> None:
        """Stop keeping the lease alive (it expires by its TTL unless released)."""
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            self._task.cancel()


class Budget:
    """What a run may still spend: tool calls, answer repairs and model-stream restarts.

    Args:
        max_tool_calls: The run's tool-call budget (None: no limit; 0: no tools at all).
    """

    __slots__ = ("limit", "repairs", "restarts", "used", "withdrawn")

    def __init__(self, max_tool_calls: int | None) -> None:
        self.limit = max_tool_calls
        self.used = 0
        self.withdrawn = max_tool_calls == 0  # tools are no longer offered to the model
        self.repairs = 0  # invalid answers sent back to be fixed
        self.restarts = 0  # broken model streams restarted in the current step

    def take(self, calls: Sequence[ToolUseBlock]) -> tuple[Sequence[ToolUseBlock], ...]:
        """Split a batch into the calls the budget allows and the calls it cuts.

        Once the budget is spent, tools are withdrawn from the following requests.
        """
        if self.limit is None:
            self.used += len(calls)
            return calls, ()
        allowed = calls[: max(self.limit - self.used, 0)]
        self.used += len(allowed)
        if self.used >= self.limit:
            self.withdrawn = True
        return allowed, calls[len(allowed) :]


class RequestBound:
    """An upper bound on the tokens of each step's request, kept up to date in O(new messages).

    Memory only grows during a run, so only the messages added since the last step are
    measured. `ContextWindow` reads the bound through `RunContext.request_bound` to skip
    counting requests that clearly fit.
    """

    __slots__ = ("_memory", "_request", "_upto")

    def __init__(self) -> None:
        self._memory = 0
        self._upto = 0
        self._request: tuple[tuple[Msg, ...], int] | None = None

    def measure(self, memory: Sequence[Msg], messages: tuple[Msg, ...]) -> None:
        """Bound `messages`, this step's request: the system prompt (if any) and `memory`."""
        for message in memory[self._upto :]:
            self._memory += message_bound(message)
        self._upto = len(memory)
        system = message_bound(messages[0]) if len(messages) > len(memory) else 0
        self._request = (messages, MESSAGE_OVERHEAD + self._memory + system)

    def of(self, messages: tuple[Msg, ...]) -> int | None:
        """The bound of `messages` if they are the request measured last, else None."""
        request = self._request
        return request[1] if request is not None and request[0] is messages else None


class Interrupt:
    """A request to stop the run, and where the run's task waits when it comes.

    The request comes from a caller (`agent.interrupt()`) or from the run's `request_timeout`.
    The run's task is cancelled for an interrupt only while it waits in the model's stream, or
    in a tool running on it; `absorb()` tells that cancellation apart from any other.
    """

    __slots__ = ("_task_cancelled", "reason", "requested", "timed_out", "waiting_in")

    def __init__(self) -> None:
        self.requested = False
        self.reason: Msg | None = None  # the caller's message: the run's reply
        self.timed_out = False
        self.waiting_in: Literal["model", "tool"] | None = None
        self._task_cancelled = False

    def ask(self, msg: Msg | None, *, timeout: bool) -> None:
        """Record the request (the first one counts)."""
        self.requested = True
        self.reason = msg
        self.timed_out = timeout

    def cancelled_task(self) -> None:
        """Note that the run's task was cancelled to stop it where it waits."""
        self._task_cancelled = True

    def absorb(self) -> bool:
        """Whether a `CancelledError` of the run's task came from an interrupt.

        If so it is taken back: the run goes on, to end as interrupted.
        """
        if not self._task_cancelled:
            return False
        self._task_cancelled = False
        return True
