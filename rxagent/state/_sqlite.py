"""`SQLiteStore`: sessions in one SQLite file, the embedded default of servers and the CLI."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from typing import TYPE_CHECKING, Any, Final, Self

from rxagent.errors import ConfigurationError
from rxagent.state._shield import complete_despite_cancel
from rxagent.state._sqlite_connect import BUSY_SLICE_MS, connect, retrying
from rxagent.state._store import StoredState
from rxagent.state._store_common import (
    check_agent,
    check_expected,
    check_key,
    check_layout,
    check_owner,
    check_state,
    check_ttl,
    conflict,
    decode_state,
    encode_state,
    unavailable,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence
    from types import TracebackType

    import aiosqlite

    from rxagent.state._control import ControlChannel
    from rxagent.state._state import AgentState

__all__ = ["DEFAULT_SQLITE_PATH", "SQLiteStore"]

DEFAULT_SQLITE_PATH: Final = ".rxagent/sessions.db"
"""Where `SQLiteStore()` keeps sessions, relative to the working directory."""

MIGRATIONS: list[Sequence[str]] = [
    (  # layout 0 -> 1: sessions and leases
        "CREATE TABLE rxagent_sessions ("
        " agent TEXT NOT NULL, session_id TEXT NOT NULL, version INTEGER NOT NULL,"
        " state TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (agent, session_id))",
        "CREATE TABLE rxagent_leases ("
        " agent TEXT NOT NULL, session_id TEXT NOT NULL, owner TEXT NOT NULL,"
        " expires_at REAL NOT NULL, PRIMARY KEY (agent, session_id))",
    ),
]
"""The storage layout's migrations, in order: entry `n` upgrades layout `n` to `n + 1`.

Each runs with the layout bump in one `BEGIN IMMEDIATE` transaction. The layout the code writes
is `len(MIGRATIONS)`; it is recorded in the `rxagent_meta` table under the key `layout`.
"""

_SAVE_ANY: Final = (
    "INSERT INTO rxagent_sessions (agent, session_id, version, state, updated_at)"
    " VALUES (?, ?, 1, ?, ?) ON CONFLICT (agent, session_id) DO UPDATE SET"
    " version = version + 1, state = excluded.state, updated_at = excluded.updated_at"
    " RETURNING version"
)
_SAVE_NEW: Final = (
    "INSERT INTO rxagent_sessions (agent, session_id, version, state, updated_at)"
    " VALUES (?, ?, 1, ?, ?) ON CONFLICT (agent, session_id) DO NOTHING RETURNING version"
)
_SAVE_AT: Final = (
    "UPDATE rxagent_sessions SET version = version + 1, state = ?, updated_at = ?"
    " WHERE agent = ? AND session_id = ? AND version = ? RETURNING version"
)
_ACQUIRE: Final = (
    "INSERT INTO rxagent_leases (agent, session_id, owner, expires_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (agent, session_id) DO UPDATE SET"
    " owner = excluded.owner, expires_at = excluded.expires_at"
    " WHERE rxagent_leases.owner = excluded.owner OR rxagent_leases.expires_at <= ?"
    " RETURNING owner"
)


_UNAVAILABLE: Final = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_IOERR", "SQLITE_FULL",
                       "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PROTOCOL")  # fmt: skip
"""The result codes (and their extended codes) that say the file cannot be used now."""


def _is_unavailable(exc: sqlite3.OperationalError) -> bool:
    """Whether `exc` says the file is locked or unusable (not that a statement is wrong)."""
    name: str = getattr(exc, "sqlite_errorname", "")
    return name.startswith(_UNAVAILABLE)


async def _rows(conn: aiosqlite.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    return list(await conn.execute_fetchall(sql, params))


class SQLiteStore:
    """Sessions in a SQLite file: the embedded default for servers and the CLI.

    One connection per store (WAL journal, `synchronous=NORMAL`), opened on first use and
    guarded by a lock; each save is one atomic statement, so a crash never leaves half a state.
    Processes on one machine may share the file: writers wait for each other (busy timeout);
    a write still locked out after it, or a file that cannot be written (disk full, read-only),
    raises `StoreUnavailableError`.
    The tables are created on first use, and `rxagent_meta` records their layout version.

    Args:
        path: The database file; its directory is created. `":memory:"` keeps it in memory.
        clock: Returns wall-clock seconds for lease expiry (injectable for tests). Processes
            sharing the file must share the clock, so keep `time.time`.
        busy_timeout_s: How long a write waits for another process's write to finish.

    Example:
        ```python
        import asyncio
        import tempfile
        from pathlib import Path
        from rxagent import AgentState
        from rxagent.state import SQLiteStore

        async def main(folder: str) -> None:
            async with SQLiteStore(Path(folder) / "sessions.db") as store:
                version = await store.save("bot", "s1", AgentState(runs=1), expected_version=0)
                loaded = await store.load("bot", "s1")
                assert loaded is not None and loaded.version == version == 1
                assert loaded.state.runs == 1

        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(main(folder))
        ```
    """

    persistent = True

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_SQLITE_PATH,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout_s: float = 10.0,
    ) -> None:
        if not isinstance(path, str | os.PathLike) or not os.fspath(path):
            raise ConfigurationError(
                f"SQLiteStore path must be a file path, got {path!r}; "
                f"e.g. SQLiteStore({DEFAULT_SQLITE_PATH!r})"
            )
        self._path = os.fspath(path)
        self._clock = clock
        self._busy_ms = int(check_ttl(busy_timeout_s) * 1000)
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        self._control: ControlChannel | None = None
        self._closed = False

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    def __repr__(self) -> str:
        return f"SQLiteStore({self._path!r})"

    # -- connection ---------------------------------------------------------------------------

    def _guard(self) -> asyncio.Lock:
        """The lock of the running loop (a lock belongs to one loop; stores may outlive one)."""
        loop = asyncio.get_running_loop()
        if self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    async def _open(self) -> aiosqlite.Connection:
        if self._conn is not None:
            return self._conn
        if self._closed:
            raise ConfigurationError(f"{self!r} is closed; create a new store to use it again")
        conn = await connect(self._path, self._busy_ms, slice_ms=min(self._busy_ms, BUSY_SLICE_MS))
        try:
            await self._migrate(conn)
        except BaseException:
            await conn.close()
            raise
        self._conn = conn
        return conn

    async def _layout(self, conn: aiosqlite.Connection) -> int:
        try:
            rows = list(
                await conn.execute_fetchall("SELECT value FROM rxagent_meta WHERE key = 'layout'")
            )
        except sqlite3.OperationalError:  # no meta table: a new database
            return 0
        return int(rows[0][0]) if rows else 0

    async def _migrate(self, conn: aiosqlite.Connection) -> None:
        """Create or upgrade the tables to the layout of this code, in one transaction."""
        target = len(MIGRATIONS)
        found = await self._layout(conn)
        check_layout(found, target, repr(self))
        if found == target:
            return
        await self._begin(conn)
        try:
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS rxagent_meta"
                " (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            found = await self._layout(conn)  # another process may have migrated meanwhile
            check_layout(found, target, repr(self))
            for statements in MIGRATIONS[found:]:
                for statement in statements:
                    await conn.execute(statement)
            await conn.execute(
                "INSERT INTO rxagent_meta (key, value) VALUES ('layout', ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(target),),
            )
        except BaseException:
            await conn.execute("ROLLBACK")
            raise
        await self._commit(conn)

    def _deadline(self) -> float:
        """When a statement queued now gives up on a locked file (monotonic seconds)."""
        return time.monotonic() + self._busy_ms / 1000

    async def _begin(self, conn: aiosqlite.Connection) -> None:
        """`BEGIN IMMEDIATE`, tried again while another process holds the file (busy timeout)."""
        await retrying(lambda: conn.execute("BEGIN IMMEDIATE"), self._deadline())

    async def _commit(self, conn: aiosqlite.Connection) -> None:
        """`COMMIT`, tried again while a reader blocks it (busy timeout)."""
        await retrying(lambda: conn.execute("COMMIT"), self._deadline())

    async def _fetch(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """Run one statement (atomic on its own) and return its rows.

        Raises:
            StoreUnavailableError: The file stayed locked by another process for the busy
                timeout, or cannot be read or written (disk full, I/O error, read-only).
        """
        lock = self._guard()
        conn = self._conn
        deadline = self._deadline()  # from now: a queue behind a locked file waits no longer
        try:
            if conn is None or lock.locked():  # opening, or a transaction has the connection
                async with lock:
                    opened = await self._open()
                    return await retrying(lambda: _rows(opened, sql, params), deadline)
            # A single statement is atomic on its own, and aiosqlite runs statements in the order
            # they were queued (the queueing happens before the first await), so it need not
            # wait for the statements ahead of it: under load they reach the database thread
            # back to back instead of one loop iteration apart. A locked file refuses each
            # attempt after a short slice, and the statement is tried again until its deadline.
            ready = conn
            return await retrying(lambda: _rows(ready, sql, params), deadline)
        except sqlite3.OperationalError as exc:
            if _is_unavailable(exc):
                raise unavailable(self, exc) from exc
            raise

    async def _transaction(self, body: Callable[[aiosqlite.Connection], Awaitable[int]]) -> int:
        """Run `body` in a `BEGIN IMMEDIATE` transaction that finishes even if we are cancelled.

        A cancellation thus never leaves the shared connection inside a transaction.
        """

        async def run() -> int:
            async with self._guard():
                conn = await self._open()
                await self._begin(conn)
                try:
                    result = await body(conn)
                except BaseException:
                    await conn.execute("ROLLBACK")
                    raise
                await self._commit(conn)
                return result

        try:
            return await asyncio.shield(asyncio.ensure_future(run()))
        except sqlite3.OperationalError as exc:
            if _is_unavailable(exc):
                raise unavailable(self, exc) from exc
            raise

    # -- state --------------------------------------------------------------------------------

    async def load(self, agent: str, session_id: str) -> StoredState | None:
        """See `SessionStore.load`."""
        check_key(agent, session_id)
        rows = await self._fetch(
            "SELECT state, version FROM rxagent_sessions WHERE agent = ? AND session_id = ?",
            (agent, session_id),
        )
        if not rows:
            return None
        return StoredState(decode_state(rows[0][0], agent, session_id), rows[0][1])

    async def save(
        self,
        agent: str,
        session_id: str,
        state: AgentState,
        *,
        expected_version: int | None = None,
    ) -> int:
        """See `SessionStore.save`: one atomic statement, seen through even if cancelled."""
        check_key(agent, session_id)
        expected = check_expected(expected_version)
        text, now = encode_state(check_state(state)), self._clock()
        return await complete_despite_cancel(self._save(agent, session_id, text, now, expected))

    async def _save(
        self, agent: str, session_id: str, text: str, now: float, expected: int | None
    ) -> int:
        if expected is None:
            rows = await self._fetch(_SAVE_ANY, (agent, session_id, text, now))
        elif expected == 0:
            rows = await self._fetch(_SAVE_NEW, (agent, session_id, text, now))
        else:
            rows = await self._fetch(_SAVE_AT, (text, now, agent, session_id, expected))
        if rows:
            return int(rows[0][0])
        stored = await self._fetch(
            "SELECT version FROM rxagent_sessions WHERE agent = ? AND session_id = ?",
            (agent, session_id),
        )
        raise conflict(agent, session_id, stored[0][0] if stored else 0, expected or 0)

    async def delete(self, agent: str, session_id: str) -> bool:
        """See `SessionStore.delete`: the state and the lease go in one transaction."""
        check_key(agent, session_id)

        async def remove(conn: aiosqlite.Connection) -> int:
            key = (agent, session_id)
            await conn.execute("DELETE FROM rxagent_leases WHERE agent = ? AND session_id = ?", key)
            cursor = await conn.execute(
                "DELETE FROM rxagent_sessions WHERE agent = ? AND session_id = ?", key
            )
            return cursor.rowcount

        return await self._transaction(remove) > 0

    async def list_sessions(self, agent: str) -> list[str]:
        """See `SessionStore.list_sessions`."""
        check_agent(agent)
        rows = await self._fetch(
            "SELECT session_id FROM rxagent_sessions WHERE agent = ?", (agent,)
        )
        return sorted(row[0] for row in rows)

    async def list_agents(self) -> list[str]:
        """See `SessionStore.list_agents`."""
        rows = await self._fetch("SELECT DISTINCT agent FROM rxagent_sessions", ())
        return sorted(row[0] for row in rows)

    # -- leases -------------------------------------------------------------------------------

    async def acquire_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """See `SessionStore.acquire_lease`: one atomic upsert."""
        check_key(agent, session_id)
        check_owner(owner)
        now = self._clock()
        params = (agent, session_id, owner, now + check_ttl(ttl_s), now)
        return bool(await complete_despite_cancel(self._fetch(_ACQUIRE, params)))

    async def renew_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """See `SessionStore.renew_lease`."""
        check_key(agent, session_id)
        check_owner(owner)
        rows = await self._fetch(
            "UPDATE rxagent_leases SET expires_at = ?"
            " WHERE agent = ? AND session_id = ? AND owner = ? RETURNING owner",
            (self._clock() + check_ttl(ttl_s), agent, session_id, owner),
        )
        return bool(rows)

    async def release_lease(self, agent: str, session_id: str, owner: str) -> None:
        """See `SessionStore.release_lease`."""
        check_key(agent, session_id)
        check_owner(owner)
        await self._fetch(
            "DELETE FROM rxagent_leases WHERE agent = ? AND session_id = ? AND owner = ?",
            (agent, session_id, owner),
        )

    async def lease_holder(self, agent: str, session_id: str) -> str | None:
        """See `SessionStore.lease_holder`."""
        check_key(agent, session_id)
        rows = await self._fetch(
            "SELECT owner FROM rxagent_leases"
            " WHERE agent = ? AND session_id = ? AND expires_at > ?",
            (agent, session_id, self._clock()),
        )
        return str(rows[0][0]) if rows else None

    # -- lifecycle ----------------------------------------------------------------------------

    def control(self) -> ControlChannel:
        """See `SessionStore.control`: a `SQLiteControl` on the store's file.

        Every process that shares the file shares the channel, so an interrupt sent in one
        reaches a run in another. A `":memory:"` store has an in-process channel.
        """
        if self._control is None:
            from rxagent.state._control import InProcessControl
            from rxagent.state._control_sqlite import SQLiteControl

            self._control = (
                InProcessControl()
                if self._path == ":memory:"
                else SQLiteControl(self._path, busy_timeout_s=self._busy_ms / 1000)
            )
        return self._control

    async def aclose(self) -> None:
        """See `SessionStore.aclose`: close the channel and the connection (idempotent)."""
        self._closed = True
        control, self._control = self._control, None
        if control is not None:
            await control.aclose()
        async with self._guard():
            conn, self._conn = self._conn, None
            if conn is not None:
                await conn.close()

    async def __aenter__(self) -> Self:
        async with self._guard():
            await self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
