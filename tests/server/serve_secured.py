"""A server process for the security tests: `python serve_secured.py STORE [PREFIX]`.

STORE is `sqlite:PATH`, a `postgresql://` DSN or a `redis://` URL (PREFIX: its table or key
prefix). The server takes the API keys in $RXAGENT_TEST_KEYS (comma-separated), logs every record
at DEBUG to stderr (so a test sees whatever the log would show), and prints its URL. Its session
leases live $RXAGENT_TEST_LEASE_TTL seconds when that is set (else the server's default). Agents:

- "bot" answers "pong"; "slow" calls a tool that runs until interrupted; "pay" calls a tool that
  needs approval (it writes PAID to stderr when it runs).
- "remote" talks to an OpenAI-compatible provider at $RXAGENT_TEST_PROVIDER with the key
  $RXAGENT_TEST_PROVIDER_KEY, without retries; "offline" to one that cannot be reached.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import sys
from typing import Any

from rxagent import Msg, ReActAgent, tool
from rxagent.models import OpenAIChatModel
from rxagent.server import ServerConfig, run_server
from rxagent.state import PostgresStore, RedisStore, SessionStore, SQLiteStore
from rxagent.testing import FunctionModel, tool_call


@tool
async def slow() -> str:
    """Run until the run is interrupted or the process killed."""
    await asyncio.Event().wait()
    return "finally"


@tool(needs_approval=True)
def wire_money(amount: int) -> str:
    """Send money.

    Args:
        amount: How much.
    """
    sys.stderr.write(f"PAID {amount}\n")
    sys.stderr.flush()
    return f"sent {amount}"


def respond(messages: list[Msg], tools: Any, options: Any) -> Any:
    last = messages[-1]
    if last.role == "user":
        if last.text == "slow":
            return tool_call("slow")
        if last.text == "pay":
            return tool_call("wire_money", amount=5)
        return "pong"
    return "done"


def open_store(url: str, prefix: str) -> SessionStore:
    if url.startswith("sqlite:"):
        return SQLiteStore(url.removeprefix("sqlite:"))
    if url.startswith("redis://"):
        return RedisStore(url, prefix=prefix, max_connections=8)
    return PostgresStore(url, table_prefix=prefix)


def main() -> None:
    logging.basicConfig(
        level=logging.DEBUG, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    store = open_store(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
    keys = [k for k in os.environ.get("RXAGENT_TEST_KEYS", "").split(",") if k]
    provider_key = os.environ.get("RXAGENT_TEST_PROVIDER_KEY", "unused")

    def remote_model(url: str) -> OpenAIChatModel:
        return OpenAIChatModel("gpt-4o-mini", base_url=url, api_key=provider_key, max_retries=0)

    agents = [
        ReActAgent("bot", "", FunctionModel(respond), tools=[slow, wire_money]),
        ReActAgent(
            "remote",
            "",
            remote_model(os.environ.get("RXAGENT_TEST_PROVIDER", "http://127.0.0.1:9")),
        ),
        ReActAgent("offline", "", remote_model("http://127.0.0.1:9/v1")),
    ]
    lease_ttl = os.environ.get("RXAGENT_TEST_LEASE_TTL")
    config = ServerConfig(shutdown_timeout_s=10.0, keepalive_s=0.5, max_runs_per_key=64)
    if lease_ttl is not None:
        config = dataclasses.replace(config, lease_ttl_s=float(lease_ttl))
    run_server(agents, host="127.0.0.1", port=0, store=store, auth=keys or None, config=config)


if __name__ == "__main__":
    main()
