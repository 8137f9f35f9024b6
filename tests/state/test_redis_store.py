"""What only RedisStore does: its keys, layout migrations, server-side lease expiry, channel.

Runs against the local Redis (`redis_url`, database 15); each test uses its own key prefix and
deletes its keys afterwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from store_helpers import (  # type: ignore[import-not-found]
    drop_redis_keys,
    unique_key_prefix,
)

from rxagent import AgentState
from rxagent.errors import ConfigurationError, StateVersionError
from rxagent.state import ControlMessage, RedisStore
from rxagent.state import _redis as redis_module
from rxagent.state._control_redis import RedisControl


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


async def test_keys_are_under_the_prefix_and_the_layout_is_recorded(
    redis_url: str, prefix: str, client: aioredis.Redis
):
    async with RedisStore(redis_url, prefix=prefix) as store:
        await store.save("bot", "s1", AgentState(runs=2))
        await store.acquire_lease("bot", "s1", "run-1", 30)
    keys = sorted([key async for key in client.scan_iter(match=f"{prefix}*")])
    assert keys == [
        f"{prefix}agents",
        f"{prefix}lease:3:bot:s1",
        f"{prefix}meta",
        f"{prefix}sessions:bot",
        f"{prefix}state:3:bot:s1",
    ]
    assert await client.hget(f"{prefix}meta", "layout") == "1"
    assert await client.hget(f"{prefix}state:3:bot:s1", "v") == "1"
    assert 0 < await client.pttl(f"{prefix}lease:3:bot:s1") <= 30_000  # expires by Redis's clock


async def test_delete_leaves_no_keys_behind(redis_url: str, prefix: str, client: aioredis.Redis):
    async with RedisStore(redis_url, prefix=prefix) as store:
        await store.save("bot", "s1", AgentState())
        await store.acquire_lease("bot", "s1", "run-1", 30)
        assert await store.delete("bot", "s1")
    assert [key async for key in client.scan_iter(match=f"{prefix}*")] == [f"{prefix}meta"]


async def test_an_older_layout_is_upgraded_in_place(
    redis_url: str, prefix: str, client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
):
    async with RedisStore(redis_url, prefix=prefix) as store:
        await store.save("bot", "s1", AgentState(runs=7))
    upgrade = "redis.call('SET', ARGV[2] .. 'upgraded', 'yes')"
    monkeypatch.setattr(redis_module, "MIGRATIONS", [*redis_module.MIGRATIONS, upgrade])
    async with RedisStore(redis_url, prefix=prefix) as store:
        loaded = await store.load("bot", "s1")
        assert loaded is not None
        assert loaded.state.runs == 7
    assert await client.hget(f"{prefix}meta", "layout") == "2"
    assert await client.get(f"{prefix}upgraded") == "yes"


async def test_a_store_without_meta_is_layout_zero_and_gets_one(
    redis_url: str, prefix: str, client: aioredis.Redis
):
    await client.set(f"{prefix}unrelated", "x")
    async with RedisStore(redis_url, prefix=prefix) as store:
        assert await store.list_agents() == []
    assert await client.hget(f"{prefix}meta", "layout") == "1"


async def test_a_newer_layout_is_refused_with_the_fix(
    redis_url: str, prefix: str, client: aioredis.Redis
):
    await client.hset(f"{prefix}meta", "layout", "3")
    store = RedisStore(redis_url, prefix=prefix)
    with pytest.raises(StateVersionError, match=r"layout version 3.*supports \(1\).*upgrade"):
        await store.load("bot", "s1")
    await store.aclose()


async def test_unreadable_stored_state_is_a_typed_error(
    redis_url: str, prefix: str, client: aioredis.Redis
):
    async with RedisStore(redis_url, prefix=prefix) as store:
        await store.save("bot", "s1", AgentState())
        await client.hset(f"{prefix}state:3:bot:s1", "s", "{broken")
        with pytest.raises(StateVersionError, match="not an AgentState"):
            await store.load("bot", "s1")


async def test_stores_sharing_a_prefix_share_a_control_channel(redis_url: str, prefix: str):
    sender = RedisStore(redis_url, prefix=prefix)
    receiver = RedisStore(redis_url, prefix=prefix)
    channel = receiver.control()
    assert isinstance(channel, RedisControl)
    assert receiver.control() is channel
    assert channel.channel == f"{prefix}control"
    got: asyncio.Future[ControlMessage] = asyncio.get_running_loop().create_future()
    subscription = await channel.subscribe(got.set_result)
    message = ControlMessage(agent="bot", session_id="s1", reason="stop")
    await sender.control().publish(message)
    assert await asyncio.wait_for(got, 10) == message
    await receiver.aclose()
    assert not subscription.active  # type: ignore[attr-defined]
    await sender.aclose()


async def test_closed_store_says_so(redis_url: str, prefix: str):
    store = RedisStore(redis_url, prefix=prefix)
    await store.save("bot", "s1", AgentState())
    await store.aclose()
    await store.aclose()
    with pytest.raises(ConfigurationError, match="closed"):
        await store.load("bot", "s1")


@pytest.mark.parametrize("url", ["", "http://x", "127.0.0.1:6379", None])
def test_bad_url_is_refused(url: object):
    with pytest.raises(ConfigurationError, match="redis://"):
        RedisStore(url)  # type: ignore[arg-type]


@pytest.mark.parametrize("prefix", ["", None, 5])
def test_bad_prefix_is_refused(prefix: object):
    with pytest.raises(ConfigurationError, match="prefix"):
        RedisStore("redis://localhost", prefix=prefix)  # type: ignore[arg-type]


def test_repr_hides_the_password():
    store = RedisStore("redis://:hunter2@cache:6379/0")
    assert "hunter2" not in repr(store)
    assert "***@cache:6379" in repr(store)


def test_decode_responses_is_refused_with_the_fix():
    with pytest.raises(ConfigurationError, match="leave out decode_responses=True"):
        RedisStore("redis://127.0.0.1:6379/15", decode_responses=True)
    RedisStore("redis://127.0.0.1:6379/15", decode_responses=False)  # the default is fine
