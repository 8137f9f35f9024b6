"""One run's state, split among owners that are the only writers of their data.

- `Run` is the engine of one run and the `RunEngine` behind its public `RunContext`: the
  session's memory and counters, the run's task and tool tasks, interrupts, and ending a run
  that cannot finish normally (disposal, abandoning, release).
- `Outcome`: why the run ends, its error, reply and output; written only by `stop()`,
  `fail()` and `interrupt()`.
- `Lease`: the run's lease on its session in the store (acquire, renew, keep alive, release).
- `Publisher` (`_publisher.py`): the run's events, in order.
- `Approvals` (`_approval.py`): the session's parked batch and its pending approvals.

The loop that drives a run is in `_loop.py`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import TYPE_CHECKING, Any, Final, Literal

from rxagent.agent._approval import Approvals
from rxagent.agent._publisher import Publisher
from rxagent.agent._saving import save_state
from rxagent.context import _CURRENT, RunContext
from rxagent.errors import ErrorCode, HookFailedError, Reject, SessionBusyError
from rxagent.events import ErrorEvent, InterruptedEvent
from rxagent.result import ErrorInfo
from rxagent.state import AgentState, pair_tool_calls
from rxagent.tokens._bound import MESSAGE_OVERHEAD, message_bound

if TYPE_CHECKING:
    from rxagent.agent._agent import ReActAgent
    from rxagent.agent._approval import Decision
    from rxagent.events import BaseEvent
    from rxagent.messages import Msg, ToolUseBlock
    from rxagent.models.base import ChatModel, ModelOptions
    from rxagent.output import OutputPlan
    from rxagent.result import StopReason
    from rxagent.state import SessionStore

__all__ = ["UNSET", "Checkpoint", "Lease", "Outcome", "Run"]

logger: Final = logging.getLogger("rxagent.agent")

Checkpoint = Literal["before_reasoning", "chunk", "before_acting", "after_tool"]
"""Where a run noticed an interrupt (`InterruptedEvent.checkpoint`)."""

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

    __slots__ = ("_loop", "_renewed_at", "_store", "_task", "_timer", "_ttl", "_who", "held")

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
        self._timer = self._loop.call_later(self._ttl / 3, self._keep)

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
            self._task = self._loop.create_task(self.renew())
        self._timer = self._loop.call_later(self._ttl / 3, self._keep)

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


class Run:
    """The engine of one run (internal); `RunContext` is its public face.

    Args:
        agent: The agent.
        inputs: The run's input messages.
        ctx_args: The `RunContext` arguments (session, model, options, deps, output type and
            plan, loop).
        gate: Cleared while a bounded consumer is full.
        decision: An approval decision to record before the run (`approve` / `reject`).
    """

    def __init__(
        self,
        agent: ReActAgent,
        inputs: tuple[Msg, ...],
        *,
        session_id: str,
        model: ChatModel,
        options: ModelOptions,
        deps: dict[type[Any], object],
        output_type: object | None,
        output_plan: OutputPlan | None,
        loop: asyncio.AbstractEventLoop,
        gate: asyncio.Event | None,
        decision: Decision | None,
    ) -> None:
        self.agent = agent
        self.inputs = inputs
        self.decision = decision
        ctx = self.ctx = RunContext(
            agent=agent.name,
            session_id=session_id,
            model=model,
            options=options,
            deps=deps,
            output_type=output_type,
            path=(agent.name,),
            loop=loop,
            engine=self,
            output_plan=output_plan,
        )
        self.output_plan = output_plan  # typed here; the context offers it as a plain value
        self.pyctx = contextvars.copy_context()
        self.pyctx.run(_CURRENT.set, ctx)
        self.events = Publisher(ctx, agent.hooks, gate, self.pyctx)
        self.lease = Lease(agent.store, agent.name, session_id, ctx.run_id, agent.lease_ttl_s, loop)
        self.outcome = Outcome()
        self.approvals = Approvals()
        # the session, as loaded and as it grows
        self.state = AgentState()
        self.version = 0
        self.memory: list[Msg] = []
        self.memory_start = 0  # where this run's messages begin
        self.input_at: int | None = None  # where its input went (after a resumed batch)
        self.replied = False  # a PostReasoning was published: the model answered
        self.extra: dict[str, Any] = {}
        self.system_msg: Msg | None = None
        self.call_counter = 0
        self.key_origin = ctx.run_id  # the run a tool call was first seen by (idempotency)
        # the run's tasks, and its place among the session's runs
        self.task: asyncio.Task[None] | None = None
        self.tool_tasks: set[asyncio.Task[Any]] = set()
        self.open_calls: dict[str, ToolUseBlock] = {}  # PreActing delivered, PostActing not yet
        self.predecessor: Run | None = None  # with queue=True: the run to wait for
        self.done: asyncio.Future[None] = loop.create_future()
        self.disposed = False
        self.finished = False
        self.holds_session = False
        self.holds_slot = False
        # interrupts
        self.interrupt_requested = False
        self.interrupt_reason: Msg | None = None
        self.timed_out = False
        self.awaiting_model = False
        self.awaiting_tool = False
        self._cancelled_for_interrupt = False
        self._timer: asyncio.TimerHandle | None = None
        # limits
        self.tool_calls_made = 0
        self.tools_withdrawn = agent.max_tool_calls == 0  # no budget: no tools on offer at all
        self.output_retries = 0
        self.stream_restarts = 0
        self.final_reason: StopReason = "max_iters"  # why the last call without tools is made
        # the token bound of the request built for the current step (see request_bound)
        self._memory_bound = 0
        self._bounded_upto = 0
        self._request: tuple[tuple[Msg, ...], int] | None = None
        self.inject: dict[type[Any], object] = {RunContext: ctx, **ctx.deps}
        policy = agent.checkpoint
        self.checkpoint_steps = policy == "step" or (
            policy == "auto" and getattr(agent.store, "persistent", True)
        )

    # -- the RunEngine the context reads ---------------------------------------------------------

    def emit(self, event_type: type[BaseEvent], payload: dict[str, Any]) -> None:
        """Queue an event a hook or tool emitted (from any thread)."""
        self.events.emit(event_type, payload)

    def call_open(self, call_id: str) -> bool:
        """True while the tool call is between its PreActing and its PostActing."""
        return call_id in self.open_calls

    def request_bound(self, messages: tuple[Msg, ...]) -> int | None:
        """The token bound of `messages` if they are the request built for this step."""
        request = self._request
        return request[1] if request is not None and request[0] is messages else None

    def bound_request(self, messages: tuple[Msg, ...]) -> None:
        """Record an upper bound on the tokens of this step's request (system prompt and memory).

        Memory only grows during a run, so the bound is kept up to date in O(new messages);
        `ContextWindow` reads it through `RunContext.request_bound` to skip counting requests
        that fit.
        """
        memory = self.memory
        for message in memory[self._bounded_upto :]:
            self._memory_bound += message_bound(message)
        self._bounded_upto = len(memory)
        system = message_bound(messages[0]) if len(messages) > len(memory) else 0
        self._request = (messages, MESSAGE_OVERHEAD + self._memory_bound + system)

    # -- steps -----------------------------------------------------------------------------------

    def end_step(self) -> None:
        """Close the current step: the next one has the next number."""
        self.ctx.step += 1
        self.stream_restarts = 0

    def next_call_id(self) -> str:
        """The next deterministic tool-call id of this session (`call_<n>`)."""
        self.call_counter += 1
        return f"call_{self.call_counter}"

    # -- failing ---------------------------------------------------------------------------------

    async def fail(
        self,
        code: ErrorCode,
        message: str,
        *,
        source: str,
        exception: BaseException | None = None,
        recoverable: bool = False,
        interrupted: bool = False,
    ) -> None:
        """End the run as failed (or `interrupted`, for a timeout) and emit its `ErrorEvent`."""
        name = type(exception).__name__ if exception is not None else None
        error = ErrorInfo(code=code, message=message, source=source, exception=name)
        if interrupted:
            self.outcome.interrupt(error)
        else:
            self.outcome.fail(error)
        event = self.events.make(
            ErrorEvent,
            code=code,
            message=message,
            source=source,
            recoverable=recoverable,
            exception=name,
        )
        try:
            await self.events.publish(event)
        except (Reject, HookFailedError) as exc:  # the run is failing already: don't fail twice
            logger.error("a hook refused the ErrorEvent of a failing run: %s", exc)

    # -- interrupts ------------------------------------------------------------------------------

    def start_clock(self) -> None:
        """Start the run's `request_timeout`: when it expires, the run is interrupted."""
        limit = self.agent.request_timeout
        if limit is not None:
            self._timer = self.ctx.loop.call_later(
                limit, lambda: self.request_interrupt(None, timeout=True)
            )

    def request_interrupt(self, msg: Msg | None, *, timeout: bool = False) -> bool:
        """Ask the run to stop at its next checkpoint (sync; from any task on the loop)."""
        if self.finished or self.disposed:
            return False
        if self.interrupt_requested:
            return True
        self.interrupt_requested = True
        self.interrupt_reason = msg
        self.timed_out = timeout
        cancel_tools = self.agent.interrupt_tools == "cancel"
        if (self.awaiting_model or (self.awaiting_tool and cancel_tools)) and self.task is not None:
            self._cancelled_for_interrupt = True
            self.task.cancel()
        if cancel_tools:
            for task in self.tool_tasks:
                task.cancel()
        self.events.notify()
        return True

    def stopping(self) -> bool:
        """Whether an interrupt arrived (a call, so it is read afresh after each await)."""
        return self.interrupt_requested

    def absorb_interrupt_cancel(self) -> bool:
        """Whether a `CancelledError` came from `request_interrupt`; if so, it is absorbed."""
        if not self._cancelled_for_interrupt:
            return False
        self._cancelled_for_interrupt = False
        if self.task is not None:
            self.task.uncancel()
        return True

    async def interrupted(self, checkpoint: Checkpoint) -> None:
        """End the run at `checkpoint`, where it noticed an interrupt or its timeout."""
        reason = self.interrupt_reason.text if self.interrupt_reason is not None else ""
        event = self.events.make(InterruptedEvent, checkpoint=checkpoint, reason=reason)
        self.outcome.interrupt(
            ErrorInfo(code=ErrorCode.INTERRUPTED, message=reason or "the run was interrupted")
        )
        await self.events.publish(event)
        if self.timed_out:  # cut by the clock, like an interrupt, and failed with TIMEOUT
            limit = self.agent.request_timeout
            await self.fail(
                ErrorCode.TIMEOUT,
                f"the run exceeded request_timeout={limit}s; raise request_timeout or make the "
                "run shorter",
                source="agent",
                interrupted=True,
            )

    # -- ending ----------------------------------------------------------------------------------

    def complete(self) -> None:
        """Tell the subscriber the run is over (unless it went away)."""
        if not self.disposed and self.events.observer is not None:
            self.events.observer.on_completed()

    def dispose(self) -> None:
        """The subscriber went away: cancel everything and save consistent state, silently."""
        if self.disposed or self.finished:
            return
        self.disposed = True
        self.events.closed = True
        if self._timer is not None:
            self._timer.cancel()
        for side in self._side_tasks():
            side.cancel()
        task = self.task
        if task is not None and not task.done():
            task.cancel()
        cleanup = self.ctx.loop.create_task(self._cleanup_after_dispose(task))
        self.agent._runs.track(cleanup)

    async def _cleanup_after_dispose(self, task: asyncio.Task[None] | None) -> None:
        if task is not None:
            await asyncio.wait([task, *self._side_tasks()])
        await self.abandon("interrupted: the run was cancelled")

    def _side_tasks(self) -> list[asyncio.Task[Any]]:
        tasks = list(self.tool_tasks)
        if self.events.drainer is not None:
            tasks.append(self.events.drainer)
        return tasks

    async def abandon(self, reason: str = "not executed: the run failed") -> None:
        """End a run that cannot finish normally: pair memory, save it, free the session."""
        for task in self._side_tasks():  # nothing of the run outlives it
            task.cancel()
        try:
            self.memory[:] = pair_tool_calls(self.memory, reason, self.memory_start)
            if self.holds_session:
                await save_state(self)
        except Exception:  # a failing store must not keep the session locked
            logger.exception("could not save session %r", self.ctx.session_id)
        finally:
            try:
                await self.lease.release()
            except Exception as exc:  # the store is down too: the lease expires by its TTL
                logger.warning("could not release the lease of %r: %r", self.ctx.session_id, exc)
            finally:
                self.release()

    def release(self) -> None:
        """Mark the run finished: stop its timers, end it in the agent's books, resolve `done`."""
        if self.finished:
            return
        self.finished = True
        if self._timer is not None:
            self._timer.cancel()
        self.lease.stop()
        self.agent._runs.end(self)
        if not self.done.done():
            self.done.set_result(None)
