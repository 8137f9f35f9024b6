"""The engine of one run: phases, publishing, interrupts, state and leases."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from pydantic import JsonValue, TypeAdapter, ValidationError
from reactivex import Observable, Observer, abc
from reactivex.disposable import Disposable

from rxagent._fast import trusted
from rxagent.agent.context import _CURRENT, RunContext
from rxagent.errors import (
    AgentRunError,
    ApprovalError,
    ConcurrentModificationError,
    ErrorCode,
    HookFailedError,
    Reject,
    SessionBusyError,
    UnknownRunError,
)
from rxagent.events import (
    BaseEvent,
    ErrorEvent,
    InterruptedEvent,
)
from rxagent.result import AgentError, StopReason
from rxagent.state import AgentState, StoreUnavailableError, pair_tool_calls
from rxagent.tokens._bound import MESSAGE_OVERHEAD, message_bound

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.agent._agent import ReActAgent
    from rxagent.agent._approval import Decision
    from rxagent.hooks import Hook
    from rxagent.messages import Msg, ToolUseBlock
    from rxagent.state import ParkedBatch, PendingApproval
from rxagent.agent._finish import finish_run
from rxagent.agent._output import UNSET
from rxagent.agent._steps import PHASES

__all__ = ["Checkpoint", "EventT", "Phase", "Run"]

logger: Final = logging.getLogger("rxagent.agent")
_EXTRA: Final = TypeAdapter(dict[str, JsonValue])  # hooks' state must stay JSON

EventT = TypeVar("EventT", bound=BaseEvent)
Phase = Literal["start", "step", "final", "finish"]
Checkpoint = Literal["before_reasoning", "chunk", "before_acting", "after_tool"]


class _PhaseObservable(Observable[BaseEvent]):
    """A phase of a run: an Observable that never emits while it is being subscribed.

    Its events come later, from the run's task, so subscribing needs none of the
    current-thread trampoline `Observable.subscribe` sets up for sources that emit during
    subscription. Skipping it makes chaining a phase about ten times cheaper (see
    `bench/overhead.py`); everything else about the Observable is unchanged.
    """

    def subscribe(
        self,
        on_next: abc.ObserverBase[BaseEvent] | Callable[[BaseEvent], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        on_completed: Callable[[], None] | None = None,
        *,
        scheduler: abc.SchedulerBase | None = None,
    ) -> abc.DisposableBase:
        """Subscribe an observer, or callbacks, to the phase."""
        if isinstance(on_next, abc.ObserverBase):
            observer: abc.ObserverBase[BaseEvent] = on_next
        else:
            observer = Observer(on_next, on_error, on_completed)
        return self._subscribe_core(observer, scheduler)


class Run:
    """The engine of one run (internal). `RunContext` is its public face."""

    def __init__(
        self,
        agent: ReActAgent,
        ctx: RunContext,
        inputs: tuple[Msg, ...],
        *,
        gate: asyncio.Event | None,
        queue: bool,
    ) -> None:
        self.agent = agent
        self.ctx = ctx
        self.inputs = inputs
        self.gate = gate
        self.queue = queue
        self.chain = agent.hooks
        self.observer: abc.ObserverBase[BaseEvent] | None = None
        self.task: asyncio.Task[None] | None = None
        self.tool_tasks: set[asyncio.Task[Any]] = set()
        self.open_calls: dict[str, ToolUseBlock] = {}  # PreActing delivered, PostActing not yet
        ctx._open_calls = self.open_calls  # progress() after a call's result is dropped
        self.predecessor: Run | None = None  # with queue=True: the run to wait for
        self.lease_timer: asyncio.TimerHandle | None = None
        self.lease_task: asyncio.Task[None] | None = None
        self.pyctx = contextvars.copy_context()
        self.pyctx.run(_CURRENT.set, ctx)
        self.disposed = False
        self.finished = False
        self.done: asyncio.Future[None] = ctx.loop.create_future()
        self.awaiting_model = False
        self.awaiting_tool = False
        self.drainer: asyncio.Task[None] | None = None
        self.cancelled_for_interrupt = False
        self.reporting_hook_error = False
        self.timer: asyncio.TimerHandle | None = None
        self.holds_session = False
        self.holds_slot = False
        self.holds_lease = False
        self.state = AgentState()
        self.version = 0
        self.decision: Decision | None = None  # approve() / reject(): the decision to record
        self.parked: ParkedBatch | None = None  # the session's batch waiting for approval
        self.pending: tuple[PendingApproval, ...] = ()  # its approvals not decided yet
        self.system_msg: Msg | None = None
        self.tool_calls_made = 0
        self.tools_withdrawn = agent.max_tool_calls == 0  # no budget: no tools on offer at all
        self.stop_reason: StopReason = "no_tool_calls"
        self.error: AgentError | None = None
        self.reply: Msg | None = None
        self.output: Any = UNSET  # the validated structured output, once an answer passed
        self.output_retries = 0
        self.interrupt_checkpoint: Checkpoint | None = None
        self.lease_renewed_at = 0.0
        self.following: Phase | None = None
        self.requested: Phase | None = None
        self.call_counter = 0
        self.stream_restarts = 0
        self.memory_start = 0
        self.memory_bound = 0
        self.bounded_upto = 0
        self.inject: dict[type[Any], object] = {RunContext: ctx, **ctx.deps}
        policy = agent.checkpoint
        self.checkpoint_steps = policy == "step" or (
            policy == "auto" and getattr(agent.store, "persistent", True)
        )

    # -- phases as observables -------------------------------------------------------------------

    def phase(self, kind: Phase) -> Observable[BaseEvent]:
        """The cold Observable of one phase: subscribing runs its coroutine on the run's task."""

        def subscribe(
            observer: abc.ObserverBase[BaseEvent], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            return self._start_phase(kind, observer)

        return _PhaseObservable(subscribe)

    def next_phase(self) -> Observable[BaseEvent] | None:
        """The phase after the one that just completed, or None at the end of the run."""
        kind, self.following = self.following, None
        return None if kind is None or self.disposed else self.phase(kind)

    def _start_phase(
        self, kind: Phase, observer: abc.ObserverBase[BaseEvent]
    ) -> abc.DisposableBase:
        if self.disposed:
            return Disposable()
        self.observer = observer
        self.requested = kind
        task = self.task
        if task is None or task.done() or asyncio.current_task() is not task:
            self.task = self.ctx.loop.create_task(self._drive(), context=self.pyctx)
        # else: subscribed from inside the run's task as the previous phase completed; that
        # task runs this phase next, which saves a task and a loop tick per step.
        # Cancelling is the run's business (run_observable's disposable): a phase's own
        # subscription is disposed as soon as the phase completes, while its task still runs.
        return Disposable()

    async def _drive(self) -> None:
        """Run the requested phases, one after the other, in this task."""
        while (kind := self.requested) is not None:
            self.requested = None
            if not await self._run_phase(kind):
                return

    async def _run_phase(self, kind: Phase) -> bool:
        """Run one phase and complete its observer; False when the run cannot go on."""
        observer = self.observer
        assert observer is not None
        try:
            try:
                following = await PHASES[kind](self)
            except HookFailedError as exc:  # a hook with on_error="propagate" failed
                cause = exc.__cause__
                if isinstance(cause, AgentRunError):  # a typed failure: the run fails with it
                    following = await self.fail(
                        cause.code, str(cause), source=f"hook:{exc.hook}", exception=cause
                    )
                else:
                    following = await self.fail(
                        ErrorCode.UNKNOWN, str(exc), source=f"hook:{exc.hook}", exception=exc
                    )
            except AgentRunError as exc:  # a typed failure of the user's code (a stop condition)
                following = await self.fail(exc.code, str(exc), source=exc.source, exception=exc)
            except Reject as reject:  # refused where only the whole run can be refused
                following = await self.fail(
                    ErrorCode.HOOK_REJECTED,
                    f"the run was rejected: {reject.reason}",
                    source=f"hook:{reject.hook}",
                    exception=reject,
                )
            except asyncio.CancelledError:
                if self.disposed:
                    return False
                self.error = AgentError(code=ErrorCode.CANCELLED, message="the run was cancelled")
                self.stop_reason = "error"
                await self.finish()
                observer.on_completed()
                raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the run cannot go on: a bug, or a session taken elsewhere
            if isinstance(exc, StoreUnavailableError):  # an outage, not a bug: no traceback
                logger.warning("run %s stopped: %s", self.ctx.run_id, exc)
            elif not isinstance(exc, SessionBusyError | ApprovalError):
                logger.exception("run %s failed unexpectedly", self.ctx.run_id)
            await self._abandon()
            if not self.disposed:
                observer.on_error(exc)
            return False
        if self.disposed:
            return False
        self.following = following
        observer.on_completed()
        return True

    # -- emitting --------------------------------------------------------------------------------

    async def publish(self, event: EventT) -> EventT:
        """Run `event` through the hooks, deliver it, then deliver what that produced.

        A refused event (`Reject`, or a propagating hook failure) is still delivered, as it was
        made, before the refusal propagates: subscribers see what was refused.
        """
        try:
            if self.chain.has_hooks(type(event)):  # most chunks have no hooks: no coroutine
                event = await self.chain.dispatch(event, report=self._report_hook_error)
        except (Reject, HookFailedError):
            self._deliver(event)
            if self.ctx._pending:
                await self.drain(quiet=True)
            raise
        self._deliver(event)
        if self.ctx._pending:
            await self.drain()
        gate = self.gate
        if gate is not None and not gate.is_set():
            await gate.wait()
        return event

    def _deliver(self, event: BaseEvent) -> None:
        if not self.disposed and self.observer is not None:
            self.observer.on_next(event)

    def start_drainer(self) -> None:
        """Deliver what a tool or the model emits while the run's own task is suspended in it."""
        if self.drainer is None or self.drainer.done():
            self.drainer = self.ctx.loop.create_task(self.drain(), context=self.pyctx)

    async def join_drainer(self) -> None:
        """Wait for the drainer to deliver what it holds (an interrupt never cancels it)."""
        drainer, self.drainer = self.drainer, None
        if drainer is not None:
            await drainer

    async def drain(self, *, quiet: bool = False) -> None:
        """Deliver events emitted by hooks and tools, in emission order.

        With `quiet`, a hook refusing one of them (`Reject`, a propagating failure) is logged
        instead of raised: used where the run is already ending.
        """
        pending = self.ctx._pending
        while pending:
            event = self.ctx._make_emitted(*pending.popleft())
            hook_error = isinstance(event, ErrorEvent) and event.source.startswith("hook:")
            self.reporting_hook_error = hook_error
            try:
                dispatched = await self.chain.dispatch(event, report=self._report_hook_error)
            except (Reject, HookFailedError) as exc:
                if not quiet:
                    self._deliver(event)
                    raise
                logger.error("a hook refused %s while the run was ending: %s", event.type, exc)
                dispatched = event
            finally:
                self.reporting_hook_error = False
            self._deliver(dispatched)
            gate = self.gate
            if gate is not None and not gate.is_set():  # a slow consumer slows emitters too
                await gate.wait()

    def _report_hook_error(self, hook: Hook, exc: Exception) -> None:
        if self.reporting_hook_error:  # a hook failing on a hook-failure report: log only
            logger.error("hook %r failed on an ErrorEvent: %r", hook.name, exc)
            return
        self.ctx._enqueue(
            ErrorEvent,
            {
                "code": ErrorCode.UNKNOWN,
                "message": f"hook {hook.name!r} failed: {type(exc).__name__}: {exc}",
                "source": f"hook:{hook.name}",
                "recoverable": True,
                "exception": type(exc).__name__,
            },
        )

    async def fail(
        self,
        code: ErrorCode,
        message: str,
        *,
        source: str,
        exception: BaseException | None = None,
        recoverable: bool = False,
    ) -> Phase:
        """Record a run failure, emit its ErrorEvent, and go to `finish`."""
        name = type(exception).__name__ if exception is not None else None
        self.error = AgentError(code=code, message=message, source=source, exception=name)
        self.stop_reason = "error"
        event = self.ctx._make(
            ErrorEvent,
            code=code,
            message=message,
            source=source,
            recoverable=recoverable,
            exception=name,
        )
        try:
            await self.publish(event)
        except (Reject, HookFailedError) as exc:  # the run is failing already: don't fail twice
            logger.error("a hook refused the ErrorEvent of a failing run: %s", exc)
        return "finish"

    # -- interrupts ------------------------------------------------------------------------------

    def request_interrupt(self, msg: Msg | None, *, timeout: bool = False) -> bool:
        """Ask the run to stop at its next checkpoint (sync; called from any task on the loop)."""
        if self.finished or self.disposed:
            return False
        ctx = self.ctx
        if ctx._interrupt_requested:
            return True
        ctx._interrupt_requested = True
        ctx._interrupt_reason = msg
        ctx._timed_out = timeout
        cancel_tool = self.awaiting_tool and self.agent.interrupt_tools == "cancel"
        if (self.awaiting_model or cancel_tool) and self.task is not None:
            self.cancelled_for_interrupt = True
            self.task.cancel()
        if self.agent.interrupt_tools == "cancel":
            for task in self.tool_tasks:
                task.cancel()
        ctx._notify()
        return True

    def absorb_interrupt_cancel(self) -> bool:
        """Whether a `CancelledError` came from `request_interrupt`; if so, it is absorbed."""
        if not self.cancelled_for_interrupt:
            return False
        self.cancelled_for_interrupt = False
        if self.task is not None:
            self.task.uncancel()
        return True

    async def interrupted(self, checkpoint: Checkpoint) -> Phase:
        """Handle a noticed interrupt: emit InterruptedEvent and go to `finish`."""
        ctx = self.ctx
        reason = ctx._interrupt_reason.text if ctx._interrupt_reason is not None else ""
        self.interrupt_checkpoint = checkpoint
        self.stop_reason = "interrupted"
        await self.publish(ctx._make(InterruptedEvent, checkpoint=checkpoint, reason=reason))
        if ctx._timed_out:
            limit = self.agent.request_timeout
            following = await self.fail(
                ErrorCode.TIMEOUT,
                f"the run exceeded request_timeout={limit}s; raise request_timeout or make the "
                "run shorter",
                source="agent",
            )
            self.stop_reason = "interrupted"  # by the clock: the run is cut like an interrupt
            return following
        self.error = AgentError(
            code=ErrorCode.INTERRUPTED, message=reason or "the run was interrupted"
        )
        return "finish"

    # -- lifecycle -------------------------------------------------------------------------------

    def dispose(self) -> None:
        """The subscriber went away: cancel everything and save consistent state, silently."""
        if self.disposed or self.finished:
            return
        self.disposed = True
        if self.timer is not None:
            self.timer.cancel()
        for tool_task in self._side_tasks():
            tool_task.cancel()
        task = self.task
        if task is not None and not task.done():
            task.cancel()
        cleanup = self.ctx.loop.create_task(self._cleanup_after_dispose(task))
        self.agent._runs.track(cleanup)

    async def _cleanup_after_dispose(self, task: asyncio.Task[None] | None) -> None:
        if task is not None:
            pending: list[asyncio.Task[Any]] = [task, *self._side_tasks()]
            await asyncio.wait(pending)
        await self._abandon("interrupted: the run was cancelled")

    def _side_tasks(self) -> list[asyncio.Task[Any]]:
        """The run's tool tasks and its drainer, if any."""
        tasks = list(self.tool_tasks)
        if self.drainer is not None:
            tasks.append(self.drainer)
        return tasks

    async def _abandon(self, reason: str = "not executed: the run failed") -> None:
        """End a run that cannot finish normally: keep memory paired, save it, free the session."""
        for task in self._side_tasks():  # nothing of the run outlives it
            task.cancel()
        try:
            self.ctx._memory = pair_tool_calls(self.ctx._memory, reason, self.memory_start)
            if self.holds_session:
                await self.save_state()
        except Exception:  # a failing store must not keep the session locked
            logger.exception("could not save session %r", self.ctx.session_id)
        finally:
            try:
                await self._release_lease()
            except Exception as exc:  # the store is down too: the lease expires by its TTL
                logger.warning("could not release the lease of %r: %r", self.ctx.session_id, exc)
            finally:
                self._release()

    def _release(self) -> None:
        if self.finished:
            return
        self.finished = True
        if self.timer is not None:
            self.timer.cancel()
        if self.lease_timer is not None:
            self.lease_timer.cancel()
        if self.lease_task is not None:
            self.lease_task.cancel()
        self.agent._runs.end(self)
        if not self.done.done():
            self.done.set_result(None)

    async def _release_lease(self) -> None:
        if self.holds_lease:
            self.holds_lease = False
            await self.agent.store.release_lease(
                self.agent.name, self.ctx.session_id, self.ctx.run_id
            )

    async def save_state(self) -> None:
        """Write the session's state (memory, counters, usage, extra) to the store."""
        ctx = self.ctx
        base = self.state
        # Messages are the run's own frozen objects: building the state without revalidating
        # them keeps a save O(1) per message instead of a pydantic pass over the whole history.
        state = trusted(
            AgentState,
            memory=tuple(ctx._memory),
            active_groups=base.active_groups,
            pending_approvals=self.pending,
            parked=self.parked,
            step=base.step + ctx.step,
            call_counter=self.call_counter,
            runs=base.runs + (1 if self.finished or self.reply is not None else 0),
            usage=base.usage + ctx.usage,
            extra=self._json_extra(),
        )
        self.version = await self.agent.store.save(
            self.agent.name, ctx.session_id, state, expected_version=self.version
        )
        await self.renew_lease()

    async def checkpoint(self) -> None:
        """Save after a completed step (memory is paired there), so a crash loses one step at most.

        A store that fails here does not fail the run: the failure is a recoverable
        `ErrorEvent(source="store")`, and the save at the end of the run tries again. A version
        conflict (someone else wrote the session despite the lease) does fail it.
        """
        try:
            await self.save_state()
        except ConcurrentModificationError as exc:
            raise UnknownRunError(str(exc), source="store") from exc
        except Exception as exc:
            logger.warning("checkpoint of session %r failed: %r", self.ctx.session_id, exc)
            self.ctx._enqueue(
                ErrorEvent,
                {
                    "code": ErrorCode.UNKNOWN,
                    "message": f"checkpoint failed ({type(exc).__name__}: {exc}); the run goes on",
                    "source": "store",
                    "recoverable": True,
                    "exception": type(exc).__name__,
                },
            )

    def _json_extra(self) -> dict[str, Any]:
        """`RunContext.extra` as JSON; keys whose values are not JSON are left out, and said so."""
        extra = self.ctx._extra
        try:
            return _EXTRA.validate_python(extra)
        except ValidationError:
            kept: dict[str, Any] = {}
            dropped: list[str] = []
            for key, value in extra.items():
                try:
                    kept.update(_EXTRA.validate_python({key: value}))
                except ValidationError:
                    dropped.append(key)
            message = (
                f"RunContext.extra keys {dropped} hold values that are not JSON and were not "
                "saved; store str, numbers, bools, None, lists and dicts of those"
            )
            logger.error(message)
            self.ctx._enqueue(
                ErrorEvent,
                {
                    "code": ErrorCode.UNKNOWN,
                    "message": message,
                    "source": "agent",
                    "recoverable": True,
                    "exception": "ValidationError",
                },
            )
            return kept

    async def renew_lease(self) -> None:
        """Extend the session lease when a third of its TTL has passed (checked per step)."""
        ttl = self.agent.lease_ttl_s
        now = time.monotonic()
        if self.holds_lease and now - self.lease_renewed_at > ttl / 4:
            self.lease_renewed_at = now
            if not await self.agent.store.renew_lease(
                self.agent.name, self.ctx.session_id, self.ctx.run_id, ttl
            ):
                logger.warning("lost the lease on session %r", self.ctx.session_id)

    def keep_lease(self) -> None:
        """Renew the lease every third of its TTL while the run lives, even inside a long step.

        The renewal runs in a short task (the store is async); the timer and that task end with
        the run.
        """
        if self.finished or not self.holds_lease:
            return
        ttl = self.agent.lease_ttl_s
        if self.lease_task is None or self.lease_task.done():
            self.lease_task = self.ctx.loop.create_task(self.renew_lease())
        self.lease_timer = self.ctx.loop.call_later(ttl / 3, self.keep_lease)

    def bound_request(self, messages: tuple[Msg, ...]) -> int:
        """An upper bound on the tokens of `messages` (the system prompt and memory).

        Memory only grows during a run, so the bound is kept up to date in O(new messages);
        `ContextWindow` reads it through the run context to skip counting requests that fit.
        """
        memory = self.ctx._memory
        for message in memory[self.bounded_upto :]:
            self.memory_bound += message_bound(message)
        self.bounded_upto = len(memory)
        system = message_bound(messages[0]) if len(messages) > len(memory) else 0
        return MESSAGE_OVERHEAD + self.memory_bound + system

    def end_step(self, following: Phase) -> Phase:
        """Close the current step and name the phase that follows."""
        self.ctx.step += 1
        self.stream_restarts = 0
        return following

    def next_call_id(self) -> str:
        """The next deterministic tool-call id of this session (`call_<n>`)."""
        self.call_counter += 1
        return f"call_{self.call_counter}"

    async def finish(self) -> None:
        """Pair tool calls, build the result, dispatch PostCall, save, release, deliver."""
        await finish_run(self)
