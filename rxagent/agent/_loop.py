"""The run loop: one run of an agent, from subscription to PostCall, top to bottom.

```
subscribe ─► run_loop(run)                       one task per run; disposing cancels it
               _start       wait for the session's earlier runs and a slot, take the lease,
                            load the session, record an approval decision
               PreCall      the first event (a Reject refuses the run)
               guards       the input stages, decided before PreCall's hooks; a rejection
                            ends the run here (GuardEvent, ErrorEvent)
               _load_memory open toolsets, resume a parked batch, add the input, system prompt
               while the outcome is open:
                   _step    PreReasoning ─► reason() ─► PostReasoning ─► [answer check]
                            ─► act() (PreActing ─► tool ─► PostActing)* ─► stop conditions
                            ─► checkpoint
               _finish      pair tool calls, output guards, PostCall, save, release the lease
             ◄─ on_completed
```

Each phase is a plain call on the `Run` (`_run.py`), which holds the run's state in owners:
`run.outcome` (how it ends), `run.lease`, `run.budget`, `run.events` (publishing) and
`run.approvals`. A failure of the run is data (an `ErrorEvent`, then a failed PostCall);
`on_error` is for bugs and for runs that cannot start.

The engine is this explicit loop. Rx is its edge: `run_observable` makes each run a cold
Observable, and users compose runs and their events with Rx operators (`rxagent.rx`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from typing import TYPE_CHECKING, Any, Final

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from rxagent.agent._acting import act
from rxagent.agent._consume import ResultObserver
from rxagent.agent._guarding import offered_tools, reject_input, screen_input, screen_reply
from rxagent.agent._intercepting import reason_intercepted
from rxagent.agent._output import check_answer, final_output, read_reply, record_failure
from rxagent.agent._reasoning import reason
from rxagent.agent._resume import continue_parked
from rxagent.agent._routing import route
from rxagent.agent._saving import save_checkpoint, save_state
from rxagent.agent._selecting import selected_tools
from rxagent.agent.conditions import decision_of
from rxagent.errors import (
    AgentRunError,
    ApprovalError,
    ConcurrentModificationError,
    ErrorCode,
    HookFailedError,
    Reject,
    SessionBusyError,
    SessionOwnerError,
    UnknownRunError,
)
from rxagent.events import (
    BaseEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreCallEvent,
    PreReasoningEvent,
)
from rxagent.messages import Msg
from rxagent.output import ParsedOutput
from rxagent.result import AgentResult, ErrorInfo
from rxagent.state import StoreUnavailableError, owned_state, pair_tool_calls

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.agent._run import Run
    from rxagent.agent.conditions import StopDecision

__all__ = ["run_loop", "run_observable", "run_to_result"]

logger: Final = logging.getLogger("rxagent.agent")


def run_observable(make_run: Callable[[], Run]) -> Observable[BaseEvent]:
    """The cold Observable of one run: each subscription makes a run and starts its loop.

    A run that cannot start (bad input, a busy session) arrives as `on_error` at subscribe.
    Disposing the subscription cancels the run: its task ends, and its state is saved paired.
    """

    def subscribe(
        observer: abc.ObserverBase[BaseEvent], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        try:
            run = make_run()
        except Exception as exc:  # a run that cannot start: bad input, busy session
            observer.on_error(exc)
            return Disposable()
        _launch(run, observer)
        return Disposable(run.dispose)

    return Observable(subscribe)


async def run_to_result(make_run: Callable[[], Run]) -> AgentResult[Any] | None:
    """Run one run to its end and return its result: `call()`, without an Observable between.

    The same protocol as subscribing to `run_observable(make_run)` and keeping the PostCall's
    result: a run that cannot start raises here, a recorded decision that starts no run gives
    None, and cancelling the caller disposes the run (its task ends, its state is saved paired).

    Raises:
        InvalidInputError: As `make_run`, for a run that cannot start.
        SessionBusyError: As `make_run`, or when the session is taken elsewhere.
    """
    run = make_run()
    observer = ResultObserver(run.ctx.loop.create_future())
    _launch(run, observer)
    try:
        return await observer.done
    finally:
        run.dispose()


def _launch(run: Run, observer: abc.ObserverBase[BaseEvent]) -> None:
    """Give the run its subscriber and start its loop on a task of its own."""
    run.events.observer = observer
    run.task = run.ctx.loop.create_task(run_loop(run), context=run.pyctx)


async def run_loop(run: Run) -> None:
    """Run one run to its end and tell the subscriber: the whole protocol of a run."""
    try:
        try:
            if not await _start(run):
                run.complete()  # a decision was recorded, more are needed: no run, no events
                return
            pre_call = run.events.make(PreCallEvent, input=run.inputs)
            screened = await screen_input(run)  # the input guards decide before any hook runs
            await run.events.publish(pre_call)
            if screened is None or not await reject_input(run, screened):
                await _load_memory(run)
                if not run.outcome.ended:
                    await route(run)  # a handed-off session: its input goes to the handoff
            final = False  # the step limit was reached: one last call without tools
            while not run.outcome.ended:
                final = await _step(run, final)
        except asyncio.CancelledError:
            if run.disposed:  # the subscriber went away: dispose() saves and releases
                return
            run.outcome.fail(ErrorInfo(code=ErrorCode.CANCELLED, message="the run was cancelled"))
            await _finish(run)
            run.complete()
            raise
        except (HookFailedError, AgentRunError, Reject) as exc:
            await _fail_for(run, exc)
        await _finish(run)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the run cannot go on: a bug, or a session taken elsewhere
        if isinstance(exc, StoreUnavailableError):  # an outage, not a bug: no traceback
            logger.warning("run %s stopped: %s", run.ctx.run_id, exc)
        elif not isinstance(exc, SessionBusyError | SessionOwnerError | ApprovalError):
            logger.exception("run %s failed unexpectedly", run.ctx.run_id)
        await run.abandon()
        if not run.disposed and run.events.observer is not None:
            run.events.observer.on_error(exc)
        return
    run.complete()


async def _fail_for(run: Run, exc: HookFailedError | AgentRunError | Reject) -> None:
    """Fail the run with what a hook, a stop condition or the user's code raised."""
    if isinstance(exc, HookFailedError):  # a hook with on_error="propagate" failed
        cause = exc.__cause__
        if isinstance(cause, AgentRunError):  # a typed failure: the run fails with it
            await run.fail(cause.code, str(cause), source=f"hook:{exc.hook}", exception=cause)
        else:
            await run.fail(ErrorCode.UNKNOWN, str(exc), source=f"hook:{exc.hook}", exception=exc)
    elif isinstance(exc, AgentRunError):  # a typed failure of the user's code
        await run.fail(exc.code, str(exc), source=exc.source, exception=exc)
    else:  # refused where only the whole run can be refused (PreCall)
        await run.fail(
            ErrorCode.HOOK_REJECTED,
            f"the run was rejected: {exc.reason}",
            source=f"hook:{exc.hook}",
            exception=exc,
        )


# -- start ---------------------------------------------------------------------------------------


async def _start(run: Run) -> bool:
    """Take the session; False when the run only recorded an approval decision.

    Raises:
        SessionBusyError: The session's lease is held elsewhere.
        SessionOwnerError: The session was created under another API key.
        ApprovalError: The decision names an approval the session does not wait for.
    """
    agent, ctx = run.agent, run.ctx
    await agent._runs.acquire_slot(run, agent.max_concurrent_runs)
    await run.lease.acquire()
    stored = await agent.store.load(agent.name, ctx.session_id)
    saved = stored.state if stored is not None else None
    state = owned_state(saved, ctx.principal.key_id, agent=agent.name, session_id=ctx.session_id)
    if stored is not None:
        run.version = stored.version
    if state is not None:  # a new session of a key starts with its owner recorded
        run.state = state
    state = run.state
    run.call_counter = state.call_counter
    run.memory[:] = state.memory
    run.memory_start = len(run.memory)
    run.extra.update(state.extra)
    run.approvals.load(state.parked, state.pending_approvals)
    decision = run.decision
    if decision is not None and not run.approvals.decide(
        decision, agent=agent.name, session_id=ctx.session_id
    ):  # more decisions are needed: save this one and free the session
        await save_state(run)
        await run.lease.release()
        run.release()
        return False
    run.holds_session = True
    run.start_clock()
    return True


async def _load_memory(run: Run) -> None:
    """Open the toolsets, resume a parked batch, add the input, and build the system prompt."""
    agent = run.agent
    await agent.toolkit.open()  # enters toolsets not entered yet (agent.aclose() exits them)
    resumed = run.approvals.parked is not None or bool(run.approvals.pending)
    if resumed:  # tools may run here: after the toolsets opened
        await continue_parked(run)
        if run.outcome.ended:
            return
    run.input_at = len(run.memory)
    run.memory.extend(run.inputs)
    prompt = agent.sys_prompt
    if callable(prompt):
        try:
            value = prompt(run.ctx)
            prompt = await value if inspect.isawaitable(value) else value
        except Exception as exc:  # the user's prompt function failed: the run fails, as data
            raise UnknownRunError(
                f"the sys_prompt function raised {type(exc).__name__}: {exc}", source="sys_prompt"
            ) from exc
    plan = run.output_plan
    if plan is not None:
        prompt = plan.system_prompt(prompt)
    if prompt:
        run.system_msg = Msg.system(prompt)
    if resumed and run.checkpoint_steps:  # the resumed batch is in memory, paired
        await save_checkpoint(run)


# -- one step ------------------------------------------------------------------------------------


async def _step(run: Run, final: bool) -> bool:
    """One ReAct step: reason, then act. Returns whether the next step is the final one."""
    ctx = run.ctx
    if run.interrupt.requested:
        await run.interrupted("before_reasoning")
        return final
    await run.lease.renew()
    pre = await run.events.publish(await _pre_reasoning(run, final))
    if run.stopping():  # asked to stop while PreReasoning hooks ran: no model call
        await run.interrupted("before_reasoning")
        return final
    if run.model_layers:  # interceptors wrap the model call; without them, the plain call
        reasoned = await reason_intercepted(run, pre)
    else:
        reasoned = await reason(run, pre)
    if reasoned is None:  # the run ended, or the stream broke and the step starts again
        return final
    response, usage, finish_reason = reasoned
    post = run.events.make(
        PostReasoningEvent,
        response=response,
        usage=usage,
        stop=False,
        finish_reason=finish_reason,
        modified_by=run.model_modified_by,
    )
    post = await run.events.publish(post)
    run.replied = True
    response = post.response
    plan = run.output_plan
    run.memory.append(response if plan is None else plan.remembered(response))
    ctx.last_response = response
    if post.stop:
        run.outcome.stop("hook_stop")
        run.end_step()
        return final
    calls = response.tool_calls
    # the tools this request offered: a call to any other gets an error result
    offered = frozenset(t.name for t in pre.tools) if calls else frozenset[str]()
    if plan is not None and await check_answer(run, response, final=final, offered=offered):
        return final  # answered, or sent back to be fixed
    if calls and final:  # the last answer must be text; its calls are paired at the end
        if not response.text:
            await run.fail(
                ErrorCode.MAX_ITERATIONS,
                "the step limit was reached and the final answer had no text",
                source="agent",
            )
            return final
    elif calls:
        if run.stopping():
            await run.interrupted("before_acting")
            return final
        over_budget = run.budget.withdrawn and run.budget.limit is not None
        await act(run, calls, offered)
        if run.outcome.ended:
            return final
        if over_budget:  # the budget was spent and the model still called tools: end now
            reply = Msg.assistant(response.text) if response.text else None
            run.outcome.stop("max_tool_calls", reply)
            run.end_step()
            return final
    following_final = _after_step(run, response, bool(calls), final)
    if not run.outcome.ended and run.checkpoint_steps:  # a completed step: memory is paired
        await save_checkpoint(run)
    run.end_step()
    return following_final


async def _pre_reasoning(run: Run, final: bool) -> PreReasoningEvent:
    """This step's request: the system prompt and memory, the tools on offer, the options."""
    ctx = run.ctx
    messages = tuple(run.memory)
    if run.system_msg is not None:
        messages = (run.system_msg, *messages)
    run.bound.measure(run.memory, messages)
    if final or run.budget.withdrawn:
        tools: tuple[Any, ...] = ()
    else:
        tools = offered_tools(run, run.agent.toolkit.schemas(run.state.active_groups))
        selector = run.agent.tool_selector
        if selector is not None:  # only the tools it selects are offered
            tools = await selected_tools(run, selector, tools)
    options = ctx.options
    plan = run.output_plan
    if plan is not None:  # the final-answer tool, the response format, the tool choice
        tools, options = plan.request(tools, options)
    return run.events.make(
        PreReasoningEvent, messages=messages, tools=tools, options=options, model=ctx.model.name
    )


def _after_step(run: Run, response: Msg, called: bool, final: bool) -> bool:
    """Ask the stop conditions; end the run, or say whether the next step is the final one.

    Raises:
        UnknownRunError: A stop condition raised.
    """
    if final:
        run.outcome.stop(run.final_reason, response)
        return False
    decision = _decide(run)
    if not called:  # the response is the answer; a decision may only give another reply
        if decision is not None and decision.reply is not None:
            run.outcome.stop(decision.reason, Msg.assistant(decision.reply))
        else:
            run.outcome.stop("no_tool_calls", response)
        return False
    if decision is None:
        return False
    if decision.final_call:
        run.final_reason = decision.reason
        return True
    reply = Msg.assistant(decision.reply) if decision.reply is not None else None
    run.outcome.stop(decision.reason, reply)
    return False


def _decide(run: Run) -> StopDecision | None:
    """The first decision of the agent's stop conditions, in order."""
    for condition in run.agent.stop_when:
        try:
            decision = decision_of(condition(run.ctx))
        except Exception as exc:  # a user's stop condition failed: the run fails, as data
            name = getattr(condition, "__name__", type(condition).__name__)
            raise UnknownRunError(
                f"stop condition {name!r} raised {type(exc).__name__}: {exc}", source="stop_when"
            ) from exc
        if decision is not None:
            return decision
    return None


# -- finish --------------------------------------------------------------------------------------


async def _finish(run: Run) -> None:
    """Pair tool calls, build the result, dispatch PostCall, save, release, deliver PostCall."""
    ctx, outcome, events = run.ctx, run.outcome, run.events
    reason = (
        "interrupted"
        if outcome.stop_reason == "interrupted"
        else f"not executed: the run ended ({outcome.stop_reason})"
    )
    if outcome.stop_reason == "error" and not run.replied and run.input_at is not None:
        del run.memory[run.input_at :]  # failed before the model answered: memory as it was
    run.memory[:] = pair_tool_calls(run.memory, reason, run.memory_start)
    reply = outcome.reply or _fallback_reply(run)
    output: Any = None
    parked = outcome.stop_reason == "approval_pending"  # no answer yet: nothing to read
    if (
        outcome.error is None
        and run.replied
        and not parked
        and outcome.stop_reason != "interrupted"
    ):
        # the output guards: redact, or withhold the reply and fail the run
        reply = await screen_reply(run, reply) or _fallback_reply(run)
    if outcome.error is None and ctx.output_type is not None and not parked:
        output = await final_output(run, reply)
    result = _result(run, reply, output)
    post = events.make(PostCallEvent, reply=reply, result=result)
    try:
        post = await events.chain.dispatch(post, report=events.report_hook_error)
    except (Reject, HookFailedError) as exc:  # the PostCall itself is refused: fail the run
        code = ErrorCode.HOOK_REJECTED if isinstance(exc, Reject) else ErrorCode.UNKNOWN
        result = _fail_at_end(run, result, code, str(exc), f"hook:{exc.hook}", exc)
        post = PostCallEvent._construct({**post.__dict__, "result": result})
    if post.reply is not reply:
        result = result.model_copy(update={"reply": post.reply})
        if result.ok and ctx.output_type is not None and not parked:  # read from the final reply
            read = read_reply(run, post.reply)
            if isinstance(read, ParsedOutput):
                result = result.model_copy(update={"output": read.value})
            else:
                problem = f"the edited reply does not validate:\n{read.summary()}"
                result = _fail_at_end(
                    run, result, ErrorCode.OUTPUT_INVALID, problem, "output", ValueError(problem)
                )
                record_failure(run, read)
                result = result.model_copy(update={"error": outcome.error, "output": None})
        post = PostCallEvent._construct({**post.__dict__, "result": result})
        if run.memory and run.memory[-1].id == reply.id:
            run.memory[-1] = post.reply
    outcome.settle(post.reply)
    if run.holds_session:
        try:
            await save_state(run)
        except ConcurrentModificationError as exc:
            result = _fail_at_end(run, result, ErrorCode.UNKNOWN, str(exc), "agent", exc)
            post = PostCallEvent._construct({**post.__dict__, "result": result})
    await run.lease.release()
    if events.pending:  # emitted while PostCall was dispatched: they go before it
        await events.drain(quiet=True)
        post = PostCallEvent._construct({**post.__dict__, "seq": events.next_seq()})
    run.release()
    events.deliver(post)


def _result(run: Run, reply: Msg, output: Any) -> AgentResult[Any]:
    ctx, outcome = run.ctx, run.outcome
    return AgentResult[Any](
        reply=reply,
        ok=outcome.error is None,
        output=output,
        error=outcome.error,
        usage=ctx.usage,
        tools_used=tuple(ctx.tools_used),
        stop_reason=outcome.stop_reason,
        pending_approvals=tuple(p.approval_id for p in run.approvals.pending),
        interrupted=outcome.stop_reason == "interrupted",
        steps=ctx.step,
        duration_ms=(time.perf_counter() - ctx.started_at) * 1000,
        run_id=ctx.run_id,
        session_id=ctx.session_id,
    )


def _fail_at_end(
    run: Run,
    result: AgentResult[Any],
    code: ErrorCode,
    message: str,
    source: str,
    exc: BaseException,
) -> AgentResult[Any]:
    """Fail the run at its very end: queue the ErrorEvent, return the failed result."""
    run.events.fail_later(
        code, message, source=source, exception=type(exc).__name__, recoverable=False
    )
    if run.outcome.error is not None:  # the run already failed: keep its first error
        return result
    error = ErrorInfo(code=code, message=message, source=source, exception=type(exc).__name__)
    run.outcome.fail(error)
    return result.model_copy(update={"ok": False, "error": error, "stop_reason": "error"})


def _fallback_reply(run: Run) -> Msg:
    """The reply of a run that ended without one.

    That is the interrupt message, the failure's text from the agent's `ErrorMessages`, or the
    last assistant text (or the tool result after it).
    """
    outcome = run.outcome
    if outcome.stop_reason == "interrupted" and run.interrupt.reason is not None:
        return run.interrupt.reason
    if outcome.error is not None:  # an interrupt has one too: what the user reads for it
        return Msg.assistant(run.agent.error_messages.text(outcome.error, run.ctx))
    last_result: str | None = None
    for message in reversed(run.memory):
        if message.role == "assistant":
            if message.text:
                return Msg.assistant(message.text)
            if last_result is not None:
                return Msg.assistant(last_result)
        elif message.role == "tool" and message.tool_results:
            last_result = message.tool_results[-1].text
    return Msg.assistant("")
