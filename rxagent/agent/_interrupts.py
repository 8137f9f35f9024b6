"""Interrupting a run: the request, absorbing its cancellation, and ending at a checkpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rxagent.errors import ErrorCode
from rxagent.events import InterruptedEvent
from rxagent.result import AgentError

if TYPE_CHECKING:
    from rxagent.agent._run import Checkpoint, Phase, Run
    from rxagent.messages import Msg

__all__ = ["absorb_interrupt_cancel", "handle_interrupt", "request_interrupt"]


def request_interrupt(run: Run, msg: Msg | None, *, timeout: bool = False) -> bool:
    """Ask the run to stop at its next checkpoint (sync; called from any task on the loop)."""
    if run.finished or run.disposed:
        return False
    ctx = run.ctx
    if ctx._interrupt_requested:
        return True
    ctx._interrupt_requested = True
    ctx._interrupt_reason = msg
    ctx._timed_out = timeout
    cancel_tool = run.awaiting_tool and run.agent.interrupt_tools == "cancel"
    if (run.awaiting_model or cancel_tool) and run.task is not None:
        run.cancelled_for_interrupt = True
        run.task.cancel()
    if run.agent.interrupt_tools == "cancel":
        for task in run.tool_tasks:
            task.cancel()
    ctx._notify()
    return True


def absorb_interrupt_cancel(run: Run) -> bool:
    """Whether a `CancelledError` came from `request_interrupt`; if so, it is absorbed."""
    if not run.cancelled_for_interrupt:
        return False
    run.cancelled_for_interrupt = False
    if run.task is not None:
        run.task.uncancel()
    return True


async def handle_interrupt(run: Run, checkpoint: Checkpoint) -> Phase:
    """Handle a noticed interrupt: emit InterruptedEvent and go to `finish`."""
    ctx = run.ctx
    reason = ctx._interrupt_reason.text if ctx._interrupt_reason is not None else ""
    run.interrupt_checkpoint = checkpoint
    run.stop_reason = "interrupted"
    await run.publish(ctx._make(InterruptedEvent, checkpoint=checkpoint, reason=reason))
    if ctx._timed_out:
        limit = run.agent.request_timeout
        following = await run.fail(
            ErrorCode.TIMEOUT,
            f"the run exceeded request_timeout={limit}s; raise request_timeout or make the "
            "run shorter",
            source="agent",
        )
        run.stop_reason = "interrupted"  # by the clock: the run is cut like an interrupt
        return following
    run.error = AgentError(code=ErrorCode.INTERRUPTED, message=reason or "the run was interrupted")
    return "finish"
