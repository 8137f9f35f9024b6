"""Shared helpers of the session-store tests: unique names, clean-up, a settable clock."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg  # type: ignore[import-untyped,unused-ignore]
import redis.asyncio as aioredis

from rxagent import AgentState, Msg

PG_TABLES = ("sessions", "leases", "meta")


def unique_table_prefix() -> str:
    """A table prefix no other test uses."""
    return f"t{uuid.uuid4().hex[:10]}_"


def unique_key_prefix() -> str:
    """A Redis key prefix no other test uses."""
    return f"test:{uuid.uuid4().hex[:10]}:"


async def drop_pg_tables(dsn: str, prefix: str, *extra: str) -> None:
    """Drop the tables a `PostgresStore(table_prefix=prefix)` created."""
    conn = await asyncpg.connect(dsn)
    try:
        for table in (*PG_TABLES, *extra):
            await conn.execute(f"DROP TABLE IF EXISTS {prefix}{table}")
    finally:
        await conn.close()


async def drop_redis_keys(url: str, prefix: str) -> None:
    """Delete every key that starts with `prefix`."""
    client = aioredis.from_url(url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=500)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


@dataclass
class FakeClock:
    """A settable clock for leases: call it for the time, move it with `advance`."""

    now: float = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def numbered_state(seq: int, pad_units: int = 10) -> AgentState:
    """A state that encodes its own sequence number everywhere, so a torn one is detectable."""
    pad = f"{seq}|" * pad_units
    return AgentState(
        memory=(
            Msg.user(f"message {seq}", id=f"u{seq}"),
            Msg.assistant(f"answer {seq}", id=f"a{seq}"),
        ),
        step=seq,
        call_counter=seq,
        extra={"seq": seq, "pad": pad, "pad_len": len(pad)},
    )


def check_numbered(state: AgentState) -> int:
    """Assert `state` is a whole `numbered_state(seq, ...)` and return its `seq`."""
    seq = state.extra["seq"]
    assert isinstance(seq, int)
    pad = state.extra["pad"]
    assert isinstance(pad, str)
    units = pad.count("|")
    assert pad == f"{seq}|" * units
    assert state.extra["pad_len"] == len(pad)
    assert state == numbered_state(seq, units)
    return seq
