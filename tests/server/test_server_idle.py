"""Idle connections time out: one that sends no request, and a stream whose client stopped reading.

`serve` closes a connection idle for `ServerConfig.idle_timeout_s`; a stalled stream's run is
then cancelled like a run whose client left: its state is saved and its session freed.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from rxagent import ReActAgent
from rxagent.errors import ConfigurationError
from rxagent.server import ServerConfig, create_app, serve
from rxagent.state import InMemoryStore
from rxagent.testing import ScriptedModel

IDLE_S = 0.5


@asynccontextmanager
async def serving(agent: ReActAgent, idle_s: float) -> AsyncIterator[int]:
    """Serve `agent` with `serve()` on a free port; yield the port; stop at the end."""
    config = ServerConfig(idle_timeout_s=idle_s, playground=False)
    listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()
    app = create_app(agent, config=config)
    task = asyncio.ensure_future(
        serve(app, port=0, print_url=False, stop=stop, on_listening=listening.set_result)
    )
    try:
        url = await asyncio.wait_for(listening, 30)
        yield int(url.rsplit(":", 1)[1])
    finally:
        stop.set()
        await task


async def closed_after(sock: socket.socket, bound_s: float) -> float:
    """Seconds until the server closes `sock` (reading and dropping what it sends)."""
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    async with asyncio.timeout(bound_s):
        while await loop.sock_recv(sock, 1 << 16):
            pass
    return time.monotonic() - started


def connected_socket(receive_buffer: int | None = None) -> socket.socket:
    sock = socket.socket()
    if receive_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.setblocking(False)
    return sock


async def test_a_connection_that_sends_no_request_is_closed_once_idle():
    agent = ReActAgent("bot", "", ScriptedModel([]))
    async with serving(agent, IDLE_S) as port:
        sock = connected_socket()
        try:
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
            took = await closed_after(sock, 30)
        finally:
            sock.close()
    assert took < IDLE_S + 6  # aiohttp checks idleness within a few seconds of the deadline


async def test_a_stream_whose_client_stopped_reading_is_closed_and_its_run_saved():
    store = InMemoryStore()
    reply = "x" * 8_000_000  # more than the kernel's socket buffers hold
    agent = ReActAgent("bot", "", ScriptedModel([reply], chunk_size=4096), store=store)
    loop = asyncio.get_running_loop()
    async with serving(agent, IDLE_S) as port:
        sock = connected_socket(receive_buffer=4096)
        try:
            await loop.sock_connect(sock, ("127.0.0.1", port))
            body = json.dumps({"input": "go", "session_id": "s1"}).encode()
            head = (
                "POST /v1/agents/bot/runs:stream HTTP/1.1\r\nHost: x\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            await loop.sock_sendall(sock, head.encode() + body)
            assert await loop.sock_recv(sock, 1)  # the answer began; now the client stops
            await asyncio.sleep(IDLE_S * 4)  # not synchronisation: the client reads nothing
            assert await agent.wait_idle(30)  # the stalled run ended without a client
            await closed_after(sock, 30)
        finally:
            sock.close()
    stored = await store.load("bot", "s1")
    assert stored is not None
    assert [m.role for m in stored.state.memory] == ["user"]  # the reply in flight: dropped
    assert await store.lease_holder("bot", "s1") is None


@pytest.mark.parametrize("value", [0, -1.0, "75"])
def test_idle_timeout_must_be_a_positive_number(value: object):
    with pytest.raises(ConfigurationError, match="idle_timeout_s"):
        ServerConfig(idle_timeout_s=value)  # type: ignore[arg-type]
