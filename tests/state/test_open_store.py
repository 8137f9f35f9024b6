"""`open_store(url)` picks the store a URL names, and says clearly what is wrong with a bad one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rxagent import AgentState
from rxagent.errors import ConfigurationError
from rxagent.state import (
    STORE_SCHEMES,
    InMemoryStore,
    PostgresStore,
    RedisStore,
    SQLiteStore,
    open_store,
)


def test_memory_url_gives_an_in_memory_store():
    store = open_store("memory://")
    assert isinstance(store, InMemoryStore)
    assert not store.persistent


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite://", ".rxagent/sessions.db"),
        ("sqlite:///", ".rxagent/sessions.db"),
        ("sqlite:///sessions.db", "sessions.db"),
        ("sqlite:///data/app/sessions.db", "data/app/sessions.db"),
        ("sqlite:////var/lib/app/sessions.db", "/var/lib/app/sessions.db"),
        ("sqlite:///:memory:", ":memory:"),
        ("SQLITE:///x.db", "x.db"),
    ],
)
def test_sqlite_urls_name_relative_and_absolute_files(url: str, path: str):
    store = open_store(url)
    assert isinstance(store, SQLiteStore)
    assert store.path == path


@pytest.mark.parametrize(
    "url",
    ["postgresql://app@db:5432/agents", "postgres://app:pw@db/agents"],
)
def test_postgres_urls(url: str):
    store = open_store(url, table_prefix="chat_")
    assert isinstance(store, PostgresStore)
    assert store.table_prefix == "chat_"


@pytest.mark.parametrize("url", ["redis://cache:6379/0", "rediss://cache:6380/1"])
def test_redis_urls(url: str):
    store = open_store(url, prefix="chat:")
    assert isinstance(store, RedisStore)
    assert store.prefix == "chat:"


async def test_an_opened_sqlite_store_works(tmp_path: Path):
    store = open_store(f"sqlite:///{tmp_path}/s.db")
    try:
        assert await store.save("bot", "s1", AgentState()) == 1
    finally:
        await store.aclose()
    assert (tmp_path / "s.db").is_file()


async def test_keyword_arguments_reach_the_store(tmp_path: Path):
    now = [100.0]
    store = open_store(f"sqlite:///{tmp_path}/s.db", clock=lambda: now[0])
    try:
        assert await store.acquire_lease("bot", "s1", "run", 10)
        now[0] += 11
        assert await store.lease_holder("bot", "s1") is None
    finally:
        await store.aclose()


def test_schemes_are_listed():
    assert STORE_SCHEMES == ("memory", "sqlite", "postgresql", "postgres", "redis", "rediss")


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["mysql://db/x", "file:///tmp/x.db", "s3://bucket/x"])
def test_unknown_scheme_lists_the_known_ones(url: str):
    with pytest.raises(ConfigurationError, match="unknown store URL scheme") as info:
        open_store(url)
    for scheme in STORE_SCHEMES:
        assert f"{scheme}://" in str(info.value)


@pytest.mark.parametrize("url", ["", "sessions.db", "/tmp/sessions.db", None, 3])
def test_not_a_url_is_refused(url: object):
    with pytest.raises(ConfigurationError, match=r"scheme://"):
        open_store(url)  # type: ignore[arg-type]


def test_sqlite_url_with_a_host_is_refused():
    with pytest.raises(ConfigurationError, match=r"no host.*sqlite:///relative"):
        open_store("sqlite://localhost/sessions.db")


def test_memory_url_takes_nothing_more():
    with pytest.raises(ConfigurationError, match="nothing after"):
        open_store("memory://somewhere")


def test_unknown_keyword_names_the_store():
    with pytest.raises(ConfigurationError, match=r"\['bogus'\].*SQLiteStore"):
        open_store("sqlite:///x.db", bogus=1)


def test_password_is_not_echoed_in_errors():
    with pytest.raises(ConfigurationError) as info:
        open_store("mongodb://user:s3cret@host/db")
    assert "s3cret" not in str(info.value)


@pytest.mark.parametrize(
    ("url", "module", "extra"),
    [
        ("postgresql://db/x", "asyncpg", "postgres"),
        ("redis://cache", "redis.asyncio", "redis"),
    ],
)
def test_missing_extra_names_the_pip_command(
    url: str, module: str, extra: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setitem(sys.modules, module, None)  # an import of it now fails
    with pytest.raises(ConfigurationError, match=rf"pip install 'rxagent\[{extra}\]'"):
        open_store(url)
