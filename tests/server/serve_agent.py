"""A server process for the tests: `python serve_agent.py sqlite:PATH | postgresql://... PREFIX`.

It serves one agent, "bot", on a free port of 127.0.0.1 and prints its URL. The agent answers
"pong" to any message, except "slow", for which it calls a tool that runs until it is interrupted.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from rxagent import Msg, ReActAgent, tool
from rxagent.server import ServerConfig, run_server
from rxagent.state import PostgresStore, SessionStore, SQLiteStore
from rxagent.testing import FunctionModel, tool_call


@tool
async def slow() -> str:
    """Run until the run is interrupted or the process killed."""
    await asyncio.Event().wait()
    return "finally"


def respond(messages: list[Msg], tools: Any, options: Any) -> Any:
    last = messages[-1]
    if last.role == "user":
        return tool_call("slow") if last.text == "slow" else "pong"
    return "done"


def main() -> None:
    url = sys.argv[1]
    store: SessionStore
    if url.startswith("sqlite:"):
        store = SQLiteStore(url.removeprefix("sqlite:"))
    else:
        store = PostgresStore(url, table_prefix=sys.argv[2])
    agent = ReActAgent("bot", "", FunctionModel(respond), tools=[slow])
    config = ServerConfig(shutdown_timeout_s=10.0, keepalive_s=0.5)
    run_server(agent, host="127.0.0.1", port=0, store=store, config=config)


if __name__ == "__main__":
    main()
