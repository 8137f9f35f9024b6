"""The engine of one run: phases, publishing, interrupts, state and leases.

`Run` holds a run's state and is the one object the phases work on; its groups of behaviour
live in private modules: `_phases` (running a phase), `_publishing` (draining emitted events,
failing), `_interrupts`, `_teardown` (disposal, abandoning, release) and `_saving` (state,
checkpoints, the lease).
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from reactivex.disposable import Disposable

from rxagent.agent import _interrupts, _publishing, _saving, _teardown
from rxagent.context import _CURRENT, RunContext
from rxagent.errors import HookFailedError, Reject
from rxagent.events import BaseEvent
from rxagent.state import AgentState
from rxagent.tokens._bound import MESSAGE_OVERHEAD, message_bound

if TYPE_CHECKING:
    from reactivex import Observable, abc

    from rxagent.agent._agent import ReActAgent
    from rxagent.agent._approval import Decision
    from rxagent.messages import Msg, ToolUseBlock
    from rxagent.result import AgentError, StopReason
    from rxagent.state import ParkedBatch, PendingApproval
from rxagent.agent._finish import finish_run
from rxagent.agent._output import UNSET
from rxagent.agent._phases import PhaseObservable, run_phase

__all__ = ["Checkpoint", "EventT", "Phase", "Run"]

EventT = TypeVar("EventT", bound=BaseEvent)
Phase = Literal["start", "step", "final", "finish"]
Checkpoint = Literal["before_reasoning", "chunk", "before_acting", "after_tool"]


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

        return PhaseObservable(subscribe)

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
            if not await run_phase(self, kind):
                return

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

    # The run's machinery lives in modules of its own, one concern each; their functions take the
    # run first, so they are the run's methods as they are (no wrapper, no second signature).

    drain = _publishing.drain
    _report_hook_error = _publishing.report_hook_error
    fail = _publishing.fail

    # -- interrupts ------------------------------------------------------------------------------

    request_interrupt = _interrupts.request_interrupt
    absorb_interrupt_cancel = _interrupts.absorb_interrupt_cancel
    interrupted = _interrupts.handle_interrupt

    # -- lifecycle -------------------------------------------------------------------------------

    dispose = _teardown.dispose
    _abandon = _teardown.abandon
    _release = _teardown.release
    _release_lease = _saving.release_lease
    save_state = _saving.save_state
    checkpoint = _saving.save_checkpoint
    renew_lease = _saving.renew_lease
    keep_lease = _saving.keep_lease

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
