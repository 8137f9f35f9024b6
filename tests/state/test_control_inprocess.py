"""InProcessControl: the default control channel of a process."""

from __future__ import annotations

from rxagent.state import ControlMessage, InProcessControl


async def test_the_channel_is_an_async_context_manager() -> None:
    seen: list[ControlMessage] = []
    async with InProcessControl() as channel:
        await channel.subscribe(seen.append)
        await channel.publish(ControlMessage(agent="a", session_id="s"))
    await channel.publish(ControlMessage(agent="a", session_id="after close"))
    assert [m.session_id for m in seen] == ["s"]
