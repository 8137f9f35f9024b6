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
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock, new_id, thaw
from rxagent.state import ParkedBatch, PendingApproval

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence
    from typing import Any

    from rxagent.agent._run import Run

__all__ = [
    "NEEDS_APPROVAL",
    "NESTED_APPROVAL",
    "Approvals",
    "Decision",
    "announce",
    "approval_for",
    "args_hash",
    "call_key",
    "check_approval_id",
    "needs_approval",
    "nested_approvals",
    "park",
    "rejected_result",
    "with_calls",
]

logger: Final = logging.getLogger("rxagent.agent")

NEEDS_APPROVAL: Final = "the tool needs approval"
"""`ApprovalRequestedEvent.reason` for a call whose tool asked for approval."""
NESTED_APPROVAL: Final = "an agent this call runs waits for approval"
"""`ApprovalRequestedEvent.reason` for a call whose nested agent (`as_tool()`) parked."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A human's decision on one approval (what `approve` / `reject` ask a run to record)."""

    approval_id: str
    approved: bool
    reason: str | None = None


class Approvals:
    """A session's parked batch and its approvals still waiting: their only writer."""

    __slots__ = ("parked", "pending")

    def __init__(self) -> None:
        self.parked: ParkedBatch | None = None
        """The batch waiting for decisions; its message is out of memory until it resumes."""
        self.pending: tuple[PendingApproval, ...] = ()
        """Its approvals not decided yet."""

    def load(self, parked: ParkedBatch | None, pending: tuple[PendingApproval, ...]) -> None:
        """Take the session's saved batch and approvals."""
        self.parked, self.pending = parked, pending

    def park(self, batch: ParkedBatch, pending: tuple[PendingApproval, ...]) -> None:
        """Park `batch`, waiting for `pending`."""
        self.parked, self.pending = batch, pending

    def clear(self) -> None:
        """The batch resumed and is in memory: nothing waits any more."""
        self.parked, self.pending = None, ()

    def drop_orphans(self, session_id: str) -> None:
        """Forget approvals that no parked call backs (state built by hand): they cannot resume."""
        parked = self.parked
        ids = {c.id for c in parked.message.tool_calls} if parked is not None else set()
        kept = tuple(p for p in self.pending if p.tool_call_id in ids and p.tool_call is not None)
        if len(kept) != len(self.pending):
            dropped = [p.approval_id for p in self.pending if p not in kept]
            logger.warning(
                "session %r: approvals %s have no parked tool call and were dropped",
                session_id,
                dropped,
            )
            self.pending = kept

    def decide(self, decision: Decision, *, agent: str, session_id: str) -> bool:
        """Record `decision` on the parked batch; True when it was the batch's last one.

        Raises:
            ApprovalError: The approval id is unknown here, or was already decided.
        """
        self.drop_orphans(session_id)
        found = next((p for p in self.pending if p.approval_id == decision.approval_id), None)
        if found is None:
            raise self._unknown(decision.approval_id, agent, session_id)
        assert self.parked is not None  # drop_orphans keeps only approvals of a parked batch
        decided = found.model_copy(
            update={
                "decision": "approved" if decision.approved else "rejected",
                "reason": None if decision.approved else decision.reason,
            }
        )
        self.pending = tuple(p for p in self.pending if p is not found)
        self.parked = self.parked.model_copy(update={"decided": (*self.parked.decided, decided)})
        return not self.pending

    def mark_started(self, key: str) -> None:
        """Record that the call with idempotency `key` starts (saved before it does)."""
        assert self.parked is not None
        self.parked = self.parked.model_copy(update={"started": (*self.parked.started, key)})

    def _unknown(self, approval_id: str, agent: str, session_id: str) -> ApprovalError:
        where = f"session {session_id!r} of agent {agent!r}"
        decided = self.parked.decided if self.parked is not None else ()
        for approval in decided:
            if approval.approval_id == approval_id:
                if self.pending:
                    then = "the batch resumes when its last one is decided"
                else:  # all decided, yet still parked: the run that was to resume it failed
                    then = (
                        "every call of its batch is decided, but the run that was to resume it "
                        "did not: resume it with `await agent.call(None, session_id="
                        f"{session_id!r})`"
                    )
                return ApprovalError(
                    f"approval {approval_id!r} in {where} was already {approval.decision}; each "
                    f"approval is decided once, and {then}",
                    approval_id=approval_id,
                    session_id=session_id,
                )
        waiting = ", ".join(repr(p.approval_id) for p in self.pending) or "none"
        return ApprovalError(
            f"no pending approval {approval_id!r} in {where} (unknown, or already decided and "
            f"done); the pending approvals are: {waiting}",
            approval_id=approval_id,
            session_id=session_id,
        )


def streamed_decision(
    approval_id: object, approved: object, reason: object, buffer: object
) -> Decision:
    """The decision `decision_events(...)` asks for (of an agent or a team), checked.

    Raises:
        ConfigurationError: Naming the argument that is wrong.
    """
    if not isinstance(approved, bool):
        raise ConfigurationError(f"decision_events(approved=...) takes a bool, got {approved!r}")
    if reason is not None and not isinstance(reason, str):
        raise ConfigurationError(f"decision_events(reason=...) takes a str or None, got {reason!r}")
    if not isinstance(buffer, int) or buffer < 1:
        raise ConfigurationError(f"decision_events(buffer=...) must be at least 1, got {buffer!r}")
    return Decision(
        check_approval_id(approval_id), approved=approved, reason=None if approved else reason
    )


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


def needs_approval(run: Run, call: ToolUseBlock, offered: Collection[str] | None) -> bool:
    """Whether `call` must wait for a human: its tool's `needs_approval`, on the model's arguments.

    A call that cannot run anyway (unknown tool, a tool not `offered` in the request, arguments
    that are not JSON) never waits. A predicate that raises is taken as a yes: when in doubt, a
    human decides.
    """
    if call.raw_input is not None or (offered is not None and call.name not in offered):
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
    rewritten: Mapping[str, ToolUseBlock] | None = None,
    nested: Mapping[str, tuple[ToolUseBlock, tuple[str, ...]]] | None = None,
) -> None:
    """Park the batch: its message leaves memory, its waiting calls are announced; end the run.

    `rewritten` are calls a tool interceptor changed: the parked message holds them as changed,
    so the approval is for what will run. `nested` are calls that ran a nested agent which
    parked: they wait for its approvals.
    """
    run_id = run.ctx.run_id
    message = run.memory.pop()  # the response of this step: memory gets it once all is decided
    if rewritten:
        message = with_calls(message, rewritten)
    assert {c.id for c in calls} <= {c.id for c in message.tool_calls}
    done = tuple(results[c.id] for c in calls if c.id in results)
    own = tuple(approval_for(call, run_id) for call in held)
    passed_on = nested_approvals(nested or {}, run_id)
    run.approvals.park(
        ParkedBatch(run_id=run_id, message=message, results=done, stop=stop), own + passed_on
    )
    await announce(run, own, NEEDS_APPROVAL)
    await announce(run, passed_on, NESTED_APPROVAL)
    run.end_step()


def nested_approvals(
    nested: Mapping[str, tuple[ToolUseBlock, tuple[str, ...]]], origin: str
) -> tuple[PendingApproval, ...]:
    """The approvals of calls that wait for a nested agent's: that agent's ids, one each."""
    return tuple(
        PendingApproval(
            approval_id=approval_id,
            tool_call_id=call.id,
            tool_call=call,
            args_hash=args_hash(call.input),
            idempotency_key=call_key(origin, call.id),
            nested=True,
        )
        for call, ids in nested.values()
        for approval_id in ids
    )


async def announce(run: Run, approvals: Iterable[PendingApproval], reason: str) -> None:
    """Emit an `ApprovalRequestedEvent` per approval; the run then ends parked."""
    parked = run.approvals.parked
    assert parked is not None  # approvals belong to a parked batch (see drop_orphans)
    run.outcome.stop("approval_pending", Msg.assistant(parked.message.text))
    for approval in approvals:
        assert approval.tool_call is not None  # orphans were dropped (drop_orphans)
        event = run.events.make(
            ApprovalRequestedEvent,
            approval_id=approval.approval_id,
            tool_call=approval.tool_call,
            reason=reason,
        )
        await run.events.publish(event)


def with_calls(message: Msg, calls: Mapping[str, ToolUseBlock]) -> Msg:
    """`message` with its tool calls of these ids replaced."""
    content = tuple(
        calls.get(b.id, b) if isinstance(b, ToolUseBlock) else b for b in message.blocks
    )
    return message.model_copy(update={"content": content})


def rejected_result(call: ToolUseBlock, reason: str | None) -> ToolResultBlock:
    """The error result a rejected call gets: the model sees that, and why."""
    text = f"The tool call was rejected: {reason}" if reason else "The tool call was rejected."
    return ToolResultBlock(id=call.id, name=call.name, output=text, is_error=True)
