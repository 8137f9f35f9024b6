"""A store whose server is down, locked or going away raises `StoreUnavailableError`."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped,unused-ignore]
import pytest
import redis.asyncio as aioredis
from store_helpers import (  # type: ignore[import-not-found]
    drop_pg_tables,
    drop_redis_keys,
    unique_key_prefix,
    unique_table_prefix,
)

from rxagent import AgentState
from rxagent.errors import ConfigurationError, RxAgentError
from rxagent.state import (
    ControlMessage,
    InProcessControl,
    PostgresControl,
    PostgresStore,
    RedisControl,
    RedisStore,
    SessionStore,
    SQLiteStore,
)
from rxagent.state._store_common import ConnectedStore, StoreUnavailableError

# port 1 on loopback: nothing listens there
DOWN: dict[str, Callable[[], SessionStore]] = {
    "postgres": lambda: PostgresStore("postgresql://app:s3cret@127.0.0.1:1/db"),
    "redis": lambda: RedisStore("redis://app:s3cret@127.0.0.1:1/0"),
}

OPERATIONS: dict[str, Callable[[SessionStore], Awaitable[Any]]] = {
    "load": lambda s: s.load("bot", "s1"),
    "save": lambda s: s.save("bot", "s1", AgentState()),
    "delete": lambda s: s.delete("bot", "s1"),
    "list_sessions": lambda s: s.list_sessions("bot"),
    "list_agents": lambda s: s.list_agents(),
    "acquire_lease": lambda s: s.acquire_lease("bot", "s1", "run-1", 5),
    "renew_lease": lambda s: s.renew_lease("bot", "s1", "run-1", 5),
    "release_lease": lambda s: s.release_lease("bot", "s1", "run-1"),
    "lease_holder": lambda s: s.lease_holder("bot", "s1"),
}


def test_store_unavailable_is_a_typed_rxagent_error():
    assert issubclass(StoreUnavailableError, RxAgentError)
    assert not issubclass(StoreUnavailableError, ConfigurationError)


@pytest.mark.parametrize("backend", sorted(DOWN))
@pytest.mark.parametrize("operation", sorted(OPERATIONS))
async def test_every_operation_on_a_server_that_is_down_is_store_unavailable(
    backend: str, operation: str
):
    store = DOWN[backend]()
    try:
        with pytest.raises(StoreUnavailableError) as info:
            await OPERATIONS[operation](store)
    finally:
        await store.aclose()
    message = str(info.value)
    assert "127.0.0.1:1" in message
    assert "unavailable" in message
    assert "s3cret" not in message  # the password never shows


@pytest.mark.parametrize(
    "channel",
    [
        lambda: PostgresControl("postgresql://app:s3cret@127.0.0.1:1/db"),
        lambda: RedisControl("redis://app:s3cret@127.0.0.1:1/0"),
    ],
    ids=["postgres", "redis"],
)
async def test_publishing_on_a_channel_whose_server_is_down_is_store_unavailable(
    channel: Callable[[], Any],
):
    async with channel() as opened:
        with pytest.raises(StoreUnavailableError) as info:
            await opened.publish(ControlMessage(agent="bot", session_id="s1"))
    assert "s3cret" not in str(info.value)


async def runs_after_reconnecting(store: SessionStore) -> int:
    """Load session s1 of a store whose connection was just dropped: `state.runs`.

    At most the one call that meets the dead connection fails, with `StoreUnavailableError`.
    """
    try:
        loaded = await store.load("bot", "s1")
    except StoreUnavailableError:
        loaded = await store.load("bot", "s1")
    assert loaded is not None
    return loaded.state.runs


async def test_a_postgres_store_recovers_after_its_connections_are_dropped(postgres_dsn: str):
    prefix = unique_table_prefix()
    name = f"rxagent-test-{prefix}"  # only this store's connection is dropped
    store = PostgresStore(
        postgres_dsn,
        table_prefix=prefix,
        min_size=1,
        max_size=1,
        server_settings={"application_name": name},
    )
    admin = await asyncpg.connect(postgres_dsn)
    try:
        await store.save("bot", "s1", AgentState(runs=1))
        # the server drops the pool's connection (as a restart would)
        dropped = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = $1",
            name,
        )
        assert dropped == 1
        assert await runs_after_reconnecting(store) == 1
    finally:
        await admin.close()
        await store.aclose()
        await drop_pg_tables(postgres_dsn, prefix)


async def test_a_redis_store_recovers_after_its_connections_are_dropped(redis_url: str):
    prefix = unique_key_prefix()
    name = f"rxagent-test-{prefix.replace(':', '-')}"  # only this store's connection is dropped
    store = RedisStore(redis_url, prefix=prefix, client_name=name)
    admin = aioredis.from_url(redis_url)
    try:
        await store.save("bot", "s1", AgentState(runs=1))
        victims = [c["id"] for c in await admin.client_list() if c["name"] == name]
        assert victims
        for client_id in victims:
            await admin.client_kill_filter(_id=client_id)
        assert await runs_after_reconnecting(store) == 1
    finally:
        await admin.aclose()
        await store.aclose()
        await drop_redis_keys(redis_url, prefix)


async def test_a_sqlite_file_locked_past_the_busy_timeout_is_store_unavailable(tmp_path: Path):
    path = tmp_path / "s.db"
    async with SQLiteStore(path, busy_timeout_s=0.05) as store:
        await store.save("bot", "s1", AgentState(runs=1))
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")  # another process holds the file
            with pytest.raises(StoreUnavailableError, match="locked"):
                await store.save("bot", "s1", AgentState(runs=2))
            with pytest.raises(StoreUnavailableError, match="locked"):
                await store.delete("bot", "s1")
            other.execute("ROLLBACK")
        finally:
            other.close()
        assert await store.save("bot", "s1", AgentState(runs=3)) == 2  # nothing half-written
        loaded = await store.load("bot", "s1")
        assert loaded is not None
        assert loaded.state.runs == 3


async def test_a_wrong_redis_user_is_a_configuration_error_naming_the_fix(redis_url: str):
    store = RedisStore(redis_url.replace("redis://", "redis://nobody:wrong@"))
    try:
        with pytest.raises(ConfigurationError, match="password") as info:
            await store.load("bot", "s1")
    finally:
        await store.aclose()
    assert "wrong" not in str(info.value)


async def test_a_store_closed_while_it_connects_keeps_nothing_open():
    class Slow(ConnectedStore):
        def __init__(self) -> None:
            super().__init__((OSError,))
            self.connecting = asyncio.Event()
            self.proceed = asyncio.Event()
            self.closed_clients: list[object] = []

        async def _open_client(self) -> object:
            self.connecting.set()
            await self.proceed.wait()
            return "client"

        async def _close_client(self, client: Any) -> None:
            self.closed_clients.append(client)

        def _new_control(self) -> Any:
            return InProcessControl()

    store = Slow()
    opening = asyncio.ensure_future(store._connected())
    await store.connecting.wait()
    await store.aclose()
    store.proceed.set()
    with pytest.raises(ConfigurationError, match="closed while it connected"):
        await opening
    assert store.closed_clients == ["client"]
