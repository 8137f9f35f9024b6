"""Guards behind the server: the principal from the key and user header, 429 for rate limits."""

from __future__ import annotations

from typing import Any

import pytest
from server_helpers import bearer, parse_sse, serving  # type: ignore[import-not-found]

from rxagent import InMemoryStore, ReActAgent, current_run, tool
from rxagent.errors import ConfigurationError
from rxagent.events import GuardVerdict
from rxagent.guards import Guard, GuardContext, RateLimit
from rxagent.server import ServerConfig, create_app, key_id_of
from rxagent.testing import ScriptedModel, tool_call


class OnePerCaller(Guard):
    """Lets each caller (principal id) through once; then asks them to wait 7.2 s."""

    name = "one_per_caller"

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        again = ctx.principal.id in self.seen
        self.seen.append(ctx.principal.id)
        if again:
            return self.verdict(True, 1.0, "one run per caller", retry_after=7.2)
        return self.verdict(False)


class Refuse(Guard):
    """Refuses any input with the word 'no' (no retry-after: waiting would not help)."""

    name = "refuse"

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        return self.verdict("no" in text.split(), None, "said no")


@tool
def whoami() -> str:
    """Who is calling."""
    principal = current_run().principal
    return f"{principal.user_id}|{principal.key_id}"


def _agent(**kw: Any) -> ReActAgent:
    model = ScriptedModel([tool_call("whoami"), "done"] * 4)
    return ReActAgent("bot", "", model, tools=[whoami], store=InMemoryStore(), **kw)


@pytest.mark.parametrize("route", ["runs", "runs:stream", "chat", "ui"])
async def test_a_rate_limited_run_is_429_with_retry_after_on_every_route(route: str):
    store = InMemoryStore()
    agent = ReActAgent(
        "bot", "", ScriptedModel(["one", "two"]), store=store, guards=[OnePerCaller()]
    )
    bodies = {
        "runs": ("/v1/agents/bot/runs", {"input": "hi"}),
        "runs:stream": ("/v1/agents/bot/runs:stream", {"input": "hi"}),
        "chat": (
            "/v1/chat/completions",
            {"model": "bot", "messages": [{"role": "user", "content": "hi"}]},
        ),
        "ui": (
            "/v1/agents/bot/ui",
            {"messages": [{"id": "m", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]},
        ),
    }
    path, body = bodies[route]
    async with serving(create_app(agent, auth=["k-alice"])) as client:
        first = await client.post(path, json=body, headers=bearer("k-alice"))
        assert first.status == 200
        await first.read()
        again = await client.post(path, json=body, headers=bearer("k-alice"))
        assert again.status == 429
        assert again.headers["Retry-After"] == "8"  # 7.2 s, rounded up
        error = (await again.json())["error"]
        assert error["code"] == "rate_limited"
        assert "one_per_caller" in error["message"]
        other = await client.post(
            path, json=body, headers={**bearer("k-alice"), "X-RxAgent-User": "bob"}
        )
        assert other.status == 200  # another user of the same key has a bucket of their own
        await other.read()
    assert agent.model.calls == 2  # type: ignore[attr-defined]


async def test_other_guard_rejections_stream_as_a_failed_run():
    agent = ReActAgent("bot", "", ScriptedModel([]), guards=[Refuse()])
    async with serving(create_app(agent)) as client:
        response = await client.post("/v1/agents/bot/runs:stream", json={"input": "no thanks"})
        assert response.status == 200
        frames = parse_sse(await response.text())
        kinds = [kind for kind, _ in frames]
        assert kinds == ["pre_call", "guard", "error", "post_call"]
        assert frames[2][1]["code"] == "GUARD_REJECTED"
        refused = await client.post("/v1/agents/bot/runs", json={"input": "no"})
        assert refused.status == 200
        assert (await refused.json())["error"]["code"] == "GUARD_REJECTED"


async def test_the_principal_comes_from_the_bearer_key_and_the_user_header():
    agent = _agent()
    async with serving(create_app(agent, auth=["k-one"])) as client:
        response = await client.post(
            "/v1/agents/bot/runs",
            json={"input": "who am I?"},
            headers={**bearer("k-one"), "X-RxAgent-User": "  ann  "},
        )
        assert response.status == 200
        assert (await response.json())["ok"]
        state = await agent.store.load("bot", response.headers["X-Session-Id"])
        assert state is not None
        seen = state.state.memory[2].tool_results[0].text
        assert seen == f"ann|{key_id_of('k-one')}"

        bad = await client.post(
            "/v1/agents/bot/runs",
            json={"input": "x"},
            headers={**bearer("k-one"), "X-RxAgent-User": "a\tb"},
        )
        assert bad.status == 400
        error = (await bad.json())["error"]
        assert (error["code"], error["field"]) == ("invalid_user", "X-RxAgent-User")


async def test_without_auth_the_key_is_anonymous_and_the_header_can_be_turned_off():
    agent = _agent()
    app = create_app(agent, config=ServerConfig(user_header=None))
    async with serving(app) as client:
        response = await client.post(
            "/v1/agents/bot/runs", json={"input": "hi"}, headers={"X-RxAgent-User": "ann"}
        )
        assert response.status == 200
        state = await agent.store.load("bot", response.headers["X-Session-Id"])
        assert state is not None
        assert state.state.memory[2].tool_results[0].text == "None|anonymous"
    with pytest.raises(ConfigurationError, match="user_header"):
        ServerConfig(user_header="X User")


async def test_a_rate_limit_stage_gives_429_with_its_retry_after():
    agent = ReActAgent(
        "bot", "", ScriptedModel(["one", "two"]), guards=[RateLimit("1/minute", per="key")]
    )
    async with serving(create_app(agent, auth=["k-a", "k-b"])) as client:
        ok = await client.post("/v1/agents/bot/runs", json={"input": "hi"}, headers=bearer("k-a"))
        assert ok.status == 200
        limited = await client.post(
            "/v1/agents/bot/runs", json={"input": "hi"}, headers=bearer("k-a")
        )
        assert limited.status == 429
        assert 1 <= int(limited.headers["Retry-After"]) <= 60
        assert "rate limit 1/minute exceeded" in (await limited.json())["error"]["message"]
        other_key = await client.post(
            "/v1/agents/bot/runs", json={"input": "hi"}, headers=bearer("k-b")
        )
        assert other_key.status == 200
