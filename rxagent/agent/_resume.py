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
    close_open_calls,
    post_acting,
    pre_acting,
    run_inline,
    start_tool,
    take_reapprovals,
    tool_outcome,
)
from rxagent.agent._approval import (
    NESTED_APPROVAL,
    Decision,
    announce,
    approval_for,
    args_hash,
    call_key,
    nested_approvals,
    rejected_result,
    with_calls,
)
from rxagent.agent._saving import save_state
from rxagent.errors import AgentRunError, HookFailedError, Reject, UnknownRunError
from rxagent.messages import Msg, ToolResultBlock

if TYPE_CHECKING:
    from rxagent.agent._run import Run
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


async def continue_parked(run: Run) -> None:
    """After PreCall on a parked session: resume its batch, or announce what still waits.

    The run ends here (`run.outcome.ended`) when the batch parks again, an interrupt arrived
    or a hook asked to stop, or when decisions are still missing; otherwise the batch is in
    memory and the run goes on.
    """
    approvals = run.approvals
    approvals.drop_orphans(run.ctx.session_id)
    if approvals.parked is None:
        return
    if run.inputs and approvals.pending:
        reason = _text_of(run.inputs)
        for approval in approvals.pending:
            approvals.decide(
                Decision(approval.approval_id, approved=False, reason=reason),
                agent=run.agent.name,
                session_id=run.ctx.session_id,
            )
    if approvals.pending:  # no new message, and decisions still missing
        await announce(run, approvals.pending, STILL_WAITING)
        return
    await _resume(run)


def _text_of(inputs: tuple[Msg, ...]) -> str:
    text = "\n".join(m.text for m in inputs if m.text)
    return text or "a new message was sent instead of a decision"


async def _resume(run: Run) -> None:
    parked = run.approvals.parked
    assert parked is not None
    results = {r.id: r for r in parked.results}
    decided = {p.tool_call_id: p for p in parked.decided}
    passed_on: dict[str, tuple[tuple[str, bool, str | None], ...]] = {}
    for p in parked.decided:  # a nested agent's decisions: its call runs again to pass them on
        if p.nested:
            decision = (p.approval_id, p.decision == "approved", p.reason)
            passed_on[p.tool_call_id] = (*passed_on.get(p.tool_call_id, ()), decision)
    todo: list[tuple[ToolUseBlock, PendingApproval]] = []
    for call in parked.message.tool_calls:
        if call.id in results:  # it ran before the batch parked, or was refused: never again
            continue
        approval = decided.get(call.id)
        key = call_key(parked.run_id, call.id)
        if approval is None:
            results[call.id] = _error(call, NO_DECISION)
        elif approval.decision == "rejected" and call.id not in passed_on:
            results[call.id] = rejected_result(call, approval.reason)
        elif key in parked.started:
            results[call.id] = _error(call, LOST.format(key=key))
        else:
            todo.append((call, approval))
    changed: dict[str, ToolUseBlock] = {}
    run.key_origin = parked.run_id
    run.decisions = passed_on
    try:
        stop = await _act_approved(run, todo, results, changed) or parked.stop
    except (AgentRunError, HookFailedError, Reject):  # the run fails in the middle of the batch
        await close_open_calls(run, results)
        _close(run, results)
        raise
    except BaseException:  # cancelled: what did not finish is paired when the run is abandoned
        _close(run, results)
        raise
    finally:
        run.key_origin = run.ctx.run_id
        run.decisions = {}
    nested = dict(run.nested_waits)  # a nested agent parked again (its next step waits)
    run.nested_waits.clear()
    if (changed or nested) and not run.interrupt.requested:
        for call_id in nested:
            results.pop(call_id, None)
        await _park_again(run, results, changed, stop, nested)
    else:
        _close(run, results)
        if run.tool_failure is not None and await run.fail_for_tools():
            return  # an interceptor refused a call (a usage limit): the run ends, memory paired
        if run.interrupt.requested:
            await run.interrupted("after_tool")
        elif stop:
            run.outcome.stop("hook_stop")


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
        if run.interrupt.requested:
            break
        checked = await pre_acting(run, call)
        ready: ToolOutcome | ToolResultBlock
        if isinstance(checked, ToolResultBlock):  # refused by a hook, or interrupted
            effective, ready = call, checked
        elif args_hash(checked.input) != approval.args_hash:
            effective = changed[call.id] = checked
            ready = _error(effective, f"awaiting approval again: {CHANGED}")
        else:
            effective = checked
            await _mark_started(run, effective)
            if run.stopping():  # asked to stop while the start was saved
                ready = _error(effective, "interrupted")
            elif parallel:
                waiting.append((effective, start_tool(run, effective, None)))
                continue
            else:
                ready = await run_inline(run, effective, None)
        if parallel:
            waiting.append((effective, ready))
        else:
            stop = await post_acting(run, effective, ready, results) or stop
    for call, item in waiting:
        if isinstance(item, asyncio.Task):
            await run.events.wait_for(item)
            item = tool_outcome(run, call, item)
        stop = await post_acting(run, call, item, results) or stop
    rewritten = take_reapprovals(run, results)  # changed by an interceptor: asked again
    changed.update(rewritten)
    run.rewritten_calls = rewritten
    for call_id in changed:  # that PostActing closed the pair; the call has no result yet
        results.pop(call_id, None)
    return stop


async def _mark_started(run: Run, call: ToolUseBlock) -> None:
    """Save that `call` starts, before it starts: a lost result never makes it run twice.

    Raises:
        UnknownRunError: The store failed; the call does not start, and the run fails.
    """
    parked = run.approvals.parked
    assert parked is not None
    run.approvals.mark_started(call_key(parked.run_id, call.id))
    try:
        await save_state(run)
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
    nested: dict[str, tuple[ToolUseBlock, tuple[str, ...]]],
) -> None:
    """Calls wait for approval again: hooks changed their arguments, or a nested agent parked.

    A call whose nested agent parked again runs once more when those approvals are decided.
    """
    parked = run.approvals.parked
    assert parked is not None
    calls = parked.message.tool_calls
    again = tuple(approval_for(changed[c.id], parked.run_id) for c in calls if c.id in changed)
    passed_on = nested_approvals(nested, parked.run_id)
    rerun = {call_key(parked.run_id, call_id) for call_id in nested}
    batch = parked.model_copy(
        update={
            # a call an interceptor changed is parked changed: the approval is for what runs
            # (a hook's change is made again by the hook on resume, so its call stays)
            "message": with_calls(parked.message, run.rewritten_calls),
            # not started: calls marked started before an interceptor refused to run them (they
            # never ran), and calls whose nested agent parked again (they run once more)
            "started": tuple(
                key
                for key in parked.started
                if key not in rerun
                and key not in {call_key(parked.run_id, i) for i in run.rewritten_calls}
            ),
            "results": tuple(results[c.id] for c in calls if c.id in results),
            "decided": (),
            "stop": stop,
        }
    )
    run.approvals.park(batch, again + passed_on)
    await announce(run, again, CHANGED)
    await announce(run, passed_on, NESTED_APPROVAL)


def _close(run: Run, results: dict[str, ToolResultBlock]) -> None:
    """The batch is done: its message, then one result per call in call order, go to memory."""
    parked = run.approvals.parked
    assert parked is not None
    memory = run.memory
    memory.append(parked.message)
    for call in parked.message.tool_calls:
        if call.id in results:
            memory.append(trusted(Msg, role="tool", content=(results[call.id],)))
    run.approvals.clear()


def _error(call: ToolUseBlock, text: str) -> ToolResultBlock:
    return ToolResultBlock(id=call.id, name=call.name, output=text, is_error=True)
