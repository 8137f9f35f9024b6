"""`RateLimit` on Redis: the atomic script, its keys and TTL, and two processes sharing a bucket.

Runs against the local Redis (`redis_url`, database 15); each test uses its own key prefix and
deletes its keys afterwards.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
import redis.exceptions
from service_helpers import (  # type: ignore[import-not-found]
    drop_redis_keys,
    unique_key_prefix,
)

from rxagent import ErrorCode, Principal, ReActAgent
from rxagent.guards import GuardContext, RateLimit
from rxagent.testing import ScriptedModel

PEER = Path(__file__).with_name("rate_limit_peer.py")
ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30.0  # a hang guard (process start-up included), never a speed check
ANN = GuardContext("input", principal=Principal(user_id="ann"), agent="bot")
BOB = GuardContext("input", principal=Principal(user_id="bob"), agent="bot")


@pytest.fixture
async def prefix(redis_url: str) -> AsyncIterator[str]:
    name = unique_key_prefix()
    yield name
    await drop_redis_keys(redis_url, name)


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    connection = aioredis.from_url(redis_url, decode_responses=True)
    yield connection
    await connection.aclose()


async def flagged(stage: RateLimit, context: GuardContext, runs: int) -> list[bool]:
    return [(await stage.check("hi", context)).flagged for _ in range(runs)]


async def test_bucket_limits_and_retry_after_is_sane(redis_url: str, prefix: str):
    stage = RateLimit("2/minute", backend=redis_url, prefix=prefix)
    try:
        assert await flagged(stage, ANN, 2) == [False, False]
        verdict = await stage.check("hi", ANN)
        assert verdict.flagged
        assert verdict.reasons == ("rate limit 2/minute exceeded for user 'ann'",)
        assert verdict.retry_after is not None
        assert 0.0 < verdict.retry_after <= 30.0  # one token every 30 s
        assert await flagged(stage, BOB, 3) == [False, False, True]  # bob's own bucket
    finally:
        await stage.aclose()


async def test_key_is_under_the_prefix_and_expires_when_the_bucket_is_full(
    redis_url: str, prefix: str, client: aioredis.Redis
):
    stage = RateLimit("2/minute", backend=redis_url, prefix=prefix)
    try:
        await stage.check("hi", ANN)
        keys = [key async for key in client.scan_iter(match=f"{prefix}*")]
        assert keys == [f"{prefix}user:2/minute:3:bot:ann"]
        assert 0 < await client.pttl(keys[0]) <= 30_000  # one token out: full in 30 s
        await stage.check("hi", ANN)
        assert 30_000 < await client.pttl(keys[0]) <= 60_000  # two out: full in 60 s
        await stage.check("hi", ANN)  # refused: takes nothing, extends nothing
        assert await client.pttl(keys[0]) <= 60_000
    finally:
        await stage.aclose()


async def test_stages_with_other_rates_or_per_use_other_keys(
    redis_url: str, prefix: str, client: aioredis.Redis
):
    per_minute = RateLimit("1/minute", backend=redis_url, prefix=prefix)
    per_day = RateLimit("100/day", backend=redis_url, prefix=prefix)
    per_session = RateLimit("1/minute", per="session", backend=redis_url, prefix=prefix)
    session = GuardContext("input", principal=Principal(user_id="ann"), session_id="s1", agent="a")
    try:
        assert await flagged(per_minute, session, 2) == [False, True]
        assert await flagged(per_day, session, 2) == [False, False]
        assert await flagged(per_session, session, 2) == [False, True]
        keys = sorted([key async for key in client.scan_iter(match=f"{prefix}*")])
        assert keys == [
            f"{prefix}session:1/minute:1:a:s1",
            f"{prefix}user:1/minute:1:a:ann",
            f"{prefix}user:100/day:1:a:ann",
        ]
    finally:
        for stage in (per_minute, per_day, per_session):
            await stage.aclose()


async def test_a_client_passed_in_is_used_and_left_open(
    redis_url: str, prefix: str, client: aioredis.Redis
):
    stage = RateLimit("1/hour", backend=client, prefix=prefix)
    assert await flagged(stage, ANN, 2) == [False, True]
    await stage.aclose()
    assert await client.ping()


class ForgetfulClient:
    """A real client whose server has lost its scripts once (as after a restart)."""

    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client
        self.evals = 0
        self.forgot = False

    async def script_load(self, script: str) -> Any:
        return await self.client.script_load(script)

    async def evalsha(self, sha: str, *args: Any) -> Any:
        if not self.forgot:
            self.forgot = True
            raise redis.exceptions.NoScriptError("No matching script.")
        return await self.client.evalsha(sha, *args)

    async def eval(self, script: str, *args: Any) -> Any:
        self.evals += 1
        return await self.client.eval(script, *args)


async def test_noscript_falls_back_to_eval(prefix: str, client: aioredis.Redis):
    forgetful = ForgetfulClient(client)
    stage = RateLimit("1/hour", backend=forgetful, prefix=prefix)
    assert await flagged(stage, ANN, 3) == [False, True, True]
    assert forgetful.evals == 1  # once, then EVALSHA again


async def test_concurrent_checks_in_one_process_take_exactly_burst(redis_url: str, prefix: str):
    stage = RateLimit("1/day", burst=5, backend=redis_url, prefix=prefix)
    try:
        verdicts = await asyncio.gather(*(stage.check("hi", ANN) for _ in range(20)))
    finally:
        await stage.aclose()
    assert sum(not v.flagged for v in verdicts) == 5
    waits = [v.retry_after for v in verdicts if v.flagged]
    assert all(w is not None and 0 < w <= 86_400 for w in waits)


async def test_two_processes_share_one_bucket(redis_url: str, prefix: str):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    peers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(PEER),
            redis_url,
            prefix,
            "15",
            cwd=ROOT,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(2)
    ]
    try:
        async with asyncio.timeout(WAIT_S):
            for peer in peers:
                assert peer.stdout is not None
                ready = await peer.stdout.readline()
                assert ready == b"READY\n", (ready, await peer.stderr.read())  # type: ignore[union-attr]
            for peer in peers:  # both are connected: start them together
                assert peer.stdin is not None
                peer.stdin.write(b"GO\n")
                await peer.stdin.drain()
            outputs = [await peer.communicate() for peer in peers]
    finally:
        for peer in peers:
            if peer.returncode is None:
                peer.kill()
                await peer.wait()
    lines = [out.decode().strip() for out, _ in outputs]
    assert all(peer.returncode == 0 for peer in peers), [err.decode() for _, err in outputs]
    passed = [int(line.removeprefix("PASSED ")) for line in lines]
    assert sum(passed) == 10, passed  # the peers' burst, shared: 30 requests, 10 tokens

    stage = RateLimit("1/day", burst=10, backend=redis_url, prefix=prefix)
    try:
        verdict = await stage.check("hi", ANN)  # this process sees the same empty bucket
    finally:
        await stage.aclose()
    assert verdict.flagged
    assert verdict.retry_after is not None
    assert 0 < verdict.retry_after <= 86_400  # one token of 1/day


def test_a_stage_from_a_url_works_on_one_loop_after_another(redis_url: str, prefix: str):
    # call_sync runs each call on a new event loop and closes what the run opened at its end
    stage = RateLimit("2/hour", backend=redis_url, prefix=prefix)

    async def check_then_close() -> bool:
        try:
            return (await stage.check("hi", ANN)).flagged
        finally:
            await stage.aclose()

    assert [asyncio.run(check_then_close()) for _ in range(3)] == [False, False, True]


@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_stage_left_open_on_an_ended_loop_still_works_on_the_next(redis_url: str, prefix: str):
    # without aclose() the ended loop's connection is abandoned (a ResourceWarning), not reused
    stage = RateLimit("2/hour", backend=redis_url, prefix=prefix)

    async def check() -> bool:
        return (await stage.check("hi", ANN)).flagged

    flags = [asyncio.run(check()) for _ in range(3)]
    asyncio.run(stage.aclose())  # drops the clients of ended loops too
    gc.collect()  # the abandoned connections' warnings come here, not after the test
    assert flags == [False, False, True]


def test_call_sync_runs_share_the_redis_bucket_and_close_their_clients(redis_url: str, prefix: str):
    # each call_sync runs on a loop of its own, and agent.aclose() at its end closes the
    # stage's client of that loop: no connection is left behind (a ResourceWarning would fail)
    stage = RateLimit("1/hour", backend=redis_url, prefix=prefix)
    model = ScriptedModel(["one", "two"])
    agent = ReActAgent("bot", "", model, guards=[stage])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        first = agent.call_sync("hi", principal=Principal(user_id="ann"))
        second = agent.call_sync("again", principal=Principal(user_id="ann"))
        gc.collect()
    assert first.ok
    assert first.reply.text == "one"
    assert not second.ok
    assert second.error is not None
    assert second.error.code == ErrorCode.GUARD_REJECTED
    assert second.error.retry_after is not None
    assert 0 < second.error.retry_after <= 3_600
    assert model.calls == 1
    assert not stage._backend._clients  # type: ignore[attr-defined]
