"""`RateLimit`'s buckets on Redis: one atomic script per check, on the server's clock.

A bucket is one string key holding `full_at`, the time (in microseconds of the Redis server's
`TIME`) when the bucket is full again; the key expires then, so a full bucket has no key.
Reading the server's clock inside the script lets several processes share buckets without
trusting their own clocks.
"""

from __future__ import annotations

import asyncio
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
        self._url: str | None = None
        self._clients: dict[asyncio.AbstractEventLoop, Any] = {}
        if isinstance(backend, str):
            if not backend.startswith(("redis://", "rediss://", "unix://")):
                raise ValueError(
                    f"RateLimit(backend=) must be a redis:// URL or a redis.asyncio.Redis "
                    f"client, got {backend!r}; e.g. 'redis://127.0.0.1:6379/0'"
                )
            self._url = backend
            self._from_url = redis_asyncio.Redis.from_url
            self._unbound: Any = self._from_url(  # no connection yet: a bad URL fails here
                backend, socket_connect_timeout=_TIMEOUT_S, socket_timeout=_TIMEOUT_S
            )
        elif callable(getattr(backend, "evalsha", None)):
            self._unbound = backend
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
        client = self._client()
        key = f"{self._key_prefix}{len(agent)}:{agent}:{subject}"
        if not self._loaded:
            await client.script_load(TAKE_SCRIPT)
            self._loaded = True
        try:
            taken, wait_us = await client.evalsha(_TAKE_SHA, 1, key, *self._argv)
        except self._no_script:  # the server lost its scripts (restart, SCRIPT FLUSH, failover)
            taken, wait_us = await client.eval(TAKE_SCRIPT, 1, key, *self._argv)
        return 0.0 if int(taken) else int(wait_us) / 1e6

    async def aclose(self) -> None:
        """Close the clients the stage created from a URL (a client passed in stays open)."""
        if self._url is None:
            return
        loop = asyncio.get_running_loop()
        client = self._clients.pop(loop, None)
        self._clients.clear()  # the clients of other loops cannot be closed from this one
        if client is not None:
            await client.aclose()

    def _client(self) -> Any:
        # A redis.asyncio client belongs to the loop it first connects on, and `call_sync` runs
        # each call on a new loop: a stage made from a URL keeps one client per loop.
        if self._url is None:
            return self._unbound
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            for ended in [other for other in self._clients if other.is_closed()]:
                del self._clients[ended]
            if self._unbound is not None:
                client, self._unbound = self._unbound, None
            else:
                client = self._from_url(
                    self._url, socket_connect_timeout=_TIMEOUT_S, socket_timeout=_TIMEOUT_S
                )
            self._clients[loop] = client
        return client
