"""/healthz, Prometheus /metrics, the OpenAPI document, and CORS."""

from __future__ import annotations

from typing import Any

import pytest
from openapi_spec_validator import validate
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import bearer, serving  # type: ignore[import-not-found]

from rxagent import ReActAgent, tool
from rxagent.server import ServerConfig, create_app, openapi_document
from rxagent.testing import ScriptedModel, tool_call


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def test_healthz_is_ok_without_auth():
    async with serving(create_app(ReActAgent("bot", "", ScriptedModel([])), auth=["k"])) as client:
        response = await client.get("/healthz")
        assert response.status == 200
        assert await response.json() == {"status": "ok"}


async def test_metrics_count_runs_steps_tools_errors_latency_and_tokens():
    model = ScriptedModel([tool_call("add", a=1, b=2), "3", "second"])
    agent = ReActAgent("bot", "", model, tools=[add])
    failing = ReActAgent("broken", "", ScriptedModel([]))
    async with serving(create_app([agent, failing], auth=["k"])) as client:
        for name in ("bot", "bot", "broken"):
            body = {"input": "go"}
            await client.post(f"/v1/agents/{name}/runs", json=body, headers=bearer("k"))
        await client.post("/v1/agents/nobody/runs", json={"input": "x"}, headers=bearer("k"))
        await client.post("/v1/agents/bot/runs", json={"input": "x"})  # 401
        response = await client.get("/metrics", headers=bearer("k"))
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = await response.text()
    found = samples(text)
    assert found[("rxagent_runs_total", (("agent", "bot"), ("outcome", "ok")))] == 2
    assert found[("rxagent_runs_total", (("agent", "broken"), ("outcome", "error")))] == 1
    assert found[("rxagent_steps_total", (("agent", "bot"),))] == 3
    assert found[("rxagent_tool_calls_total", (("agent", "bot"), ("tool", "add")))] == 1
    error_codes = {labels for (name, labels) in found if name == "rxagent_errors_total"}
    assert any(dict(labels)["agent"] == "broken" for labels in error_codes)
    assert (
        found[("rxagent_api_errors_total", (("code", "agent_not_found"), ("status", "404")))] == 1
    )
    assert found[("rxagent_api_errors_total", (("code", "unauthorized"), ("status", "401")))] == 1
    assert found[("rxagent_run_duration_seconds_count", (("agent", "bot"),))] == 2
    assert found[("rxagent_model_step_duration_seconds_count", (("agent", "bot"),))] == 3
    assert found[("rxagent_tokens_total", (("agent", "bot"), ("direction", "input")))] > 0
    assert found[("rxagent_tokens_total", (("agent", "bot"), ("direction", "output")))] > 0
    assert found[("rxagent_active_runs", (("agent", "bot"),))] == 0


async def test_metrics_need_the_token_unless_public_and_each_app_has_its_own():
    agent = ReActAgent("bot", "", ScriptedModel(["x"]))
    public = create_app(agent, auth=["k"], config=ServerConfig(public_metrics=True))
    async with serving(public) as client:
        await client.post("/v1/agents/bot/runs", json={"input": "hi"}, headers=bearer("k"))
        text = await (await client.get("/metrics")).text()
        assert 'rxagent_runs_total{agent="bot",outcome="ok"} 1.0' in text
    other = ReActAgent("bot", "", ScriptedModel([]))
    async with serving(create_app(other)) as client:
        text = await (await client.get("/metrics")).text()
        assert "rxagent_runs_total{" not in text  # a fresh registry


async def test_the_openapi_document_is_valid_and_covers_the_json_routes():
    agent = ReActAgent("bot", "", ScriptedModel([]))
    async with serving(create_app(agent, auth=["k"])) as client:
        response = await client.get("/openapi.json")
        document: dict[str, Any] = await response.json()
    validate(document)
    assert document["openapi"] == "3.1.0"
    for path, method in [
        ("/v1/agents/{name}/runs", "post"),
        ("/v1/agents/{name}/runs:stream", "post"),
        ("/v1/sessions/{session_id}", "get"),
        ("/v1/sessions/{session_id}", "delete"),
        ("/v1/sessions/{session_id}/interrupt", "post"),
        ("/v1/sessions/{session_id}/approvals/{approval_id}", "post"),
        ("/healthz", "get"),
        ("/metrics", "get"),
    ]:
        assert method in document["paths"][path]
    assert document["security"] == [{"bearer": []}]
    schemas = document["components"]["schemas"]
    assert {"RunRequest", "ErrorBody", "SessionInfo", "ApprovalRequest"} <= set(schemas)


def test_openapi_document_without_auth_and_with_extra_paths():
    extra = {"/v1/extra": {"get": {"responses": {"200": {"description": "ok"}}}}}
    document = openapi_document(extra, version="9", auth=False)
    validate(document)
    assert "security" not in document
    assert "/v1/extra" in document["paths"]
    assert document["info"]["version"] == "9"


async def test_cors_is_off_by_default():
    async with serving(create_app(ReActAgent("bot", "", ScriptedModel(["x"])))) as client:
        preflight = await client.options(
            "/v1/agents/bot/runs",
            headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status == 405
        assert "Access-Control-Allow-Origin" not in preflight.headers
        response = await client.post(
            "/v1/agents/bot/runs", json={"input": "hi"}, headers={"Origin": "https://app.example"}
        )
        assert response.status == 200
        assert "Access-Control-Allow-Origin" not in response.headers


@pytest.mark.parametrize("origins", [["https://app.example"], ["*"]])
async def test_cors_answers_preflights_and_marks_answers_for_allowed_origins(origins: list[str]):
    agent = ReActAgent("bot", "", ScriptedModel(["x", "y"]))
    config = ServerConfig(cors_origins=origins)
    async with serving(create_app(agent, config=config)) as client:
        preflight = await client.options(
            "/v1/agents/bot/runs:stream",
            headers={
                "Origin": "https://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight.status == 204
        assert preflight.headers["Access-Control-Allow-Origin"] == "https://app.example"
        assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
        assert preflight.headers["Access-Control-Allow-Headers"] == "authorization, content-type"
        stream = await client.post(
            "/v1/agents/bot/runs:stream",
            json={"input": "hi"},
            headers={"Origin": "https://app.example"},
        )
        assert stream.headers["Access-Control-Allow-Origin"] == "https://app.example"
        assert "X-Session-Id" in stream.headers["Access-Control-Expose-Headers"]
        await stream.read()
        error = await client.post(
            "/v1/agents/nobody/runs", headers={"Origin": "https://app.example"}
        )
        assert error.headers["Access-Control-Allow-Origin"] == "https://app.example"


async def test_cors_ignores_origins_that_are_not_allowed():
    agent = ReActAgent("bot", "", ScriptedModel(["x"]))
    config = ServerConfig(cors_origins=["https://app.example"])
    async with serving(create_app(agent, config=config)) as client:
        preflight = await client.options(
            "/v1/agents/bot/runs",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status == 403
        assert (await preflight.json())["error"]["code"] == "cors_forbidden"
        assert "Access-Control-Allow-Origin" not in preflight.headers
        response = await client.post(
            "/v1/agents/bot/runs", json={"input": "hi"}, headers={"Origin": "https://evil.example"}
        )
        assert response.status == 200
        assert "Access-Control-Allow-Origin" not in response.headers
