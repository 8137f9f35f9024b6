"""Claiming a session: a new one (no id given) is created at once, without a load first."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import AgentState, InMemoryStore, ReActAgent
from rxagent.context import Principal
from rxagent.errors import ApiError, ConcurrentModificationError
from rxagent.server import SERVER_KEY, create_app
from rxagent.state import OWNER_KEY
from rxagent.testing import ScriptedModel


class CountingStore(InMemoryStore):
    """An in-memory store that records its loads and saves; `taken` ids exist already."""

    def __init__(self, taken: dict[str, str] | None = None) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []
        self.taken = taken or {}  # session id -> owner, created "meanwhile" by someone else

    async def load(self, agent: str, session_id: str) -> Any:
        self.calls.append(("load", session_id))
        return await super().load(agent, session_id)

    async def save(self, agent: str, session_id: str, state: AgentState, **kw: Any) -> int:
        self.calls.append(("save", session_id))
        owner = self.taken.pop(session_id, None)
        if owner is not None:  # someone created it just before us
            await super().save(agent, session_id, AgentState(extra={OWNER_KEY: owner}))
            raise ConcurrentModificationError("created meanwhile")
        return await super().save(agent, session_id, state, **kw)


def _context(store: CountingStore) -> Any:
    agent = ReActAgent("bot", "", ScriptedModel([]), store=store)
    return create_app(agent)[SERVER_KEY], agent


async def test_a_new_session_is_created_with_one_store_call_and_owned():
    store = CountingStore()
    ctx, agent = _context(store)
    session_id, state = await ctx.claim_session(Principal(key_id="k1"), agent, None)
    assert state is None
    assert store.calls == [("save", session_id)]  # no load of an id nobody can have
    stored = await InMemoryStore.load(store, "bot", session_id)
    assert stored is not None
    assert stored.state.extra[OWNER_KEY] == "k1"


async def test_a_given_id_is_still_loaded_first_and_its_owner_checked():
    store = CountingStore()
    ctx, agent = _context(store)
    await ctx.claim_session(Principal(key_id="k1"), agent, "s1")
    assert store.calls == [("load", "s1"), ("save", "s1")]
    store.calls.clear()
    assert await ctx.claim_session(Principal(key_id="k1"), agent, "s1") == ("s1", _state(store))
    assert store.calls == [("load", "s1")]
    with pytest.raises(ApiError) as refused:
        await ctx.claim_session(Principal(key_id="k2"), agent, "s1")
    assert refused.value.status == 404


async def test_a_new_id_taken_meanwhile_is_looked_up_and_its_owner_checked(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr("uuid.uuid4", lambda: type("U", (), {"hex": "fixed"})())
    store = CountingStore(taken={"fixed": "k2"})
    ctx, agent = _context(store)
    with pytest.raises(ApiError) as refused:  # another key made it: not ours
        await ctx.claim_session(Principal(key_id="k1"), agent, None)
    assert refused.value.status == 404
    assert store.calls == [("save", "fixed"), ("load", "fixed")]


def _state(store: CountingStore) -> AgentState:
    stored = store._states[("bot", "s1")]
    return stored.state
