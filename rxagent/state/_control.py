"""Control messages between processes: interrupts reach the process that runs the session.

A `ControlChannel` broadcasts `ControlMessage`s to every subscriber that shares it. The
in-process channel is the default; `PostgresControl` (LISTEN/NOTIFY) and `RedisControl`
(pub/sub) reach other processes and machines. A store hands out the channel that matches it
(`store.control()`), so processes that share a store share a channel.
`rxagent.server.serve_control` subscribes a process's agents to one.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import random
import uuid
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator
from typing import Final, Literal, NoReturn, Protocol, Self, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rxagent.errors import ConfigurationError

__all__ = [
    "ControlChannel",
    "ControlHandler",
    "ControlMessage",
    "InProcessControl",
    "Subscription",
]

logger = logging.getLogger("rxagent.state")

PROCESS_ID = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
"""Identifies this process as the sender of control messages."""


class ControlMessage(BaseModel):
    """One control message: for now, an interrupt of a session's run wherever it runs.

    Example:
        ```python
        from rxagent.state import ControlMessage

        message = ControlMessage(agent="bot", session_id="s1", reason="stop")
        assert ControlMessage.model_validate_json(message.model_dump_json()) == message
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["interrupt"] = "interrupt"
    """What to do."""
    agent: str
    """The agent's name."""
    session_id: str
    """The session whose run is meant."""
    reason: str | None = None
    """The interrupt message (it becomes the run's reply)."""
    sender: str = Field(default=PROCESS_ID)
    """The process that sent it."""
    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    """The message's own id."""


ControlHandler = Callable[[ControlMessage], Awaitable[None] | None]
"""Called with every message a subscription receives (sync or async)."""


@runtime_checkable
class Subscription(Protocol):
    """A live subscription to a channel; `close()` ends it."""

    async def close(self) -> None:
        """Stop receiving messages."""
        ...


@runtime_checkable
class ControlChannel(Protocol):
    """Broadcasts control messages to every subscriber, in this process or others."""

    async def publish(self, message: ControlMessage) -> None:
        """Send `message` to every subscriber (including this process's own)."""
        ...

    async def subscribe(self, handler: ControlHandler) -> Subscription:
        """Call `handler` with each message published from now on, until the subscription closes."""
        ...

    async def aclose(self) -> None:
        """Close the channel's connections and every subscription."""
        ...


async def _call(handler: ControlHandler, message: ControlMessage) -> None:
    try:
        result = handler(message)
        if inspect.isawaitable(result):
            await result
    except Exception:  # one failing handler must not stop the channel
        logger.exception("control handler failed on %s", message.kind)


class _InProcessSubscription:
    def __init__(self, channel: InProcessControl, handler: ControlHandler) -> None:
        self._channel = channel
        self.handler = handler

    async def close(self) -> None:
        self._channel._subscribers.discard(self)


class InProcessControl:
    """A channel inside one process: the default for in-memory and SQLite stores.

    Example:
        ```python
        import asyncio
        from rxagent.state import ControlMessage, InProcessControl

        async def main() -> None:
            channel, seen = InProcessControl(), []
            subscription = await channel.subscribe(seen.append)
            await channel.publish(ControlMessage(agent="bot", session_id="s1"))
            await subscription.close()
            assert [m.session_id for m in seen] == ["s1"]

        asyncio.run(main())
        ```
    """

    def __init__(self) -> None:
        self._subscribers: set[_InProcessSubscription] = set()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def publish(self, message: ControlMessage) -> None:
        """See `ControlChannel.publish`."""
        for subscription in list(self._subscribers):
            await _call(subscription.handler, message)

    async def subscribe(self, handler: ControlHandler) -> Subscription:
        """See `ControlChannel.subscribe`."""
        subscription = _InProcessSubscription(self, handler)
        self._subscribers.add(subscription)
        return subscription

    async def aclose(self) -> None:
        """See `ControlChannel.aclose`."""
        self._subscribers.clear()


# -- shared by the channels that reach other processes ------------------------------------------

RECONNECT_FIRST_S: Final = 0.1
"""The delay before the second reconnection attempt (the first is immediate); it then doubles."""
RECONNECT_MAX_S: Final = 10.0
"""The longest delay between two reconnection attempts."""
HEALTH_CHECK_S: Final = 30.0
"""After this long without traffic, a listener checks that its connection is still alive."""


def reconnect_delays() -> Iterator[float]:
    """Seconds to wait before each reconnection attempt: none, then doubling, with ±25% jitter."""
    yield 0.0
    delay = RECONNECT_FIRST_S
    while True:
        yield delay * random.uniform(0.75, 1.25)
        delay = min(delay * 2, RECONNECT_MAX_S)


class _RemoteSubscription:
    def __init__(self, channel: _RemoteControl, handler: ControlHandler) -> None:
        self._channel = channel
        self.handler = handler
        self.active = True

    async def close(self) -> None:
        if self.active:
            self.active = False
            self._channel._subscribers.remove(self)


class _RemoteControl(ABC):
    """What `PostgresControl` and `RedisControl` share: subscribers, ordered dispatch, lifecycle.

    A subclass implements `publish` and `_listen_once`, which connects, listens, feeds each
    payload to `_received`, calls `listening()` once it listens, and raises when the connection
    is lost. This base runs it in a listener task that reconnects with backoff, and
    decodes and dispatches payloads, in order of arrival, in a second task. Both start with the
    first `subscribe()` and end with `aclose()`.
    """

    backend = "remote"
    """Names the backend in log lines."""

    def __init__(self, channel: str) -> None:
        self.channel = channel
        self._subscribers: list[_RemoteSubscription] = []
        self._inbox: asyncio.Queue[str | bytes] = asyncio.Queue()
        self._listener: asyncio.Task[None] | None = None
        self._dispatcher: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._start_lock = asyncio.Lock()
        self._closed = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @abstractmethod
    async def publish(self, message: ControlMessage) -> None:
        """Send `message` to every subscriber of the channel, in every process."""

    async def subscribe(self, handler: ControlHandler) -> Subscription:
        """Call `handler` with each message published from now on, until the subscription closes.

        The first subscription connects and listens before it returns, so a message published
        after `subscribe()` returns reaches it. It raises when that first connection fails.
        """
        self._check_open("subscribe")
        async with self._start_lock:
            if self._listener is None or self._listener.done():
                self._ready = ready = asyncio.get_running_loop().create_future()
                self._listener = asyncio.create_task(
                    self._listen(ready), name=f"rxagent control listener {self.channel}"
                )
                await asyncio.shield(ready)
            if self._dispatcher is None:
                self._dispatcher = asyncio.create_task(
                    self._dispatch(), name=f"rxagent control dispatcher {self.channel}"
                )
        self._check_open("subscribe")
        subscription = _RemoteSubscription(self, handler)
        self._subscribers.append(subscription)
        return subscription

    async def aclose(self) -> None:
        """End every subscription, stop the channel's tasks and close its connections."""
        self._closed = True
        for subscription in self._subscribers:
            subscription.active = False
        self._subscribers.clear()
        # A handler may close the channel: its task (the dispatcher) ends when the handler returns.
        current = asyncio.current_task()
        tasks = [
            t for t in (self._listener, self._dispatcher) if t is not None and t is not current
        ]
        self._listener = self._dispatcher = None
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        if self._ready is not None and not self._ready.done():  # cancelled before it ran
            self._ready.set_exception(self._closed_error("subscribe"))
        await self._close_publisher()

    # -- for subclasses ----------------------------------------------------------------------

    @abstractmethod
    async def _listen_once(self, listening: Callable[[], None]) -> NoReturn:
        """Connect, listen and feed `_received`; raise when the connection is lost."""

    @abstractmethod
    async def _close_publisher(self) -> None:
        """Close the connection `publish` uses."""

    def _received(self, payload: str | bytes) -> None:
        self._inbox.put_nowait(payload)

    def _check_open(self, action: str) -> None:
        if self._closed:
            raise self._closed_error(action)

    def _closed_error(self, action: str) -> ConfigurationError:
        return ConfigurationError(
            f"cannot {action}: this {type(self).__name__} (channel {self.channel!r}) is closed; "
            "create a new one"
        )

    # -- the tasks ---------------------------------------------------------------------------

    async def _listen(self, ready: asyncio.Future[None]) -> None:
        delays = reconnect_delays()

        def listening() -> None:
            nonlocal delays
            delays = reconnect_delays()
            if not ready.done():
                ready.set_result(None)
            else:
                logger.warning(
                    "control channel %r (%s): listening again", self.channel, self.backend
                )

        try:
            while True:
                try:
                    await self._listen_once(listening)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    if not ready.done():  # the first connection: the subscriber sees the error
                        ready.set_exception(exc)
                        return
                    delay = next(delays)
                    logger.warning(
                        "control channel %r (%s): listener connection lost (%s: %s); "
                        "reconnecting in %.1f s",
                        self.channel,
                        self.backend,
                        type(exc).__name__,
                        exc,
                        delay,
                    )
                await asyncio.sleep(delay)
        finally:
            if not ready.done():  # closed while the first connection was being made
                ready.set_exception(self._closed_error("subscribe"))

    async def _dispatch(self) -> None:
        while not self._closed:
            payload = await self._inbox.get()
            try:
                message = ControlMessage.model_validate_json(payload)
            except ValidationError as exc:
                preview = payload[:200]
                logger.warning(
                    "control channel %r (%s): skipped a malformed message %r (%s)",
                    self.channel,
                    self.backend,
                    preview,
                    exc.errors(include_url=False)[0]["msg"],
                )
                continue
            for subscription in list(self._subscribers):
                if subscription.active:  # closed while an earlier handler ran: skip it
                    await _call(subscription.handler, message)
