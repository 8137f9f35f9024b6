"""A session belongs to the key that created it: the OpenAI and UI routes keep that too."""

from __future__ import annotations

from server_helpers import bearer, serving, snapshot  # type: ignore[import-not-found]

from rxagent import InMemoryStore, ReActAgent
from rxagent.server import create_app
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
