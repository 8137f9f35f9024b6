"""Clean-up for tests that use the real PostgreSQL and Redis: unique names, and dropping them.

Importable from any test module (the tests folder is on `sys.path`, as the root conftest's folder).
"""

from __future__ import annotations

import uuid

import asyncpg  # type: ignore[import-untyped,unused-ignore]
import redis.asyncio as aioredis

__all__ = [
    "PG_TABLES",
    "drop_pg_tables",
    "drop_redis_keys",
    "unique_key_prefix",
    "unique_table_prefix",
]

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
