"""The Rx operator that chains a run's phases."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from reactivex import Observable, abc
from reactivex.abc import ObserverBase
from reactivex.disposable import SerialDisposable, SingleAssignmentDisposable

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["expand_sequentially"]

T = TypeVar("T")


class _Forward(ObserverBase[T]):
    """Passes values and errors straight to the outer observer; completion goes to `done`.

    The instance attributes shadow the methods, so a value costs one call, not three.
    """

    def __init__(self, outer: abc.ObserverBase[T], done: Callable[[], None]) -> None:
        self.on_next = outer.on_next  # type: ignore[method-assign]
        self.on_error = outer.on_error  # type: ignore[method-assign]
        self.on_completed = done  # type: ignore[method-assign]

    def on_next(self, value: T) -> None:  # pragma: no cover - shadowed in __init__
        """Forward a value."""

    def on_error(self, error: Exception) -> None:  # pragma: no cover - shadowed in __init__
        """Forward an error."""

    def on_completed(self) -> None:  # pragma: no cover - shadowed in __init__
        """Signal completion."""


def expand_sequentially(
    first: Observable[T], following: Callable[[], Observable[T] | None]
) -> Observable[T]:
    """Emit `first`, then the observable `following()` returns, and so on until it returns None.

    `following()` is asked only after the previous observable completed, so each one can depend
    on what the previous one did. It is `expand(...)` and `concat_map(...)` fused for a sequence
    whose next element is known only at the end of the current one: one subscription per
    element, where `just(x).pipe(expand(f), concat_map(g))` costs an expand queue, a subject and
    two trampolined subscriptions per element (measured in `bench/overhead.py`).

    Disposing the subscription disposes the current inner subscription.

    Example:
        ```python
        import reactivex
        from rxagent.agent._operators import expand_sequentially

        parts = iter([reactivex.of(3, 4), reactivex.of(5)])
        out: list[int] = []
        expand_sequentially(reactivex.of(1, 2), lambda: next(parts, None)).subscribe(out.append)
        assert out == [1, 2, 3, 4, 5]
        ```
    """

    def subscribe(
        observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        current = SerialDisposable()
        inner_observer = _Forward(observer, lambda: on_completed())

        def run(source: Observable[T]) -> None:
            inner = SingleAssignmentDisposable()
            current.disposable = inner
            inner.disposable = source.subscribe(inner_observer, scheduler=scheduler)

        def on_completed() -> None:
            try:
                source = following()
            except Exception as exc:  # a bug in the sequence, not a run failure
                observer.on_error(exc)
                return
            if source is None:
                observer.on_completed()
            else:
                run(source)

        run(first)
        return current

    return Observable(subscribe)
