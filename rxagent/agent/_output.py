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

from typing import TYPE_CHECKING, Any

from rxagent.agent._acting import act
from rxagent.agent._owners import UNSET
from rxagent.agent._saving import save_checkpoint
from rxagent.agent.conditions import marked_answer
from rxagent.errors import ErrorCode
from rxagent.events import ErrorEvent
from rxagent.messages import Msg, freeze
from rxagent.output import OutputFailure, ParsedOutput
from rxagent.state import pair_tool_calls

if TYPE_CHECKING:
    from collections.abc import Collection

    from rxagent.agent._run import Run
    from rxagent.messages import ToolUseBlock
    from rxagent.output import OutputPlan
    from rxagent.result import StopReason

__all__ = ["check_answer", "fail_output", "final_output", "read_reply"]


async def check_answer(
    run: Run, response: Msg, *, final: bool, offered: Collection[str] | None
) -> bool:
    """Read the answer in `response`; False when the step goes on to act on its tool calls.

    True when the step is done here: a valid answer ended the run, or an invalid one was sent
    back to the model (then the run goes on with a new step, unless it failed).
    """
    plan = run.output_plan
    assert plan is not None
    answers = plan.final_calls(response)
    others = [c for c in response.tool_calls if plan.tool is None or c.name != plan.tool.name]
    outcome: ParsedOutput | OutputFailure
    if answers:
        outcome = plan.reader.read_call(answers[0])
    elif others and not final:
        return False
    else:
        text = marked_answer(run.agent.stop_when, response.text)
        outcome = plan.reader.read_text(text if text is not None else response.text)
    if isinstance(outcome, ParsedOutput):
        marked = marked_answer(run.agent.stop_when, response.text) is not None
        if answers or plan.reader.wrapped or marked:
            reply = Msg.assistant(outcome.json_text)
        else:
            reply = response
        if answers:
            reason: StopReason = "final_answer"
        else:
            reason = run.final_reason if final else "no_tool_calls"
        run.outcome.stop(reason, reply, outcome.value)
        run.end_step()
        return True
    await _repair(
        run, plan, outcome, called=bool(answers), others=others, final=final, offered=offered
    )
    return True


async def _repair(
    run: Run,
    plan: OutputPlan,
    failure: OutputFailure,
    *,
    called: bool,
    others: list[ToolUseBlock],
    final: bool,
    offered: Collection[str] | None,
) -> None:
    limit = run.agent.max_output_retries
    if run.budget.repairs >= limit:
        await fail_output(run, failure)
        return
    run.budget.repairs += 1
    message = (
        f"the answer does not validate as {_type_name(plan.output_type)}; it is sent back "
        f"to the model (repair {run.budget.repairs} of {limit}):\n{failure.summary()}"
    )
    await run.events.publish(
        run.events.make(
            ErrorEvent,
            code=ErrorCode.OUTPUT_INVALID,
            message=message,
            source="output",
            recoverable=True,
            exception=None,
        )
    )
    if others and not final:  # the response's own tool calls run first, as in any step
        if run.interrupt.requested:
            await run.interrupted("before_acting")
            return
        await act(run, others, offered)
        if run.outcome.ended:
            return
    run.memory[:] = pair_tool_calls(
        run.memory, "not executed: the answer was sent back to be fixed", run.memory_start
    )
    run.memory.append(plan.repair_message(failure, called=called))
    if run.checkpoint_steps:
        await save_checkpoint(run)
    run.end_step()


async def fail_output(run: Run, failure: OutputFailure, *, ended: str | None = None) -> None:
    """End the run with `OUTPUT_INVALID`, the raw answer and the errors."""
    plan = run.output_plan
    name = _type_name(plan.output_type if plan is not None else run.ctx.output_type)
    repairs = run.budget.repairs
    after = f" after {repairs} repair{'s' if repairs != 1 else ''}" if repairs else ""
    if ended is not None:
        after += f" (the run ended by {ended!r}, so it was read from the reply)"
    await run.fail(
        ErrorCode.OUTPUT_INVALID,
        f"the answer does not validate as {name}{after}:\n{failure.summary()}",
        source="output",
    )
    record_failure(run, failure)


def record_failure(run: Run, failure: OutputFailure) -> None:
    """Attach the raw answer and the errors to the run's `OUTPUT_INVALID` error."""
    error = run.outcome.error
    if error is not None and error.code is ErrorCode.OUTPUT_INVALID:
        run.outcome.fail(
            error.model_copy(
                update={"raw_output": failure.raw, "output_errors": freeze(failure.errors)}
            )
        )


def read_reply(run: Run, reply: Msg) -> ParsedOutput | OutputFailure:
    """Read the output from a reply's text (a reply no answer was read from, or an edited one)."""
    plan = run.output_plan
    if plan is None:  # output_type=str: the text is the output
        return ParsedOutput(reply.text, reply.text)
    return plan.reader.read_text(reply.text)


async def final_output(run: Run, reply: Msg) -> Any:
    """The run's output at its end: the answer read in a step, or else read from the reply.

    A run that ended before an answer was read (a hook's `stop`, a stop condition) reads its
    reply; no repair is possible any more.
    """
    if run.outcome.output is not UNSET:
        return run.outcome.output
    outcome = read_reply(run, reply)
    if isinstance(outcome, ParsedOutput):
        return outcome.value
    await fail_output(run, outcome, ended=run.outcome.stop_reason)
    return None


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else repr(tp)
