"""Every SessionStore behaves like InMemoryStore: one suite, run on each backend.

PostgreSQL and Redis runs use the local servers (each test under its own table or key prefix,
removed afterwards) and skip with a reason where a server is absent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from store_helpers import (  # type: ignore[import-not-found]
    FakeClock,
    drop_pg_tables,
    drop_redis_keys,
    unique_key_prefix,
    unique_table_prefix,
)

from rxagent import AgentState, Msg
from rxagent.errors import ConcurrentModificationError, ConfigurationError
from rxagent.state import (
    ControlChannel,
    InMemoryStore,
    PostgresStore,
    RedisStore,
    SessionStore,
    SQLiteStore,
)

BACKENDS = ["memory", "sqlite", "postgres", "redis"]
PERSISTENT = BACKENDS[1:]


@dataclass
class Backend:
    """A store under test, a way to open a second client of the same data, and a way to let
    lease time pass (a fake clock where the store takes one, real time where the server keeps
    it)."""

    kind: str
    store: SessionStore
    open_peer: Callable[[], SessionStore]
    clock: FakeClock | None
    peers: list[SessionStore] = field(default_factory=list)

    def peer(self) -> SessionStore:
        store = self.open_peer()
        self.peers.append(store)
        return store

    async def let_pass(self, seconds: float) -> None:
        if self.clock is not None:
            self.clock.advance(seconds)
        else:  # the database's clock decides: real time has to pass
            await asyncio.sleep(seconds)


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    kind: str = request.param
    cleanup: Callable[[], Awaitable[None]] | None = None
    fake = FakeClock()
    clock: FakeClock | None = fake
    if kind == "memory":
        memory = InMemoryStore(clock=fake)
        store: SessionStore = memory
        open_peer: Callable[[], SessionStore] = lambda: memory  # noqa: E731
    elif kind == "sqlite":
        path = tmp_path / "sessions.db"
        store = SQLiteStore(path, clock=fake)
        open_peer = lambda: SQLiteStore(path, clock=fake)  # noqa: E731
    elif kind == "postgres":
        dsn: str = request.getfixturevalue("postgres_dsn")
        prefix, clock = unique_table_prefix(), None
        store = PostgresStore(dsn, table_prefix=prefix)
        open_peer = lambda: PostgresStore(dsn, table_prefix=prefix)  # noqa: E731

        async def cleanup() -> None:
            await drop_pg_tables(dsn, prefix)

    else:
        url: str = request.getfixturevalue("redis_url")
        key_prefix, clock = unique_key_prefix(), None
        store = RedisStore(url, prefix=key_prefix)
        open_peer = lambda: RedisStore(url, prefix=key_prefix)  # noqa: E731

        async def cleanup() -> None:
            await drop_redis_keys(url, key_prefix)

    backend = Backend(kind, store, open_peer, clock)
    try:
        yield backend
    finally:
        for peer in backend.peers:
            if peer is not store:
                await peer.aclose()
        await store.aclose()
        if cleanup is not None:
            await cleanup()


def state(runs: int = 0, text: str = "hi") -> AgentState:
    return AgentState(memory=(Msg.user(text, id="m1"),), runs=runs)


# -- the protocol ------------------------------------------------------------------------------


async def test_is_a_session_store_with_a_control_channel(backend: Backend):
    store = backend.store
    assert isinstance(store, SessionStore)
    assert store.persistent is (backend.kind != "memory")
    channel = store.control()
    assert isinstance(channel, ControlChannel)
    assert store.control() is channel  # cached: one channel per store


async def test_missing_session_loads_as_none(backend: Backend):
    assert await backend.store.load("bot", "nope") is None
    assert await backend.store.list_sessions("bot") == []
    assert await backend.store.list_agents() == []


async def test_save_then_load_round_trips_and_versions_count_up(backend: Backend):
    store = backend.store
    assert await store.save("bot", "s1", state(1)) == 1
    assert await store.save("bot", "s1", state(2)) == 2
    loaded = await store.load("bot", "s1")
    assert loaded is not None
    assert loaded.version == 2
    assert loaded.state == state(2)


async def test_expected_version_zero_creates_and_refuses_an_existing_session(backend: Backend):
    store = backend.store
    assert await store.save("bot", "s1", state(1), expected_version=0) == 1
    with pytest.raises(ConcurrentModificationError, match=r"at version 1, not 0.*load it again"):
        await store.save("bot", "s1", state(9), expected_version=0)
    loaded = await store.load("bot", "s1")
    assert loaded is not None
    assert loaded.state.runs == 1
    assert loaded.version == 1


async def test_stale_expected_version_is_refused_and_leaves_state_alone(backend: Backend):
    store = backend.store
    v1 = await store.save("bot", "s1", state(1), expected_version=0)
    v2 = await store.save("bot", "s1", state(2), expected_version=v1)
    assert (v1, v2) == (1, 2)
    with pytest.raises(ConcurrentModificationError, match=r"'s1'.*'bot'.*version 2, not 1"):
        await store.save("bot", "s1", state(3), expected_version=v1)
    with pytest.raises(ConcurrentModificationError, match="version 0, not 5"):
        await store.save("bot", "other", state(3), expected_version=5)  # does not exist
    loaded = await store.load("bot", "s1")
    assert loaded is not None
    assert (loaded.version, loaded.state.runs) == (2, 2)
    assert await store.load("bot", "other") is None


async def test_sessions_are_keyed_by_agent_and_session_id(backend: Backend):
    store = backend.store
    await store.save("bot", "s1", state(1))
    await store.save("bot", "s2", state(2))
    await store.save("helper", "s1", state(3))
    await store.save("b:o:t", "x:y", state(4))  # separators inside names stay unambiguous
    await store.save("b", "o:t:x:y", state(5))
    assert await store.list_sessions("bot") == ["s1", "s2"]
    assert await store.list_sessions("helper") == ["s1"]
    assert await store.list_sessions("b:o:t") == ["x:y"]
    assert await store.list_agents() == ["b", "b:o:t", "bot", "helper"]
    for agent, session, runs in [
        ("bot", "s1", 1),
        ("helper", "s1", 3),
        ("b:o:t", "x:y", 4),
        ("b", "o:t:x:y", 5),
    ]:
        loaded = await store.load(agent, session)
        assert loaded is not None
        assert loaded.state.runs == runs


async def test_unicode_names_and_content_survive(backend: Backend):
    store = backend.store
    text = 'héllo 世界 🚀 "quoted" \\ back\nslash \t tab \u2028'
    await store.save("ägent", "sessión-😀", state(1, text))
    loaded = await store.load("ägent", "sessión-😀")
    assert loaded is not None
    assert loaded.state == state(1, text)
    assert await store.list_sessions("ägent") == ["sessión-😀"]


async def test_delete_removes_state_and_lease(backend: Backend):
    store = backend.store
    await store.save("bot", "s1", state(1))
    await store.save("bot", "s2", state(2))
    assert await store.acquire_lease("bot", "s1", "run-1", 30)
    assert await store.delete("bot", "s1") is True
    assert await store.delete("bot", "s1") is False
    assert await store.load("bot", "s1") is None
    assert await store.lease_holder("bot", "s1") is None
    assert await store.list_sessions("bot") == ["s2"]
    assert await store.delete("bot", "s2") is True
    assert await store.list_agents() == []
    # a deleted session starts again at version 1
    assert await store.save("bot", "s1", state(3), expected_version=0) == 1


async def test_save_needs_no_prior_lease_and_delete_of_a_lease_only_session(backend: Backend):
    store = backend.store
    assert await store.acquire_lease("bot", "s1", "run-1", 30)
    assert await store.delete("bot", "s1") is False  # no state, but the lease goes
    assert await store.lease_holder("bot", "s1") is None


# -- leases -----------------------------------------------------------------------------------


async def test_lease_is_exclusive_until_released(backend: Backend):
    store = backend.store
    assert await store.lease_holder("bot", "s1") is None
    assert await store.acquire_lease("bot", "s1", "run-1", 30)
    assert await store.lease_holder("bot", "s1") == "run-1"
    assert not await store.acquire_lease("bot", "s1", "run-2", 30)
    assert await store.acquire_lease("bot", "s1", "run-1", 30)  # the holder may take it again
    assert await store.acquire_lease("bot", "s2", "run-2", 30)  # another session is free
    await store.release_lease("bot", "s1", "run-2")  # not the holder: no-op
    assert await store.lease_holder("bot", "s1") == "run-1"
    await store.release_lease("bot", "s1", "run-1")
    assert await store.lease_holder("bot", "s1") is None
    assert await store.acquire_lease("bot", "s1", "run-2", 30)
    assert await store.lease_holder("bot", "s1") == "run-2"
    await store.release_lease("bot", "never", "run-1")  # nothing held: no-op


async def test_lease_is_keyed_by_agent_too(backend: Backend):
    store = backend.store
    assert await store.acquire_lease("bot", "s1", "run-1", 30)
    assert await store.acquire_lease("helper", "s1", "run-2", 30)
    assert await store.lease_holder("helper", "s1") == "run-2"


async def test_expired_lease_is_free_for_others(backend: Backend):
    store = backend.store
    assert await store.acquire_lease("bot", "s1", "run-1", 0.05)
    await backend.let_pass(0.15)
    assert await store.lease_holder("bot", "s1") is None
    assert await store.acquire_lease("bot", "s1", "run-2", 30)
    assert await store.lease_holder("bot", "s1") == "run-2"
    assert not await store.renew_lease("bot", "s1", "run-1", 30)  # run-1 lost it


async def test_renew_extends_only_the_holders_lease(backend: Backend):
    store = backend.store
    assert not await store.renew_lease("bot", "s1", "run-1", 30)  # nothing to renew
    assert await store.acquire_lease("bot", "s1", "run-1", 0.5)
    assert await store.renew_lease("bot", "s1", "run-1", 30)
    assert not await store.renew_lease("bot", "s1", "run-2", 30)
    await backend.let_pass(0.6)  # longer than the first TTL: the renewal keeps it
    assert await store.lease_holder("bot", "s1") == "run-1"
    assert not await store.acquire_lease("bot", "s1", "run-2", 30)


# -- concurrency ------------------------------------------------------------------------------


async def _outcomes(saves: Sequence[Awaitable[int]]) -> tuple[list[int], int]:
    results = await asyncio.gather(*saves, return_exceptions=True)
    wins = [r for r in results if isinstance(r, int)]
    conflicts = [r for r in results if isinstance(r, ConcurrentModificationError)]
    assert len(wins) + len(conflicts) == len(results), results
    return wins, len(conflicts)


async def test_concurrent_writers_with_one_expected_version_exactly_one_wins(backend: Backend):
    stores = [backend.store, backend.peer(), backend.peer()]
    await backend.store.save("bot", "s1", state(0))  # version 1
    saves = [
        stores[i % len(stores)].save("bot", "s1", state(100 + i), expected_version=1)
        for i in range(12)
    ]
    wins, conflicts = await _outcomes(saves)
    assert wins == [2]
    assert conflicts == 11
    loaded = await backend.store.load("bot", "s1")
    assert loaded is not None
    assert loaded.version == 2
    assert loaded.state.runs >= 100


async def test_concurrent_creators_exactly_one_wins(backend: Backend):
    stores = [backend.store, backend.peer()]
    saves = [stores[i % 2].save("bot", "new", state(i), expected_version=0) for i in range(10)]
    wins, conflicts = await _outcomes(saves)
    assert wins == [1]
    assert conflicts == 9


async def test_unconditional_concurrent_saves_all_count(backend: Backend):
    stores = [backend.store, backend.peer()]
    saves = [stores[i % 2].save("bot", "s1", state(i)) for i in range(10)]
    wins, conflicts = await _outcomes(saves)
    assert sorted(wins) == list(range(1, 11))
    assert conflicts == 0


async def test_concurrent_lease_takers_exactly_one_wins(backend: Backend):
    stores = [backend.store, backend.peer()]
    taken = await asyncio.gather(
        *(stores[i % 2].acquire_lease("bot", "s1", f"run-{i}", 30) for i in range(10))
    )
    assert taken.count(True) == 1
    winner = f"run-{taken.index(True)}"
    assert await backend.store.lease_holder("bot", "s1") == winner


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
@pytest.mark.parametrize(
    ("agent", "session_id", "field_name"),
    [
        ("", "s1", "agent"),
        ("bot", "", "session_id"),
        (1, "s1", "agent"),
        ("bot", "a\x00b", "NUL"),
        ("b\ud800t", "s1", "surrogate"),
    ],
)
async def test_bad_names_are_refused_by_persistent_stores(
    backend: Backend, agent: object, session_id: object, field_name: str
):
    store = backend.store
    with pytest.raises(ConfigurationError, match=field_name):
        await store.save(agent, session_id, state())  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=field_name):
        await store.load(agent, session_id)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=field_name):
        await store.acquire_lease(agent, session_id, "run", 30)  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", PERSISTENT, indirect=True)
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s: s.save("bot", "s", {"memory": []}), "AgentState"),
        (lambda s: s.save("bot", "s", AgentState(), expected_version=-1), "expected_version"),
        (lambda s: s.save("bot", "s", AgentState(), expected_version=True), "expected_version"),
        (lambda s: s.acquire_lease("bot", "s", "run", 0), "ttl_s"),
        (lambda s: s.acquire_lease("bot", "s", "run", float("nan")), "ttl_s"),
        (lambda s: s.renew_lease("bot", "s", "run", -1), "ttl_s"),
        (lambda s: s.acquire_lease("bot", "s", "", 30), "owner"),
    ],
)
async def test_bad_arguments_are_refused_and_change_nothing(
    backend: Backend, call: Callable[[SessionStore], Awaitable[object]], match: str
):
    with pytest.raises(ConfigurationError, match=match):
        await call(backend.store)
    assert await backend.store.load("bot", "s") is None
    assert await backend.store.lease_holder("bot", "s") is None
