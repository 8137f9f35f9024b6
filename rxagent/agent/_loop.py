"""The ReAct loop as an Rx pipeline.

A run is a sequential expansion of phases: `start` (PreCall, load memory), one `step` per ReAct
iteration (PreReasoning, model, PostReasoning, tools), an optional `final` answer without tools,
and `finish` (PostCall, save). Each phase is a cold Observable that runs one coroutine in one task;
the coroutine awaits hooks inline and pushes the events it makes to the phase's observer. When a
phase completes, the run knows which phase comes next:

    expand_sequentially(phase("start"), lambda: phase(run.following) if run.following else None)

Events pass through one operator, and disposing the subscription cancels the running phase task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactivex import Observable, abc
from reactivex.disposable import Disposable

from rxagent.agent._operators import expand_sequentially

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.agent._run import Run
    from rxagent.events import (
        BaseEvent,
    )


__all__ = ["run_observable"]


def run_observable(run_factory: Callable[[], Run]) -> Observable[BaseEvent]:
    """The cold Observable of one run: each subscription creates and starts a new run."""

    def subscribe(
        observer: abc.ObserverBase[BaseEvent], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        try:
            run = run_factory()
        except Exception as exc:  # a run that cannot start: bad input, busy session
            observer.on_error(exc)
            return Disposable()
        pipeline = expand_sequentially(run.phase("start"), run.next_phase)
        subscription = pipeline.subscribe(observer, scheduler=scheduler)

        def dispose() -> None:
            run.dispose()
            subscription.dispose()

        return Disposable(dispose)

    return Observable(subscribe)
