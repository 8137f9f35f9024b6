"""`ResponseCache`: whole model responses, keyed by a canonical hash of the request.

A hit returns the stored response without calling the model (the engine replays it to
subscribers as deltas); a miss calls the model and stores what it answered. Stores: in
memory, SQLite (aiosqlite) and Redis, each with a TTL.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from rxagent.errors import ConfigurationError
from rxagent.interceptors._prices import price_key
from rxagent.models.base import ModelResponse

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.interceptors._call import ModelCall, NextModelCall

__all__ = [
    "CacheStore",
    "MemoryCacheStore",
    "RedisCacheStore",
    "ResponseCache",
    "SQLiteCacheStore",
    "request_key",
]


def request_key(call: ModelCall) -> str:
    """The SHA-256 of the request's canonical JSON: model, messages, tools and options.

    Message ids are left out (they are new in every run); everything the model sees is in.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.interceptors import ModelCall, request_key
        from rxagent.testing import ScriptedModel

        model = ScriptedModel(["hi"])
        one = ModelCall(messages=(Msg.user("hello"),), model=model)
        two = ModelCall(messages=(Msg.user("hello"),), model=model)
        assert request_key(one) == request_key(two)
        ```
    """
    body = {
        "model": price_key(call.model),
        "messages": [m.model_dump(mode="json", exclude={"id"}) for m in call.messages],
        "tools": [t.model_dump(mode="json") for t in call.tools],
        "options": call.options.model_dump(mode="json", exclude_defaults=True),
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@runtime_checkable
class CacheStore(Protocol):
    """Where `ResponseCache` keeps responses: bytes by key, each with a TTL."""

    async def get(self, key: str) -> bytes | None:
        """The value stored under `key`, unless absent or expired."""
        ...

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        """Store `value` under `key` for `ttl` seconds (None: no expiry)."""
        ...

    async def aclose(self) -> None:
        """Close connections (the store reopens them when used again)."""
        ...


class MemoryCacheStore:
    """A dict in this process, with an injectable clock for the TTL.

    Example:
        ```python
        import asyncio

        from rxagent.interceptors import MemoryCacheStore

        now = [0.0]
        store = MemoryCacheStore(clock=lambda: now[0])
        asyncio.run(store.set("k", b"v", ttl=10))
        now[0] = 11.0
        assert asyncio.run(store.get("k")) is None
        ```
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._items: dict[str, tuple[bytes, float | None]] = {}

    async def get(self, key: str) -> bytes | None:
        """The value under `key`, unless absent or expired (an expired one is dropped)."""
        item = self._items.get(key)
        if item is None:
            return None
        value, expires = item
        if expires is not None and self.clock() >= expires:
            del self._items[key]
            return None
        return value

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        """Store `value` under `key` for `ttl` seconds."""
        self._items[key] = (value, None if ttl is None else self.clock() + ttl)

    async def aclose(self) -> None:
        """Nothing to close."""

    def __len__(self) -> int:
        return len(self._items)


class SQLiteCacheStore:
    """A table in a SQLite file (aiosqlite), shared by processes on one machine.

    Args:
        path: The database file (created with its folder).
        table: The table's name.
        clock: Seconds since the epoch, for the TTL (inject a fake in tests).

    Example:
        ```python
        import asyncio
        import tempfile

        from rxagent.interceptors import SQLiteCacheStore


        async def main() -> bytes | None:
            with tempfile.TemporaryDirectory() as folder:
                store = SQLiteCacheStore(f"{folder}/cache.db")
                await store.set("k", b"v", ttl=60)
                try:
                    return await store.get("k")
                finally:
                    await store.aclose()


        assert asyncio.run(main()) == b"v"
        ```
    """

    def __init__(
        self,
        path: str | Path = ".rxagent/cache.db",
        *,
        table: str = "model_responses",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not table.isidentifier():
            raise ConfigurationError(
                f"SQLiteCacheStore(table=...) must be an identifier, got {table!r}"
            )
        self.path = Path(path)
        self.table = table
        self.clock = clock
        self._db: Any = None

    async def _connection(self) -> Any:
        if self._db is None:
            import aiosqlite

            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = await aiosqlite.connect(self.path)
            await db.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} "
                "(key TEXT PRIMARY KEY, value BLOB NOT NULL, expires REAL)"
            )
            await db.commit()
            self._db = db
        return self._db

    async def get(self, key: str) -> bytes | None:
        """The value under `key`, unless absent or expired."""
        db = await self._connection()
        query = f"SELECT value FROM {self.table} WHERE key = ? AND (expires IS NULL OR expires > ?)"
        async with db.execute(query, (key, self.clock())) as cursor:
            row = await cursor.fetchone()
        return None if row is None else bytes(row[0])

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        """Store `value` under `key` for `ttl` seconds."""
        db = await self._connection()
        expires = None if ttl is None else self.clock() + ttl
        await db.execute(
            f"INSERT OR REPLACE INTO {self.table} (key, value, expires) VALUES (?, ?, ?)",
            (key, value, expires),
        )
        await db.commit()

    async def aclose(self) -> None:
        """Close the database."""
        db, self._db = self._db, None
        if db is not None:
            await db.close()


class RedisCacheStore:
    """Keys in Redis (`redis.asyncio`, the `redis` extra), for several processes or machines.

    Args:
        url: The server, `redis://host:port/db`.
        prefix: Put before every key.
    """

    def __init__(
        self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str = "rxagent:cache:"
    ) -> None:
        self.url = url
        self.prefix = prefix
        self._client: Any = None

    def _redis(self) -> Any:
        if self._client is None:
            try:
                import redis.asyncio as aioredis
            except ImportError as exc:  # pragma: no cover - the dev install has redis
                raise ConfigurationError(
                    "RedisCacheStore needs the redis package: pip install 'rxagent[redis]'"
                ) from exc
            self._client = aioredis.from_url(self.url)
        return self._client

    async def get(self, key: str) -> bytes | None:
        """The value under `key`, unless absent or expired."""
        value = await self._redis().get(self.prefix + key)
        return None if value is None else bytes(value)

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        """Store `value` under `key` for `ttl` seconds (Redis expires it)."""
        px = None if ttl is None else max(int(ttl * 1000), 1)
        await self._redis().set(self.prefix + key, value, px=px)

    async def aclose(self) -> None:
        """Close the connection pool."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


class ResponseCache:
    """Answer a request seen before from the cache instead of the model.

    The key is `request_key(call)`: the model's `"provider:name"`, the messages (without
    their ids), the tools and the options. A hit costs nothing and makes no request: its
    `PostReasoning.usage` is zero and the response is replayed as chunks. Responses cut short
    (`finish_reason="length"`) are not stored.

    Args:
        store: Where responses live (in memory by default).
        ttl: Seconds a response stays (None: until the store drops it).
        priority: Its place in the onion (default 20: outside `FallbackModels` and
            `CircuitBreaker`, so the key is the request as the run made it, with the agent's
            model, and a hit skips them).
        name: For `modified_by` (a hit names the cache: the response did not come from the
            model) and errors.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.interceptors import ResponseCache
        from rxagent.testing import ScriptedModel

        model = ScriptedModel(["Paris."])  # one answer: a second request would fail
        agent = ReActAgent("a", "", model, interceptors=[ResponseCache()])
        assert agent.call_sync("Capital of France?", session_id="s1").text == "Paris."
        again = agent.call_sync("Capital of France?", session_id="s2")
        assert again.text == "Paris." and again.usage.requests == 0
        ```
    """

    def __init__(
        self,
        store: CacheStore | None = None,
        *,
        ttl: float | None = 3600.0,
        priority: int = 20,
        name: str = "response_cache",
    ) -> None:
        if store is not None and not isinstance(store, CacheStore):
            raise ConfigurationError(
                f"ResponseCache(store=...) takes a CacheStore (MemoryCacheStore, "
                f"SQLiteCacheStore, RedisCacheStore), got {store!r}"
            )
        if ttl is not None and (
            isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0
        ):
            raise ConfigurationError(
                f"ResponseCache(ttl=...) takes seconds > 0 or None, got {ttl!r}"
            )
        self.store: CacheStore = store if store is not None else MemoryCacheStore()
        self.ttl = ttl
        self.priority = priority
        self.name = name
        self.hits = 0
        """Requests answered from the cache."""
        self.misses = 0
        """Requests that went to the model."""

    async def around_model_call(self, call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        """Answer from the cache, or ask the model and keep its answer."""
        key = request_key(call)
        stored = await self.store.get(key)
        if stored is not None:
            self.hits += 1
            return ModelResponse.model_validate_json(stored)
        self.misses += 1
        response = await call_next(call)
        if response.finish_reason != "length":
            await self.store.set(key, response.model_dump_json().encode(), self.ttl)
        return response

    async def aclose(self) -> None:
        """Close the store's connections."""
        await self.store.aclose()
