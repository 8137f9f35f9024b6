"""Any AgentState round-trips unchanged through every persistent store.

One store per backend serves all examples of a test (a unique session id per example), so the
property costs one connection, not one per example.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import (  # type: ignore[import-not-found]
    drop_pg_tables,
    drop_redis_keys,
    unique_key_prefix,
    unique_table_prefix,
)

from rxagent import AgentState
from rxagent.state import PostgresStore, RedisStore, SessionStore, SQLiteStore
from rxagent.testing.strategies import conversations, json_values, usages

states = st.builds(
    AgentState,
    memory=conversations(min_turns=0, max_turns=3).map(tuple),
    active_groups=st.none() | st.lists(st.text(max_size=6), max_size=3).map(tuple),
    step=st.integers(0, 10_000),
    call_counter=st.integers(0, 10_000),
    runs=st.integers(0, 1_000),
    usage=usages(),
    extra=st.dictionaries(st.text(max_size=8), json_values(), max_size=4),
)

names = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=12)


@pytest.fixture(params=["sqlite", "postgres", "redis"])
def opened(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[asyncio.Runner, SessionStore]]:
    kind: str = request.param
    with asyncio.Runner() as runner:
        store: SessionStore
        if kind == "sqlite":
            store = SQLiteStore(tmp_path / "sessions.db")
        elif kind == "postgres":
            dsn: str = request.getfixturevalue("postgres_dsn")
            table_prefix = unique_table_prefix()
            store = PostgresStore(dsn, table_prefix=table_prefix)
        else:
            url: str = request.getfixturevalue("redis_url")
            key_prefix = unique_key_prefix()
            store = RedisStore(url, prefix=key_prefix)
        try:
            yield runner, store
        finally:
            runner.run(store.aclose())
            if kind == "postgres":
                runner.run(drop_pg_tables(dsn, table_prefix))
            elif kind == "redis":
                runner.run(drop_redis_keys(url, key_prefix))


EXAMPLES = settings(
    max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None
)


@EXAMPLES
@given(state=states)
def test_any_state_round_trips(opened: tuple[asyncio.Runner, SessionStore], state: AgentState):
    runner, store = opened
    session = f"s{next(_ids)}"

    async def round_trip() -> None:
        assert await store.save("bot", session, state, expected_version=0) == 1
        loaded = await store.load("bot", session)
        assert loaded is not None
        assert loaded.version == 1
        assert loaded.state == state
        assert loaded.state.model_dump_json() == state.model_dump_json()

    runner.run(round_trip())


@EXAMPLES
@given(agent=names, session=names)
def test_any_names_are_kept_apart_and_listed(
    opened: tuple[asyncio.Runner, SessionStore], agent: str, session: str
):
    runner, store = opened
    agent = f"{agent}#{next(_ids)}"  # unique per example, whatever hypothesis draws

    async def check() -> None:
        await store.save(agent, session, AgentState(runs=1))
        await store.save(agent, session + ":x", AgentState(runs=2))
        assert await store.list_sessions(agent) == sorted([session, session + ":x"])
        assert agent in await store.list_agents()
        loaded = await store.load(agent, session)
        assert loaded is not None
        assert loaded.state.runs == 1
        assert await store.delete(agent, session)
        assert await store.delete(agent, session + ":x")
        assert agent not in await store.list_agents()

    runner.run(check())


_ids = itertools.count()
