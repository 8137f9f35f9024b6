"""Control messages between processes: interrupts reach the process that runs the session.

A `ControlChannel` broadcasts `ControlMessage`s to every subscriber that shares it. The
in-process channel is the default; `PostgresControl` (LISTEN/NOTIFY) and `RedisControl`
(pub/sub) reach other processes and machines. A store hands out the channel that matches it
(`store.control()`), so processes that share a store share a channel.
"""

from __future__ import annotations

import inspect
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from rxagent.agent import ReActAgent

__all__ = [
    "ControlChannel",
    "ControlHandler",
    "ControlMessage",
    "InProcessControl",
    "Subscription",
    "serve_control",
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


async def serve_control(
    channel: ControlChannel, agents: Mapping[str, ReActAgent] | ReActAgent
) -> Subscription:
    """Subscribe `agents` to `channel`: an interrupt message interrupts the named session's run.

    A message for an agent or session this process does not run is ignored, so every process
    sharing the channel can subscribe and only the one running the session acts.

    Example:
        ```python
        import asyncio
        from rxagent import ReActAgent
        from rxagent.state import ControlMessage, InProcessControl, serve_control
        from rxagent.testing import ScriptedModel

        async def main() -> None:
            agent = ReActAgent("bot", "", ScriptedModel(["hi"]))
            channel = InProcessControl()
            subscription = await serve_control(channel, agent)
            await channel.publish(ControlMessage(agent="bot", session_id="idle"))  # no run: ignored
            await subscription.close()

        asyncio.run(main())
        ```
    """
    from rxagent.agent import ReActAgent

    table = {agents.name: agents} if isinstance(agents, ReActAgent) else dict(agents)

    def handle(message: ControlMessage) -> None:
        agent = table.get(message.agent)
        if agent is not None and message.kind == "interrupt":
            agent.interrupt(message.session_id, message.reason)

    return await channel.subscribe(handle)
