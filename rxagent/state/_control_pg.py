"""PostgreSQL LISTEN/NOTIFY as the control channel of processes that share a database."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from rxagent.errors import ConfigurationError, ConnectionLostError
from rxagent.errors import ControlMessageTooLargeError as ControlMessageTooLargeError
from rxagent.state._control import HEALTH_CHECK_S, _RemoteControl
from rxagent.state._postgres import unreachable_errors
from rxagent.state._store_common import CONNECT_TIMEOUT_S, redact, unavailable

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.state._control import ControlMessage

__all__ = ["PostgresControl"]

NOTIFY_LIMIT_BYTES: Final = 8000
"""PostgreSQL refuses a NOTIFY payload of this many bytes or more."""
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_PING_TIMEOUT_S: Final = 10.0
_CLOSE_TIMEOUT_S: Final = 5.0


def _asyncpg() -> Any:
    try:
        import asyncpg  # type: ignore[import-untyped,unused-ignore]
    except ImportError as exc:  # pragma: no cover - the postgres extra is a dev dependency
        raise ConfigurationError(
            "PostgresControl needs asyncpg: pip install 'rxagent[postgres]'"
        ) from exc
    return asyncpg


async def _close(connection: Any) -> None:
    if connection.is_closed():
        return
    try:
        await connection.close(timeout=_CLOSE_TIMEOUT_S)
    except Exception:  # a broken connection cannot say goodbye: drop it
        connection.terminate()


@final
class PostgresControl(_RemoteControl):
    """A control channel over PostgreSQL LISTEN/NOTIFY, for processes that share a database.

    `publish` sends `SELECT pg_notify(channel, json)` on a connection of its own; the first
    `subscribe` opens a dedicated listening connection (`application_name`
    `rxagent-listen:<channel>`). If that connection dies, the channel reconnects with backoff,
    LISTENs again and logs both events; messages sent while it was away are not delivered.
    Connections open lazily, on the running loop; `aclose()` (or `async with`) closes them.

    Args:
        dsn: A libpq connection string, `postgresql://user@host:5432/db`.
        channel: The NOTIFY channel: a SQL identifier of at most 63 characters.

    Raises:
        ConfigurationError: The channel name is not an identifier.

    Example:
        ```python
        from rxagent.errors import ConfigurationError
        from rxagent.state import PostgresControl

        channel = PostgresControl("postgresql://app@db:5432/app", channel="app_control")
        assert channel.channel == "app_control"  # nothing is connected until it is used
        try:
            PostgresControl("postgresql://app@db:5432/app", channel="app-control")
        except ConfigurationError as exc:
            assert "channel" in str(exc)
        ```
    """

    backend = "PostgreSQL"

    def __init__(self, dsn: str, *, channel: str = "rxagent_control") -> None:
        if not isinstance(channel, str) or _IDENTIFIER.fullmatch(channel) is None:
            raise ConfigurationError(
                f"PostgresControl: channel={channel!r} is not a PostgreSQL identifier; use "
                "letters, digits and underscores (at most 63, not starting with a digit)"
            )
        if not isinstance(dsn, str) or not dsn:
            raise ConfigurationError(
                "PostgresControl: dsn must be a connection string such as "
                "'postgresql://user@localhost:5432/db'"
            )
        _asyncpg()
        super().__init__(channel)
        self._dsn = dsn
        self._publisher: Any = None
        self._publish_lock = asyncio.Lock()

    async def publish(self, message: ControlMessage) -> None:
        """Send `message` to every subscriber of the channel, in every process.

        Raises:
            ControlMessageTooLargeError: Its JSON is 8000 bytes or more (NOTIFY's limit).
            ConfigurationError: The channel is closed.
            StoreUnavailableError: PostgreSQL cannot be reached.
        """
        self._check_open("publish")
        payload = message.model_dump_json()
        size = len(payload.encode())
        if size >= NOTIFY_LIMIT_BYTES:
            raise ControlMessageTooLargeError(
                f"PostgresControl.publish: the message is {size} bytes of JSON, and PostgreSQL "
                f"NOTIFY takes fewer than {NOTIFY_LIMIT_BYTES}; shorten its `reason`"
            )
        async with self._publish_lock:
            if self._publisher is None or self._publisher.is_closed():
                self._publisher = await self._connect("rxagent-notify")
                if self._closed:  # closed while connecting
                    await _close(self._publisher)
                    raise self._closed_error("publish")
            try:
                await self._publisher.execute("SELECT pg_notify($1, $2)", self.channel, payload)
            except unreachable_errors(_asyncpg()) as exc:
                raise unavailable(self, exc) from exc

    async def _connect(self, role: str) -> Any:
        """A connection of its own (`application_name` says what for).

        Raises:
            StoreUnavailableError: PostgreSQL cannot be reached.
        """
        application_name = f"{role}:{self.channel}"[:63]
        pg = _asyncpg()
        try:
            return await pg.connect(
                self._dsn,
                server_settings={"application_name": application_name},
                timeout=CONNECT_TIMEOUT_S,
            )
        except unreachable_errors(pg) as exc:
            raise unavailable(self, exc) from exc

    def __repr__(self) -> str:
        return f"PostgresControl({redact(self._dsn)!r}, channel={self.channel!r})"

    async def _listen_once(self, listening: Callable[[], None]) -> NoReturn:
        connection = await self._connect("rxagent-listen")
        try:
            lost = asyncio.Event()
            connection.add_termination_listener(lambda _connection: lost.set())
            await connection.add_listener(self.channel, self._on_notify)
            listening()
            while not lost.is_set():
                try:
                    async with asyncio.timeout(HEALTH_CHECK_S):
                        await lost.wait()
                except TimeoutError:  # silence: make sure the connection is still there
                    await connection.fetchval("SELECT 1", timeout=_PING_TIMEOUT_S)
            raise ConnectionLostError("the server closed the connection")
        finally:
            await _close(connection)

    def _on_notify(self, _connection: object, _pid: int, _channel: str, payload: str) -> None:
        self._received(payload)

    async def _close_publisher(self) -> None:
        publisher, self._publisher = self._publisher, None
        if publisher is not None:
            await _close(publisher)
