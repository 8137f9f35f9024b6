"""The server process of the fault matrix: `python fault_server.py STORE_URL PREFIX TOOL_LOG`.

STORE_URL is `sqlite:///PATH`, a `postgresql://` DSN or a `redis://` URL; PREFIX its table or key
prefix (`-` for SQLite). It serves one agent, "worker", on a free port of 127.0.0.1 and prints
its URL. The agent is slow enough to be caught mid-run: its replies stream in small deltas with
a pause between them, and its tools take time.

- `work:K` runs K steps, one after the other: each step streams a sentence and calls the tool
  `step(n)` (which takes `$FAULT_STEP_S` seconds); then the reply `finished K` streams.
- `pay` calls `pay(amount=5)`, which needs approval (it takes `$FAULT_PAY_S` seconds); then `paid`.
- `talk:N` streams a reply of N characters, as fast as the client takes them.
- anything else: `pong`.

Each tool execution appends `start <idempotency key>` to TOOL_LOG before it works and
`end <idempotency key>` after; each line is one `write` to a file opened for appending, so a
SIGKILL never tears one. `GET /faults/stats` answers how many model deltas were produced.
With `$FAULT_SNDBUF`, the server's connections get a kernel send buffer of that many bytes.
With `$FAULT_IDLE_TIMEOUT`, that is the server's `idle_timeout_s`.

The session leases live `$FAULT_LEASE_TTL` seconds (1), so a restarted server takes the
sessions of a killed one over quickly. With PostgreSQL, the pool's connections carry the
`application_name` `fault-PREFIX`, so a test can terminate exactly them.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from rxagent import Msg, ReActAgent, current_run, tool
from rxagent.models import FinishDelta, ModelDelta, TextDelta, Usage, UsageDelta
from rxagent.server import ServerConfig, create_app, run_server
from rxagent.state import SessionStore, open_store
from rxagent.testing import FunctionModel, text, tool_call
from rxagent.testing._builders import turn_to_deltas

DELTA_DELAY_S = float(os.environ.get("FAULT_DELTA_DELAY", "0.01"))
STEP_S = float(os.environ.get("FAULT_STEP_S", "0.15"))
PAY_S = float(os.environ.get("FAULT_PAY_S", "0.3"))
LEASE_TTL_S = float(os.environ.get("FAULT_LEASE_TTL", "1.0"))
STORE_TIMEOUT_S = float(os.environ.get("FAULT_STORE_TIMEOUT", "2.0"))

produced = {"deltas": 0}
_log_fd = -1


def _log(line: str) -> None:
    os.write(_log_fd, line.encode() + b"\n")


@tool
async def step(n: int) -> str:
    """Do one step of the work.

    Args:
        n: Which step.
    """
    key = current_run().idempotency_key
    _log(f"start {key}")
    await asyncio.sleep(STEP_S)
    _log(f"end {key}")
    return f"step {n} done"


@tool(needs_approval=True)
async def pay(amount: int) -> str:
    """Pay once.

    Args:
        amount: How much.
    """
    key = current_run().idempotency_key
    _log(f"start {key}")
    await asyncio.sleep(PAY_S)
    _log(f"end {key}")
    return f"paid {amount}"


def _turn(messages: list[Msg]) -> Any:
    last_user = max(i for i, m in enumerate(messages) if m.role == "user")
    ask = messages[last_user].text
    done = sum(1 for m in messages[last_user + 1 :] if m.role == "tool")
    if ask.startswith("work:"):
        steps = int(ask.removeprefix("work:"))
        if done < steps:
            return [text(f"working on step {done + 1} of {steps}. "), tool_call("step", n=done + 1)]
        return f"finished {steps}"
    if ask == "pay":
        return tool_call("pay", amount=5) if done == 0 else "paid"
    return "pong"


async def _talk(chars: int) -> AsyncIterator[ModelDelta]:
    """`chars` characters in deltas of 8, made one at a time (the model holds none back)."""
    for _ in range(0, chars, 8):
        produced["deltas"] += 1
        yield TextDelta(text="x" * 8)
    yield UsageDelta(usage=Usage(input_tokens=1, output_tokens=chars // 4, requests=1))
    yield FinishDelta(reason="stop")


async def _stream(messages: list[Msg]) -> AsyncIterator[ModelDelta]:
    last = messages[-1]
    if last.role == "user" and last.text.startswith("talk:"):
        async for delta in _talk(int(last.text.removeprefix("talk:"))):
            yield delta
        return
    for delta in turn_to_deltas(_turn(messages), chunk_size=8, messages=messages):
        await asyncio.sleep(DELTA_DELAY_S)
        produced["deltas"] += 1
        yield delta


def respond(messages: list[Msg], tools: Any, options: Any) -> AsyncIterator[ModelDelta]:
    return _stream(messages)


def store_for(url: str, prefix: str) -> SessionStore:
    if url.startswith("sqlite:"):
        return open_store(url, busy_timeout_s=STORE_TIMEOUT_S)
    if url.startswith("redis://"):
        return open_store(
            url,
            prefix=prefix,
            socket_connect_timeout=STORE_TIMEOUT_S,
            socket_timeout=STORE_TIMEOUT_S,
            pool_timeout_s=STORE_TIMEOUT_S,
        )
    return open_store(
        url,
        table_prefix=prefix,
        timeout=STORE_TIMEOUT_S,
        command_timeout=STORE_TIMEOUT_S,
        server_settings={"application_name": f"fault-{prefix}"},
    )


async def stats(request: web.Request) -> web.Response:
    return web.json_response(produced)


def main() -> None:
    global _log_fd
    url, prefix, log = sys.argv[1:4]
    _log_fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    agent = ReActAgent("worker", "", FunctionModel(respond), tools=[step, pay])
    config = ServerConfig(
        shutdown_timeout_s=10.0,
        keepalive_s=0.5,
        lease_ttl_s=LEASE_TTL_S,
        max_runs_per_key=10_000,
        playground=False,
        idle_timeout_s=float(os.environ.get("FAULT_IDLE_TIMEOUT", "75")),
    )
    app = create_app(agent, store=store_for(url, prefix), config=config)
    app.router.add_get("/faults/stats", stats)
    sndbuf = os.environ.get("FAULT_SNDBUF")
    if sndbuf is not None:
        web.TCPSite = _small_send_buffers(int(sndbuf))  # type: ignore[misc]
    run_server(app, host="127.0.0.1", port=0)


def _small_send_buffers(size: int) -> type[web.TCPSite]:
    """A `TCPSite` whose connections get a kernel send buffer of `size` bytes.

    The listening socket's `SO_SNDBUF` is inherited by the connections it accepts (Linux), as
    `net.ipv4.tcp_wmem` would set it for the whole machine.
    """

    class SmallBuffers(web.TCPSite):
        async def start(self) -> None:
            await super().start()
            assert self._server is not None
            for sock in self._server.sockets:  # type: ignore[attr-defined]
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)

    return SmallBuffers


if __name__ == "__main__":
    main()
