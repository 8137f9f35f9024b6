"""Saving a run's session: state, step checkpoints, and the session lease."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Final

from pydantic import JsonValue, TypeAdapter, ValidationError

from rxagent._fast import trusted
from rxagent.errors import ConcurrentModificationError, ErrorCode, UnknownRunError
from rxagent.events import ErrorEvent
from rxagent.state import AgentState

if TYPE_CHECKING:
    from rxagent.agent._run import Run

__all__ = ["keep_lease", "release_lease", "renew_lease", "save_checkpoint", "save_state"]

logger: Final = logging.getLogger("rxagent.agent")
_EXTRA: Final = TypeAdapter(dict[str, JsonValue])  # hooks' state must stay JSON


async def save_state(run: Run) -> None:
    """Write the session's state (memory, counters, usage, extra) to the store."""
    ctx = run.ctx
    base = run.state
    # Messages are the run's own frozen objects: building the state without revalidating
    # them keeps a save O(1) per message instead of a pydantic pass over the whole history.
    state = trusted(
        AgentState,
        memory=tuple(ctx._memory),
        active_groups=base.active_groups,
        pending_approvals=run.pending,
        parked=run.parked,
        step=base.step + ctx.step,
        call_counter=run.call_counter,
        runs=base.runs + (1 if run.finished or run.reply is not None else 0),
        usage=base.usage + ctx.usage,
        extra=_json_extra(run),
    )
    run.version = await run.agent.store.save(
        run.agent.name, ctx.session_id, state, expected_version=run.version
    )
    await run.renew_lease()


async def save_checkpoint(run: Run) -> None:
    """Save after a completed step; a failing store is a recoverable event (`Run.checkpoint`)."""
    try:
        await run.save_state()
    except ConcurrentModificationError as exc:
        raise UnknownRunError(str(exc), source="store") from exc
    except Exception as exc:
        logger.warning("checkpoint of session %r failed: %r", run.ctx.session_id, exc)
        run.ctx._enqueue(
            ErrorEvent,
            {
                "code": ErrorCode.UNKNOWN,
                "message": f"checkpoint failed ({type(exc).__name__}: {exc}); the run goes on",
                "source": "store",
                "recoverable": True,
                "exception": type(exc).__name__,
            },
        )


def _json_extra(run: Run) -> dict[str, Any]:
    """`RunContext.extra` as JSON; keys whose values are not JSON are left out, and said so."""
    extra = run.ctx._extra
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
        run.ctx._enqueue(
            ErrorEvent,
            {
                "code": ErrorCode.UNKNOWN,
                "message": message,
                "source": "agent",
                "recoverable": True,
                "exception": "ValidationError",
            },
        )
        return kept


async def renew_lease(run: Run) -> None:
    """Extend the session lease when a third of its TTL has passed (checked per step)."""
    ttl = run.agent.lease_ttl_s
    now = time.monotonic()
    if run.holds_lease and now - run.lease_renewed_at > ttl / 4:
        run.lease_renewed_at = now
        if not await run.agent.store.renew_lease(
            run.agent.name, run.ctx.session_id, run.ctx.run_id, ttl
        ):
            logger.warning("lost the lease on session %r", run.ctx.session_id)


def keep_lease(run: Run) -> None:
    """Renew the lease every third of its TTL while the run lives (see `Run.keep_lease`)."""
    if run.finished or not run.holds_lease:
        return
    ttl = run.agent.lease_ttl_s
    if run.lease_task is None or run.lease_task.done():
        run.lease_task = run.ctx.loop.create_task(run.renew_lease())
    run.lease_timer = run.ctx.loop.call_later(ttl / 3, run.keep_lease)


async def release_lease(run: Run) -> None:
    """Give the session lease back to the store, if the run holds it."""
    if run.holds_lease:
        run.holds_lease = False
        await run.agent.store.release_lease(run.agent.name, run.ctx.session_id, run.ctx.run_id)
