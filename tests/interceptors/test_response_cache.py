"""ResponseCache: keys, stores (memory, SQLite, Redis), TTL, and hits that make no request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from service_helpers import drop_redis_keys, unique_key_prefix  # type: ignore[import-not-found]

from rxagent import (
    ModelOptions,
    Msg,
    PostCallEvent,
    PostReasoningEvent,
    ReActAgent,
    ReasoningChunkEvent,
    ToolSchema,
    tool,
)
from rxagent.errors import ConfigurationError
from rxagent.events import BaseEvent
from rxagent.interceptors import (
    CacheStore,
    MemoryCacheStore,
    ModelCall,
    RedisCacheStore,
    ResponseCache,
    SQLiteCacheStore,
    request_key,
)
from rxagent.models import OpenAIChatModel
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call
from rxagent.testing.providers import FakeOpenAIServer, Reply


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def kinds(events: list[BaseEvent]) -> list[str]:
    return [e.type for e in events]


async def run(agent: ReActAgent, session: str) -> list[BaseEvent]:
    events = [e async for e in agent.events("What is 1 + 2?", session_id=session)]
    assert_event_protocol(events)
    return events


async def test_a_hit_makes_no_http_request_and_replays_the_same_events():
    turns: list[Any] = [tool_call("add", a=1, b=2), "It is 3."]
    async with FakeOpenAIServer(turns, chunk_size=3) as server:
        model = OpenAIChatModel(
            "gpt-4o-mini", base_url=server.base_url, api_key="sk-test", max_retries=0
        )
        cache = ResponseCache()
        agent = ReActAgent("calc", "Add.", model, tools=[add], interceptors=[cache])
        first = await run(agent, "s1")
        assert len(server.requests) == 2
        second = await run(agent, "s2")
        assert len(server.requests) == 2  # both answers came from the cache
        await agent.aclose()
    assert (cache.hits, cache.misses) == (2, 2)
    # subscribers see the same kinds of events, chunks included (fewer: one per block)
    assert [k for k in kinds(second) if k != "reasoning_chunk"] == [
        k for k in kinds(first) if k != "reasoning_chunk"
    ]
    assert any(isinstance(e, ReasoningChunkEvent) for e in second)
    texts = [e.result.text for e in (first[-1], second[-1]) if isinstance(e, PostCallEvent)]
    assert texts == ["It is 3.", "It is 3."]
    last = second[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.usage.requests == 0
    assert last.result.tools_used == ("add",)
    posts = [e for e in second if isinstance(e, PostReasoningEvent)]
    assert all(p.modified_by == ("response_cache",) for p in posts)


async def test_a_response_cut_short_is_not_stored():
    async with FakeOpenAIServer(
        [Reply("cut", finish="length"), Reply("cut", finish="length")]
    ) as server:
        model = OpenAIChatModel("gpt-4o-mini", base_url=server.base_url, api_key="k")
        agent = ReActAgent("a", "", model, interceptors=[ResponseCache()])
        await run(agent, "s1")
        await run(agent, "s2")
        await agent.aclose()
    assert len(server.requests) == 2


def test_the_key_covers_model_messages_tools_and_options_but_not_message_ids():
    model = ScriptedModel([], name="m")
    base = ModelCall(messages=(Msg.user("hi"),), model=model)
    same = ModelCall(messages=(Msg.user("hi"),), model=model)
    assert request_key(base) == request_key(same)
    changes: list[dict[str, Any]] = [
        {"messages": (Msg.user("ho"),)},
        {"tools": (ToolSchema(name="t"),)},
        {"options": ModelOptions(temperature=0.5)},
        {"model": ScriptedModel([], name="other")},
    ]
    keys = {request_key(base.model_copy(update=c)) for c in changes}
    assert len(keys) == 4
    assert request_key(base) not in keys


async def test_memory_store_ttl_uses_its_clock():
    now = [100.0]
    store = MemoryCacheStore(clock=lambda: now[0])
    await store.set("k", b"v", ttl=5)
    await store.set("forever", b"f", ttl=None)
    assert await store.get("k") == b"v"
    now[0] = 105.0
    assert await store.get("k") is None
    assert await store.get("missing") is None
    assert await store.get("forever") == b"f"
    assert len(store) == 1
    await store.aclose()


async def test_a_ttl_expiry_asks_the_model_again():
    now = [0.0]
    cache = ResponseCache(MemoryCacheStore(clock=lambda: now[0]), ttl=10)
    agent = ReActAgent("a", "", ScriptedModel(["one", "two"]), interceptors=[cache])
    assert (await agent.call("q", session_id="a")).text == "one"
    assert (await agent.call("q", session_id="b")).text == "one"
    now[0] = 11.0
    assert (await agent.call("q", session_id="c")).text == "two"


async def check_store(store: CacheStore) -> None:
    assert await store.get("k") is None
    await store.set("k", b"value", ttl=60)
    await store.set("gone", b"x", ttl=0.001)
    await store.set("kept", b"y", ttl=None)
    assert await store.get("k") == b"value"
    assert await store.get("kept") == b"y"
    await store.aclose()
    assert await store.get("k") == b"value"  # reopened on use
    await store.aclose()


async def test_sqlite_store(tmp_path: Path):
    now = [1000.0]
    store = SQLiteCacheStore(tmp_path / "sub" / "cache.db", clock=lambda: now[0])
    await check_store(store)
    now[0] = 1001.0
    assert await store.get("gone") is None
    await store.aclose()


async def test_sqlite_store_behind_an_agent(tmp_path: Path):
    cache = ResponseCache(SQLiteCacheStore(tmp_path / "c.db"))
    agent = ReActAgent("a", "", ScriptedModel(["one"]), interceptors=[cache])
    assert (await agent.call("q", session_id="a")).text == "one"
    assert (await agent.call("q", session_id="b")).text == "one"
    await agent.aclose()


async def test_redis_store(redis_url: str):
    prefix = unique_key_prefix()
    try:
        await check_store(RedisCacheStore(redis_url, prefix=prefix))
    finally:
        await drop_redis_keys(redis_url, prefix)


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"store": object()}, "takes a CacheStore"),
        ({"ttl": 0}, "seconds > 0"),
        ({"ttl": True}, "seconds > 0"),
    ],
)
def test_bad_arguments_are_refused(kw: dict[str, Any], words: str):
    with pytest.raises(ConfigurationError, match=words):
        ResponseCache(**kw)


def test_a_bad_table_name_is_refused():
    with pytest.raises(ConfigurationError, match="identifier"):
        SQLiteCacheStore("x.db", table="drop table;")
