"""A locked SQLite file: every operation fails within `busy_timeout_s`, however many wait.

What a server needs when another process holds the file (a backup, a long write): requests
answer `503 store_unavailable` within the store's timeout. `SQLiteStore` runs its statements
in order on one connection, so today the k-th of k concurrent operations fails only after
k x `busy_timeout_s` (the store-loss row of the fault matrix shows what that does to a server:
the leases' renewals queue faster than they fail, and requests wait for the whole outage).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from rxagent import AgentState
from rxagent.errors import StoreUnavailableError
from rxagent.state import SQLiteStore

BUSY_S = 0.1
CONCURRENT = 10


@pytest.mark.xfail(
    strict=True,
    reason="SQLiteStore queues statements on one connection: the k-th waits k x busy_timeout_s",
)
async def test_concurrent_operations_on_a_locked_file_each_fail_within_the_busy_timeout(
    tmp_path: Path,
):
    path = tmp_path / "sessions.db"
    async with SQLiteStore(path, busy_timeout_s=BUSY_S) as store:
        await store.save("bot", "s0", AgentState())
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")  # another process holds the file
            started = time.monotonic()

            async def save(i: int) -> float:
                with pytest.raises(StoreUnavailableError, match="locked"):
                    await store.save("bot", f"s{i}", AgentState())
                return time.monotonic() - started

            took = await asyncio.gather(*(save(i) for i in range(CONCURRENT)))
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert max(took) < 3 * BUSY_S, sorted(took)
        assert await store.save("bot", "s0", AgentState(runs=1), expected_version=1) == 2
