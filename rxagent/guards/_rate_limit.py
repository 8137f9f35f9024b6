"""`RateLimit`: a token bucket per user, session or API key, in process or on Redis.

The bucket is kept as one number per key, the time at which it is full again (`full_at`): with
`interval = period / N`, a bucket holds `burst - (full_at - now) / interval` tokens. A run may
take a token while `full_at - now <= (burst - 1) * interval`, and taking one moves `full_at`
to `max(full_at, now) + interval`. A key whose `full_at` has passed holds a full bucket, so it
needs no entry at all: that is what keeps the in-process table small and sets the Redis TTL.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from rxagent.context import ANONYMOUS
from rxagent.guards._pipeline import Guard

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.events import GuardVerdict
    from rxagent.guards._pipeline import GuardContext

__all__ = ["RateLimit"]

Per = Literal["user", "session", "key"]
_PERS: Final = ("user", "session", "key")

_UNITS: Final[dict[str, tuple[str, float]]] = {}
for _unit, _aliases, _seconds in (
    ("second", ("second", "seconds", "sec", "s"), 1.0),
    ("minute", ("minute", "minutes", "min"), 60.0),
    ("hour", ("hour", "hours", "hr", "h"), 3600.0),
    ("day", ("day", "days", "d"), 86400.0),
):
    for _alias in _aliases:
        _UNITS[_alias] = (_unit, _seconds)

_RATE: Final = re.compile(r"\s*(\d+)\s*(?:/|\s+per\s+)\s*([a-z]+)\s*", re.IGNORECASE)
_RATE_FORMS: Final = (
    "'N/second', 'N/minute', 'N/hour', 'N/day' (or 'N/s', 'N/min', 'N/h', 'N/d', "
    "or 'N per minute'), with N a whole number of at least 1"
)


@dataclass(frozen=True, slots=True)
class _Rate:
    count: int
    unit: str
    period_s: float

    def __str__(self) -> str:
        return f"{self.count}/{self.unit}"


def _parse_rate(rate: object) -> _Rate:
    match = _RATE.fullmatch(rate) if isinstance(rate, str) else None
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None or int(match.group(1)) < 1:
        raise ValueError(f"RateLimit(rate=) must be one of {_RATE_FORMS}; got {rate!r}")
    return _Rate(int(match.group(1)), unit[0], unit[1])


def _positive_int(value: object, argument: str, example: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"RateLimit({argument}=) must be a whole number of at least 1, got {value!r}; "
            f"e.g. {argument}={example}"
        )
    return value


class _Buckets(Protocol):
    """Where the buckets live: takes a token from the bucket of (agent, subject)."""

    async def take(self, agent: str, subject: str) -> float:
        """Take one token: 0.0 when there was one, else the seconds until there is one."""
        ...

    async def aclose(self) -> None:
        """Release what the buckets hold (a connection)."""
        ...


class _LocalBuckets:
    """The buckets of one process: `full_at` per key, least recently used first."""

    def __init__(
        self, interval: float, tolerance: float, clock: Callable[[], float], max_keys: int
    ) -> None:
        self._interval = interval
        self._tolerance = tolerance
        self._clock = clock
        self._max_keys = max_keys
        self._full_at: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()  # call_sync may run checks on several threads

    def __len__(self) -> int:
        return len(self._full_at)

    async def take(self, agent: str, subject: str) -> float:
        key = (agent, subject)
        with self._lock:
            now = self._clock()
            full_at = self._full_at.pop(key, now)  # popped and put back: most recently used
            wait = full_at - now
            if wait > self._tolerance:
                self._full_at[key] = full_at
                return wait - self._tolerance
            self._full_at[key] = max(full_at, now) + self._interval
            self._drop_oldest(now)
            return 0.0

    async def aclose(self) -> None:
        return None

    def _drop_oldest(self, now: float) -> None:
        # The oldest entries go while their buckets are full again (they hold nothing) or while
        # there are more than max_keys (then a caller's bucket is forgotten: it starts full).
        entries = self._full_at
        while entries:
            key, full_at = next(iter(entries.items()))
            if full_at > now and len(entries) <= self._max_keys:
                return
            del entries[key]


class RateLimit(Guard):
    """Refuse runs over a rate, per user, session or API key: a token bucket.

    Each run takes one token from its bucket; a bucket holds at most `burst` tokens and refills
    continuously at N tokens per period. A run that finds the bucket empty is refused (or
    flagged) with a verdict whose `retry_after` is the seconds until a token is back (what an
    HTTP front end sends as `Retry-After` with a `429`). Buckets are kept per agent and per
    caller.

    Args:
        rate: N runs per period: `"10/minute"`, also `"10/second"`, `"10/hour"`, `"10/day"`,
            the short forms `"10/s"`, `"10/min"`, `"10/h"`, `"10/d"`, or `"10 per minute"`.
        per: Whose bucket a run takes from: `"user"` (`principal.id`: the user id, else
            `key:<key id>`, else `"anonymous"`), `"key"` (`principal.key_id`, or
            `"anonymous"`) or `"session"` (the run's session id).
        burst: How many tokens a bucket holds, i.e. how many runs may come at once; N when
            None.
        backend: None for buckets in this process, or a Redis URL (`"redis://host:6379/0"`)
            or a `redis.asyncio.Redis` client, for buckets shared by processes (needs
            `pip install "rxagent[redis]"`). On Redis each check is one atomic script that
            reads the server's clock, and a key expires when its bucket is full again.
        clock: In process only: a function returning seconds (monotonic); `time.monotonic`
            when None. Tests pass their own.
        max_keys: In process only: the most buckets kept; past it, the least recently used is
            forgotten (it starts full again). Buckets that are full again are dropped anyway.
        prefix: On Redis: starts every key the stage writes.
        action: What a run over the limit does: `"reject"` (the default) or `"flag"`.

    Raises:
        ValueError: A bad `rate`, `per`, `burst`, `max_keys`, `prefix`, `action` or
            `backend` URL, or a `clock` with a Redis backend (Redis keeps the time).
        TypeError: A `backend` that is neither a URL nor a Redis client, or a `clock` that is
            not callable.
        ImportError: A Redis backend without the `redis` package.

    Example:
        ```python
        import asyncio
        from rxagent import Principal
        from rxagent.guards import GuardContext, RateLimit

        now = [0.0]
        limit = RateLimit("2/minute", clock=lambda: now[0])
        ann = GuardContext("input", principal=Principal(user_id="ann"), agent="bot")


        async def three_runs() -> list[float | None]:
            return [(await limit.check("hi", ann)).retry_after for _ in range(3)]


        assert asyncio.run(three_runs()) == [None, None, 30.0]  # 2 at once, then 1 per 30 s
        now[0] = 30.0
        assert not asyncio.run(limit.check("hi", ann)).flagged
        ```
    """

    name = "rate_limit"
    targets = frozenset({"input"})

    def __init__(
        self,
        rate: str = "10/minute",
        per: Per = "user",
        burst: int | None = None,
        backend: str | Any | None = None,
        *,
        clock: Callable[[], float] | None = None,
        max_keys: int = 100_000,
        prefix: str = "rxagent:rate:",
        action: Literal["reject", "flag"] = "reject",
    ) -> None:
        parsed = _parse_rate(rate)
        if per not in _PERS:
            raise ValueError(f"RateLimit(per=) must be 'user', 'session' or 'key', got {per!r}")
        if action not in ("reject", "flag"):
            raise ValueError(f"RateLimit(action=) must be 'reject' or 'flag', got {action!r}")
        capacity = parsed.count if burst is None else _positive_int(burst, "burst", "20")
        _positive_int(max_keys, "max_keys", "100_000")
        if clock is not None and not callable(clock):
            raise TypeError(
                f"RateLimit(clock=) must be a function returning seconds, got {clock!r}"
            )
        self.rate: str = str(parsed)
        """The rate, as `"N/<second|minute|hour|day>"`."""
        self.per: Per = per
        """Whose bucket a run takes from."""
        self.burst: int = capacity
        """How many tokens a bucket holds."""
        self.action = action
        interval = parsed.period_s / parsed.count
        tolerance = (capacity - 1) * interval
        self._backend: _Buckets
        if backend is None:
            self._backend = _LocalBuckets(
                interval, tolerance, clock if clock is not None else time.monotonic, max_keys
            )
        else:
            if clock is not None:
                raise ValueError(
                    "RateLimit(clock=) applies to in-process buckets only; with a Redis "
                    "backend the Redis server's clock is used: leave clock out"
                )
            from rxagent.guards._rate_redis import RedisBuckets

            if not isinstance(prefix, str) or not prefix:
                raise ValueError(
                    f"RateLimit(prefix=) must be a non-empty str, got {prefix!r}; "
                    "e.g. 'rxagent:rate:'"
                )
            self._backend = RedisBuckets(backend, f"{prefix}{per}:{parsed}:", interval, tolerance)

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        """Take a token from the caller's bucket; flag the run when there is none."""
        subject = self._subject(ctx)
        wait = await self._backend.take(ctx.agent, subject)
        if wait <= 0.0:
            return self.verdict(False)
        return self.verdict(
            True,
            1.0,
            f"rate limit {self.rate} exceeded for {self.per} {subject!r}",
            retry_after=wait,
        )

    async def aclose(self) -> None:
        """Close the Redis client the stage created from a URL (a client passed in stays open)."""
        await self._backend.aclose()

    def _subject(self, ctx: GuardContext) -> str:
        if self.per == "user":
            return ctx.principal.id
        if self.per == "key":
            return ctx.principal.key_id or ANONYMOUS
        return ctx.session_id

    def __repr__(self) -> str:
        return f"RateLimit({self.rate!r}, per={self.per!r}, burst={self.burst})"
