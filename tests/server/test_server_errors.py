"""Bad input: each gets a typed JSON error, and none changes the store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from server_helpers import Gate, bearer, gated_agent, read_frames_until, serving, snapshot  # type: ignore[import-not-found]

from rxagent import AgentState, InMemoryStore, ReActAgent
from rxagent.errors import ConfigurationError
from rxagent.server import RunRequest, ServerConfig, create_app
from rxagent.testing import ScriptedModel

RUNS = "/v1/agents/bot/runs"


def fresh_agent(store: InMemoryStore | None = None) -> ReActAgent:
    return ReActAgent("bot", "", ScriptedModel(["never used"]), store=store or InMemoryStore())


async def error_of(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status == status, await response.text()
    assert response.headers["Content-Type"].startswith("application/json")
    body = await response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "field"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return dict(body["error"])


async def test_a_missing_token_is_401_with_www_authenticate():
    agent = fresh_agent()
    async with serving(create_app(agent, auth=["k1"])) as client:
        before = snapshot(agent.store)
        response = await client.post(RUNS, json={"input": "hi"})
        await error_of(response, 401, "unauthorized")
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert snapshot(agent.store) == before


@pytest.mark.parametrize("header", ["Bearer wrong", "Basic azE=", "Bearer ", "k1", "Bearer k1x"])
async def test_a_wrong_token_is_401_invalid_token(header: str):
    agent = fresh_agent()
    async with serving(create_app(agent, auth={"k1": "first"})) as client:
        response = await client.post(RUNS, json={"input": "hi"}, headers={"Authorization": header})
        await error_of(response, 401, "unauthorized")
        assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    assert await agent.store.list_sessions("bot") == []


async def test_every_json_route_needs_the_token_but_healthz_and_openapi():
    agent = fresh_agent()
    async with serving(create_app(agent, auth=["k1"])) as client:
        for method, path in [
            ("POST", RUNS),
            ("POST", RUNS + ":stream"),
            ("GET", "/v1/sessions/s1"),
            ("DELETE", "/v1/sessions/s1"),
            ("POST", "/v1/sessions/s1/interrupt"),
            ("POST", "/v1/sessions/s1/approvals/a1"),
            ("GET", "/metrics"),
        ]:
            await error_of(await client.request(method, path), 401, "unauthorized")
        assert (await client.get("/healthz")).status == 200
        assert (await client.get("/openapi.json")).status == 200


async def test_an_unknown_agent_is_404():
    agent = fresh_agent()
    async with serving(create_app(agent)) as client:
        for path in ("/v1/agents/nobody/runs", "/v1/agents/nobody/runs:stream"):
            error = await error_of(
                await client.post(path, json={"input": "hi"}), 404, "agent_not_found"
            )
            assert error["field"] == "name"
            assert "bot" in error["message"]
    assert await agent.store.list_sessions("bot") == []


async def test_a_body_over_the_limit_is_413_declared_or_chunked():
    agent = fresh_agent()
    config = ServerConfig(max_body_bytes=100)
    big = json.dumps({"input": "x" * 200}).encode()

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(big), 50):
            yield big[i : i + 50]

    async with serving(create_app(agent, config=config)) as client:
        await error_of(await client.post(RUNS, data=big), 413, "body_too_large")
        await error_of(await client.post(RUNS, data=chunks()), 413, "body_too_large")
        small = await client.post(RUNS, json={"input": "x" * 10, "session_id": "s"})
        assert small.status == 200
    assert await agent.store.list_sessions("bot") == ["s"]


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        (b"{not json", "invalid_json", None),
        (b"[1, 2]", "invalid_body", None),
        (b'"text"', "invalid_body", None),
        (b"{}", "invalid_body", "input"),
        (b'{"input": 5}', "invalid_body", "input"),
        (b'{"input": []}', "invalid_body", "input"),
        (b'{"input": {"role": "user"}}', "invalid_body", "input.content"),
        (b'{"input": [{"role": "robot", "content": "x"}]}', "invalid_body", "input.0.role"),
        (b'{"input": "hi", "session_id": "a/b"}', "invalid_body", "session_id"),
        (b'{"input": "hi", "session_id": ""}', "invalid_body", "session_id"),
        (b'{"input": "hi", "options": {}}', "invalid_body", "options"),
    ],
)
async def test_malformed_json_or_a_wrong_schema_is_422_naming_the_field(
    body: bytes, code: str, field: str | None
):
    agent = fresh_agent()
    async with serving(create_app(agent)) as client:
        for path in (RUNS, RUNS + ":stream"):
            response = await client.post(
                path, data=body, headers={"Content-Type": "application/json"}
            )
            error = await error_of(response, 422, code)
            assert error["field"] == field
            if field:
                assert error["message"].startswith(field)
    assert await agent.store.list_sessions("bot") == []


async def test_an_unknown_route_is_404_and_a_wrong_method_405_typed():
    async with serving(create_app(fresh_agent())) as client:
        await error_of(await client.get("/nothing/here"), 404, "not_found")
        response = await client.get(RUNS)
        await error_of(response, 405, "method_not_allowed")
        assert "POST" in response.headers["Allow"]


async def test_the_same_session_twice_at_once_is_one_409():
    gate = Gate()
    store = InMemoryStore()
    agent = gated_agent(gate, store=store)
    async with serving(create_app(agent)) as client:
        body = {"input": "go", "session_id": "shared"}
        first = asyncio.create_task(client.post(RUNS, json=body))
        second = asyncio.create_task(client.post(RUNS, json=body))
        done, _ = await asyncio.wait({first, second}, return_when=asyncio.FIRST_COMPLETED)
        busy = done.pop()
        await gate.started.wait()
        before = snapshot(store)
        error = await error_of(await busy, 409, "session_busy")
        assert error["field"] == "session_id"
        # a third one, while the first still runs, changes nothing either
        await error_of(await client.post(RUNS + ":stream", json=body), 409, "session_busy")
        assert snapshot(store) == before
        gate.release.set()
        other = first if busy is second else second
        assert (await other).status == 200
    assert gate.calls == 1


async def test_a_busy_session_in_another_process_is_409():
    store = InMemoryStore()
    agent = fresh_agent(store)
    await store.save("bot", "s1", AgentState())
    assert await store.acquire_lease("bot", "s1", "run-elsewhere", 60)
    async with serving(create_app(agent)) as client:
        before = snapshot(store)
        await error_of(
            await client.post(RUNS, json={"input": "hi", "session_id": "s1"}), 409, "session_busy"
        )
        assert snapshot(store) == before


async def test_a_key_over_its_concurrent_run_limit_is_429():
    gate = Gate()
    store = InMemoryStore()
    agent = gated_agent(gate, store=store)
    config = ServerConfig(max_runs_per_key=1)
    async with serving(create_app(agent, auth=["k1", "k2"], config=config)) as client:
        stream = await client.post(RUNS + ":stream", json={"input": "go"}, headers=bearer("k1"))
        await read_frames_until(stream, "pre_acting")
        before = snapshot(store)
        response = await client.post(RUNS, json={"input": "more"}, headers=bearer("k1"))
        await error_of(response, 429, "too_many_runs")
        assert response.headers["Retry-After"] == "1"
        assert snapshot(store) == before
        gate.release.set()
        await stream.read()
        gate.release.clear()
        # k2 has its own budget; k1 has its slot back
        other = asyncio.create_task(client.post(RUNS, json={"input": "x"}, headers=bearer("k2")))
        await gate.reached(2)
        gate.release.set()
        assert (await other).status == 200


async def test_concurrent_requests_over_the_limit_create_no_session():
    gate = Gate()
    store = InMemoryStore()
    agent = gated_agent(gate, store=store)
    config = ServerConfig(max_runs_per_key=1)
    async with serving(create_app(agent, config=config)) as client:
        bodies = [{"input": "go", "session_id": f"s{i}"} for i in range(4)]
        tasks = [asyncio.create_task(client.post(RUNS, json=body)) for body in bodies]
        await gate.started.wait()
        refused = [t for t in tasks if t.done()]
        while len(refused) < 3:
            done, _ = await asyncio.wait(
                set(tasks) - set(refused), return_when=asyncio.FIRST_COMPLETED
            )
            refused += done
        for task in refused:
            await error_of(task.result(), 429, "too_many_runs")
        gate.release.set()
        (running,) = set(tasks) - set(refused)
        assert (await running).status == 200
    assert len(await store.list_sessions("bot")) == 1


async def test_another_keys_session_is_404_on_every_route():
    store = InMemoryStore()
    agent = ReActAgent("bot", "", ScriptedModel(["mine"]), store=store)
    async with serving(create_app(agent, auth=["alice", "mallory"])) as client:
        created = await client.post(RUNS, json={"input": "hi"}, headers=bearer("alice"))
        session_id = (await created.json())["session_id"]
        before = snapshot(store)
        them = bearer("mallory")
        attempts = [
            client.post(RUNS, json={"input": "x", "session_id": session_id}, headers=them),
            client.post(
                RUNS + ":stream", json={"input": "x", "session_id": session_id}, headers=them
            ),
            client.get(f"/v1/sessions/{session_id}", headers=them),
            client.delete(f"/v1/sessions/{session_id}", headers=them),
            client.post(f"/v1/sessions/{session_id}/interrupt", headers=them),
            client.post(
                f"/v1/sessions/{session_id}/approvals/a1", json={"approved": True}, headers=them
            ),
        ]
        for attempt in attempts:
            await error_of(await attempt, 404, "session_not_found")
        assert snapshot(store) == before
        assert (
            await client.get(f"/v1/sessions/{session_id}", headers=bearer("alice"))
        ).status == 200


@pytest.mark.parametrize(
    ("auth", "message"),
    [
        ([], "no API keys"),
        ("secret", "not a single str"),
        ([""], "non-empty str"),
        ({"k": ""}, "key_id"),
    ],
)
def test_bad_auth_is_a_configuration_error(auth: Any, message: str):
    with pytest.raises(ConfigurationError, match=message):
        create_app(fresh_agent(), auth=auth)


def test_a_key_of_the_wrong_type_is_not_echoed_in_the_error():
    with pytest.raises(ConfigurationError, match="got bytes") as info:
        create_app(fresh_agent(), auth=[b"sk-very-secret"])  # type: ignore[list-item]
    assert "very-secret" not in str(info.value)


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        ([], "non-empty"),
        ("bot", "non-empty"),
        ({"a b": ReActAgent("ok", "", ScriptedModel([]))}, "URL"),
        ([ReActAgent("x", "", ScriptedModel([])), ReActAgent("x", "", ScriptedModel([]))], "named"),
        ({"a": (bot := ReActAgent("bot", "", ScriptedModel([]))), "b": bot}, "share a name"),
    ],
)
def test_bad_agents_are_a_configuration_error(agents: Any, message: str):
    with pytest.raises(ConfigurationError, match=message):
        create_app(agents)


@pytest.mark.parametrize(
    "config",
    [
        {"max_body_bytes": 0},
        {"max_runs_per_key": 0},
        {"keepalive_s": 0},
        {"shutdown_timeout_s": -1},
        {"cors_origins": "https://a.example"},
        {"lease_ttl_s": 0},
    ],
)
def test_bad_config_is_a_configuration_error(config: dict[str, Any]):
    with pytest.raises(ConfigurationError):
        ServerConfig(**config)


def _invalid_run_body(raw: bytes) -> bool:
    try:
        RunRequest.model_validate_json(raw or b"{}")
    except ValidationError:
        return True
    return False


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5), _containers, max_leaves=8
)
bodies = st.one_of(
    st.binary(max_size=40),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries(
        {},
        optional={
            "input": json_values | st.sampled_from([{"role": "user"}, [{"content": "x"}], 5]),
            "session_id": json_values,
            "extra": json_values,
        },
    ).map(lambda v: json.dumps(v).encode()),
    json_values.map(lambda v: json.dumps({"input": "hi", "session_id": v}).encode()),
)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(body=bodies, stream=st.booleans())
def test_any_bad_body_gets_a_typed_4xx_and_never_changes_the_store(body: bytes, stream: bool):
    assume(_invalid_run_body(body))

    async def main() -> None:
        store = InMemoryStore()
        agent = fresh_agent(store)
        async with serving(create_app(agent, config=ServerConfig(max_body_bytes=30))) as client:
            response = await client.post(RUNS + (":stream" if stream else ""), data=body)
            assert 400 <= response.status < 500
            error = (await response.json())["error"]
            assert error["code"] in {"invalid_json", "invalid_body", "body_too_large"}
        assert snapshot(store) == ({}, {})

    asyncio.run(main())
