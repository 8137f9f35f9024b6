"""Saving a run's session: its state at the end of the run, and checkpoints after each step."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from pydantic import JsonValue, TypeAdapter, ValidationError

from rxagent._fast import trusted
from rxagent.errors import ConcurrentModificationError, ErrorCode, UnknownRunError
from rxagent.state import AgentState

if TYPE_CHECKING:
    from rxagent.agent._run import Run

__all__ = ["save_checkpoint", "save_state"]

logger: Final = logging.getLogger("rxagent.agent")
_EXTRA: Final = TypeAdapter(dict[str, JsonValue])  # hooks' state must stay JSON


async def save_state(run: Run) -> None:
    """Write the session's state (memory, counters, usage, extra) to the store."""
    ctx = run.ctx
    base = run.state
    approvals = run.approvals
    # Messages are the run's own frozen objects: building the state without revalidating
    # them keeps a save O(1) per message instead of a pydantic pass over the whole history.
    state = trusted(
        AgentState,
        memory=tuple(run.memory),
        active_groups=base.active_groups,
        pending_approvals=approvals.pending,
        parked=approvals.parked,
        step=base.step + ctx.step,
        call_counter=run.call_counter,
        runs=base.runs + (1 if run.finished or run.outcome.reply is not None else 0),
        usage=base.usage + ctx.usage,
        extra=_json_extra(run),
    )
    run.version = await run.agent.store.save(
        run.agent.name, ctx.session_id, state, expected_version=run.version
    )
    await run.lease.renew()


async def save_checkpoint(run: Run) -> None:
    """Save after a completed step; a failing store is a recoverable `ErrorEvent`."""
    try:
        await save_state(run)
    except ConcurrentModificationError as exc:
        raise UnknownRunError(str(exc), source="store") from exc
    except Exception as exc:
        logger.warning("checkpoint of session %r failed: %r", run.ctx.session_id, exc)
        run.events.fail_later(
            ErrorCode.UNKNOWN,
            f"checkpoint failed ({type(exc).__name__}: {exc}); the run goes on",
            source="store",
            exception=type(exc).__name__,
        )


def _json_extra(run: Run) -> dict[str, Any]:
    """`RunContext.extra` as JSON; keys whose values are not JSON are left out, and said so."""
    extra = run.extra
    try:
        return _EXTRA.validate_python(extra)
    except ValidationError:
        kept: dict[str, Any] = {}
        dropped: list[str] = []
        for key, value in extra.items():
            try:
                kept.update(_EXTRA.validate_python({key: value}))
            except ValidationError:
                dropped.append(key)
        message = (
            f"RunContext.extra keys {dropped} hold values that are not JSON and were not "
            "saved; store str, numbers, bools, None, lists and dicts of those"
        )
        logger.error(message)
        run.events.fail_later(
            ErrorCode.UNKNOWN, message, source="agent", exception="ValidationError"
        )
        return kept
