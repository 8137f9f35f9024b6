"""Structured output in the loop: reading each answer, sending errors back, failing for good.

After each PostReasoning of a run with an `output_type` (and an `OutputPlan`):

- a call of the final-answer tool is the answer, whatever else the response holds: its other
  tool calls are not run (they get "not executed" results when the run ends);
- otherwise a response that calls tools goes on as usual (the model works before answering);
- otherwise the response's text is the answer (also under the tool strategy: a model that was
  free not to call the tool may answer in JSON text).

A valid answer ends the run. An invalid one is sent back with its errors, as a user message
marked with `REPAIR_METADATA`, `max_output_retries` times (each announced by a recoverable
`ErrorEvent(code=OUTPUT_INVALID, source="output")`); then the run fails with `OUTPUT_INVALID`,
carrying the raw answer and the errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rxagent.agent._acting import act
from rxagent.agent.conditions import FinalAnswerMarker
from rxagent.errors import ErrorCode
from rxagent.events import ErrorEvent
from rxagent.messages import Msg, freeze
from rxagent.output import OutputFailure, ParsedOutput
from rxagent.state import pair_tool_calls

if TYPE_CHECKING:
    from rxagent.agent._run import Phase, Run
    from rxagent.messages import ToolUseBlock
    from rxagent.output import OutputPlan

__all__ = ["UNSET", "check_answer", "fail_output", "final_output", "read_reply"]

UNSET: Final = object()
"""`Run.output` before a valid answer arrived."""


async def check_answer(run: Run, response: Msg, *, final: bool) -> Phase | None:
    """Read the answer in `response`; return the next phase, or None to act on its tool calls."""
    plan = run.ctx.output_plan
    assert plan is not None
    answers = plan.final_calls(response)
    others = [c for c in response.tool_calls if plan.tool is None or c.name != plan.tool.name]
    outcome: ParsedOutput | OutputFailure
    if answers:
        outcome = plan.reader.read_call(answers[0])
    elif others and not final:
        return None
    else:
        text = _marked_answer(run, response.text)
        outcome = plan.reader.read_text(text if text is not None else response.text)
    if isinstance(outcome, ParsedOutput):
        run.output = outcome.value
        if answers or plan.reader.wrapped or _marked_answer(run, response.text) is not None:
            run.reply = Msg.assistant(outcome.json_text)
        else:
            run.reply = response
        if answers:
            run.stop_reason = "final_answer"
        else:
            run.stop_reason = "max_iters" if final else "no_tool_calls"
        return run.end_step("finish")
    return await _repair(run, plan, outcome, called=bool(answers), others=others, final=final)


def _marked_answer(run: Run, text: str) -> str | None:
    for condition in run.agent.stop_when:
        if isinstance(condition, FinalAnswerMarker):
            answer = condition.answer(text)
            if answer is not None:
                return answer
    return None


async def _repair(
    run: Run,
    plan: OutputPlan,
    failure: OutputFailure,
    *,
    called: bool,
    others: list[ToolUseBlock],
    final: bool,
) -> Phase:
    ctx = run.ctx
    limit = run.agent.max_output_retries
    if run.output_retries >= limit:
        return await fail_output(run, failure)
    run.output_retries += 1
    message = (
        f"the answer does not validate as {_type_name(plan.output_type)}; it is sent back "
        f"to the model (repair {run.output_retries} of {limit}):\n{failure.summary()}"
    )
    await run.publish(
        ctx._make(
            ErrorEvent,
            code=ErrorCode.OUTPUT_INVALID,
            message=message,
            source="output",
            recoverable=True,
            exception=None,
        )
    )
    if others and not final:  # the response's own tool calls run first, as in any step
        if ctx._interrupt_requested:
            return await run.interrupted("before_acting")
        phase = await act(run, others)
        if phase is not None:
            return phase
    ctx._memory = pair_tool_calls(
        ctx._memory, "not executed: the answer was sent back to be fixed", run.memory_start
    )
    ctx._memory.append(plan.repair_message(failure, called=called))
    following: Phase = "final" if final else "step"
    if run.checkpoint_steps:
        await run.checkpoint()
    return run.end_step(following)


async def fail_output(run: Run, failure: OutputFailure, *, ended: str | None = None) -> Phase:
    """End the run with `OUTPUT_INVALID`, the raw answer and the errors."""
    plan = run.ctx.output_plan
    name = _type_name(plan.output_type if plan is not None else run.ctx.output_type)
    repairs = run.output_retries
    after = f" after {repairs} repair{'s' if repairs != 1 else ''}" if repairs else ""
    if ended is not None:
        after += f" (the run ended by {ended!r}, so it was read from the reply)"
    phase = await run.fail(
        ErrorCode.OUTPUT_INVALID,
        f"the answer does not validate as {name}{after}:\n{failure.summary()}",
        source="output",
    )
    record_failure(run, failure)
    return phase


def record_failure(run: Run, failure: OutputFailure) -> None:
    """Attach the raw answer and the errors to the run's `OUTPUT_INVALID` error."""
    if run.error is not None and run.error.code is ErrorCode.OUTPUT_INVALID:
        run.error = run.error.model_copy(
            update={"raw_output": failure.raw, "output_errors": freeze(failure.errors)}
        )


def read_reply(run: Run, reply: Msg) -> ParsedOutput | OutputFailure:
    """Read the output from a reply's text (a reply no answer was read from, or an edited one)."""
    plan = run.ctx.output_plan
    if plan is None:  # output_type=str: the text is the output
        return ParsedOutput(reply.text, reply.text)
    return plan.reader.read_text(reply.text)


async def final_output(run: Run, reply: Msg) -> Any:
    """The run's output at its end: the answer read in a step, or else read from the reply.

    A run that ended before an answer was read (a hook's `stop`, a stop condition) reads its
    reply; no repair is possible any more.
    """
    if run.output is not UNSET:
        return run.output
    outcome = read_reply(run, reply)
    if isinstance(outcome, ParsedOutput):
        return outcome.value
    await fail_output(run, outcome, ended=run.stop_reason)
    return None


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else repr(tp)
