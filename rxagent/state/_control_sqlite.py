"""A SQLite file as the control channel of processes on one machine that share it."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from typing import TYPE_CHECKING, Final, NoReturn, final

from rxagent.errors import ConfigurationError
from rxagent.state._control import _RemoteControl
from rxagent.state._sqlite_connect import connect

if TYPE_CHECKING:
    from collections.abc import Callable

    import aiosqlite

    from rxagent.state._control import ControlMessage

__all__ = ["SQLiteControl"]

POLL_S: Final = 0.1
"""How often a listener looks for new messages, by default."""
KEEP_S: Final = 60.0
"""How long a message stays in the file: a listener that was away longer misses it."""

_TABLE: Final = (
    "CREATE TABLE IF NOT EXISTS rxagent_control ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, sent_at REAL NOT NULL, payload TEXT NOT NULL)"
)


@final
class SQLiteControl(_RemoteControl):
    """A control channel in a SQLite file, for processes on one machine that share the file.

    `publish` appends the message to the table `rxagent_control` (and drops messages older than
    a minute); each listening process polls the table for rows newer than the last it saw, on a
    connection of its own, and reconnects with backoff if the file cannot be read. Messages are
    delivered in the order they were written, to every subscriber in every process, this one
    included. `SQLiteStore.control()` returns one for its file, so an interrupt sent to one
    server process reaches the run of another that shares the store.

    Args:
        path: The SQLite file (the store's). `":memory:"` is refused: nothing could share it.
        poll_s: Seconds between two looks for new messages (the delivery delay, at most).
        busy_timeout_s: How long a write waits for another process's write.

    Raises:
        ConfigurationError: A path that is not a file, or a `poll_s` that is not positive.

    Example:
        ```python
        import asyncio
        import tempfile
        from pathlib import Path
        from rxagent.state import ControlMessage, SQLiteControl

        async def main(folder: str) -> None:
            path = Path(folder) / "sessions.db"
            async with SQLiteControl(path) as here, SQLiteControl(path) as there:
                seen: asyncio.Queue[ControlMessage] = asyncio.Queue()
                await there.subscribe(seen.put_nowait)
                await here.publish(ControlMessage(agent="bot", session_id="s1"))
                assert (await asyncio.wait_for(seen.get(), 10)).session_id == "s1"

        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(main(folder))
        ```
    """

    backend = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        poll_s: float = POLL_S,
        busy_timeout_s: float = 10.0,
    ) -> None:
        if not isinstance(path, str | os.PathLike) or os.fspath(path) in ("", ":memory:"):
            raise ConfigurationError(
                f"SQLiteControl needs the path of a SQLite file that processes share, got "
                f"{path!r}; for one process use InProcessControl"
            )
        for name, value in (("poll_s", poll_s), ("busy_timeout_s", busy_timeout_s)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigurationError(f"SQLiteControl({name}=...) must be > 0, got {value!r}")
        super().__init__(os.fspath(path))
        self.poll_s = float(poll_s)
        self._busy_ms = int(busy_timeout_s * 1000)
        self._publisher: aiosqlite.Connection | None = None
        self._publish_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"SQLiteControl({self.channel!r})"

    async def _connect(self) -> aiosqlite.Connection:
        conn = await connect(self.channel, self._busy_ms)
        try:
            await conn.execute(_TABLE)
        except BaseException:
            await conn.close()
            raise
        return conn

    async def publish(self, message: ControlMessage) -> None:
        """Append `message` to the file; every listening process reads it within `poll_s`."""
        self._check_open("publish")
        async with self._publish_lock:
            if self._publisher is None:
                self._publisher = await self._connect()
            now = time.time()
            await self._publisher.execute(
                "INSERT INTO rxagent_control (sent_at, payload) VALUES (?, ?)",
                (now, message.model_dump_json()),
            )
            await self._publisher.execute(
                "DELETE FROM rxagent_control WHERE sent_at < ?", (now - KEEP_S,)
            )

    async def _listen_once(self, listening: Callable[[], None]) -> NoReturn:
        conn = await self._connect()
        try:
            rows = list(
                await conn.execute_fetchall("SELECT COALESCE(MAX(id), 0) FROM rxagent_control")
            )
            last = int(rows[0][0])
            listening()
            while True:
                await asyncio.sleep(self.poll_s)
                rows = list(
                    await conn.execute_fetchall(
                        "SELECT id, payload FROM rxagent_control WHERE id > ? ORDER BY id",
                        (last,),
                    )
                )
                for row_id, payload in rows:
                    last = int(row_id)
                    self._received(payload)
        except sqlite3.Error as exc:
            raise ConnectionError(
                f"cannot read the control messages of {self.channel!r}: {exc}"
            ) from exc
        finally:
            await conn.close()

    async def _close_publisher(self) -> None:
        publisher, self._publisher = self._publisher, None
        if publisher is not None:
            await publisher.close()
