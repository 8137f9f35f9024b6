"""Guards in the run: the input after PreCall, each tool call and result, and the final reply.

The agent's `GuardPipeline` decides; this module asks it at the four places of a run, publishes
what it reports as `GuardEvent`s, and applies the outcome:

| target | where | a rejection | a rewrite |
|---|---|---|---|
| input | after PreCall, before memory | the run fails (`GUARD_REJECTED`) | none |
| tool_call | after PreActing's hooks | the call gets an error result | none |
| tool_result | before PostActing | the call gets an error result | the result's text |
| output | before PostCall | the run fails (`GUARD_REJECTED`) | the reply and memory |
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rxagent.errors import ErrorCode
from rxagent.events import GuardEvent
from rxagent.guards import GuardContext, Screened
from rxagent.messages import Msg, TextBlock, ToolResultBlock

if TYPE_CHECKING:
    from rxagent.agent._run import Run
    from rxagent.events import GuardTarget, GuardVerdict
    from rxagent.guards import GuardPipeline
    from rxagent.messages import Block, ToolUseBlock
    from rxagent.models.base import ToolSchema

__all__ = [
    "offered_tools",
    "reject_input",
    "screen_input",
    "screen_reply",
    "screen_tool_call",
    "screen_tool_result",
]


def _context(run: Run, target: GuardTarget, call: ToolUseBlock | None = None) -> GuardContext:
    ctx = run.ctx
    system = run.system_msg
    return GuardContext(
        target,
        principal=ctx.principal,
        session_id=ctx.session_id,
        agent=ctx.agent,
        run=ctx,
        system_prompt=system.text if system is not None else "",
        tool_call=call,
        messages=run.inputs if target == "input" else (),
    )


async def _publish(
    run: Run, screened: Screened, target: GuardTarget, call: ToolUseBlock | None = None
) -> None:
    events = run.events
    call_id = call.id if call is not None else None
    for report in screened.reports:
        await events.publish(
            events.make(
                GuardEvent,
                stage=report.stage,
                verdict=report.verdict,
                action=report.action,
                target=target,
                tool_call_id=call_id,
            )
        )


def _why(verdict: GuardVerdict) -> str:
    return "; ".join(verdict.reasons) or f"score {verdict.score:.2f}"


# -- input ---------------------------------------------------------------------------------------


async def screen_input(run: Run) -> Screened | None:
    """Check the run's input (nothing is published yet); None when no stage checks input.

    A run without input (one that resumes approved calls) is not checked.
    """
    guards = run.agent.guards
    if guards is None or not run.inputs or not guards.watches("input"):
        return None
    text = "\n\n".join(message.text for message in run.inputs if message.text)
    return await guards.screen(text, _context(run, "input"))


async def reject_input(run: Run, screened: Screened) -> bool:
    """Publish the input's verdicts; on a rejection fail the run and return True."""
    await _publish(run, screened, "input")
    verdict = screened.rejected
    if verdict is None:
        return False
    await run.fail(
        ErrorCode.GUARD_REJECTED,
        f"the input was rejected by guard {verdict.stage!r}: {_why(verdict)}",
        source=f"guard:{verdict.stage}",
        retry_after=verdict.retry_after,
    )
    return True


# -- tools ---------------------------------------------------------------------------------------


def offered_tools(run: Run, tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
    """The tools the run's caller may use, of `tools` (`Permission` hides the others)."""
    guards = run.agent.guards
    if guards is None or not guards.restricts_tools:
        return tools
    principal = run.ctx.principal
    return tuple(schema for schema in tools if guards.permits(principal, schema.name))


def watching(run: Run, target: GuardTarget) -> GuardPipeline | None:
    """The agent's pipeline when a stage checks `target`, else None.

    The acting code asks this before awaiting a screen, so a run without guards pays no
    coroutine per tool call.
    """
    guards = run.agent.guards
    return guards if guards is not None and guards.watches(target) else None


async def screen_tool_call(
    run: Run, guards: GuardPipeline, call: ToolUseBlock
) -> ToolResultBlock | None:
    """Check a call about to run; the error result of a refused call, or None to run it."""
    arguments = json.dumps(call.input, ensure_ascii=False, default=str)
    screened = await guards.screen(arguments, _context(run, "tool_call", call))
    await _publish(run, screened, "tool_call", call)
    verdict = screened.rejected
    return None if verdict is None else _refused(call, "Tool call", verdict)


async def screen_tool_result(
    run: Run, guards: GuardPipeline, call: ToolUseBlock, result: ToolResultBlock
) -> ToolResultBlock:
    """Check a tool's result before PostActing; the result the model will see."""
    text = result.text
    if not text:
        return result
    screened = await guards.screen(text, _context(run, "tool_result", call))
    await _publish(run, screened, "tool_result", call)
    verdict = screened.rejected
    if verdict is not None:
        return _refused(call, "Tool result", verdict)
    if not screened.changed:
        return result
    return result.model_copy(update={"output": _with_text(result.output, screened.text)})


def _refused(call: ToolUseBlock, what: str, verdict: GuardVerdict) -> ToolResultBlock:
    """The error result of a call or result a guard refused."""
    output = f"{what} refused by guard {verdict.stage!r}: {_why(verdict)}"
    return ToolResultBlock(id=call.id, name=call.name, output=output, is_error=True)


# -- output --------------------------------------------------------------------------------------


async def screen_reply(run: Run, reply: Msg) -> Msg | None:
    """Check the final reply before PostCall: the reply to give, or None when it was withheld.

    A rewritten reply replaces the model's in memory too, so what was redacted is not stored;
    a rejected one fails the run (its reply is then the failure's), and memory keeps a notice
    in its place.
    """
    guards = run.agent.guards
    if guards is None or not guards.watches("output") or not reply.text:
        return reply
    screened = await guards.screen(reply.text, _context(run, "output"))
    await _publish(run, screened, "output")
    verdict = screened.rejected
    if verdict is not None:
        await run.fail(
            ErrorCode.GUARD_REJECTED,
            f"the reply was rejected by guard {verdict.stage!r}: {_why(verdict)}",
            source=f"guard:{verdict.stage}",
        )
        notice = f"[The reply was withheld by guard {verdict.stage!r}.]"
        _replace_in_memory(run, reply, Msg.assistant(notice))
        return None
    if not screened.changed:
        return reply
    rewritten = reply.model_copy(update={"content": _with_text(reply.content, screened.text)})
    _replace_in_memory(run, reply, rewritten)
    return rewritten


def _replace_in_memory(run: Run, old: Msg, new: Msg) -> None:
    """Put `new` where `old` (or the last assistant message with its text) is in memory."""
    memory = run.memory
    for index in range(len(memory) - 1, run.memory_start - 1, -1):
        message = memory[index]
        if message.role != "assistant":
            continue
        if message.id == old.id or message.text == old.text:
            memory[index] = new.model_copy(update={"id": message.id})
        return


def _with_text(content: str | tuple[Block, ...], text: str) -> str | tuple[Block, ...]:
    """`content` with its text replaced by `text`: other blocks (images, thinking) are kept."""
    if isinstance(content, str):
        return text
    blocks: list[Block] = []
    placed = False
    for block in content:
        if isinstance(block, TextBlock):
            if not placed:
                blocks.append(TextBlock(text=text))
                placed = True
            continue
        blocks.append(block)
    if not placed:
        blocks.append(TextBlock(text=text))
    return tuple(blocks)
