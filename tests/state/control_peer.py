"""Process B of the cross-process control test (run as a script by test_control_cross_process).

Usage: `python control_peer.py postgres|redis|sqlite ADDRESS CHANNEL SESSION_ID` (for sqlite,
ADDRESS is the file and CHANNEL is unused)

It subscribes an agent whose model never answers to the control channel, starts a run, prints
`STARTED` once the model is called, and prints `RESULT <AgentResult JSON>` when the run ends:
only an interrupt published by another process can end it (or the 60 s guard).
"""

from __future__ import annotations

import asyncio
import sys

from rxagent import ReActAgent
from rxagent.server import serve_control
from rxagent.state import PostgresControl, RedisControl, SQLiteControl
from rxagent.testing import FunctionModel


async def main(backend: str, address: str, channel_name: str, session_id: str) -> None:
    async def never_answers(messages: object, tools: object, options: object) -> str:
        print("STARTED", flush=True)
        await asyncio.Event().wait()
        return "never"

    agent = ReActAgent("peer", "", FunctionModel(never_answers))
    channel: PostgresControl | RedisControl | SQLiteControl
    if backend == "postgres":
        channel = PostgresControl(address, channel=channel_name)
    elif backend == "sqlite":
        channel = SQLiteControl(address)
    else:
        channel = RedisControl(address, channel=channel_name)
    async with channel:
        subscription = await serve_control(channel, agent)
        async with asyncio.timeout(60):
            result = await agent.call("work until stopped", session_id=session_id)
        await subscription.close()
    print("RESULT " + result.model_dump_json(), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
