"""Opening the one aiosqlite connection of a `SQLiteStore`: directory, thread, pragmas."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import aiosqlite

from rxagent.errors import ConfigurationError

__all__: list[str] = []


async def connect(path: str, busy_ms: int) -> aiosqlite.Connection:
    """Open `path` (creating its directory) in autocommit mode, with WAL and a busy timeout.

    Raises:
        ConfigurationError: When the file cannot be opened (a directory, no permission, ...).
    """
    try:
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        connecting = aiosqlite.connect(path, isolation_level=None)
        # The worker thread must not keep the process alive when a store is never closed:
        # committed transactions are already in the WAL, so nothing is lost.
        thread = getattr(connecting, "_thread", None)
        if thread is not None:
            thread.daemon = True
        try:
            conn = await connecting
        except BaseException:
            if thread is not None and thread.is_alive():
                # aiosqlite stops its thread on a failed connect; wait for that while our loop
                # runs, since the thread reports back to it
                await asyncio.to_thread(thread.join, 10)
            raise
    except (OSError, sqlite3.Error) as exc:
        raise ConfigurationError(
            f"cannot open the SQLite database {path!r} ({exc}); "
            "pass a writable file path, e.g. sqlite:///.rxagent/sessions.db"
        ) from exc
    try:
        await conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        await _use_wal(conn, busy_ms / 1000)
        await conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        await conn.close()
        raise
    return conn


async def _use_wal(conn: aiosqlite.Connection, patience_s: float) -> None:
    """Switch the file to WAL, retrying while another connection holds it.

    A new file's switch needs an exclusive lock, and SQLite does not wait for that through the
    busy timeout, so two processes creating the file at once would otherwise fail.
    """
    deadline = time.monotonic() + patience_s
    delay = 0.001
    while True:
        try:
            await conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
