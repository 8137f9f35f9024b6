"""`RateLimit`'s buckets on Redis: one atomic script per check, on the server's clock.

A bucket is one string key holding `full_at`, the time (in microseconds of the Redis server's
`TIME`) when the bucket is full again; the key expires then, so a full bucket has no key.
Reading the server's clock inside the script lets several processes share buckets without
trusting their own clocks.
"""

from __future__ import annotations

import hashlib
import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["RedisBuckets"]

_TIMEOUT_S: Final = 5.0
"""How long connecting or a command may take (a check is one quick script)."""

# KEYS: the bucket; ARGV: microseconds per token, microseconds of tolerance ((burst - 1) tokens).
# Returns {1, 0} when a token was taken, else {0, microseconds until there is one}.
TAKE_SCRIPT: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local full_at = tonumber(redis.call('GET', KEYS[1]) or now)
if full_at < now then full_at = now end
local wait = full_at - now
if wait > tolerance then return {0, math.ceil(wait - tolerance)} end
full_at = math.ceil(full_at + interval)
redis.call('SET', KEYS[1], string.format('%.0f', full_at), 'PX', math.ceil((full_at - now) / 1000))
return {1, 0}
"""
_TAKE_SHA: Final = hashlib.sha1(TAKE_SCRIPT.encode()).hexdigest()


def _import_redis() -> tuple[ModuleType, ModuleType]:
    try:
        asyncio_module = importlib.import_module("redis.asyncio")
        exceptions = importlib.import_module("redis.exceptions")
    except ImportError as exc:
        raise ImportError(
            'RateLimit with a Redis backend needs the redis package: pip install "rxagent[redis]"'
        ) from exc
    return asyncio_module, exceptions


class RedisBuckets:
    """Buckets in Redis under `key_prefix`, shared by every process that uses the same keys."""

    def __init__(self, backend: object, key_prefix: str, interval: float, tolerance: float) -> None:
        redis_asyncio, exceptions = _import_redis()
        self._no_script: type[Exception] = exceptions.NoScriptError
        if isinstance(backend, str):
            if not backend.startswith(("redis://", "rediss://", "unix://")):
                raise ValueError(
                    f"RateLimit(backend=) must be a redis:// URL or a redis.asyncio.Redis "
                    f"client, got {backend!r}; e.g. 'redis://127.0.0.1:6379/0'"
                )
            self._client: Any = redis_asyncio.Redis.from_url(
                backend, socket_connect_timeout=_TIMEOUT_S, socket_timeout=_TIMEOUT_S
            )
            self._owned = True
        elif callable(getattr(backend, "evalsha", None)):
            self._client = backend
            self._owned = False
        else:
            raise TypeError(
                "RateLimit(backend=) must be None, a redis:// URL or a redis.asyncio.Redis "
                f"client, got {type(backend).__name__}"
            )
        self._key_prefix = key_prefix
        self._argv = (repr(interval * 1e6), repr(tolerance * 1e6))
        self._loaded = False

    async def take(self, agent: str, subject: str) -> float:
        """Take a token: 0.0, or the seconds until a token is back."""
        key = f"{self._key_prefix}{len(agent)}:{agent}:{subject}"
        if not self._loaded:
            await self._client.script_load(TAKE_SCRIPT)
            self._loaded = True
        try:
            taken, wait_us = await self._client.evalsha(_TAKE_SHA, 1, key, *self._argv)
        except self._no_script:  # the server lost its scripts (restart, SCRIPT FLUSH, failover)
            taken, wait_us = await self._client.eval(TAKE_SCRIPT, 1, key, *self._argv)
        return 0.0 if int(taken) else int(wait_us) / 1e6

    async def aclose(self) -> None:
        """Close the client when the stage created it from a URL."""
        if self._owned:
            await self._client.aclose()
