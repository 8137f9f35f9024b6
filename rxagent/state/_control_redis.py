"""Redis pub/sub as the control channel of processes that share a Redis server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from rxagent.errors import ConfigurationError, ConnectionLostError
from rxagent.state._control import HEALTH_CHECK_S, _RemoteControl
from rxagent.state._store_common import CONNECT_TIMEOUT_S, redact, unavailable

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.state._control import ControlMessage

__all__ = ["RedisControl"]

_CLIENT_NAME_PREFIX: Final = "rxagent-control:"


def _redis_client(url: str, client_name: str) -> Any:
    try:
        import redis.asyncio
    except ImportError as exc:  # pragma: no cover - the redis extra is a dev dependency
        raise ConfigurationError("RedisControl needs redis: pip install 'rxagent[redis]'") from exc
    try:
        return redis.asyncio.Redis.from_url(
            url, client_name=client_name, socket_connect_timeout=CONNECT_TIMEOUT_S
        )
    except ValueError as exc:
        raise ConfigurationError(f"RedisControl: url={url!r} is not usable: {exc}") from exc


def _errors() -> Any:
    import redis.exceptions

    return redis.exceptions


@final
class RedisControl(_RemoteControl):
    """A control channel over Redis pub/sub, for processes that share a Redis server.

    `publish` is a `PUBLISH`; the first `subscribe` starts a reader task on a dedicated pub/sub
    connection (client name `rxagent-control:<channel>`). If that connection drops, the reader
    reconnects with backoff, subscribes again and logs both events; messages sent while it was
    away are not delivered. Connections open lazily, on the running loop; `aclose()` (or
    `async with`) closes them.

    Args:
        url: The server's URL, `redis://host:6379/0`.
        channel: The pub/sub channel.

    Raises:
        ConfigurationError: The URL or the channel is not usable.

    Example:
        ```python
        from rxagent.errors import ConfigurationError
        from rxagent.state import RedisControl

        channel = RedisControl("redis://cache:6379/0", channel="app:control")
        assert channel.channel == "app:control"  # nothing is connected until it is used
        try:
            RedisControl("http://cache:6379")
        except ConfigurationError as exc:
            assert "url" in str(exc)
        ```
    """

    backend = "Redis"

    def __init__(self, url: str, *, channel: str = "rxagent:control") -> None:
        if not isinstance(channel, str) or not channel:
            raise ConfigurationError(
                f"RedisControl: channel={channel!r} must be a non-empty string"
            )
        if not isinstance(url, str) or not url:
            raise ConfigurationError(
                "RedisControl: url must be a Redis URL such as 'redis://localhost:6379/0'"
            )
        super().__init__(channel)
        self._url = url
        # Redis takes client names of printable ASCII without spaces only
        name = "".join(c if "!" <= c <= "~" else "_" for c in channel)
        self._client = _redis_client(url, _CLIENT_NAME_PREFIX + name)

    async def publish(self, message: ControlMessage) -> None:
        """Send `message` to every subscriber of the channel, in every process.

        Raises:
            ConfigurationError: The channel is closed.
            StoreUnavailableError: Redis cannot be reached.
        """
        self._check_open("publish")
        try:
            await self._client.publish(self.channel, message.model_dump_json())
        except (OSError, _errors().ConnectionError, _errors().TimeoutError) as exc:
            raise unavailable(self, exc) from exc

    def __repr__(self) -> str:
        return f"RedisControl({redact(self._url)!r}, channel={self.channel!r})"

    async def _listen_once(self, listening: Callable[[], None]) -> NoReturn:
        pubsub = self._client.pubsub()
        try:
            try:
                await pubsub.subscribe(self.channel)
            except (OSError, _errors().ConnectionError, _errors().TimeoutError) as exc:
                raise unavailable(self, exc) from exc
            pinged = False
            while True:
                reply = await pubsub.get_message(timeout=HEALTH_CHECK_S)
                if reply is None:  # silence: make sure the connection is still there
                    if pinged:
                        raise ConnectionLostError("no reply to PING")
                    await pubsub.ping()
                    pinged = True
                    continue
                pinged = False
                if reply["type"] == "subscribe":
                    listening()
                elif reply["type"] == "message":
                    self._received(reply["data"])
        finally:
            await pubsub.aclose()

    async def _close_publisher(self) -> None:
        await self._client.aclose()
