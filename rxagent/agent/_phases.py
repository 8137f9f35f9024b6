"""A run's phases as Observables, and running one phase with its failures mapped."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Final

from reactivex import Observable, Observer, abc

from rxagent.errors import (
    AgentRunError,
    ApprovalError,
    ErrorCode,
    HookFailedError,
    Reject,
    SessionBusyError,
)
from rxagent.result import AgentError
from rxagent.state import StoreUnavailableError

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.agent._run import Phase, Run
    from rxagent.events import BaseEvent
from rxagent.agent._steps import PHASES

__all__ = ["PhaseObservable", "run_phase"]

logger: Final = logging.getLogger("rxagent.agent")


class PhaseObservable(Observable["BaseEvent"]):
    """A phase of a run: an Observable that never emits while it is being subscribed.

    Its events come later, from the run's task, so subscribing needs none of the
    current-thread trampoline `Observable.subscribe` sets up for sources that emit during
    subscription. Skipping it makes chaining a phase about ten times cheaper (see
    `bench/overhead.py`); everything else about the Observable is unchanged.
    """

    def subscribe(
        self,
        on_next: abc.ObserverBase[BaseEvent] | Callable[[BaseEvent], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
        on_completed: Callable[[], None] | None = None,
        *,
        scheduler: abc.SchedulerBase | None = None,
    ) -> abc.DisposableBase:
        """Subscribe an observer, or callbacks, to the phase."""
        if isinstance(on_next, abc.ObserverBase):
            observer: abc.ObserverBase[BaseEvent] = on_next
        else:
            observer = Observer(on_next, on_error, on_completed)
        return self._subscribe_core(observer, scheduler)


async def run_phase(run: Run, kind: Phase) -> bool:
    """Run one phase and complete its observer; False when the run cannot go on."""
    observer = run.observer
    assert observer is not None
    try:
        try:
            following = await PHASES[kind](run)
        except HookFailedError as exc:  # a hook with on_error="propagate" failed
            cause = exc.__cause__
            if isinstance(cause, AgentRunError):  # a typed failure: the run fails with it
                following = await run.fail(
                    cause.code, str(cause), source=f"hook:{exc.hook}", exception=cause
                )
            else:
                following = await run.fail(
                    ErrorCode.UNKNOWN, str(exc), source=f"hook:{exc.hook}", exception=exc
                )
        except AgentRunError as exc:  # a typed failure of the user's code (a stop condition)
            following = await run.fail(exc.code, str(exc), source=exc.source, exception=exc)
        except Reject as reject:  # refused where only the whole run can be refused
            following = await run.fail(
                ErrorCode.HOOK_REJECTED,
                f"the run was rejected: {reject.reason}",
                source=f"hook:{reject.hook}",
                exception=reject,
            )
        except asyncio.CancelledError:
            if run.disposed:
                return False
            run.error = AgentError(code=ErrorCode.CANCELLED, message="the run was cancelled")
            run.stop_reason = "error"
            await run.finish()
            observer.on_completed()
            raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the run cannot go on: a bug, or a session taken elsewhere
        if isinstance(exc, StoreUnavailableError):  # an outage, not a bug: no traceback
            logger.warning("run %s stopped: %s", run.ctx.run_id, exc)
        elif not isinstance(exc, SessionBusyError | ApprovalError):
            logger.exception("run %s failed unexpectedly", run.ctx.run_id)
        await run._abandon()
        if not run.disposed:
            observer.on_error(exc)
        return False
    if run.disposed:
        return False
    run.following = following
    observer.on_completed()
    return True
