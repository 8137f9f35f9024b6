"""Delivering what hooks and tools emit during a run, and reporting failures as events."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from rxagent.errors import ErrorCode, HookFailedError, Reject
from rxagent.events import ErrorEvent
from rxagent.result import AgentError

if TYPE_CHECKING:
    from rxagent.agent._run import Phase, Run
    from rxagent.hooks import Hook

__all__ = ["drain", "fail", "report_hook_error"]

logger: Final = logging.getLogger("rxagent.agent")


async def drain(run: Run, *, quiet: bool = False) -> None:
    """Deliver events emitted by hooks and tools, in emission order (see `Run.drain`)."""
    pending = run.ctx._pending
    while pending:
        event = run.ctx._make_emitted(*pending.popleft())
        hook_error = isinstance(event, ErrorEvent) and event.source.startswith("hook:")
        run.reporting_hook_error = hook_error
        try:
            dispatched = await run.chain.dispatch(event, report=run._report_hook_error)
        except (Reject, HookFailedError) as exc:
            if not quiet:
                run._deliver(event)
                raise
            logger.error("a hook refused %s while the run was ending: %s", event.type, exc)
            dispatched = event
        finally:
            run.reporting_hook_error = False
        run._deliver(dispatched)
        gate = run.gate
        if gate is not None and not gate.is_set():  # a slow consumer slows emitters too
            await gate.wait()


def report_hook_error(run: Run, hook: Hook, exc: Exception) -> None:
    """Queue a recoverable `ErrorEvent` for a hook that failed (only logged while reporting one)."""
    if run.reporting_hook_error:  # a hook failing on a hook-failure report: log only
        logger.error("hook %r failed on an ErrorEvent: %r", hook.name, exc)
        return
    run.ctx._enqueue(
        ErrorEvent,
        {
            "code": ErrorCode.UNKNOWN,
            "message": f"hook {hook.name!r} failed: {type(exc).__name__}: {exc}",
            "source": f"hook:{hook.name}",
            "recoverable": True,
            "exception": type(exc).__name__,
        },
    )


async def fail(
    run: Run,
    code: ErrorCode,
    message: str,
    *,
    source: str,
    exception: BaseException | None = None,
    recoverable: bool = False,
) -> Phase:
    """Record a run failure, emit its ErrorEvent, and go to `finish`."""
    name = type(exception).__name__ if exception is not None else None
    run.error = AgentError(code=code, message=message, source=source, exception=name)
    run.stop_reason = "error"
    event = run.ctx._make(
        ErrorEvent,
        code=code,
        message=message,
        source=source,
        recoverable=recoverable,
        exception=name,
    )
    try:
        await run.publish(event)
    except (Reject, HookFailedError) as exc:  # the run is failing already: don't fail twice
        logger.error("a hook refused the ErrorEvent of a failing run: %s", exc)
    return "finish"
