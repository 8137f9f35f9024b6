"""The ReAct loop as an Rx pipeline.

A run is a sequential expansion of phases: `start` (PreCall, load memory), one `step` per ReAct
iteration (PreReasoning, model, PostReasoning, tools), an optional `final` answer without tools,
and `finish` (PostCall, save). Each phase is a cold Observable that runs one coroutine in one task;
the coroutine awaits hooks inline and pushes the events it makes to the phase's observer. When a
phase completes, the run knows which phase comes next:

    expand_sequentially(phase("start"), lambda: phase(run.following) if run.following else None)

Events pass through one operator, and disposing the subscription cancels the running phase task.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import time
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, cast

from pydantic import TypeAdapter, ValidationError
from reactivex import Observable, Observer, abc
from reactivex.disposable import Disposable

from rxagent._fast import trusted
from rxagent.agent._operators import expand_sequentially
from rxagent.agent.conditions import FinalAnswerMarker, MaxSteps
from rxagent.agent.context import _CURRENT, _CURRENT_CALL, RunContext
from rxagent.errors import (
    AgentRunError,
    ConcurrentModificationError,
    ErrorCode,
    HookFailedError,
    Reject,
    SessionBusyError,
)
from rxagent.events import (
    BaseEvent,
    ErrorEvent,
    InterruptedEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
)
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock
from rxagent.models.base import ResponseBuilder, Usage
from rxagent.result import AgentError, AgentResult, StopReason
from rxagent.state import AgentState, pair_tool_calls

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence

    from rxagent.agent._agent import ReActAgent
    from rxagent.hooks import Hook
    from rxagent.tools import ToolOutcome

__all__ = ["Run", "run_observable"]

logger: Final = logging.getLogger("rxagent.agent")

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


def run_observable(run_factory: Callable[[], Run]) -> Observable[BaseEvent]:
    """The cold Observable of one run: each subscription creates and starts a new run."""

    def subscribe(
        observer: abc.ObserverBase[BaseEvent], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        try:
            run = run_factory()
        except Exception as exc:  # a run that cannot start: bad input, busy session
            observer.on_error(exc)
            return Disposable()
        pipeline = expand_sequentially(run.phase("start"), run.next_phase)
        subscription = pipeline.subscribe(observer, scheduler=scheduler)

        def dispose() -> None:
            run.dispose()
            subscription.dispose()

        return Disposable(dispose)

    return Observable(subscribe)


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
        self.system_msg: Msg | None = None
        self.tool_calls_made = 0
        self.tools_withdrawn = False
        self.stop_reason: StopReason = "no_tool_calls"
        self.error: AgentError | None = None
        self.reply: Msg | None = None
        self.interrupt_checkpoint: Checkpoint | None = None
        self.lease_renewed_at = 0.0
        self.following: Phase | None = None
        self.requested: Phase | None = None
        self.call_counter = 0
        self.stream_restarts = 0
        self.memory_start = 0
        self.inject: dict[type[Any], object] = {RunContext: ctx, **ctx.deps}

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
                following = await _PHASES[kind](self)
            except HookFailedError as exc:  # a hook with on_error="propagate" failed
                following = await self.fail(
                    ErrorCode.UNKNOWN, str(exc), source=f"hook:{exc.hook}", exception=exc
                )
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
            if not isinstance(exc, SessionBusyError):
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
        for tool_task in self.tool_tasks:
            tool_task.cancel()
        task = self.task
        if task is not None and not task.done():
            task.cancel()
        cleanup = self.ctx.loop.create_task(self._cleanup_after_dispose(task))
        self.agent._track(cleanup)

    async def _cleanup_after_dispose(self, task: asyncio.Task[None] | None) -> None:
        if task is not None:
            pending: list[asyncio.Task[Any]] = [task, *self.tool_tasks]
            await asyncio.wait(pending)
        await self._abandon("interrupted: the run was cancelled")

    async def _abandon(self, reason: str = "not executed: the run failed") -> None:
        """End a run that cannot finish normally: keep memory paired, save it, free the session."""
        try:
            self.ctx._memory = pair_tool_calls(self.ctx._memory, reason, self.memory_start)
            if self.holds_session:
                await self.save_state()
        except Exception:  # a failing store must not keep the session locked
            logger.exception("could not save session %r", self.ctx.session_id)
        finally:
            await self._release_lease()
            self._release()

    def _release(self) -> None:
        if self.finished:
            return
        self.finished = True
        if self.timer is not None:
            self.timer.cancel()
        self.agent._end_run(self)
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
        state = AgentState(
            memory=tuple(ctx._memory),
            active_groups=base.active_groups,
            pending_approvals=base.pending_approvals,
            step=base.step + ctx.step,
            call_counter=self.call_counter,
            runs=base.runs + (1 if self.finished or self.reply is not None else 0),
            usage=base.usage + ctx.usage,
            extra=dict(ctx._extra),
        )
        self.version = await self.agent.store.save(
            self.agent.name, ctx.session_id, state, expected_version=self.version
        )
        await self.renew_lease()

    async def renew_lease(self) -> None:
        """Extend the session lease when a third of its TTL has passed (checked per step)."""
        ttl = self.agent.lease_ttl_s
        now = time.monotonic()
        if self.holds_lease and now - self.lease_renewed_at > ttl / 3:
            self.lease_renewed_at = now
            if not await self.agent.store.renew_lease(
                self.agent.name, self.ctx.session_id, self.ctx.run_id, ttl
            ):
                logger.warning("lost the lease on session %r", self.ctx.session_id)

    def next_call_id(self) -> str:
        """The next deterministic tool-call id of this session (`call_<n>`)."""
        self.call_counter += 1
        return f"call_{self.call_counter}"

    async def finish(self) -> None:
        """Pair tool calls, build the result, dispatch PostCall, save, release, deliver."""
        ctx = self.ctx
        reason = (
            "interrupted"
            if self.stop_reason == "interrupted"
            else f"not executed: the run ended ({self.stop_reason})"
        )
        ctx._memory = pair_tool_calls(ctx._memory, reason, self.memory_start)
        reply = self.reply or self._fallback_reply()
        output: Any = None
        if self.error is None and ctx.output_type is not None:
            output = await self._validate_output(reply)
        error = self.error
        result = AgentResult[Any](
            reply=reply,
            ok=error is None,
            output=output,
            error=error,
            usage=ctx.usage,
            tools_used=tuple(ctx.tools_used),
            stop_reason=self.stop_reason,
            interrupted=self.stop_reason == "interrupted",
            steps=ctx.step,
            duration_ms=(time.perf_counter() - ctx.started_at) * 1000,
            run_id=ctx.run_id,
            session_id=ctx.session_id,
        )
        post = ctx._make(PostCallEvent, reply=reply, result=result)
        try:
            post = await self.chain.dispatch(post, report=self._report_hook_error)
        except (Reject, HookFailedError) as exc:  # the PostCall itself is refused: fail the run
            code = ErrorCode.HOOK_REJECTED if isinstance(exc, Reject) else ErrorCode.UNKNOWN
            result = self._failed_result(result, code, str(exc), f"hook:{exc.hook}", exc)
            post = PostCallEvent._construct({**post.__dict__, "result": result})
        if post.reply is not reply:
            result = result.model_copy(update={"reply": post.reply})
            post = PostCallEvent._construct({**post.__dict__, "result": result})
            if ctx._memory and ctx._memory[-1].id == reply.id:
                ctx._memory[-1] = post.reply
        self.reply = post.reply
        if self.holds_session:
            try:
                await self.save_state()
            except ConcurrentModificationError as exc:
                result = self._failed_result(result, ErrorCode.UNKNOWN, str(exc), "agent", exc)
                post = PostCallEvent._construct({**post.__dict__, "result": result})
        await self._release_lease()
        if ctx._pending:  # emitted while PostCall was dispatched: they go before it
            await self.drain(quiet=True)
            post = PostCallEvent._construct({**post.__dict__, "seq": ctx._common()["seq"]})
        self._release()
        self._deliver(post)

    def _failed_result(
        self,
        result: AgentResult[Any],
        code: ErrorCode,
        message: str,
        source: str,
        exc: BaseException,
    ) -> AgentResult[Any]:
        """Fail the run at its very end: queue the ErrorEvent, return the failed result."""
        self.ctx._enqueue(
            ErrorEvent,
            {
                "code": code,
                "message": message,
                "source": source,
                "recoverable": False,
                "exception": type(exc).__name__,
            },
        )
        if self.error is not None:  # the run already failed: keep its first error
            return result
        self.error = AgentError(
            code=code, message=message, source=source, exception=type(exc).__name__
        )
        self.stop_reason = "error"
        return result.model_copy(update={"ok": False, "error": self.error, "stop_reason": "error"})

    async def _validate_output(self, reply: Msg) -> Any:
        output_type = self.ctx.output_type
        if output_type is str:
            return reply.text
        try:
            return TypeAdapter[Any](cast("Any", output_type)).validate_json(reply.text)
        except ValidationError as exc:
            await self.fail(
                ErrorCode.OUTPUT_INVALID,
                f"the reply does not validate as {getattr(output_type, '__name__', output_type)}:"
                f" {exc.error_count()} error(s): {exc.errors(include_url=False)}",
                source="agent",
                exception=exc,
            )
            return None

    def _fallback_reply(self) -> Msg:
        ctx = self.ctx
        if self.stop_reason == "interrupted":
            if ctx._interrupt_reason is not None:
                return ctx._interrupt_reason
            return Msg.assistant("The run was interrupted.")
        if self.error is not None:
            return Msg.assistant(f"The run failed ({self.error.code}): {self.error.message}")
        last_result: str | None = None
        for message in reversed(ctx._memory):
            if message.role == "assistant":
                if message.text:
                    return Msg.assistant(message.text)
                if last_result is not None:
                    return Msg.assistant(last_result)
            elif message.role == "tool" and message.tool_results:
                last_result = message.tool_results[-1].text
        return Msg.assistant("")


# -- the phases --------------------------------------------------------------------------------


async def _start(run: Run) -> Phase:
    ctx = run.ctx
    agent = run.agent
    await agent._acquire_slot(run)
    if not await agent.store.acquire_lease(
        agent.name, ctx.session_id, ctx.run_id, agent.lease_ttl_s
    ):
        raise SessionBusyError(agent.name, ctx.session_id)
    run.holds_lease = True
    run.lease_renewed_at = time.monotonic()
    stored = await agent.store.load(agent.name, ctx.session_id)
    if stored is not None:
        run.state, run.version = stored.state, stored.version
    state = run.state
    run.holds_session = True
    run.call_counter = state.call_counter
    ctx._memory = list(state.memory)
    run.memory_start = len(ctx._memory)
    ctx._extra = dict(state.extra)
    if agent.request_timeout is not None:
        run.timer = ctx.loop.call_later(
            agent.request_timeout, lambda: run.request_interrupt(None, timeout=True)
        )
    try:
        await run.publish(ctx._make(PreCallEvent, input=run.inputs))
    except Reject as reject:
        return await run.fail(
            ErrorCode.HOOK_REJECTED,
            f"the run was rejected: {reject.reason}",
            source=f"hook:{reject.hook}",
            exception=reject,
        )
    ctx._memory.extend(run.inputs)
    prompt = agent.sys_prompt
    if callable(prompt):
        value = prompt(ctx)
        prompt = await value if inspect.isawaitable(value) else value
    if prompt:
        run.system_msg = Msg.system(prompt)
    return "step"


async def _step(run: Run) -> Phase | None:
    return await _reason_and_act(run, final=False)


async def _final(run: Run) -> Phase | None:
    return await _reason_and_act(run, final=True)


async def _finish(run: Run) -> None:
    await run.finish()


_PHASES: Final[dict[Phase, Callable[[Run], Coroutine[Any, Any, Phase | None]]]] = {
    "start": _start,
    "step": _step,
    "final": _final,
    "finish": _finish,
}


async def _reason_and_act(run: Run, *, final: bool) -> Phase:
    ctx = run.ctx
    agent = run.agent
    if ctx._interrupt_requested:
        return await run.interrupted("before_reasoning")
    await run.renew_lease()
    messages = tuple(ctx._memory)
    if run.system_msg is not None:
        messages = (run.system_msg, *messages)
    tools = () if final or run.tools_withdrawn else agent.toolkit.schemas()
    pre = ctx._make(
        PreReasoningEvent, messages=messages, tools=tools, options=ctx.options, model=ctx.model.name
    )
    try:
        pre = await run.publish(pre)
    except Reject as reject:
        return await run.fail(
            ErrorCode.HOOK_REJECTED,
            f"the model call was rejected: {reject.reason}",
            source=f"hook:{reject.hook}",
            exception=reject,
        )
    outcome = await _reason(run, pre)
    if isinstance(outcome, str):
        return outcome
    response, usage = outcome
    post = ctx._make(PostReasoningEvent, response=response, usage=usage, stop=False)
    post = await run.publish(post)
    response = post.response
    ctx._memory.append(response)
    ctx.last_response = response
    calls = response.tool_calls
    if post.stop:
        run.stop_reason = "hook_stop"
        return _end_step(run, "finish")
    if calls:
        if final:  # the last answer must be text; the calls cannot run any more
            _answer_unrun(run, calls, "tool calls are not available for the final answer")
            if not response.text:
                return await run.fail(
                    ErrorCode.MAX_ITERATIONS,
                    "the step limit was reached and the final answer had no text",
                    source="agent",
                )
        else:
            if ctx.interrupted:
                return await run.interrupted("before_acting")
            phase = await _act(run, calls)
            if phase is not None:
                return phase
    return _next_phase(run, calls, final)


def _end_step(run: Run, following: Phase) -> Phase:
    run.ctx.step += 1
    run.stream_restarts = 0
    return following


def _next_phase(run: Run, calls: Sequence[ToolUseBlock], final: bool) -> Phase:
    ctx = run.ctx
    response = ctx.last_response
    assert response is not None
    if final:
        run.stop_reason = "max_iters"
        run.reply = response
        return _end_step(run, "finish")
    more = bool(calls)
    for condition in run.agent.stop_when:
        if isinstance(condition, FinalAnswerMarker):
            answer = condition.answer(response.text)
            if answer is not None:
                run.stop_reason = "final_answer"
                run.reply = Msg.assistant(answer)
                return _end_step(run, "finish")
    if not more:
        run.stop_reason = "no_tool_calls"
        run.reply = response
        return _end_step(run, "finish")
    for condition in run.agent.stop_when:
        if isinstance(condition, FinalAnswerMarker):
            continue
        if condition(ctx):
            if isinstance(condition, MaxSteps):
                return _end_step(run, "final")
            run.stop_reason = "stop_condition"
            return _end_step(run, "finish")
    return _end_step(run, "step")


async def _reason(run: Run, pre: PreReasoningEvent) -> tuple[Msg, Usage] | Phase:
    """Call the model and stream its chunks; return the response, or the phase to go to."""
    ctx = run.ctx
    builder = ResponseBuilder(id_factory=run.next_call_id)
    publish = run.publish
    make = ctx._make
    stream = ctx.model.stream(list(pre.messages), list(pre.tools), pre.options)
    iterator = stream.__aiter__()
    try:
        while True:
            run.awaiting_model = True
            try:
                delta = await iterator.__anext__()
                position = builder.add(delta)
            except StopAsyncIteration:
                break
            except asyncio.CancelledError:
                if not run.cancelled_for_interrupt:
                    raise
                run.cancelled_for_interrupt = False
                if run.task is not None:
                    run.task.uncancel()
                return await run.interrupted("chunk")
            except AgentRunError as exc:
                if exc.recoverable and builder.started and run.stream_restarts < MAX_RESTARTS:
                    return await _restart_step(run, exc)
                return await run.fail(
                    exc.code, str(exc), source="model", exception=exc, recoverable=False
                )
            except Exception as exc:
                return await run.fail(
                    ErrorCode.PROVIDER_ERROR,
                    f"the model {ctx.model.name!r} failed: {type(exc).__name__}: {exc}",
                    source="model",
                    exception=exc,
                )
            finally:
                run.awaiting_model = False
            if ctx._interrupt_requested:
                return await run.interrupted("chunk")
            if position >= 0:
                await publish(make(ReasoningChunkEvent, delta=delta, index=position))
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()
    usage = builder.usage
    if usage.requests == 0:
        usage = usage + Usage(requests=1)
    ctx.usage = ctx.usage + usage
    return builder.build(), usage


MAX_RESTARTS: Final = 2
"""How often one step restarts after its model stream broke with a recoverable error."""


async def _restart_step(run: Run, exc: AgentRunError) -> Phase:
    """Report a stream that broke after chunks reached the run, and redo the step.

    The step starts again from a new PreReasoning. Retrying before the first chunk is the model
    client's job.
    """
    run.stream_restarts += 1
    event = run.ctx._make(
        ErrorEvent,
        code=exc.code,
        message=f"the model stream broke ({exc}); the step starts again",
        source="model",
        recoverable=True,
        exception=type(exc).__name__,
    )
    await run.publish(event)
    return "step"


def _answer_unrun(run: Run, calls: Sequence[ToolUseBlock], why: str) -> None:
    for call in calls:
        run.ctx._memory.append(
            Msg.tool(
                ToolResultBlock(
                    id=call.id, name=call.name, output=f"Not executed: {why}", is_error=True
                )
            )
        )


async def _act(run: Run, calls: Sequence[ToolUseBlock]) -> Phase | None:
    """Run one batch of tool calls; return a phase when the run must end, else None."""
    ctx = run.ctx
    agent = run.agent
    limit = agent.max_tool_calls
    cut: Sequence[ToolUseBlock] = ()
    if limit is not None:
        remaining = max(limit - run.tool_calls_made, 0)
        calls, cut = calls[:remaining], calls[remaining:]
        if run.tool_calls_made + len(calls) >= limit:
            run.tools_withdrawn = True
    run.tool_calls_made += len(calls)
    results: dict[str, ToolResultBlock] = {}
    stop = False
    if calls:
        if agent.parallel_tool_calls and len(calls) > 1:
            stop = await _act_parallel(run, calls, results)
        else:
            stop = await _act_sequential(run, calls, results)
    for call in cut:
        message = f"tool call limit reached (max_tool_calls={limit}); the call was not executed"
        results[call.id] = ToolResultBlock(
            id=call.id, name=call.name, output=message, is_error=True
        )
        await run.publish(
            ctx._make(
                ErrorEvent,
                code=ErrorCode.USAGE_LIMIT,
                message=message,
                source=f"tool:{call.name}",
                recoverable=True,
                exception=None,
            )
        )
    for call in (*calls, *cut):
        if call.id in results:
            ctx._memory.append(trusted(Msg, role="tool", content=(results[call.id],)))
    if ctx._interrupt_requested:
        return await run.interrupted("after_tool")
    if stop:
        run.stop_reason = "hook_stop"
        return _end_step(run, "finish")
    return None


async def _pre_acting(run: Run, call: ToolUseBlock) -> ToolUseBlock | ToolResultBlock:
    """Dispatch PreActing; return the call to execute, or the result of a refused call."""
    try:
        pre = await run.publish(run.ctx._make(PreActingEvent, tool_call=call))
    except Reject as reject:
        return ToolResultBlock(
            id=call.id,
            name=call.name,
            output=f"Tool call rejected by hook {reject.hook!r}: {reject.reason}",
            is_error=True,
        )
    if run.ctx.interrupted:  # interrupted while PreActing was dispatched: don't start
        return ToolResultBlock(id=call.id, name=call.name, output="interrupted", is_error=True)
    return pre.tool_call


async def _post_acting(
    run: Run,
    call: ToolUseBlock,
    outcome: ToolOutcome | ToolResultBlock,
    results: dict[str, ToolResultBlock],
) -> bool:
    """Emit the tool's ErrorEvent if any, then PostActing; record the result; return stop."""
    ctx = run.ctx
    if isinstance(outcome, ToolResultBlock):
        result, duration = outcome, 0.0
    else:
        result, duration = outcome.result, outcome.duration_ms
        if outcome.error_code is not None:
            await run.publish(
                ctx._make(
                    ErrorEvent,
                    code=outcome.error_code,
                    message=outcome.error_message or result.text,
                    source=f"tool:{call.name}",
                    recoverable=True,
                    exception=outcome.exception,
                )
            )
    post = await run.publish(
        ctx._make(PostActingEvent, tool_call=call, result=result, stop=False, duration_ms=duration)
    )
    results[call.id] = post.result
    return bool(post.stop)


async def _execute(run: Run, call: ToolUseBlock) -> ToolOutcome:
    _CURRENT_CALL.set(call)  # this task runs in its own copy of the context
    try:
        return await run.agent.toolkit.execute(
            call, inject=run.inject, timeout=run.agent.tool_timeout
        )
    finally:
        # wake the run from inside this task: a done-callback would cost another loop tick
        run.ctx._notify()


def _start_tool(run: Run, call: ToolUseBlock) -> asyncio.Task[ToolOutcome]:
    run.ctx.tools_used.append(call.name)
    task = run.ctx.loop.create_task(_execute(run, call))
    run.tool_tasks.add(task)
    return task


def _outcome(
    run: Run, call: ToolUseBlock, task: asyncio.Task[ToolOutcome]
) -> ToolOutcome | ToolResultBlock:
    run.tool_tasks.discard(task)
    if task.cancelled():
        return ToolResultBlock(id=call.id, name=call.name, output="interrupted", is_error=True)
    exc = task.exception()
    if exc is not None:  # Toolkit.execute turns tool failures into results; this is a bug
        raise exc
    return task.result()


async def _wait_for(run: Run, task: asyncio.Task[Any]) -> None:
    """Wait for `task`, delivering events tools emit meanwhile."""
    ctx = run.ctx
    while True:
        if ctx._pending:
            await run.drain()
        elif task.done():
            return
        else:
            waiter = ctx._waiter = ctx.loop.create_future()
            try:
                await waiter
            finally:
                ctx._waiter = None


def _start_drainer(run: Run) -> None:
    """Deliver what a tool emits while it runs on the run's own task (see `_run_inline`)."""
    if run.drainer is None or run.drainer.done():
        run.drainer = run.ctx.loop.create_task(run.drain(), context=run.pyctx)
        run.tool_tasks.add(run.drainer)


async def _run_inline(run: Run, call: ToolUseBlock) -> ToolOutcome | ToolResultBlock:
    """Run one tool call on the run's own task: no task and no loop tick of its own.

    The run's task is suspended inside the tool meanwhile, so events the tool emits are
    delivered by a drainer task, started only if the tool does emit. An interrupt cancels the
    run's task while it waits here, so the tool sees `CancelledError`, as a tool task would.
    """
    ctx = run.ctx
    ctx.tools_used.append(call.name)
    run.awaiting_tool = True
    ctx._on_pending = lambda: _start_drainer(run)
    token = _CURRENT_CALL.set(call)
    outcome: ToolOutcome | ToolResultBlock
    try:
        outcome = await run.agent.toolkit.execute(
            call, inject=run.inject, timeout=run.agent.tool_timeout
        )
    except asyncio.CancelledError:
        if not run.cancelled_for_interrupt:
            raise
        run.cancelled_for_interrupt = False
        if run.task is not None:
            run.task.uncancel()
        outcome = ToolResultBlock(id=call.id, name=call.name, output="interrupted", is_error=True)
    finally:
        _CURRENT_CALL.reset(token)
        run.awaiting_tool = False
        ctx._on_pending = None
    drainer = run.drainer
    if drainer is not None:
        run.drainer = None
        await drainer
        run.tool_tasks.discard(drainer)
    if ctx._pending:
        await run.drain()
    return outcome


async def _act_sequential(
    run: Run, calls: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock]
) -> bool:
    stop = False
    for call in calls:
        if run.ctx._interrupt_requested:
            break
        approved = await _pre_acting(run, call)
        if isinstance(approved, ToolResultBlock):
            stop = await _post_acting(run, call, approved, results) or stop
            continue
        outcome = await _run_inline(run, approved)
        stop = await _post_acting(run, approved, outcome, results) or stop
    return stop


async def _act_parallel(
    run: Run, calls: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock]
) -> bool:
    started: list[tuple[ToolUseBlock, asyncio.Task[ToolOutcome] | ToolResultBlock]] = []
    for call in calls:
        if run.ctx._interrupt_requested:
            break
        approved = await _pre_acting(run, call)
        if isinstance(approved, ToolResultBlock):
            started.append((call, approved))
        else:
            started.append((approved, _start_tool(run, approved)))
    stop = False
    for call, pending in started:
        if isinstance(pending, ToolResultBlock):
            stop = await _post_acting(run, call, pending, results) or stop
            continue
        await _wait_for(run, pending)
        stop = await _post_acting(run, call, _outcome(run, call, pending), results) or stop
    return stop
