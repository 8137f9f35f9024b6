"""What only PostgresStore does: its tables, layout migrations, database clock and channel.

Runs against the local PostgreSQL (`postgres_dsn`); each test uses its own table prefix and drops
its tables afterwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg  # type: ignore[import-untyped,unused-ignore]
import pytest
from store_helpers import (  # type: ignore[import-not-found]
    drop_pg_tables,
    unique_table_prefix,
)

from rxagent import AgentState
from rxagent.errors import ConfigurationError, StateVersionError
from rxagent.state import ControlMessage, PostgresStore
from rxagent.state import _postgres as postgres_module
from rxagent.state._control_pg import PostgresControl


@pytest.fixture
async def prefix(postgres_dsn: str) -> AsyncIterator[str]:
    name = unique_table_prefix()
    yield name
    await drop_pg_tables(postgres_dsn, name, "extra")


async def fetch(dsn: str, sql: str, *args: object) -> list[tuple[object, ...]]:
    conn = await asyncpg.connect(dsn)
    try:
        return [tuple(row) for row in await conn.fetch(sql, *args)]
    finally:
        await conn.close()


async def test_creates_tables_and_records_the_layout(postgres_dsn: str, prefix: str):
    async with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        await store.save("bot", "s1", AgentState(runs=2))
    assert await fetch(postgres_dsn, f"SELECT value FROM {prefix}meta") == [("1",)]
    tables = await fetch(
        postgres_dsn,
        "SELECT tablename FROM pg_tables WHERE tablename LIKE $1 ORDER BY 1",
        f"{prefix}%",
    )
    assert tables == [(f"{prefix}leases",), (f"{prefix}meta",), (f"{prefix}sessions",)]
    # state is JSON the database can query
    rows = await fetch(postgres_dsn, f"SELECT (state->>'runs')::int, version FROM {prefix}sessions")
    assert rows == [(2, 1)]


async def test_leases_expire_by_the_database_clock(postgres_dsn: str, prefix: str):
    async with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        assert await store.acquire_lease("bot", "s1", "run-1", 30)
        rows = await fetch(
            postgres_dsn,
            f"SELECT expires_at > now() + interval '20 seconds',"
            f" expires_at < now() + interval '31 seconds' FROM {prefix}leases",
        )
        assert rows == [(True, True)]
        # a lease whose expiry the database clock has passed is free, whatever our clock says
        conn = await asyncpg.connect(postgres_dsn)
        try:
            await conn.execute(f"UPDATE {prefix}leases SET expires_at = now() - interval '1 s'")
        finally:
            await conn.close()
        assert await store.lease_holder("bot", "s1") is None
        assert await store.acquire_lease("bot", "s1", "run-2", 30)


async def test_two_pools_racing_to_create_the_tables_migrate_once(postgres_dsn: str, prefix: str):
    stores = [PostgresStore(postgres_dsn, table_prefix=prefix) for _ in range(4)]
    try:
        versions = await asyncio.gather(
            *(s.save("bot", f"s{i}", AgentState()) for i, s in enumerate(stores))
        )
        assert versions == [1, 1, 1, 1]
        assert await stores[0].list_sessions("bot") == ["s0", "s1", "s2", "s3"]
    finally:
        for store in stores:
            await store.aclose()


async def test_an_older_layout_is_upgraded_in_place(
    postgres_dsn: str, prefix: str, monkeypatch: pytest.MonkeyPatch
):
    async with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        await store.save("bot", "s1", AgentState(runs=7))
    upgrade = (
        "CREATE TABLE {p}extra (note text)",
        "INSERT INTO {p}extra SELECT agent || '/' || session_id FROM {p}sessions",
    )
    monkeypatch.setattr(postgres_module, "MIGRATIONS", [*postgres_module.MIGRATIONS, upgrade])
    async with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        loaded = await store.load("bot", "s1")
        assert loaded is not None
        assert loaded.state.runs == 7
    assert await fetch(postgres_dsn, f"SELECT value FROM {prefix}meta") == [("2",)]
    assert await fetch(postgres_dsn, f"SELECT note FROM {prefix}extra") == [("bot/s1",)]


async def test_a_failing_migration_changes_nothing(
    postgres_dsn: str, prefix: str, monkeypatch: pytest.MonkeyPatch
):
    async with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        await store.save("bot", "s1", AgentState())
    broken = ("CREATE TABLE {p}extra (note text)", "THIS IS NOT SQL")
    monkeypatch.setattr(postgres_module, "MIGRATIONS", [*postgres_module.MIGRATIONS, broken])
    store = PostgresStore(postgres_dsn, table_prefix=prefix)
    with pytest.raises(asyncpg.PostgresSyntaxError):
        await store.load("bot", "s1")
    await store.aclose()
    assert await fetch(postgres_dsn, f"SELECT value FROM {prefix}meta") == [("1",)]
    assert await fetch(postgres_dsn, "SELECT to_regclass($1)::text", f"{prefix}extra") == [(None,)]


async def test_a_newer_layout_is_refused_with_the_fix(postgres_dsn: str, prefix: str):
    async with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        await store.save("bot", "s1", AgentState())
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute(f"UPDATE {prefix}meta SET value = '5'")
    finally:
        await conn.close()
    store = PostgresStore(postgres_dsn, table_prefix=prefix)
    with pytest.raises(StateVersionError, match=r"layout version 5.*supports \(1\).*upgrade"):
        await store.save("bot", "s1", AgentState())
    await store.aclose()


async def test_stores_sharing_a_prefix_share_a_control_channel(postgres_dsn: str, prefix: str):
    sender = PostgresStore(postgres_dsn, table_prefix=prefix)
    receiver = PostgresStore(postgres_dsn, table_prefix=prefix)
    channel = receiver.control()
    assert isinstance(channel, PostgresControl)
    assert receiver.control() is channel  # one per store
    assert channel.channel == f"{prefix}control"
    got: asyncio.Future[ControlMessage] = asyncio.get_running_loop().create_future()
    subscription = await channel.subscribe(got.set_result)
    message = ControlMessage(agent="bot", session_id="s1", reason="stop")
    await sender.control().publish(message)
    assert await asyncio.wait_for(got, 10) == message
    await receiver.aclose()  # closes its channel: the subscription ends
    assert not subscription.active  # type: ignore[attr-defined]
    await sender.aclose()


async def test_closed_or_foreign_loop_use_is_a_clear_error(postgres_dsn: str, prefix: str):
    store = PostgresStore(postgres_dsn, table_prefix=prefix)
    await store.save("bot", "s1", AgentState())
    await store.aclose()
    with pytest.raises(ConfigurationError, match="closed"):
        await store.load("bot", "s1")


def test_a_store_is_bound_to_the_loop_that_opened_it(postgres_dsn: str):
    prefix = unique_table_prefix()
    store = PostgresStore(postgres_dsn, table_prefix=prefix)
    with asyncio.Runner() as first, asyncio.Runner() as second:
        first.run(store.save("bot", "s1", AgentState()))
        with pytest.raises(ConfigurationError, match="another event loop"):
            second.run(store.load("bot", "s1"))
        first.run(store.aclose())
        first.run(drop_pg_tables(postgres_dsn, prefix))


@pytest.mark.parametrize("table_prefix", ["", "Bad", "1x", "x-y", "a;drop", "x" * 41, 3])
def test_bad_table_prefix_is_refused(table_prefix: object):
    with pytest.raises(ConfigurationError, match="table_prefix"):
        PostgresStore("postgresql://localhost/db", table_prefix=table_prefix)  # type: ignore[arg-type]


@pytest.mark.parametrize("dsn", ["", "mysql://x/y", "localhost:5432", None])
def test_bad_dsn_is_refused(dsn: object):
    with pytest.raises(ConfigurationError, match="postgresql://"):
        PostgresStore(dsn)  # type: ignore[arg-type]


async def test_wrong_database_is_a_configuration_error(postgres_dsn: str):
    dsn = postgres_dsn.rsplit("/", 1)[0] + "/no_such_database_rxagent"
    store = PostgresStore(dsn)
    with pytest.raises(ConfigurationError, match=r"cannot connect.*check the DSN"):
        await store.load("bot", "s1")
    await store.aclose()


def test_repr_hides_the_password():
    store = PostgresStore("postgresql://app:s3cret@db:5432/x", table_prefix="p_")
    assert "s3cret" not in repr(store)
    assert "app:***@db:5432" in repr(store)
