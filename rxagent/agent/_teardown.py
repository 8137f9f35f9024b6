"""Ending a run that cannot finish normally: disposal, abandoning, and releasing the session."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Final

from rxagent.state import pair_tool_calls

if TYPE_CHECKING:
    from rxagent.agent._run import Run

__all__ = ["abandon", "dispose", "release"]

logger: Final = logging.getLogger("rxagent.agent")


def dispose(run: Run) -> None:
    """The subscriber went away: cancel everything and save consistent state, silently."""
    if run.disposed or run.finished:
        return
    run.disposed = True
    if run.timer is not None:
        run.timer.cancel()
    for tool_task in _side_tasks(run):
        tool_task.cancel()
    task = run.task
    if task is not None and not task.done():
        task.cancel()
    cleanup = run.ctx.loop.create_task(_cleanup_after_dispose(run, task))
    run.agent._runs.track(cleanup)


async def _cleanup_after_dispose(run: Run, task: asyncio.Task[None] | None) -> None:
    if task is not None:
        pending: list[asyncio.Task[Any]] = [task, *_side_tasks(run)]
        await asyncio.wait(pending)
    await abandon(run, "interrupted: the run was cancelled")


def _side_tasks(run: Run) -> list[asyncio.Task[Any]]:
    """The run's tool tasks and its drainer, if any."""
    tasks = list(run.tool_tasks)
    if run.drainer is not None:
        tasks.append(run.drainer)
    return tasks


async def abandon(run: Run, reason: str = "not executed: the run failed") -> None:
    """End a run that cannot finish normally: keep memory paired, save it, free the session."""
    for task in _side_tasks(run):  # nothing of the run outlives it
        task.cancel()
    try:
        run.ctx._memory = pair_tool_calls(run.ctx._memory, reason, run.memory_start)
        if run.holds_session:
            await run.save_state()
    except Exception:  # a failing store must not keep the session locked
        logger.exception("could not save session %r", run.ctx.session_id)
    finally:
        try:
            await run._release_lease()
        except Exception as exc:  # the store is down too: the lease expires by its TTL
            logger.warning("could not release the lease of %r: %r", run.ctx.session_id, exc)
        finally:
            run._release()


def release(run: Run) -> None:
    """Mark the run finished: stop its timers, end it in the agent's books, resolve `done`."""
    if run.finished:
        return
    run.finished = True
    if run.timer is not None:
        run.timer.cancel()
    if run.lease_timer is not None:
        run.lease_timer.cancel()
    if run.lease_task is not None:
        run.lease_task.cancel()
    run.agent._runs.end(run)
    if not run.done.done():
        run.done.set_result(None)
