"""Human approval: which calls wait for a human, parking their batch, and deciding approvals.

Whether a call needs approval is decided before its PreActing, so a Pre/PostActing pair never
spans two runs. The batch's other calls run as usual; then the batch (the assistant message and
those results) is parked in the session's state, out of memory, with one `PendingApproval` per
waiting call, an `ApprovalRequestedEvent` each, and the run ends with
`stop_reason="approval_pending"`. `agent.approve()` / `agent.reject()` decide one approval each;
the last decision of a batch resumes it (`_resume.py`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rxagent.errors import ApprovalError, ConfigurationError
from rxagent.events import ApprovalRequestedEvent
from rxagent.messages import Msg, ToolResultBlock, new_id, thaw
from rxagent.state import ParkedBatch, PendingApproval

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from rxagent.agent._run import Phase, Run
    from rxagent.messages import ToolUseBlock

__all__ = [
    "NEEDS_APPROVAL",
    "Decision",
    "announce",
    "approval_for",
    "args_hash",
    "call_key",
    "check_approval_id",
    "decide",
    "drop_orphans",
    "needs_approval",
    "park",
    "rejected_result",
]

logger: Final = logging.getLogger("rxagent.agent")

NEEDS_APPROVAL: Final = "the tool needs approval"
"""`ApprovalRequestedEvent.reason` for a call whose tool asked for approval."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A human's decision on one approval (what `approve` / `reject` ask a run to record)."""

    approval_id: str
    approved: bool
    reason: str | None = None


def check_approval_id(approval_id: object) -> str:
    """Return `approval_id` if it is a non-empty str.

    Raises:
        ConfigurationError: Naming where the id comes from.
    """
    if not isinstance(approval_id, str) or not approval_id:
        raise ConfigurationError(
            f"approval_id must be a non-empty str from result.pending_approvals or an "
            f"ApprovalRequestedEvent, got {approval_id!r}"
        )
    return approval_id


def needs_approval(run: Run, call: ToolUseBlock) -> bool:
    """Whether `call` must wait for a human: its tool's `needs_approval`, on the model's arguments.

    A call that cannot run anyway (unknown tool, arguments that are not JSON) never waits. A
    predicate that raises is taken as a yes: when in doubt, a human decides.
    """
    if call.raw_input is not None:
        return False
    found = run.agent.toolkit.get(call.name)
    rule = getattr(found, "needs_approval", False)
    if not callable(rule):
        return bool(rule)
    try:
        return bool(rule(thaw(call.input)))
    except Exception:
        logger.warning(
            "the needs_approval function of tool %r raised; the call waits for approval",
            call.name,
            exc_info=True,
        )
        return True


def args_hash(arguments: Mapping[str, Any]) -> str:
    """The SHA-256 of the arguments' canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(
        thaw(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(text.encode()).hexdigest()


def call_key(run_id: str, call_id: str) -> str:
    """A tool call's idempotency key: the run that first saw it, and its id."""
    return f"{run_id}:{call_id}"


def approval_for(call: ToolUseBlock, origin: str) -> PendingApproval:
    """A new approval for `call`, of a batch first seen by run `origin`."""
    return PendingApproval(
        approval_id=f"ap_{new_id()}",
        tool_call_id=call.id,
        tool_call=call,
        args_hash=args_hash(call.input),
        idempotency_key=call_key(origin, call.id),
    )


async def park(
    run: Run,
    calls: Sequence[ToolUseBlock],
    results: Mapping[str, ToolResultBlock],
    held: Sequence[ToolUseBlock],
    stop: bool,
) -> Phase:
    """Park the batch: its message leaves memory, its waiting calls are announced; end the run."""
    ctx = run.ctx
    message = ctx._memory.pop()  # the response of this step: memory gets it once all is decided
    assert {c.id for c in calls} <= {c.id for c in message.tool_calls}
    done = tuple(results[c.id] for c in calls if c.id in results)
    run.parked = ParkedBatch(run_id=ctx.run_id, message=message, results=done, stop=stop)
    run.pending = tuple(approval_for(call, ctx.run_id) for call in held)
    await announce(run, run.pending, NEEDS_APPROVAL)
    return run.end_step("finish")


async def announce(run: Run, approvals: Iterable[PendingApproval], reason: str) -> None:
    """Emit an `ApprovalRequestedEvent` per approval; the run then ends parked."""
    ctx = run.ctx
    assert run.parked is not None  # approvals belong to a parked batch (see drop_orphans)
    run.stop_reason = "approval_pending"
    run.reply = Msg.assistant(run.parked.message.text)
    for approval in approvals:
        assert approval.tool_call is not None  # orphans were dropped (drop_orphans)
        event = ctx._make(
            ApprovalRequestedEvent,
            approval_id=approval.approval_id,
            tool_call=approval.tool_call,
            reason=reason,
        )
        await run.publish(event)


def drop_orphans(run: Run) -> None:
    """Forget approvals that no parked call backs (state built by hand): they cannot resume."""
    parked = run.parked
    ids = {c.id for c in parked.message.tool_calls} if parked is not None else set()
    kept = tuple(p for p in run.pending if p.tool_call_id in ids and p.tool_call is not None)
    if len(kept) != len(run.pending):
        dropped = [p.approval_id for p in run.pending if p not in kept]
        logger.warning(
            "session %r: approvals %s have no parked tool call and were dropped",
            run.ctx.session_id,
            dropped,
        )
        run.pending = kept


def decide(run: Run, decision: Decision) -> bool:
    """Record `decision` on the run's parked batch; True when it was the batch's last one.

    Raises:
        ApprovalError: The approval id is unknown here, or was already decided.
    """
    drop_orphans(run)
    found = next((p for p in run.pending if p.approval_id == decision.approval_id), None)
    if found is None:
        raise _unknown(run, decision.approval_id)
    assert run.parked is not None  # drop_orphans keeps only approvals of a parked batch
    decided = found.model_copy(
        update={
            "decision": "approved" if decision.approved else "rejected",
            "reason": None if decision.approved else decision.reason,
        }
    )
    run.pending = tuple(p for p in run.pending if p is not found)
    run.parked = run.parked.model_copy(update={"decided": (*run.parked.decided, decided)})
    return not run.pending


def _unknown(run: Run, approval_id: str) -> ApprovalError:
    session_id = run.ctx.session_id
    where = f"session {session_id!r} of agent {run.agent.name!r}"
    decided = run.parked.decided if run.parked is not None else ()
    for approval in decided:
        if approval.approval_id == approval_id:
            if run.pending:
                then = "the batch resumes when its last one is decided"
            else:  # all decided, yet still parked: the run that was to resume it failed
                then = (
                    "every call of its batch is decided, but the run that was to resume it did "
                    "not: resume it with `await agent.call(None, session_id="
                    f"{session_id!r})`"
                )
            return ApprovalError(
                f"approval {approval_id!r} in {where} was already {approval.decision}; each "
                f"approval is decided once, and {then}",
                approval_id=approval_id,
                session_id=session_id,
            )
    waiting = ", ".join(repr(p.approval_id) for p in run.pending) or "none"
    return ApprovalError(
        f"no pending approval {approval_id!r} in {where} (unknown, or already decided and "
        f"done); the pending approvals are: {waiting}",
        approval_id=approval_id,
        session_id=session_id,
    )


def rejected_result(call: ToolUseBlock, reason: str | None) -> ToolResultBlock:
    """The error result a rejected call gets: the model sees that, and why."""
    text = f"The tool call was rejected: {reason}" if reason else "The tool call was rejected."
    return ToolResultBlock(id=call.id, name=call.name, output=text, is_error=True)
