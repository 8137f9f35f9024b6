"""Opening the one aiosqlite connection of a `SQLiteStore`: directory, thread, pragmas."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import aiosqlite

from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__: list[str] = []

T = TypeVar("T")


BUSY_SLICE_MS = 0
"""SQLite's own busy timeout when the caller retries a locked statement itself (`retrying`):
none, so a refused attempt never holds the connection's thread, and the waiting is done on the
event loop."""


async def connect(path: str, busy_ms: int, *, slice_ms: int | None = None) -> aiosqlite.Connection:
    """Open `path` (creating its directory) in autocommit mode, with WAL and a busy timeout.

    `slice_ms` sets SQLite's own busy timeout to a short slice for a caller that retries a
    locked statement itself until its deadline (`retrying`); `busy_ms` still bounds the switch
    to WAL.

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
        await conn.execute(
            f"PRAGMA busy_timeout = {int(busy_ms if slice_ms is None else slice_ms)}"
        )
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


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether `exc` says another connection holds the file (worth trying again)."""
    name: str = getattr(exc, "sqlite_errorname", "")
    return name.startswith("SQLITE_BUSY")


async def retrying(
    attempt: Callable[[], Awaitable[T]], deadline: float, *, first_delay: float = 0.002
) -> T:
    """Run `attempt` until it is not refused as busy, or until `deadline` (monotonic) passed.

    A locked file refuses an attempt at once (`BUSY_SLICE_MS`), and the wait happens here, on the
    event loop, so statements queued on one connection behind a locked file each fail at their own
    deadline, instead of each waiting a whole busy timeout after the one before it.

    Raises:
        sqlite3.OperationalError: The last refusal, once the deadline passed (or any other).
    """
    delay = first_delay
    while True:
        try:
            return await attempt()
        except sqlite3.OperationalError as exc:
            remaining = deadline - time.monotonic()
            if not is_busy(exc) or remaining <= 0:
                raise
        await asyncio.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.05)
