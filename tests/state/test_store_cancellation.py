"""A save cancelled at any await point either completes, its version known, or does not happen.

Each store's I/O is gated: the save stops at the k-th await point (before and after each
statement), the caller is cancelled there, then the gate opens. Whatever k, the version the
caller holds afterwards is the stored one, so its next save is accepted. Deterministic: the
cancellation arrives exactly while the save waits at that point.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from store_helpers import (  # type: ignore[import-not-found]
    drop_pg_tables,
    drop_redis_keys,
    numbered_state,
    unique_key_prefix,
    unique_table_prefix,
)

from rxagent import AgentState, ReActAgent, tool
from rxagent.errors import ConcurrentModificationError
from rxagent.state import PostgresStore, RedisStore, SessionStore, SQLiteStore
from rxagent.testing import FunctionModel, tool_call


class Gate:
    """Stops the `stop_at`-th await point reached (counting from 0) until `release` is set."""

    def __init__(self) -> None:
        self.stop_at: int | None = None
        self.passed = 0
        self.reached = asyncio.Event()
        self.release = asyncio.Event()

    async def point(self) -> None:
        index = self.passed
        self.passed += 1
        if index == self.stop_at:
            self.reached.set()
            await self.release.wait()

    def arm(self, stop_at: int | None) -> None:
        self.stop_at, self.passed = stop_at, 0
        self.reached.clear()
        self.release.clear()


class GatedSQLite(SQLiteStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = Gate()

    async def _fetch(self, sql: str, params: Any) -> list[Any]:
        await self.gate.point()
        rows = await super()._fetch(sql, params)
        await self.gate.point()
        return rows


class _GatedRun:
    """Gates before and after each `_run` (the one I/O seam of PostgresStore and RedisStore)."""

    gate: Gate

    async def _run(self, operation: Callable[[Any], Awaitable[Any]]) -> Any:
        await self.gate.point()
        result = await super()._run(operation)  # type: ignore[misc]
        await self.gate.point()
        return result


class GatedPostgres(_GatedRun, PostgresStore):
    def __init__(self, dsn: str, prefix: str) -> None:
        super().__init__(dsn, table_prefix=prefix)
        self.gate = Gate()


class GatedRedis(_GatedRun, RedisStore):
    def __init__(self, url: str, prefix: str) -> None:
        super().__init__(url, prefix=prefix)
        self.gate = Gate()


Gated = GatedSQLite | GatedPostgres | GatedRedis


@pytest.fixture(params=["sqlite", "postgres", "redis"])
async def gated(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Gated]:
    store: Gated
    if request.param == "sqlite":
        store = GatedSQLite(tmp_path / "sessions.db")
        async with store:
            yield store
        return
    if request.param == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        prefix = unique_table_prefix()
        store = GatedPostgres(dsn, prefix)
        try:
            async with store:
                yield store
        finally:
            await drop_pg_tables(dsn, prefix)
        return
    url = request.getfixturevalue("redis_url")
    prefix = unique_key_prefix()
    store = GatedRedis(url, prefix)
    try:
        async with store:
            yield store
    finally:
        await drop_redis_keys(url, prefix)


async def _points_of_a_save(store: Gated, session: str) -> int:
    """How many gated await points one successful save passes."""
    store.gate.arm(None)
    await store.save("bot", session, numbered_state(1), expected_version=None)
    return store.gate.passed


class Holder:
    """What a run keeps: the version of its session it last saved."""

    version = 0


async def _save_then_wait(store: SessionStore, session: str, holder: Holder, seq: int) -> None:
    holder.version = await store.save(
        "bot", session, numbered_state(seq), expected_version=holder.version
    )
    await asyncio.Event().wait()  # the run goes on (the cancellation arrives here at the latest)


async def test_a_save_cancelled_at_any_await_point_leaves_the_caller_the_stored_version(
    gated: Gated,
):
    points = await _points_of_a_save(gated, "probe")
    assert points >= 2  # before and after the statement, at least
    for k in range(points):
        session = f"s{k}"
        holder = Holder()
        gated.gate.arm(None)
        holder.version = await gated.save("bot", session, numbered_state(1), expected_version=0)
        gated.gate.arm(k)
        task = asyncio.create_task(_save_then_wait(gated, session, holder, 2))
        await gated.gate.reached.wait()
        task.cancel()  # the run is disposed while its save waits at point k
        gated.gate.release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        gated.gate.arm(None)
        stored = await gated.load("bot", session)
        assert stored is not None
        assert holder.version == stored.version == 2, k  # the save completed, and is known
        # the final save of the run (marking unfinished calls) is accepted
        assert await gated.save("bot", session, numbered_state(3), expected_version=holder.version)


async def test_a_cancelled_save_that_conflicts_reports_the_conflict(gated: Gated):
    gated.gate.arm(None)
    await gated.save("bot", "s1", numbered_state(1), expected_version=0)
    await gated.save("bot", "s1", numbered_state(2), expected_version=1)  # someone else saved
    gated.gate.arm(0)
    task = asyncio.create_task(gated.save("bot", "s1", numbered_state(3), expected_version=1))
    await gated.gate.reached.wait()
    task.cancel()
    gated.gate.release.set()
    with pytest.raises(ConcurrentModificationError):
        await task  # the outcome of the write, not a cancellation that hides it


async def test_an_acquire_cancelled_in_flight_is_known_to_have_taken_the_lease(gated: Gated):
    gated.gate.arm(1)  # after the statement: the lease is taken
    taken: list[bool] = []

    async def acquire() -> None:
        taken.append(await gated.acquire_lease("bot", "s1", "run-1", 30.0))
        await asyncio.Event().wait()

    task = asyncio.create_task(acquire())
    await gated.gate.reached.wait()
    task.cancel()
    gated.gate.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    gated.gate.arm(None)
    assert taken == [True]  # the caller knows it holds the lease, and can release it
    assert await gated.lease_holder("bot", "s1") == "run-1"


class SaveGatedSQLite(SQLiteStore):
    """Gates the statements that write a session's state only."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = Gate()

    async def _fetch(self, sql: str, params: Any) -> list[Any]:
        writes = "rxagent_sessions (" in sql or sql.startswith("UPDATE rxagent_sessions")
        if writes:
            await self.gate.point()
        rows = await super()._fetch(sql, params)
        if writes:
            await self.gate.point()
        return rows


def _stepping_agent(store: SessionStore) -> ReActAgent:
    @tool
    def step() -> str:
        """Do one step."""
        return "stepped"

    def respond(messages: list[Any], tools: Any, options: Any) -> Any:
        return tool_call("step")  # a step after each step: the run goes on until disposed

    return ReActAgent("bot", "", FunctionModel(respond), tools=[step], store=store, max_iters=50)


async def test_a_run_disposed_during_a_checkpoint_save_still_saves_its_final_state(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    """The agent's own save path: disposed at each point of a checkpoint save, it ends saved."""
    store = SaveGatedSQLite(tmp_path / "sessions.db")
    agent = _stepping_agent(store)
    async with store:
        for k in range(4):  # the points of the first two checkpoint saves
            session = f"s{k}"
            store.gate.arm(k)
            subscription = agent.stream("go", session_id=session).subscribe(on_next=lambda _: None)
            await store.gate.reached.wait()
            subscription.dispose()  # cancels the run while its save waits at point k
            store.gate.release.set()
            assert await agent.wait_idle(timeout=10)
            store.gate.arm(None)
            stored = await store.load("bot", session)
            assert stored is not None
            memory = stored.state.memory
            calls = [c.id for m in memory for c in m.tool_calls]
            results = [r.id for m in memory for r in m.tool_results]
            assert calls == results, k  # the final save ran: every call is answered
    assert "could not save session" not in caplog.text
    assert "ConcurrentModificationError" not in caplog.text


def test_numbered_states_differ():
    assert numbered_state(1) != numbered_state(2)
    assert isinstance(numbered_state(1), AgentState)
