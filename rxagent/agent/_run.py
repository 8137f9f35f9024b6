"""`Run`: the engine of one run, and the `RunEngine` behind its public `RunContext`.

A run's state is split among owners that are the only writers of their data:

- `run.outcome` (`Outcome`, `_owners.py`): why the run ends, its error, reply and output;
  written only by `stop()`, `fail()` and `interrupt()`.
- `run.lease` (`Lease`): the run's lease on its session (acquire, renew, keep alive, release).
- `run.budget` (`Budget`) and `run.bound` (`RequestBound`): the run's limits as they are spent,
  and the token bound of each step's request.
- `run.events` (`Publisher`, `_publisher.py`): the run's events, in order.
- `run.interrupt` (`Interrupt`): a request to stop, and where the run's task waits for it.
- `run.events` (`Publisher`, `_publisher.py`): the run's events, in order.
- `run.approvals` (`Approvals`, `_approval.py`): the parked batch and its pending approvals.

`Run` itself keeps the session's memory and counters and the run's task and tool tasks; it acts
on an interrupt (cancelling where the run waits) and ends a run that cannot finish normally
(disposal, abandoning, release). The loop that drives a run is in `_loop.py`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import TYPE_CHECKING, Any, Final, Literal

from rxagent.agent._approval import Approvals
from rxagent.agent._owners import Budget, Interrupt, Lease, Outcome, RequestBound
from rxagent.agent._publisher import Publisher
from rxagent.agent._saving import save_state
from rxagent.context import _CURRENT, _CURRENT_CALL, RunContext
from rxagent.errors import ErrorCode, HookFailedError, Reject
from rxagent.events import ErrorEvent, InterruptedEvent
from rxagent.interceptors import price_key
from rxagent.result import ErrorInfo
from rxagent.state import AgentState, pair_tool_calls

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rxagent.agent._agent import ReActAgent
    from rxagent.agent._approval import Decision
    from rxagent.context import Principal
    from rxagent.events import BaseEvent
    from rxagent.messages import Msg, ToolUseBlock
    from rxagent.models.base import ChatModel, ModelOptions, Usage
    from rxagent.output import OutputPlan
    from rxagent.result import StopReason

__all__ = ["Checkpoint", "Run"]

logger: Final = logging.getLogger("rxagent.agent")

_NEW_SESSION: Final = AgentState()
"""The state of a session that has none saved yet, shared by every run that starts one."""

Checkpoint = Literal["before_reasoning", "chunk", "before_acting", "after_tool"]
"""Where a run noticed an interrupt (`InterruptedEvent.checkpoint`)."""


class Run:
    """The engine of one run (internal); `RunContext` is its public face.

    Args:
        agent: The agent.
        inputs: The run's input messages.
        ctx_args: The `RunContext` arguments (session, model, options, deps, output type and
            plan, loop).
        gate: Cleared while a bounded consumer is full.
        decision: An approval decision to record before the run (`approve` / `reject`).
        parent_path: The path of the run this one is nested in (an agent called as a tool);
            empty for a top-level run.
    """

    __slots__ = (
        "__weakref__",
        "_timer",
        "agent",
        "approvals",
        "bound",
        "budget",
        "call_counter",
        "checkpoint_steps",
        "ctx",
        "decision",
        "decisions",
        "disposed",
        "done",
        "events",
        "extra",
        "final_reason",
        "finished",
        "holds_session",
        "holds_slot",
        "inject",
        "input_at",
        "inputs",
        "interrupt",
        "interrupt_listeners",
        "key_origin",
        "lease",
        "memory",
        "memory_start",
        "model_layers",
        "model_modified_by",
        "nested_waits",
        "open_calls",
        "outcome",
        "output_plan",
        "predecessor",
        "price",
        "prices",
        "pyctx",
        "reapproval",
        "replied",
        "rewritten_calls",
        "state",
        "stop_after",
        "system_msg",
        "task",
        "tool_failure",
        "tool_layers",
        "tool_tasks",
        "version",
    )

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
        principal: Principal | None = None,
        interceptors: Sequence[object] = (),
        parent_path: tuple[str, ...] = (),
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
            path=(*parent_path, agent.name),
            loop=loop,
            engine=self,
            output_plan=output_plan,
            principal=principal,
        )
        self.output_plan = output_plan  # typed here; the context offers it as a plain value
        self.pyctx = contextvars.copy_context()
        self.pyctx.run(_CURRENT.set, ctx)
        self.pyctx.run(_CURRENT_CALL.set, None)  # a nested run starts outside its parent's tool
        self.events = Publisher(ctx, agent.hooks, gate, self.pyctx)
        self.lease = Lease(agent.store, agent.name, session_id, ctx.run_id, agent.lease_ttl_s, loop)
        self.outcome = Outcome()
        self.approvals = Approvals()
        # the session, as loaded and as it grows
        self.state = _NEW_SESSION  # frozen: replaced, never changed in place
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
        self.interrupt = Interrupt()
        self.interrupt_listeners: list[Callable[[Msg | None], None]] = []  # nested runs
        self.stop_after: set[str] = set()  # tool calls that end the run (stop_after_tool)
        # a call whose nested agent parked -> the call as it ran, and that agent's approvals
        self.nested_waits: dict[str, tuple[ToolUseBlock, tuple[str, ...]]] = {}
        self.decisions: dict[str, tuple[tuple[str, bool, str | None], ...]] = {}  # on resume
        self._timer: asyncio.TimerHandle | None = None
        self.budget = Budget(agent.max_tool_calls)
        self.bound = RequestBound()
        self.final_reason: StopReason = "max_iters"  # why the last call without tools is made
        self.inject: dict[type[Any], object] = {RunContext: ctx, **ctx.deps}
        # interceptors: the agent's, then the call's own; no layers means the plain calls
        chain = agent.interceptors.with_extra(interceptors) if interceptors else agent.interceptors
        self.model_layers = chain.layers("model")
        self.tool_layers = chain.layers("tool")
        self.model_modified_by: tuple[
            str, ...
        ] = ()  # the model interceptors that changed this step
        self.tool_failure: tuple[ErrorCode, str, str, Exception] | None = None  # ends the run
        # calls whose arguments a tool interceptor changed into ones that need approval
        self.reapproval: dict[str, ToolUseBlock] = {}
        self.rewritten_calls: dict[str, ToolUseBlock] = {}  # of a resumed batch, parked again
        self.prices = agent.prices
        self.price = agent.prices.get(price_key(model))  # the run's own model, looked up once
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
        return self.bound.of(messages)

    def forward(self, event: BaseEvent) -> None:
        """Queue a nested run's event for delivery in this run's stream."""
        self.events.forward(event)

    def add_interrupt_listener(self, listener: Callable[[Msg | None], None]) -> Callable[[], None]:
        """Call `listener` on interrupt (a nested run passes it on); returns its remover."""
        self.interrupt_listeners.append(listener)

        def remove() -> None:
            if listener in self.interrupt_listeners:
                self.interrupt_listeners.remove(listener)

        return remove

    def stop_after_call(self, call_id: str) -> None:
        """End the run after the tool call `call_id` (its PostActing then has `stop=True`)."""
        self.stop_after.add(call_id)

    def wait_for_approvals(self, call: ToolUseBlock, approval_ids: tuple[str, ...]) -> None:
        """Park `call` after its batch, until a nested agent's approvals are decided."""
        if approval_ids:
            self.nested_waits[call.id] = (call, approval_ids)

    @property
    def gate(self) -> asyncio.Event | None:
        """What nested runs wait on: cleared while their events wait here in numbers."""
        return self.events.room

    def decisions_for(self, call_id: str) -> tuple[tuple[str, bool, str | None], ...]:
        """The decisions the resumed call `call_id` passes on to its nested agent."""
        return self.decisions.get(call_id, ())

    # -- steps -----------------------------------------------------------------------------------

    def end_step(self) -> None:
        """Close the current step: the next one has the next number."""
        self.ctx.step += 1
        self.budget.restarts = 0

    def next_call_id(self) -> str:
        """The next deterministic tool-call id of this session (`call_<n>`)."""
        self.call_counter += 1
        return f"call_{self.call_counter}"

    # -- failing ---------------------------------------------------------------------------------

    async def fail_for_tools(self) -> bool:
        """End the run if an interceptor failed a tool call of the batch; True if it did."""
        failure, self.tool_failure = self.tool_failure, None
        if failure is None:
            return False
        code, message, source, exc = failure
        await self.fail(code, message, source=source, exception=exc)
        return True

    def priced(self, model: ChatModel, usage: Usage) -> Usage:
        """`usage` of one model request with its `cost` (the run's own model's price is cached)."""
        price = self.price if model is self.ctx.model else self.prices.get(price_key(model))
        cost = 0.0 if price is None else price.cost(usage)
        return usage.model_copy(update={"cost": cost}) if cost else usage

    async def fail(
        self,
        code: ErrorCode,
        message: str,
        *,
        source: str,
        exception: BaseException | None = None,
        recoverable: bool = False,
        interrupted: bool = False,
        retry_after: float | None = None,
    ) -> None:
        """End the run as failed (or `interrupted`, for a timeout) and emit its `ErrorEvent`."""
        name = type(exception).__name__ if exception is not None else None
        error = ErrorInfo(
            code=code, message=message, source=source, exception=name, retry_after=retry_after
        )
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
            # In a context of its own: a cancelled timer stays on the loop until it is due (two
            # minutes, by default), and the run's context would keep the whole run alive with it.
            self._timer = self.ctx.loop.call_later(
                limit,
                lambda: self.request_interrupt(None, timeout=True),
                context=contextvars.Context(),
            )

    def request_interrupt(self, msg: Msg | None, *, timeout: bool = False) -> bool:
        """Ask the run to stop at its next checkpoint (sync; from any task on the loop)."""
        if self.finished or self.disposed:
            return False
        interrupt = self.interrupt
        if interrupt.requested:
            return True
        interrupt.ask(msg, timeout=timeout)
        cancel_tools = self.agent.interrupt_tools == "cancel"
        waiting = interrupt.waiting_in
        if (waiting == "model" or (waiting == "tool" and cancel_tools)) and self.task is not None:
            interrupt.cancelled_task()
            self.task.cancel()
        if cancel_tools:
            for task in self.tool_tasks:
                task.cancel()
        for listener in tuple(self.interrupt_listeners):  # nested runs stop at their checkpoints
            try:
                listener(msg)
            except Exception:  # one failing listener must not keep the interrupt from the rest
                logger.exception("an interrupt listener of run %s failed", self.ctx.run_id)
        self.events.notify()
        return True

    @property
    def interrupt_requested(self) -> bool:
        """True once the run was asked to stop (what `RunContext.interrupted` reads)."""
        return self.interrupt.requested

    def stopping(self) -> bool:
        """Whether an interrupt arrived (a call, so it is read afresh after each await)."""
        return self.interrupt.requested

    def absorb_interrupt_cancel(self) -> bool:
        """Whether a `CancelledError` came from `request_interrupt`; if so, it is absorbed."""
        if not self.interrupt.absorb():
            return False
        if self.task is not None:
            self.task.uncancel()
        return True

    async def interrupted(self, checkpoint: Checkpoint) -> None:
        """End the run at `checkpoint`, where it noticed an interrupt or its timeout."""
        message = self.interrupt.reason
        reason = message.text if message is not None else ""
        event = self.events.make(InterruptedEvent, checkpoint=checkpoint, reason=reason)
        self.outcome.interrupt(
            ErrorInfo(code=ErrorCode.INTERRUPTED, message=reason or "the run was interrupted")
        )
        await self.events.publish(event)
        if self.interrupt.timed_out:  # cut by the clock, like an interrupt, and failed: TIMEOUT
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
