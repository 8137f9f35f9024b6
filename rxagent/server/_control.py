"""`serve_control`: the agents of this process obey the interrupts sent on a control channel.

The channels themselves (`InProcessControl`, `PostgresControl`, `RedisControl`) and
`ControlMessage` live in `rxagent.state`; this module drives agents with what they carry, so it
sits above the agent, with the server that calls it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from rxagent.messages import Msg
    from rxagent.state import ControlChannel, ControlMessage, Subscription

__all__ = ["Interruptible", "serve_control"]

logger: Final = logging.getLogger("rxagent.server")


class Interruptible(Protocol):
    """What `serve_control` needs of an agent (a `ReActAgent` is one): its name and interrupt."""

    @property
    def name(self) -> str:
        """The agent's name, which control messages are addressed to."""
        ...

    def interrupt(self, session_id: str = ..., msg: Msg | str | None = ...) -> bool:
        """Interrupt the session's run in this process; False when it runs none here."""
        ...


async def serve_control(
    channel: ControlChannel, agents: Mapping[str, Interruptible] | Interruptible
) -> Subscription:
    """Subscribe `agents` to `channel`: an interrupt message interrupts the named session's run.

    A message for an agent or session this process does not run is ignored, so every process
    sharing the channel can subscribe and only the one running the session acts.

    Example:
        ```python
        import asyncio
        from rxagent import ReActAgent
        from rxagent.server import serve_control
        from rxagent.state import ControlMessage, InProcessControl
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
    table = dict(agents) if isinstance(agents, Mapping) else {agents.name: agents}

    def handle(message: ControlMessage) -> None:
        agent = table.get(message.agent)
        if agent is None or message.kind != "interrupt":
            return
        if agent.interrupt(message.session_id, message.reason):
            logger.info(
                "interrupted %s/%s at the request of %s",
                message.agent,
                message.session_id,
                message.sender,
            )

    return await channel.subscribe(handle)
