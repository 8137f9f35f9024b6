"""Virtual time for tests: an event loop whose clock jumps to its next timer when idle.

A run keeps time on its event loop (`loop.time()`, `call_later`): its `request_timeout` and
its lease renewal. On this loop, minutes of those pass in no real time, so a test of "the
lease outlives its TTL while the run renews it" waits for nothing.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

T = TypeVar("T")


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock moves only when nothing is ready: then to its next timer."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        selector: Any = getattr(self, "_selector")  # noqa: B009 - a private attribute
        loop = self

        class Skipping:
            def __getattr__(self, name: str) -> Any:
                return getattr(selector, name)

            def select(self, timeout: float | None = None) -> Any:
                ready = selector.select(0)
                if not ready and timeout:
                    loop.now += timeout
                return ready

        setattr(self, "_selector", Skipping())  # noqa: B010 - a private attribute

    def time(self) -> float:
        """The virtual clock, in seconds from the loop's creation."""
        return self.now


def run_in_virtual_time(main: Callable[[VirtualTimeLoop], Coroutine[Any, Any, T]]) -> T:
    """Run `main(loop)` to its end on a new `VirtualTimeLoop`, then close the loop."""
    loop = VirtualTimeLoop()
    try:
        return loop.run_until_complete(main(loop))
    finally:
        loop.close()
