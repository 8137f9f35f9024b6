"""The end of a run: its result, the PostCall event, the final save."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rxagent.agent._output import final_output, read_reply, record_failure
from rxagent.errors import (
    ConcurrentModificationError,
    ErrorCode,
    HookFailedError,
    Reject,
)
from rxagent.events import (
    ErrorEvent,
    PostCallEvent,
)
from rxagent.messages import Msg
from rxagent.output import ParsedOutput
from rxagent.result import AgentError, AgentResult
from rxagent.state import pair_tool_calls

if TYPE_CHECKING:
    from rxagent.agent._run import Run

__all__ = ["finish_run"]


async def finish_run(run: Run) -> None:
    """Pair tool calls, build the result, dispatch PostCall, save, release, deliver."""
    ctx = run.ctx
    reason = (
        "interrupted"
        if run.stop_reason == "interrupted"
        else f"not executed: the run ended ({run.stop_reason})"
    )
    ctx._memory = pair_tool_calls(ctx._memory, reason, run.memory_start)
    reply = run.reply or _fallback_reply(run)
    output: Any = None
    parked = run.stop_reason == "approval_pending"  # no answer yet: nothing to read
    if run.error is None and ctx.output_type is not None and not parked:
        output = await final_output(run, reply)
    error = run.error
    result = AgentResult[Any](
        reply=reply,
        ok=error is None,
        output=output,
        error=error,
        usage=ctx.usage,
        tools_used=tuple(ctx.tools_used),
        stop_reason=run.stop_reason,
        pending_approvals=tuple(p.approval_id for p in run.pending),
        interrupted=run.stop_reason == "interrupted",
        steps=ctx.step,
        duration_ms=(time.perf_counter() - ctx.started_at) * 1000,
        run_id=ctx.run_id,
        session_id=ctx.session_id,
    )
    post = ctx._make(PostCallEvent, reply=reply, result=result)
    try:
        post = await run.chain.dispatch(post, report=run._report_hook_error)
    except (Reject, HookFailedError) as exc:  # the PostCall itself is refused: fail the run
        code = ErrorCode.HOOK_REJECTED if isinstance(exc, Reject) else ErrorCode.UNKNOWN
        result = _failed_result(run, result, code, str(exc), f"hook:{exc.hook}", exc)
        post = PostCallEvent._construct({**post.__dict__, "result": result})
    if post.reply is not reply:
        result = result.model_copy(update={"reply": post.reply})
        if result.ok and ctx.output_type is not None and not parked:  # read from the final reply
            outcome = read_reply(run, post.reply)
            if isinstance(outcome, ParsedOutput):
                result = result.model_copy(update={"output": outcome.value})
            else:
                problem = f"the edited reply does not validate:\n{outcome.summary()}"
                result = _failed_result(
                    run, result, ErrorCode.OUTPUT_INVALID, problem, "output", ValueError(problem)
                )
                record_failure(run, outcome)
                result = result.model_copy(update={"error": run.error, "output": None})
        post = PostCallEvent._construct({**post.__dict__, "result": result})
        if ctx._memory and ctx._memory[-1].id == reply.id:
            ctx._memory[-1] = post.reply
    run.reply = post.reply
    if run.holds_session:
        try:
            await run.save_state()
        except ConcurrentModificationError as exc:
            result = _failed_result(run, result, ErrorCode.UNKNOWN, str(exc), "agent", exc)
            post = PostCallEvent._construct({**post.__dict__, "result": result})
    await run._release_lease()
    if ctx._pending:  # emitted while PostCall was dispatched: they go before it
        await run.drain(quiet=True)
        post = PostCallEvent._construct({**post.__dict__, "seq": ctx._next_seq()})
    run._release()
    run._deliver(post)


def _failed_result(
    run: Run,
    result: AgentResult[Any],
    code: ErrorCode,
    message: str,
    source: str,
    exc: BaseException,
) -> AgentResult[Any]:
    """Fail the run at its very end: queue the ErrorEvent, return the failed result."""
    run.ctx._enqueue(
        ErrorEvent,
        {
            "code": code,
            "message": message,
            "source": source,
            "recoverable": False,
            "exception": type(exc).__name__,
        },
    )
    if run.error is not None:  # the run already failed: keep its first error
        return result
    run.error = AgentError(code=code, message=message, source=source, exception=type(exc).__name__)
    run.stop_reason = "error"
    return result.model_copy(update={"ok": False, "error": run.error, "stop_reason": "error"})


def _fallback_reply(run: Run) -> Msg:
    ctx = run.ctx
    if run.stop_reason == "interrupted":
        if ctx._interrupt_reason is not None:
            return ctx._interrupt_reason
        return Msg.assistant("The run was interrupted.")
    if run.error is not None:
        return Msg.assistant(run.error.failure_text())
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
