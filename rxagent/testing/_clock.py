"""A fake `asyncio.sleep` on a virtual clock, for testing retry timing without waiting."""

from __future__ import annotations

__all__ = ["RecordingSleep"]


class RecordingSleep:
    """An async `sleep` that records each delay and advances a virtual clock instead of waiting.

    Give it to a `RetryPolicy` as `sleep=` (and its `clock` as `clock=`, for `max_elapsed_s`).

    Attributes:
        delays: Every delay asked for, in order.
        now: The virtual time in seconds: the sum of the delays so far.

    Example:
        ```python
        import asyncio

        from rxagent.models import RetryPolicy
        from rxagent.testing import RecordingSleep

        sleep = RecordingSleep()
        policy = RetryPolicy(sleep=sleep, clock=sleep.clock, max_elapsed_s=10.0)
        asyncio.run(policy.sleep(1.5))
        asyncio.run(sleep(2.0))
        assert sleep.delays == [1.5, 2.0] and sleep.clock() == 3.5
        ```
    """

    __slots__ = ("delays", "now")

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.now = 0.0

    async def __call__(self, delay: float) -> None:
        """Record `delay` and move the virtual clock on by it; return at once."""
        self.delays.append(delay)
        self.now += delay

    def clock(self) -> float:
        """The virtual time (a drop-in for `time.monotonic`)."""
        return self.now
