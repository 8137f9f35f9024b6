"""Retries for model requests: exponential backoff with jitter, honouring the provider's wait.

A request is retried when its error is *recoverable*: HTTP 408, 409, 425, 429, 5xx and
Anthropic's 529, timeouts and dropped connections. It is never retried on 400/401/403,
context-length errors, a quota that is used up, or cancellation. Retrying happens only before the
first delta of a response reaches the run; after that, a broken stream is the loop's business (it
reports a recoverable `ErrorEvent` and starts the step again).

The sleep, the clock and the random source are injectable, so retry timing is tested without
waiting.

Example:
    ```python
    from rxagent.errors import RateLimitedError
    from rxagent.models.retry import RetryPolicy

    policy = RetryPolicy(max_retries=3, initial_delay_s=1.0, jitter=0.25, random=lambda: 0.5)
    assert [policy.backoff(n) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]  # random() = 0.5: no jitter

    limited = RateLimitedError("slow down", retry_after=7.0)
    assert policy.should_retry(limited, retries_done=0)
    assert policy.delay_for(limited, retry=1) == 7.0  # the provider's wait wins
    ```
"""

from __future__ import annotations

import asyncio
import logging
import random as _random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rxagent.context import current_run_or_none
from rxagent.errors import AgentRunError, ConfigurationError, ErrorCode

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["RetryPolicy", "emit_retry"]

logger = logging.getLogger("rxagent.models.retry")

_NEVER: frozenset[ErrorCode] = frozenset(
    (ErrorCode.AUTH, ErrorCode.INVALID_REQUEST, ErrorCode.CONTEXT_TOO_LONG, ErrorCode.CANCELLED)
)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How a model client retries a failed request.

    The n-th retry waits `min(max_delay_s, initial_delay_s * multiplier**(n-1) * j)`, where the
    jitter factor `j` is uniform in `[1 - jitter, 1 + jitter]`. When the provider says how long to
    wait (`retry-after-ms` or `Retry-After`), that wait is used instead; if it is longer than
    `max_retry_after_s`, the request is not retried and the error is returned at once.

    Raises:
        ConfigurationError: A negative count or delay, or a jitter outside `[0, 1)`.
    """

    max_retries: int = 2
    """Retries after the first attempt (0 turns retrying off)."""
    initial_delay_s: float = 0.5
    """The wait before the first retry, before jitter."""
    multiplier: float = 2.0
    """How much each wait grows."""
    max_delay_s: float = 20.0
    """The cap on a computed wait."""
    jitter: float = 0.25
    """The relative spread of each wait: 0.25 is ±25 %."""
    max_retry_after_s: float = 60.0
    """The longest provider-requested wait that is honoured by waiting."""
    max_elapsed_s: float | None = None
    """A budget for one request and all its retries: a retry whose wait would end past it is not
    made. None means no budget (the run's `request_timeout` still bounds the whole run)."""
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)
    """How to wait (inject a fake to test timing)."""
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)
    """Seconds on a monotonic clock, for `max_elapsed_s` (inject a fake with `sleep`)."""
    random: Callable[[], float] = field(default=_random.random, compare=False)
    """A source of uniform numbers in [0, 1) for the jitter."""

    def __post_init__(self) -> None:
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ConfigurationError(
                f"RetryPolicy.max_retries must be an int >= 0, got {self.max_retries!r}"
            )
        if self.max_elapsed_s is not None and self.max_elapsed_s < 0:
            raise ConfigurationError(
                f"RetryPolicy.max_elapsed_s must be >= 0 or None, got {self.max_elapsed_s!r}"
            )
        for name in ("initial_delay_s", "max_delay_s", "max_retry_after_s"):
            if getattr(self, name) < 0:
                raise ConfigurationError(
                    f"RetryPolicy.{name} must be >= 0, got {getattr(self, name)!r}"
                )
        if self.multiplier < 1:
            raise ConfigurationError(
                f"RetryPolicy.multiplier must be >= 1, got {self.multiplier!r}"
            )
        if not 0 <= self.jitter < 1:
            raise ConfigurationError(
                f"RetryPolicy.jitter must be in [0, 1) (0.25 is ±25 %), got {self.jitter!r}"
            )

    @classmethod
    def coerce(cls, value: int | RetryPolicy | None) -> RetryPolicy:
        """Return `value` as a policy: an int is `max_retries`, None is the default."""
        if value is None:
            return cls()
        if isinstance(value, RetryPolicy):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigurationError(
                f"max_retries must be an int >= 0 or a RetryPolicy, got {value!r}"
            )
        return cls(max_retries=value)

    def backoff(self, retry: int) -> float:
        """Return the computed wait before retry number `retry` (1 for the first)."""
        base = self.initial_delay_s * self.multiplier ** (retry - 1)
        factor = 1.0 + self.jitter * (2.0 * self.random() - 1.0)
        return min(self.max_delay_s, base * factor)

    def should_retry(self, error: BaseException, *, retries_done: int) -> bool:
        """True when `error` may be retried and retries are left."""
        if retries_done >= self.max_retries or not isinstance(error, AgentRunError):
            return False
        if not error.recoverable or error.code in _NEVER:
            return False
        return error.retry_after is None or error.retry_after <= self.max_retry_after_s

    def within_budget(self, started: float, delay_s: float) -> bool:
        """True when a retry after `delay_s` would start within `max_elapsed_s` of `started`.

        `started` is the `clock()` reading taken when the request was first sent.
        """
        if self.max_elapsed_s is None:
            return True
        return self.clock() - started + delay_s <= self.max_elapsed_s

    def delay_for(self, error: AgentRunError, *, retry: int) -> float:
        """Return the wait before retry number `retry` after `error`."""
        if error.retry_after is not None:
            return error.retry_after
        return self.backoff(retry)

    async def wait_to_retry(
        self, error: AgentRunError, *, retries_done: int, started: float
    ) -> bool:
        """Wait before the next try after `error`, reporting it; False when there is none.

        Nothing is waited or reported when the error is not retried, no retry is left, or the
        wait would end past `max_elapsed_s` of `started` (the `clock()` at the first try).
        """
        if not self.should_retry(error, retries_done=retries_done):
            return False
        delay = self.delay_for(error, retry=retries_done + 1)
        if not self.within_budget(started, delay):
            return False
        emit_retry(retries_done + 2, delay, error)
        await self.sleep(delay)
        return True


def emit_retry(attempt: int, delay_s: float, error: AgentRunError) -> None:
    """Report a retry: as a `RetryEvent` in the current run's stream, and in the log."""
    logger.warning(
        "retrying model request (attempt %d) in %.2fs after %s: %s",
        attempt,
        delay_s,
        error.code,
        error.message,
    )
    from rxagent.events import RetryEvent

    run = current_run_or_none()
    if run is not None:
        run.emit(
            RetryEvent, attempt=attempt, delay_s=delay_s, code=error.code, message=error.message
        )
