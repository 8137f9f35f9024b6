"""A writer killed with SIGKILL in the middle of its saves never leaves a half-written state.

A subprocess (`store_crash_writer.py`) saves large numbered states in a tight loop; the test
kills it at a random moment after a few acknowledged saves, then loads the session with a fresh
store: the state must be whole (every field agrees with its sequence number), its version must be
`sequence + 1`, and no acknowledged save may be lost.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from store_helpers import (  # type: ignore[import-not-found]
    check_numbered,
    drop_pg_tables,
    drop_redis_keys,
    unique_key_prefix,
    unique_table_prefix,
)

from rxagent.state import SessionStore, open_store

WRITER = Path(__file__).with_name("store_crash_writer.py")
PAD_UNITS = 20_000  # about 120 KB of state: a save takes long enough to be interrupted
ROUNDS = 3


async def kill_while_saving(
    url: str, options: dict[str, Any], session: str, rng: random.Random
) -> int:
    """Run the writer, SIGKILL it at a random moment after 3 saves; return the last acked one."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(WRITER),
        url,
        json.dumps(options),
        "bot",
        session,
        str(PAD_UNITS),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    acked = 0
    try:
        while acked < 3:
            line = await asyncio.wait_for(process.stdout.readline(), 60)
            if not line:
                break
            acked = int(line)
        # not synchronisation: this picks the random moment of the kill
        await asyncio.sleep(rng.uniform(0, 0.03))
    finally:
        if process.returncode is None:
            process.kill()
        out, err = await process.communicate()
    assert acked >= 3, f"the writer did not start saving: {err.decode()}"
    assert process.returncode == -signal.SIGKILL, err.decode()
    lines = out.decode().split()
    return int(lines[-1]) if lines else acked


@pytest.fixture(params=["sqlite", "postgres", "redis"])
async def target(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, dict[str, Any], Callable[[], SessionStore]]]:
    kind: str = request.param
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
        yield url, {}, lambda: open_store(url)
        return
    if kind == "postgres":
        dsn: str = request.getfixturevalue("postgres_dsn")
        table_prefix = unique_table_prefix()
        yield (
            dsn,
            {"table_prefix": table_prefix},
            lambda: open_store(dsn, table_prefix=table_prefix),
        )
        await drop_pg_tables(dsn, table_prefix)
        return
    redis_url: str = request.getfixturevalue("redis_url")
    prefix = unique_key_prefix()
    yield redis_url, {"prefix": prefix}, lambda: open_store(redis_url, prefix=prefix)
    await drop_redis_keys(redis_url, prefix)


@pytest.mark.timeout(120)
async def test_a_killed_writer_leaves_a_whole_state(
    target: tuple[str, dict[str, Any], Callable[[], SessionStore]],
):
    url, options, reopen = target
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    for round_ in range(ROUNDS):
        session = f"crash-{round_}"
        acked = await kill_while_saving(url, options, session, rng)
        store = reopen()
        try:
            stored = await store.load("bot", session)
            assert stored is not None
            seq = check_numbered(stored.state)  # whole: nothing torn or mixed
            assert seq == stored.version - 1, f"seed {seed}"
            assert stored.version >= acked, f"seed {seed}: an acknowledged save was lost"
            assert stored.version <= acked + 1, f"seed {seed}: a save from nowhere"
            # the session goes on from there
            version = await store.save(
                "bot", session, stored.state, expected_version=stored.version
            )
            assert version == stored.version + 1
        finally:
            await store.aclose()
