"""The store goes away mid-run: typed 503s, no hang, and the server recovers by itself.

- Redis: a `redis-server` of the test's own, on a free port (append-only file, fsync always),
  is killed with SIGKILL during the runs, then restarted on the same port and data.
- PostgreSQL: every connection of the server (its pool's `application_name` and its control
  channel's carry the test's table prefix) is terminated with `pg_terminate_backend`, again and
  again, for the length of the outage; the database itself stays up for the other tests.
- SQLite (full size only): another connection holds the file's exclusive lock for the outage,
  so writes wait out the store's `busy_timeout_s` and fail.

During the outage, new requests get `503 store_unavailable` with `Retry-After` within the
configured store timeout (never a hang), and the streams of the runs in flight end. After it,
the server serves again without a restart, and every session cut off goes on to its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import asyncpg  # type: ignore[import-untyped,unused-ignore]
import pytest
import redis.asyncio as aioredis
from fault_helpers import (  # type: ignore[import-not-found]
    Matrix,
    Seen,
    StoreTarget,
    fault_server,
    load_state,
    reply_text,
    session_shape,
    started_twice,
    stream_run,
    until_free,
)
from service_helpers import drop_pg_tables, unique_table_prefix  # type: ignore[import-not-found]


@dataclass(frozen=True)
class Size:
    runs: int
    outage_s: float
    probes: int


SIZES = {"short": Size(runs=8, outage_s=2.0, probes=6), "full": Size(50, 6.0, 40)}
STEPS = 3
STORE_TIMEOUT_S = 2.0
"""The store timeouts of the server (connect, command, pool, busy)."""
ANSWER_BOUND_S = 3 * STORE_TIMEOUT_S
"""How long any request may take during the outage: a typed answer, never a hang."""
RECOVERY_BOUND_S = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class OwnRedis:
    """A redis-server of the test's own, killed and restarted on the same port and data."""

    folder: Path
    port: int = field(default_factory=free_port)
    process: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            "redis-server",
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.folder),
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--save", "",
            stdout=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        client = aioredis.from_url(self.url)
        try:
            while True:
                with contextlib.suppress(aioredis.ConnectionError, aioredis.BusyLoadingError):
                    if await client.ping():
                        return
                assert time.monotonic() < deadline, "redis-server did not start"
                await asyncio.sleep(0.05)  # polling a starting server
        finally:
            await client.aclose()

    async def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            await self.kill()


@pytest.fixture
async def own_redis(tmp_path: Path) -> AsyncIterator[OwnRedis]:
    if shutil.which("redis-server") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true needs redis-server on PATH for the store-loss row")
        pytest.skip("redis-server is not on PATH; install redis to run the store-loss row")
    folder = tmp_path / "redis"
    folder.mkdir()
    redis = OwnRedis(folder)
    await redis.start()
    try:
        yield redis
    finally:
        await redis.stop()


@dataclass
class Outage:
    """How a store goes away and comes back."""

    begin: Callable[[], Awaitable[None]]
    end: Callable[[], Awaitable[None]]


async def pg_outage(dsn: str, prefix: str) -> tuple[Outage, Callable[[], Awaitable[None]]]:
    """An outage of the server's PostgreSQL connections, and how to close the admin connection."""
    admin = await asyncpg.connect(dsn)
    stop = asyncio.Event()
    task: asyncio.Task[None] | None = None

    async def terminate() -> None:
        while not stop.is_set():
            await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name LIKE $1 AND pid <> pg_backend_pid()",
                f"%{prefix}%",
            )
            await asyncio.sleep(0.005)  # again and again: new connections are cut too

    async def begin() -> None:
        nonlocal task
        task = asyncio.ensure_future(terminate())

    async def end() -> None:
        stop.set()
        assert task is not None
        await task

    return Outage(begin, end), admin.close


@dataclass
class Probe:
    what: str
    status: int
    took: float
    code: str | None
    retry_after: str | None


async def probe(http: aiohttp.ClientSession, url: str, i: int) -> Probe:
    """One request during the outage: a new run (JSON), a session read, or a new stream."""
    kind = ("run", "session", "stream")[i % 3]
    started = time.monotonic()
    if kind == "run":
        request = http.post(
            f"{url}/v1/agents/worker/runs", json={"input": "hi", "session_id": f"n{i}"}
        )
    elif kind == "session":
        request = http.get(f"{url}/v1/sessions/r0")
    else:
        body = {"input": "hi", "session_id": f"n{i}"}
        request = http.post(f"{url}/v1/agents/worker/runs:stream", json=body)
    async with request as answer:
        body_text = await answer.text()
        took = time.monotonic() - started
        code = None
        if answer.status != 200 and answer.content_type == "application/json":
            code = (await answer.json())["error"]["code"]
        elif answer.status == 200 and kind == "stream" and "event: error" in body_text:
            code = "stream_error"
        return Probe(kind, answer.status, took, code, answer.headers.get("Retry-After"))


async def started(seen: Seen) -> None:
    while "pre_call" not in seen.kinds and seen.broke is None and seen.status in (None, 200):
        await asyncio.sleep(0.01)  # polling what another task records


async def lose_the_store(
    target: StoreTarget, outage: Outage, size: str, matrix: Matrix, tmp_path: Path
) -> None:
    plan = SIZES[size]
    row = matrix.row("store lost mid-run", target.kind, size)
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    tool_log, stderr = tmp_path / "tools.log", tmp_path / "server.log"
    env = {"FAULT_STORE_TIMEOUT": str(STORE_TIMEOUT_S)}
    problems: list[str] = []
    store = target.open()
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http,
        fault_server(target, tool_log, stderr, env) as server,
    ):
        try:
            url = server.url
            runs = [Seen(f"r{i}") for i in range(plan.runs)]
            tasks = [
                asyncio.ensure_future(stream_run(http, url, s.session, f"work:{STEPS}", s))
                for s in runs
            ]
            await asyncio.wait_for(asyncio.gather(*(started(s) for s in runs)), 30)
            await asyncio.sleep(rng.uniform(0, 0.5))  # not synchronisation: a random moment
            await outage.begin()
            outage_started = time.monotonic()
            probes: list[Probe] = []  # requests during the outage, sent at once
            try:
                # the runs in flight end within the bound, whatever they met
                try:
                    await asyncio.wait_for(asyncio.gather(*tasks), ANSWER_BOUND_S + 10)
                except TimeoutError:
                    ended = sum(1 for s in runs if s.post_call or s.error or s.broke)
                    row.runs = plan.runs
                    row.notes = (
                        f"HANG: {plan.runs - ended}/{plan.runs} runs in flight still going "
                        f"{ANSWER_BOUND_S + 10:.0f} s into the outage"
                    )
                    raise
                asks = [probe(http, url, i) for i in range(plan.probes)]
                probes = await asyncio.gather(*(asyncio.wait_for(a, ANSWER_BOUND_S) for a in asks))
                rest = plan.outage_s - (time.monotonic() - outage_started)
                await asyncio.sleep(max(0.0, rest))  # the outage lasts its length
            finally:
                await outage.end()
            # the server recovers by itself
            deadline = time.monotonic() + RECOVERY_BOUND_S
            while True:
                answer = await probe(http, url, 0)
                if answer.status == 200:
                    break
                assert time.monotonic() < deadline, f"the server did not recover: {answer}"
                await asyncio.sleep(0.2)  # polling: the store reconnects on the next operation
            recovered_after = time.monotonic() - outage_started - plan.outage_s
            row.runs = plan.runs
            cut = [s for s in runs if s.post_call is None]
            for seen in runs:
                if seen.post_call is None and seen.error is None:
                    problems.append(f"{seen.session} ended with neither post_call nor error")
                if seen.error is not None and seen.error["exception"] != "StoreUnavailableError":
                    problems.append(f"{seen.session}: not a store error: {seen.error}")
                state = await load_state(store, seen.session)
                shape = session_shape(state, STEPS)
                if shape.startswith("broken") or (seen.post_call and shape != "complete"):
                    row.lost += 1
                    problems.append(f"{seen.session}: {shape}")
            row.to_recover = len(cut)
            for seen in cut:
                result = await until_free(http, url, seen.session, "work:1", RECOVERY_BOUND_S)
                if reply_text(result) == "finished 1":
                    row.recovered += 1
            for p in probes:
                typed = p.status == 503 and p.code == "store_unavailable" and p.retry_after
                if not (typed or p.status == 200) or p.took > ANSWER_BOUND_S:
                    problems.append(f"probe {p}")
            unavailable = sum(1 for p in probes if p.status == 503)
            row.duplicated = len(started_twice(tool_log))
            slowest = max((p.took for p in probes), default=0.0)
            row.notes = (
                f"{len(cut)} runs cut; {unavailable}/{len(probes)} probes 503, slowest "
                f"{slowest:.2f} s; serving again {recovered_after:.1f} s after the store; "
                f"seed {seed}"
            )
            assert await server.terminate() == 0
        finally:
            await store.aclose()
    assert not problems, f"seed {seed}: {problems}\n{stderr.read_text()[-3000:]}"
    assert row.duplicated == 0
    assert row.recovered == row.to_recover
    return None


@pytest.mark.timeout(300)
async def test_redis_killed_mid_run(own_redis: OwnRedis, size: str, matrix: Matrix, tmp_path: Path):
    target = StoreTarget("redis", own_redis.url, "fault:")
    await lose_the_store(target, Outage(own_redis.kill, own_redis.start), size, matrix, tmp_path)


@pytest.mark.timeout(300)
async def test_postgres_connections_terminated_mid_run(
    postgres_dsn: str, size: str, matrix: Matrix, tmp_path: Path
):
    prefix = unique_table_prefix()
    outage, close = await pg_outage(postgres_dsn, prefix)
    try:
        target = StoreTarget("postgres", postgres_dsn, prefix)
        await lose_the_store(target, outage, size, matrix, tmp_path)
    finally:
        await close()
        await drop_pg_tables(postgres_dsn, prefix)


def sqlite_outage(path: Path) -> Outage:
    """Another process's lock on the SQLite file, held for the outage (writes wait, then fail)."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    async def begin() -> None:
        await asyncio.to_thread(holder.execute, "BEGIN EXCLUSIVE")

    async def end() -> None:
        await asyncio.to_thread(holder.execute, "ROLLBACK")
        holder.close()

    return Outage(begin, end)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("size", ["full"])  # the short matrix loses Redis and PostgreSQL only
async def test_sqlite_file_locked_mid_run(size: str, matrix: Matrix, tmp_path: Path):
    path = tmp_path / "sessions.db"
    target = StoreTarget("sqlite", f"sqlite:///{path}", "")
    async with target.open() as store:  # the file and its tables exist before the lock
        await store.list_agents()
    await lose_the_store(target, sqlite_outage(path), size, matrix, tmp_path)
