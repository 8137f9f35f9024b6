"""What only SQLiteStore does: its file, its layout and migrations, its one connection."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rxagent import AgentState, Msg
from rxagent.errors import ConfigurationError, StateVersionError
from rxagent.state import (
    DEFAULT_SQLITE_PATH,
    ControlMessage,
    InProcessControl,
    SQLiteControl,
    SQLiteStore,
    register_migration,
)
from rxagent.state import _sqlite as sqlite_module
from rxagent.state import _state as state_module


def read(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


async def test_creates_its_directory_tables_and_layout_on_first_use(tmp_path: Path):
    path = tmp_path / "deep" / "er" / "sessions.db"
    store = SQLiteStore(path)
    assert not path.parent.exists()  # nothing happens before first use
    async with store:
        await store.save("bot", "s1", AgentState(runs=1))
    assert read(path, "PRAGMA journal_mode") == [("wal",)]
    assert read(path, "SELECT value FROM rxagent_meta WHERE key = 'layout'") == [("1",)]
    tables = {row[0] for row in read(path, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"rxagent_meta", "rxagent_sessions", "rxagent_leases"}
    # state is plain JSON: other tools can read it
    assert read(path, "SELECT json_extract(state, '$.runs'), version FROM rxagent_sessions") == [
        (1, 1)
    ]


async def test_default_path_is_under_dot_rxagent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    async with SQLiteStore() as store:
        assert store.path == DEFAULT_SQLITE_PATH == ".rxagent/sessions.db"
        await store.save("bot", "s1", AgentState())
    assert (tmp_path / ".rxagent" / "sessions.db").is_file()


async def test_state_survives_a_new_store_on_the_same_file(tmp_path: Path):
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as first:
        await first.save("bot", "s1", AgentState(memory=(Msg.user("hi", id="m"),)))
        assert await first.acquire_lease("bot", "s1", "run-1", 30)
    async with SQLiteStore(path) as second:
        loaded = await second.load("bot", "s1")
        assert loaded is not None
        assert loaded.state.memory[0].text == "hi"
        assert await second.lease_holder("bot", "s1") == "run-1"  # leases persist too


async def test_in_memory_database_works(tmp_path: Path):
    async with SQLiteStore(":memory:") as store:
        assert await store.save("bot", "s1", AgentState()) == 1
        assert await store.list_sessions("bot") == ["s1"]


# -- layout and migrations --------------------------------------------------------------------


async def test_an_older_layout_is_upgraded_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as store:
        await store.save("bot", "s1", AgentState(runs=7))
    # this rxagent's code knows a layout 2: an index and a new column
    upgrade = (
        "CREATE INDEX rxagent_sessions_by_update ON rxagent_sessions (updated_at)",
        "ALTER TABLE rxagent_sessions ADD COLUMN note TEXT NOT NULL DEFAULT 'migrated'",
    )
    monkeypatch.setattr(sqlite_module, "MIGRATIONS", [*sqlite_module.MIGRATIONS, upgrade])
    async with SQLiteStore(path) as store:
        loaded = await store.load("bot", "s1")
        assert loaded is not None
        assert loaded.state.runs == 7
        assert loaded.version == 1
    assert read(path, "SELECT value FROM rxagent_meta WHERE key = 'layout'") == [("2",)]
    assert read(path, "SELECT note FROM rxagent_sessions") == [("migrated",)]


async def test_a_failing_migration_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as store:
        await store.save("bot", "s1", AgentState(runs=7))
    broken = ("CREATE TABLE rxagent_half (x TEXT)", "THIS IS NOT SQL")
    monkeypatch.setattr(sqlite_module, "MIGRATIONS", [*sqlite_module.MIGRATIONS, broken])
    store = SQLiteStore(path)
    with pytest.raises(sqlite3.OperationalError, match="syntax error"):
        await store.load("bot", "s1")
    await store.aclose()
    assert read(path, "SELECT value FROM rxagent_meta WHERE key = 'layout'") == [("1",)]
    assert read(path, "SELECT name FROM sqlite_master WHERE name = 'rxagent_half'") == []


async def test_a_newer_layout_is_refused_with_the_fix(tmp_path: Path):
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as store:
        await store.save("bot", "s1", AgentState())
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE rxagent_meta SET value = '9' WHERE key = 'layout'")
    store = SQLiteStore(path)
    with pytest.raises(StateVersionError, match=r"layout version 9.*supports \(1\).*upgrade"):
        await store.load("bot", "s1")
    await store.aclose()


async def test_old_state_schema_is_migrated_on_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as store:
        await store.save("bot", "s1", AgentState(runs=3))
    # pretend this rxagent writes schema 2, which renamed nothing but adds a marker
    monkeypatch.setattr(state_module, "SCHEMA_VERSION", 2)
    monkeypatch.setattr(state_module, "_MIGRATIONS", dict(state_module._MIGRATIONS))

    @register_migration(1)
    def to_v2(data: dict[str, object]) -> dict[str, object]:
        return data | {"extra": {"upgraded": True}}

    async with SQLiteStore(path) as store:
        loaded = await store.load("bot", "s1")
    assert loaded is not None
    assert loaded.state.schema_version == 2
    assert loaded.state.extra == {"upgraded": True}
    assert loaded.state.runs == 3


@pytest.mark.parametrize(
    ("stored", "match"),
    [
        ('{"schema_version": 99}', r"'s1' of agent 'bot'.*newer.*upgrade rxagent"),
        ("not json at all", r"'s1' of agent 'bot'.*not an AgentState.*delete the session"),
        ("[1, 2]", "not an AgentState"),
        ('{"schema_version": 1, "memory": 5}', "not an AgentState"),
    ],
)
async def test_unreadable_stored_state_is_a_typed_error(tmp_path: Path, stored: str, match: str):
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as store:
        await store.save("bot", "s1", AgentState())
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE rxagent_sessions SET state = ?", (stored,))
        with pytest.raises(StateVersionError, match=match):
            await store.load("bot", "s1")


# -- the connection ---------------------------------------------------------------------------


async def test_a_cancelled_delete_still_finishes_its_transaction(tmp_path: Path):
    async with SQLiteStore(tmp_path / "s.db") as store:
        await store.save("bot", "s1", AgentState())
        await store.acquire_lease("bot", "s1", "run-1", 30)
        deleting = asyncio.ensure_future(store.delete("bot", "s1"))
        await asyncio.sleep(0)  # let it start its transaction
        deleting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await deleting
        # the connection is not left inside a transaction: other writes go on
        assert await store.save("bot", "s2", AgentState()) == 1
        assert await store.lease_holder("bot", "s1") is None
        assert await store.load("bot", "s1") is None


def test_one_store_serves_consecutive_event_loops(tmp_path: Path):
    store = SQLiteStore(tmp_path / "s.db")
    assert asyncio.run(store.save("bot", "s1", AgentState())) == 1
    assert asyncio.run(store.save("bot", "s1", AgentState())) == 2
    asyncio.run(store.aclose())


async def test_closed_store_says_so_and_closing_twice_is_fine(tmp_path: Path):
    store = SQLiteStore(tmp_path / "s.db")
    channel = store.control()
    assert isinstance(channel, SQLiteControl)  # processes sharing the file share the channel
    assert isinstance(SQLiteStore(":memory:").control(), InProcessControl)
    seen: list[object] = []
    await channel.subscribe(seen.append)
    await store.aclose()
    await store.aclose()
    assert channel._subscribers == []  # the channel closed with the store
    with pytest.raises(ConfigurationError, match="closed"):
        await channel.publish(ControlMessage(agent="bot", session_id="s1"))
    with pytest.raises(ConfigurationError, match="closed"):
        await store.load("bot", "s1")


def test_a_process_that_never_closes_its_store_still_exits(tmp_path: Path):
    code = (
        "import asyncio, sys\n"
        "from rxagent import AgentState\n"
        "from rxagent.state import SQLiteStore\n"
        "store = SQLiteStore(sys.argv[1])\n"
        "asyncio.run(store.save('bot', 's1', AgentState()))\n"
        "print('saved', flush=True)\n"
    )
    path = tmp_path / "s.db"
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "saved\n"
    assert read(path, "SELECT version FROM rxagent_sessions") == [(1,)]


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["", 3, None])
def test_bad_path_is_refused(path: object):
    with pytest.raises(ConfigurationError, match="path"):
        SQLiteStore(path)  # type: ignore[arg-type]


async def test_unopenable_path_is_a_configuration_error(tmp_path: Path):
    (tmp_path / "file").write_text("x")
    store = SQLiteStore(tmp_path / "file" / "sessions.db")  # a file where a directory must be
    with pytest.raises(ConfigurationError, match=r"cannot open the SQLite database.*writable"):
        await store.load("bot", "s1")
    store = SQLiteStore(tmp_path)  # a directory
    with pytest.raises(ConfigurationError, match="cannot open"):
        await store.load("bot", "s1")


def test_bad_busy_timeout_is_refused(tmp_path: Path):
    with pytest.raises(ConfigurationError, match="positive"):
        SQLiteStore(tmp_path / "s.db", busy_timeout_s=0)
