"""Resuming a parked batch at the start of a run, once every call in it is decided.

Rejected calls get an error result (no PreActing: they never run). Approved calls go through
PreActing with the model's call; if the hooks return other arguments than the approved ones,
the call needs approval again (its PreActing is closed by a PostActing that says so, and the
batch parks again). Otherwise the call is marked started in the stored state *before* it runs,
so a call whose result was lost with a process is never run a second time. Then the message and
one result per call, in call order, go to memory.

A new user message to a parked session first rejects the calls still waiting, with the message
as the reason; a run with no input on a session still waiting announces the approvals again.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from rxagent._fast import trusted
from rxagent.agent._acting import (
    _close_open_calls,
    _outcome,
    _post_acting,
    _pre_acting,
    _run_inline,
    _start_tool,
    _wait_for,
)
from rxagent.agent._approval import (
    Decision,
    announce,
    approval_for,
    args_hash,
    call_key,
    decide,
    drop_orphans,
    rejected_result,
)
from rxagent.errors import AgentRunError, HookFailedError, Reject, UnknownRunError
from rxagent.messages import Msg, ToolResultBlock

if TYPE_CHECKING:
    from rxagent.agent._run import Phase, Run
    from rxagent.messages import ToolUseBlock
    from rxagent.state import PendingApproval
    from rxagent.tools import ToolOutcome

__all__ = ["continue_parked"]

CHANGED: Final = "a PreActing hook changed the approved arguments"
"""`ApprovalRequestedEvent.reason` for a call whose arguments a hook changed on resume."""
STILL_WAITING: Final = "the session still waits for this decision"
"""`ApprovalRequestedEvent.reason` when a run without input finds the session still parked."""
LOST: Final = (
    "not run again: the call started on an earlier resume, whose process stopped before its "
    "result was saved (idempotency key {key})"
)
NO_DECISION: Final = "not executed: the saved state holds no decision for this call"


async def continue_parked(run: Run) -> Phase | None:
    """After PreCall on a parked session: resume its batch, or announce what still waits.

    Returns the phase to go to when the run ends here (parked again, interrupted, stopped),
    else None: the batch is in memory and the run goes on.
    """
    drop_orphans(run)
    if run.parked is None:
        return None
    if run.inputs and run.pending:
        reason = _text_of(run.inputs)
        for approval in run.pending:
            decide(run, Decision(approval.approval_id, approved=False, reason=reason))
    if run.pending:  # no new message, and decisions still missing
        await announce(run, run.pending, STILL_WAITING)
        return "finish"
    return await _resume(run)


def _text_of(inputs: tuple[Msg, ...]) -> str:
    text = "\n".join(m.text for m in inputs if m.text)
    return text or "a new message was sent instead of a decision"


async def _resume(run: Run) -> Phase | None:
    ctx = run.ctx
    parked = run.parked
    assert parked is not None
    results = {r.id: r for r in parked.results}
    decided = {p.tool_call_id: p for p in parked.decided}
    todo: list[tuple[ToolUseBlock, PendingApproval]] = []
    for call in parked.message.tool_calls:
        if call.id in results:  # it ran before the batch parked, or was refused: never again
            continue
        approval = decided.get(call.id)
        key = call_key(parked.run_id, call.id)
        if approval is None:
            results[call.id] = _error(call, NO_DECISION)
        elif approval.decision == "rejected":
            results[call.id] = rejected_result(call, approval.reason)
        elif key in parked.started:
            results[call.id] = _error(call, LOST.format(key=key))
        else:
            todo.append((call, approval))
    changed: dict[str, ToolUseBlock] = {}
    ctx._key_origin = parked.run_id
    try:
        stop = await _act_approved(run, todo, results, changed) or parked.stop
    except (AgentRunError, HookFailedError, Reject):  # the run fails in the middle of the batch
        await _close_open_calls(run, results)
        _close(run, results)
        raise
    except BaseException:  # cancelled: what did not finish is paired when the run is abandoned
        _close(run, results)
        raise
    finally:
        ctx._key_origin = ctx.run_id
    if changed and not ctx._interrupt_requested:
        return await _park_again(run, results, changed, stop)
    _close(run, results)
    if ctx._interrupt_requested:
        return await run.interrupted("after_tool")
    if stop:
        run.stop_reason = "hook_stop"
        return "finish"
    return None


async def _act_approved(
    run: Run,
    todo: list[tuple[ToolUseBlock, PendingApproval]],
    results: dict[str, ToolResultBlock],
    changed: dict[str, ToolUseBlock],
) -> bool:
    """Run the approved calls, in parallel or one by one as the agent says; return `stop`."""
    parallel = run.agent.parallel_tool_calls and len(todo) > 1
    waiting: list[tuple[ToolUseBlock, asyncio.Task[ToolOutcome] | ToolOutcome | ToolResultBlock]]
    waiting = []
    stop = False
    for call, approval in todo:
        if run.ctx._interrupt_requested:
            break
        checked = await _pre_acting(run, call)
        ready: ToolOutcome | ToolResultBlock
        if isinstance(checked, ToolResultBlock):  # refused by a hook, or interrupted
            effective, ready = call, checked
        elif args_hash(checked.input) != approval.args_hash:
            effective = changed[call.id] = checked
            ready = _error(effective, f"awaiting approval again: {CHANGED}")
        else:
            effective = checked
            await _mark_started(run, effective)
            if run.ctx.interrupted:  # asked to stop while the start was saved
                ready = _error(effective, "interrupted")
            elif parallel:
                waiting.append((effective, _start_tool(run, effective)))
                continue
            else:
                ready = await _run_inline(run, effective)
        if parallel:
            waiting.append((effective, ready))
        else:
            stop = await _post_acting(run, effective, ready, results) or stop
    for call, item in waiting:
        if isinstance(item, asyncio.Task):
            await _wait_for(run, item)
            item = _outcome(run, call, item)
        stop = await _post_acting(run, call, item, results) or stop
    for call_id in changed:  # that PostActing closed the pair; the call has no result yet
        results.pop(call_id, None)
    return stop


async def _mark_started(run: Run, call: ToolUseBlock) -> None:
    """Save that `call` starts, before it starts: a lost result never makes it run twice.

    Raises:
        UnknownRunError: The store failed; the call does not start, and the run fails.
    """
    parked = run.parked
    assert parked is not None
    key = call_key(parked.run_id, call.id)
    run.parked = parked.model_copy(update={"started": (*parked.started, key)})
    try:
        await run.save_state()
    except Exception as exc:
        raise UnknownRunError(
            f"could not save that the approved call {call.id!r} starts ({type(exc).__name__}: "
            f"{exc}), so it did not start: a call is never started unless its start is saved",
            source="store",
        ) from exc


async def _park_again(
    run: Run,
    results: dict[str, ToolResultBlock],
    changed: dict[str, ToolUseBlock],
    stop: bool,
) -> Phase:
    """Some approved arguments were changed by hooks: those calls wait for approval again."""
    parked = run.parked
    assert parked is not None
    calls = parked.message.tool_calls
    again = tuple(approval_for(changed[c.id], parked.run_id) for c in calls if c.id in changed)
    run.parked = parked.model_copy(
        update={
            "results": tuple(results[c.id] for c in calls if c.id in results),
            "decided": (),
            "stop": stop,
        }
    )
    run.pending = again
    await announce(run, again, CHANGED)
    return "finish"


def _close(run: Run, results: dict[str, ToolResultBlock]) -> None:
    """The batch is done: its message, then one result per call in call order, go to memory."""
    parked = run.parked
    assert parked is not None
    memory = run.ctx._memory
    memory.append(parked.message)
    for call in parked.message.tool_calls:
        if call.id in results:
            memory.append(trusted(Msg, role="tool", content=(results[call.id],)))
    run.parked = None
    run.pending = ()


def _error(call: ToolUseBlock, text: str) -> ToolResultBlock:
    return ToolResultBlock(id=call.id, name=call.name, output=text, is_error=True)
