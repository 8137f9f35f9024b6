"""Slow readers: many SSE clients that read one byte a second, and connections left idle.

Each slow client asks for a long streamed reply (`talk:N`: about 4 MB of SSE frames) over a
socket with a small receive buffer, and reads one byte a second. The server's memory (its RSS,
sampled from /proc) must level off instead of growing with what the runs would produce, and the
runs themselves must stall: the model's generator stops being read (back-pressure reaches the
run), which the server's count of produced deltas shows. A fast client of the same reply gets
all of it, so the stall is the readers' doing.

Idle connections time out: a connection that never sends a request, and a stream whose client
stopped reading, are closed by the server after `ServerConfig.idle_timeout_s`, and the stalled
run is cancelled, its session saved and freed.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
from fault_helpers import (  # type: ignore[import-not-found]
    Matrix,
    StoreTarget,
    fault_server,
    rss_kb,
    stream_run,
)

from rxagent.state import open_store


@dataclass(frozen=True)
class Size:
    clients: int
    seconds: float


SIZES = {"short": Size(clients=40, seconds=4.0), "full": Size(clients=200, seconds=40.0)}
SEND_BUFFER = 65_536
"""The kernel send buffer of the server's connections (Linux doubles it): with the default
(`net.ipv4.tcp_wmem`, up to 4 MiB) a stalled connection first parks that much in the kernel,
which takes longer than this test to fill; the bound is the same kind either way."""
TALK = 100_000
"""Characters of the long reply: 12 500 deltas of 8, about 4 MB of SSE frames."""


@dataclass
class SlowReader:
    session: str
    got: int = 0
    closed_after: float | None = None
    sock: socket.socket = field(default_factory=socket.socket)


def request_bytes(port: int, session: str) -> bytes:
    body = json.dumps({"input": f"talk:{TALK}", "session_id": session}).encode()
    head = (
        f"POST /v1/agents/worker/runs:stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def read_slowly(reader: SlowReader, port: int, every_s: float, until: float) -> None:
    """Send the request, then read one byte every `every_s` until `until` or the server closes."""
    loop = asyncio.get_running_loop()
    sock = reader.sock
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
    sock.setblocking(False)
    started = time.monotonic()
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(sock, request_bytes(port, reader.session))
    while time.monotonic() < until:
        try:
            data = await asyncio.wait_for(
                loop.sock_recv(sock, 1), max(0.01, until - time.monotonic())
            )
        except TimeoutError:
            break
        except ConnectionError:
            data = b""
        if not data:
            reader.closed_after = time.monotonic() - started
            return
        reader.got += 1
        if every_s:
            await asyncio.sleep(every_s)  # the slow reader's pace


async def produced(http: aiohttp.ClientSession, url: str) -> int:
    async with http.get(f"{url}/faults/stats") as answer:
        return int((await answer.json())["deltas"])


@pytest.mark.timeout(600)
async def test_slow_readers_hold_memory_and_runs_back_and_idle_connections_time_out(
    size: str, matrix: Matrix, tmp_path: Path
):
    plan = SIZES[size]
    row = matrix.row("slow readers (1 B/s)", "sqlite", size)
    target = StoreTarget("sqlite", f"sqlite:///{tmp_path / 'sessions.db'}", "")
    idle_timeout = plan.seconds + 1  # the measurements end before the stalled streams close
    env = {"FAULT_IDLE_TIMEOUT": str(idle_timeout), "FAULT_SNDBUF": str(SEND_BUFFER)}
    stderr = tmp_path / "server.log"
    async with (
        fault_server(target, tmp_path / "tools.log", stderr, env) as server,
        aiohttp.ClientSession() as http,
    ):
        port = int(server.url.rsplit(":", 1)[1])
        # a fast client gets the whole reply: the stall below is the slow readers' doing
        fast = await stream_run(http, server.url, "fast", f"talk:{TALK}")
        assert fast.post_call is not None, fast.kinds[-3:]
        whole = await produced(http, server.url)
        baseline = rss_kb(server.pid)

        # a connection that never sends a request is closed once idle
        idle = SlowReader("idle")
        idle.sock.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_connect(idle.sock, ("127.0.0.1", port))

        async def idle_closed() -> float:
            started = time.monotonic()
            data = await loop.sock_recv(idle.sock, 1)
            assert data == b""
            return time.monotonic() - started

        idle_task = asyncio.ensure_future(idle_closed())

        measured = time.monotonic() + plan.seconds
        readers = [SlowReader(f"slow-{i}") for i in range(plan.clients)]
        tasks = [asyncio.ensure_future(read_slowly(r, port, 1.0, measured)) for r in readers]
        samples: list[tuple[float, int, int]] = []
        started = time.monotonic()
        while time.monotonic() < measured:
            await asyncio.sleep(0.5)  # sampling the server's memory and production over time
            samples.append(
                (time.monotonic() - started, rss_kb(server.pid), await produced(http, server.url))
            )
        try:
            await asyncio.gather(*tasks)
            # the readers stay connected, reading nothing more: the server drops their streams
            deadline = time.monotonic() + idle_timeout + 10
            running = {r.session for r in readers}
            while running and time.monotonic() < deadline:
                for session in sorted(running):
                    async with http.get(f"{server.url}/v1/sessions/{session}") as shown:
                        if not (await shown.json())["running"]:
                            running.discard(session)
                await asyncio.sleep(0.5)  # polling the server's view of the sessions
            stalled_ended = time.monotonic() - started
            await asyncio.wait({idle_task}, timeout=max(0.0, deadline - time.monotonic()))
            idle_took = idle_task.result() if idle_task.done() else None
            idle_task.cancel()
        finally:
            for reader in (*readers, idle):
                reader.sock.close()
        assert await server.terminate() == 0

    half = [s for s in samples if s[0] >= plan.seconds / 2]
    rss_growth_kb = samples[-1][1] - half[0][1]
    peak_kb = max(s[1] for s in samples) - baseline
    produced_late = samples[-1][2] - half[0][2]
    produced_slow = samples[-1][2] - whole
    per_run = produced_slow / plan.clients
    closed_early = [r.session for r in readers if r.closed_after is not None]
    row.runs = plan.clients
    row.notes = (
        f"RSS +{peak_kb / 1024:.0f} MB peak over {baseline / 1024:.0f} MB, "
        f"+{rss_growth_kb / 1024:.1f} MB in the last half; {per_run:.0f} of "
        f"{whole} deltas per slow run, {produced_late} in the last half; idle connection closed "
        f"after {idle_took or 0:.1f} s; {plan.clients - len(running)}/{plan.clients} stalled "
        f"streams dropped {stalled_ended:.0f} s in (idle timeout {idle_timeout:.0f} s)"
    )
    assert per_run < whole / 10, row.notes  # the runs wait for their readers
    assert produced_late <= plan.clients * 64, row.notes  # and have stopped by the second half
    assert rss_growth_kb < 16 * 1024, row.notes  # the memory levelled off
    assert idle_took is not None, row.notes  # (aiohttp checks idleness coarsely)
    assert not closed_early, row.notes  # no stream was dropped while its client read
    # the slow readers' streams: dropped by the server once their writes made no progress
    assert not running, row.notes
    store = open_store(target.url)
    try:
        for reader in readers:
            assert await store.lease_holder("worker", reader.session) is None
    finally:
        await store.aclose()
