"""The phases of a run: start, one ReAct step (reason, then act), the final answer, finish."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import TYPE_CHECKING, Any, Final

from rxagent.agent.conditions import FinalAnswerMarker, MaxSteps
from rxagent.errors import (
    AgentRunError,
    ErrorCode,
    SessionBusyError,
    UnknownRunError,
)
from rxagent.events import (
    ErrorEvent,
    OutputChunkEvent,
    PostReasoningEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
)
from rxagent.messages import Msg, ToolUseBlock
from rxagent.models.base import ResponseBuilder, Usage
from rxagent.output import NO_PARTIAL, OutputStream

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Sequence

    from rxagent.agent._run import Phase, Run
    from rxagent.context import RunContext

from rxagent.agent._acting import act
from rxagent.agent._approval import decide
from rxagent.agent._output import check_answer
from rxagent.agent._resume import continue_parked

__all__ = ["PHASES"]


async def _start(run: Run) -> Phase | None:
    ctx = run.ctx
    agent = run.agent
    await agent._runs.acquire_slot(run, agent.max_concurrent_runs)
    if not await agent.store.acquire_lease(
        agent.name, ctx.session_id, ctx.run_id, agent.lease_ttl_s
    ):
        raise SessionBusyError(agent.name, ctx.session_id)
    run.holds_lease = True
    run.lease_renewed_at = time.monotonic()
    run.lease_timer = ctx.loop.call_later(agent.lease_ttl_s / 3, run.keep_lease)
    stored = await agent.store.load(agent.name, ctx.session_id)
    if stored is not None:
        run.state, run.version = stored.state, stored.version
    state = run.state
    run.call_counter = state.call_counter
    ctx._memory = list(state.memory)
    run.memory_start = len(ctx._memory)
    ctx._extra = dict(state.extra)
    run.parked, run.pending = state.parked, state.pending_approvals
    if run.decision is not None and not decide(run, run.decision):  # may raise ApprovalError
        await _record_decision(run)  # more decisions are needed: no run, no events
        return None
    run.holds_session = True
    if agent.request_timeout is not None:
        run.timer = ctx.loop.call_later(
            agent.request_timeout, lambda: run.request_interrupt(None, timeout=True)
        )
    await run.publish(ctx._make(PreCallEvent, input=run.inputs))  # a Reject ends the run
    await agent.toolkit.open()  # enters toolsets not entered yet (agent.aclose() exits them)
    if run.parked is not None or run.pending:  # tools may run here: after the toolsets opened
        phase = await continue_parked(run)
        if phase is not None:
            return phase
        resumed = True
    else:
        resumed = False
    ctx._memory.extend(run.inputs)
    prompt = agent.sys_prompt
    if callable(prompt):
        try:
            value = prompt(ctx)
            prompt = await value if inspect.isawaitable(value) else value
        except Exception as exc:  # the user's prompt function failed: the run fails, as data
            raise UnknownRunError(
                f"the sys_prompt function raised {type(exc).__name__}: {exc}", source="sys_prompt"
            ) from exc
    plan = ctx.output_plan
    if plan is not None:
        prompt = plan.system_prompt(prompt)
    if prompt:
        run.system_msg = Msg.system(prompt)
    if resumed and run.checkpoint_steps:  # the resumed batch is in memory, paired
        await run.checkpoint()
    return "step"


async def _record_decision(run: Run) -> None:
    """Save a decision that does not complete its batch, and free the session."""
    await run.save_state()
    await run._release_lease()
    run._release()


async def _step(run: Run) -> Phase | None:
    return await _reason_and_act(run, final=False)


async def _final(run: Run) -> Phase | None:
    return await _reason_and_act(run, final=True)


async def _finish(run: Run) -> None:
    await run.finish()


PHASES: Final[dict[Phase, Callable[[Run], Coroutine[Any, Any, Phase | None]]]] = {
    "start": _start,
    "step": _step,
    "final": _final,
    "finish": _finish,
}


def _stop_requested(ctx: RunContext) -> bool:
    """Whether an interrupt arrived; a call, so type checkers don't assume it stays unset."""
    return ctx.interrupted


async def _reason_and_act(run: Run, *, final: bool) -> Phase:
    ctx = run.ctx
    agent = run.agent
    if ctx._interrupt_requested:
        return await run.interrupted("before_reasoning")
    await run.renew_lease()
    messages = tuple(ctx._memory)
    if run.system_msg is not None:
        messages = (run.system_msg, *messages)
    ctx._request_bound = (messages, run.bound_request(messages))
    tools = () if final or run.tools_withdrawn else agent.toolkit.schemas(run.state.active_groups)
    options = ctx.options
    plan = ctx.output_plan
    if plan is not None:  # the final-answer tool, the response format, the tool choice
        tools, options = plan.request(tools, options)
    pre = ctx._make(
        PreReasoningEvent, messages=messages, tools=tools, options=options, model=ctx.model.name
    )
    pre = await run.publish(pre)  # a Reject ends the run (see Run._run_phase)
    if _stop_requested(ctx):  # asked to stop while the PreReasoning hooks ran: no model call
        return await run.interrupted("before_reasoning")
    outcome = await _reason(run, pre)
    if isinstance(outcome, str):
        return outcome
    response, usage = outcome
    post = ctx._make(PostReasoningEvent, response=response, usage=usage, stop=False)
    post = await run.publish(post)
    response = post.response
    ctx._memory.append(response if plan is None else plan.remembered(response))
    ctx.last_response = response
    calls = response.tool_calls
    if post.stop:
        run.stop_reason = "hook_stop"
        return run.end_step("finish")
    if plan is not None:
        answered = await check_answer(run, response, final=final)
        if answered is not None:
            return answered
    if calls:
        if final:  # the last answer must be text; its calls are paired when the run finishes
            if not response.text:
                return await run.fail(
                    ErrorCode.MAX_ITERATIONS,
                    "the step limit was reached and the final answer had no text",
                    source="agent",
                )
        else:
            if _stop_requested(ctx):
                return await run.interrupted("before_acting")
            phase = await act(run, calls)
            if phase is not None:
                return phase
    phase = _next_phase(run, calls, final)
    if phase != "finish" and run.checkpoint_steps:  # a completed step: memory is paired here
        await run.checkpoint()
    return phase


def _next_phase(run: Run, calls: Sequence[ToolUseBlock], final: bool) -> Phase:
    ctx = run.ctx
    response = ctx.last_response
    assert response is not None
    if final:
        run.stop_reason = "max_iters"
        run.reply = response
        return run.end_step("finish")
    more = bool(calls)
    for condition in run.agent.stop_when:
        if isinstance(condition, FinalAnswerMarker):
            answer = condition.answer(response.text)
            if answer is not None:
                run.stop_reason = "final_answer"
                run.reply = Msg.assistant(answer)
                return run.end_step("finish")
    if not more:
        run.stop_reason = "no_tool_calls"
        run.reply = response
        return run.end_step("finish")
    for condition in run.agent.stop_when:
        if isinstance(condition, FinalAnswerMarker):
            continue
        try:
            met = condition(ctx)
        except Exception as exc:  # a user's stop condition failed: the run fails, as data
            name = getattr(condition, "__name__", type(condition).__name__)
            raise UnknownRunError(
                f"stop condition {name!r} raised {type(exc).__name__}: {exc}", source="stop_when"
            ) from exc
        if met:
            if isinstance(condition, MaxSteps):
                return run.end_step("final")
            run.stop_reason = "stop_condition"
            return run.end_step("finish")
    return run.end_step("step")


async def _reason(run: Run, pre: PreReasoningEvent) -> tuple[Msg, Usage] | Phase:
    """Call the model and stream its chunks; return the response, or the phase to go to."""
    ctx = run.ctx
    builder = ResponseBuilder(id_factory=run.next_call_id)
    publish = run.publish
    make = ctx._make
    stream = ctx.model.stream(list(pre.messages), list(pre.tools), pre.options)
    iterator = stream.__aiter__()
    start_drainer = run.start_drainer
    output = _output_stream(ctx)
    output_at = 0
    try:
        while True:
            run.awaiting_model = True
            # what the model emits while awaited (a RetryEvent before a retry) is delivered at
            # once by a drainer task, as for a tool running on the run's task
            ctx._on_pending = start_drainer
            try:
                delta = await iterator.__anext__()
                ctx._on_pending = None
                if run.drainer is not None:  # its events come before this chunk
                    await run.join_drainer()
                position = builder.add(delta)
            except StopAsyncIteration:
                break
            except asyncio.CancelledError:
                if not run.absorb_interrupt_cancel():
                    raise
                return await run.interrupted("chunk")
            except Exception as exc:
                return await _model_failed(run, builder, exc)
            finally:
                run.awaiting_model = False
                ctx._on_pending = None
            if ctx._interrupt_requested:
                return await run.interrupted("chunk")
            if position >= 0:
                await publish(make(ReasoningChunkEvent, delta=delta, index=position))
                if output is not None:
                    output_at = position
                    await _publish_partial(run, output.feed(delta), position)
        if output is not None:  # the end of the text completes a top-level number
            await _publish_partial(run, output.close(), output_at)
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()
        if run.drainer is not None:
            await run.join_drainer()
    usage = builder.usage
    if usage.requests == 0:
        usage = usage + Usage(requests=1)
    ctx.usage = ctx.usage + usage
    return builder.build(), usage


async def _model_failed(run: Run, builder: ResponseBuilder, exc: Exception) -> Phase:
    """The model stream raised: restart the step (a recoverable break mid-stream), or fail."""
    await run.join_drainer()  # what it emitted (retries) comes before the failure
    if isinstance(exc, AgentRunError):
        if exc.recoverable and builder.started and run.stream_restarts < MAX_RESTARTS:
            return await _restart_step(run, exc)
        return await run.fail(exc.code, str(exc), source="model", exception=exc, recoverable=False)
    return await run.fail(
        ErrorCode.PROVIDER_ERROR,
        f"the model {run.ctx.model.name!r} failed: {type(exc).__name__}: {exc}",
        source="model",
        exception=exc,
    )


def _output_stream(ctx: RunContext) -> OutputStream | None:
    plan = ctx.output_plan
    return OutputStream(plan) if plan is not None else None


async def _publish_partial(run: Run, partial: Any, index: int) -> None:
    """Publish an `OutputChunkEvent` when the partial output changed."""
    if partial is not NO_PARTIAL:
        await run.publish(run.ctx._make(OutputChunkEvent, partial=partial, index=index))


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
