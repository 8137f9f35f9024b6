"""A session belongs to the key that created it: the OpenAI and UI routes keep that too."""

from __future__ import annotations

from typing import Any

import pytest
from server_helpers import bearer, serving, snapshot  # type: ignore[import-not-found]

from rxagent import InMemoryStore, ReActAgent
from rxagent.context import Principal
from rxagent.errors import SessionOwnerError
from rxagent.server import SERVER_KEY, create_app
from rxagent.state import OWNER_KEY
from rxagent.testing import ScriptedModel


async def test_another_keys_session_is_404_on_the_openai_and_ui_routes_too():
    store = InMemoryStore()
    agent = ReActAgent("bot", "", ScriptedModel(["mine"] * 3), store=store)
    async with serving(create_app(agent, auth=["alice", "mallory"])) as client:
        created = await client.post(
            "/v1/agents/bot/runs", json={"input": "hi", "session_id": "s1"}, headers=bearer("alice")
        )
        assert created.status == 200
        before = snapshot(store)
        them = bearer("mallory")
        chat = {"model": "bot", "messages": [{"role": "user", "content": "x"}]}
        for stream in (False, True):
            response = await client.post(
                "/v1/chat/completions",
                json={**chat, "stream": stream},
                headers={**them, "X-Session-Id": "s1"},
            )
            assert response.status == 404
            error = (await response.json())["error"]
            assert (error["code"], error["type"]) == ("session_not_found", "invalid_request_error")
        for body in (
            {"input": "x", "session_id": "s1"},
            {
                "id": "s1",
                "messages": [
                    {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "x"}]}
                ],
            },
        ):
            response = await client.post("/v1/agents/bot/ui", json=body, headers=them)
            assert response.status == 404
            assert (await response.json())["error"]["code"] == "session_not_found"
        assert snapshot(store) == before


async def test_a_delete_racing_the_start_of_a_run_leaves_the_session_owned(monkeypatch):
    """The run re-creates a session deleted between its claim and its start, with its owner."""
    store = InMemoryStore()
    agent = ReActAgent("bot", "", ScriptedModel(["first", "second"]), store=store)
    app = create_app(agent, auth={"alice": "k_alice", "mallory": "k_mallory"})
    ctx = app[SERVER_KEY]
    claim = ctx.claim_session

    async def claim_then_lose_it(principal: Any, served: Any, session_id: Any) -> Any:
        claimed = await claim(principal, served, session_id)
        await store.delete("bot", claimed[0])  # a DELETE that won the race for the lease
        return claimed

    monkeypatch.setattr(ctx, "claim_session", claim_then_lose_it)
    async with serving(app) as client:
        body = {"input": "hi", "session_id": "s1"}
        created = await client.post("/v1/agents/bot/runs", json=body, headers=bearer("alice"))
        assert created.status == 200
        monkeypatch.undo()
        theirs = await client.get("/v1/sessions/s1", headers=bearer("mallory"))
        mine = await client.get("/v1/sessions/s1", headers=bearer("alice"))
        assert theirs.status == 404
        assert mine.status == 200
        assert (await mine.json())["state"]["extra"][OWNER_KEY] == "k_alice"


async def test_a_run_under_another_key_is_refused_by_the_agent_itself():
    """A session taken by another key between the server's check and the run is a 404."""
    store = InMemoryStore()
    agent = ReActAgent("bot", "", ScriptedModel(["mine"] * 3), store=store)
    await agent.call("hi", session_id="s1", principal=Principal(key_id="k_mallory"))
    app = create_app(agent, auth={"alice": "k_alice"})
    ctx = app[SERVER_KEY]

    async def no_check(principal: Any, served: Any, session_id: Any) -> Any:
        return session_id, None  # the server's own check was passed before mallory's run

    ctx.claim_session = no_check  # type: ignore[method-assign,assignment]
    before = snapshot(store)
    async with serving(app) as client:
        body = {"input": "give it to me", "session_id": "s1"}
        response = await client.post("/v1/agents/bot/runs", json=body, headers=bearer("alice"))
        error = (await response.json())["error"]
    assert response.status == 404
    assert error["code"] == "session_not_found"
    assert snapshot(store)[0] == before[0]  # nothing of mallory's session changed


async def test_library_runs_record_and_keep_the_owner_of_a_new_session():
    agent = ReActAgent("bot", "", ScriptedModel(["a", "b", "c"]))
    alice, mallory = Principal(key_id="k_alice"), Principal(key_id="k_mallory")
    await agent.call("hi", session_id="s1", principal=alice)
    state = await agent.state_dict("s1")
    assert state["extra"][OWNER_KEY] == "k_alice"
    assert (await agent.call("again", session_id="s1", principal=alice)).ok
    assert (await agent.call("no principal", session_id="s1")).ok  # no key: not checked
    with pytest.raises(SessionOwnerError, match="belongs to another API key"):
        await agent.call("mine now", session_id="s1", principal=mallory)
    await agent.call("unowned", session_id="s2")
    assert OWNER_KEY not in (await agent.state_dict("s2"))["extra"]
