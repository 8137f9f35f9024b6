"""A server killed with SIGKILL mid-run: a restarted one takes its session over within seconds.

Takeover waits for the dead server's session lease to expire, so the servers here use a lease of
`LEASE_TTL_S` instead of the default; the default is checked against the bound separately.

On SQLite, PostgreSQL and Redis, each with a real server process. Also: with Redis, more
concurrent runs than the store has connections all succeed (they wait for a connection).
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from server_helpers import secured_server, sse_until  # type: ignore[import-not-found]
from service_helpers import (  # type: ignore[import-not-found]
    drop_pg_tables,
    drop_redis_keys,
    unique_key_prefix,
    unique_table_prefix,
)

from rxagent import AgentResult
from rxagent.server import ServerConfig

TAKEOVER_BOUND_S = 10.0
"""How long a restarted server may take to get a dead server's session: a few seconds."""

LEASE_TTL_S = 2.0
"""The servers' session lease here: longer than a server takes to start, so the restarted one
finds the session still held (409) and takes it over once the lease expired."""


@pytest.fixture(params=["sqlite", "postgres", "redis"])
async def store_url(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, str]]:
    """A store for two server processes in turn: (url, prefix), cleaned up afterwards."""
    if request.param == "sqlite":
        yield f"sqlite:{tmp_path / 'sessions.db'}", ""
        return
    if request.param == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        prefix = unique_table_prefix()
        try:
            yield dsn, prefix
        finally:
            await drop_pg_tables(dsn, prefix)
        return
    url = request.getfixturevalue("redis_url")
    prefix = unique_key_prefix()
    try:
        yield url, prefix
    finally:
        await drop_redis_keys(url, prefix)


async def _until_free(http: aiohttp.ClientSession, url: str, deadline: float) -> dict[str, Any]:
    """Ask for a run on s1 until the session is no longer held (bounded by `deadline`)."""
    body = {"input": "ping", "session_id": "s1"}
    while True:
        async with http.post(f"{url}/v1/agents/bot/runs", json=body) as answer:
            if answer.status != 409:
                assert answer.status == 200, await answer.text()
                return dict(await answer.json())
        assert time.monotonic() < deadline, "the dead server's lease still holds the session"
        await asyncio.sleep(0.1)  # polling the condition; the lease expires on the store's clock


async def test_a_restarted_server_takes_over_the_session_of_a_killed_one(
    store_url: tuple[str, str], tmp_path: Path
):
    url_of_store, prefix = store_url
    log = tmp_path / "server.log"
    env = {"RXAGENT_TEST_LEASE_TTL": str(LEASE_TTL_S)}
    async with aiohttp.ClientSession() as http:
        async with secured_server(url_of_store, prefix, stderr=log, env=env) as (first, url):
            body = {"input": "slow", "session_id": "s1"}
            async with http.post(f"{url}/v1/agents/bot/runs:stream", json=body) as stream:
                await sse_until(stream, "pre_acting")
                first.send_signal(signal.SIGKILL)
                assert await first.wait() == -signal.SIGKILL
        async with secured_server(url_of_store, prefix, stderr=log, env=env) as (second, url):
            started = time.monotonic()
            async with http.get(f"{url}/v1/sessions/s1") as shown:
                assert shown.status == 200
            result = await _until_free(http, url, started + TAKEOVER_BOUND_S)
            took = time.monotonic() - started
            async with http.get(f"{url}/v1/sessions/s1") as shown:
                info = await shown.json()
            async with http.post(f"{url}/v1/sessions/s1/interrupt", json={}) as interrupt:
                assert interrupt.status == 409  # no "remote" run is claimed any more
            second.send_signal(signal.SIGTERM)
            assert await second.wait() == 0
    assert AgentResult[Any].model_validate(result).text == "pong"
    assert took < TAKEOVER_BOUND_S, took
    assert info["running"] is False


def test_the_default_lease_lets_a_restarted_server_take_over_within_the_bound():
    default = ServerConfig().lease_ttl_s
    assert default is not None
    assert default <= TAKEOVER_BOUND_S / 2  # expiry, plus a restart, stays within the bound


async def test_more_concurrent_runs_than_redis_connections_all_succeed(
    redis_url: str, tmp_path: Path
):
    prefix = unique_key_prefix()
    log = tmp_path / "server.log"
    runs = 48  # the store in serve_secured.py has 8 connections
    try:
        async with (
            secured_server(redis_url, prefix, stderr=log) as (proc, url),
            aiohttp.ClientSession() as http,
        ):

            async def one(i: int) -> int:
                body = {"input": "ping", "session_id": f"c{i}"}
                async with http.post(f"{url}/v1/agents/bot/runs:stream", json=body) as answer:
                    await answer.read()
                    return answer.status

            statuses = await asyncio.gather(*(one(i) for i in range(runs)))
            proc.send_signal(signal.SIGTERM)
            assert await proc.wait() == 0
    finally:
        await drop_redis_keys(redis_url, prefix)
    assert statuses == [200] * runs
    assert "store_unavailable" not in log.read_text()
    assert "MaxConnectionsError" not in log.read_text()
