"""What only OpenAIChatModel and AzureOpenAIChatModel do, against FakeOpenAIServer.

What every provider client does is in `test_client_conformance*.py`.
"""

from __future__ import annotations

import aiohttp
import pytest

from rxagent.errors import ConfigurationError, InvalidRequestError, RateLimitedError
from rxagent.messages import Msg, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from rxagent.models import (
    AzureOpenAIChatModel,
    ModelOptions,
    OpenAIChatModel,
    ToolCallDelta,
    ToolSchema,
    resolve,
)
from rxagent.models.retry import RetryPolicy
from rxagent.testing import RecordingSleep, text, tool_call
from rxagent.testing.providers import FakeOpenAIServer


def policy(sleeps: RecordingSleep, retries: int = 2) -> RetryPolicy:
    return RetryPolicy(max_retries=retries, sleep=sleeps, random=lambda: 0.5)


def client(server: FakeOpenAIServer, **kwargs: object) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-4o-mini", base_url=server.base_url, api_key="sk-test", **kwargs)  # type: ignore[arg-type]


ADD = ToolSchema(name="add", description="Add.", parameters={"type": "object"})


# -- requests and responses ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_requests_go_to_chat_completions_and_streams_ask_for_usage(stream: bool) -> None:
    async with FakeOpenAIServer(["ok"]) as server:
        async with client(server, stream=stream) as model:
            await model.complete([Msg.user("sums?")], [ADD])
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gpt-4o-mini"
    assert request.body.get("stream", False) is stream
    assert ("stream_options" in request.body) is stream


async def test_a_whole_response_passes_the_arguments_text_through_as_a_stream_does() -> None:
    raw = ToolUseBlock(id="call_r", name="add", input={}, raw_input='{"a":1,"b":2}')
    async with FakeOpenAIServer([[text("Adding."), raw]]) as server:
        async with client(server, stream=False) as model:
            deltas = [d async for d in model.stream([Msg.user("1+2")], [ADD], ModelOptions())]
    [call] = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert (call.index, call.id, call.name, call.args) == (1, "call_r", "add", '{"a":1,"b":2}')
    assert [d.type for d in deltas] == [
        "text_delta",
        "tool_call_delta",
        "usage_delta",
        "finish_delta",
    ]


async def test_interleaved_parallel_tool_calls() -> None:
    turn = [tool_call("add", a=10, b=20), tool_call("echo", text="hello world")]
    async with FakeOpenAIServer([turn], chunk_size=2, interleave_tool_calls=True) as server:
        async with client(server) as model:
            response = await model.complete([Msg.user("go")])
    assert [(c.name, dict(c.input)) for c in response.message.tool_calls] == [
        ("add", {"a": 10, "b": 20}),
        ("echo", {"text": "hello world"}),
    ]


async def test_the_conversation_goes_out_in_openai_shape() -> None:
    history = [
        Msg.system("Be brief."),
        Msg.user("1 + 2?"),
        Msg.assistant([tool_call("add", id="c1", a=1, b=2)]),
        Msg.tool(ToolResultBlock(id="c1", name="add", output="3")),
    ]
    async with FakeOpenAIServer(["3"]) as server:
        async with client(server, system_role="developer", max_tokens_field="max_tokens") as m:
            await m.complete(history, [ADD], ModelOptions(max_output_tokens=5, seed=1))
    body = server.requests[0].body
    assert [m["role"] for m in body["messages"]] == ["developer", "user", "assistant", "tool"]
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "3"}
    assert body["max_tokens"] == 5
    assert body["seed"] == 1


async def test_deepseek_reasoning_is_sent_back_when_asked() -> None:
    history = [Msg.user("q"), Msg.assistant([ThinkingBlock(thinking="t"), TextBlock(text="a")])]
    async with FakeOpenAIServer(["ok"]) as server:
        async with client(server, reasoning_content=True) as model:
            await model.complete([*history, Msg.user("more")])
    assert server.requests[0].body["messages"][1]["reasoning_content"] == "t"


async def test_organization_and_project_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_env")
    async with FakeOpenAIServer(["ok"]) as server:
        async with client(server, organization="org_1") as model:
            await model.complete([Msg.user("hi")])
    headers = server.requests[0].headers
    assert headers["OpenAI-Organization"] == "org_1"
    assert headers["OpenAI-Project"] == "proj_env"


async def test_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    model = OpenAIChatModel("gpt-4o")
    assert model.base_url == "https://api.openai.com/v1"
    assert model._url(stream=True) == "https://api.openai.com/v1/chat/completions"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1/")
    assert OpenAIChatModel("gpt-4o")._url(stream=False) == "http://127.0.0.1:1/v1/chat/completions"
    with pytest.raises(ConfigurationError, match="system_role"):
        OpenAIChatModel("gpt-4o", system_role="boss")  # type: ignore[arg-type]


# -- Azure -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_azure_deployment_url_and_api_key_header(stream: bool) -> None:
    async with FakeOpenAIServer(["Hi from Azure"]) as server:
        model = AzureOpenAIChatModel(
            "gpt4o-prod", base_url=server.endpoint, api_key="az-key", stream=stream
        )
        async with model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "Hi from Azure"
    [request] = server.requests
    assert request.path == "/openai/deployments/gpt4o-prod/chat/completions"
    assert request.query == {"api-version": "2024-10-21"}
    assert request.headers["api-key"] == "az-key"
    assert "Authorization" not in request.headers
    assert request.body["model"] == "gpt4o-prod"


async def test_azure_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_API_KEY"):
        AzureOpenAIChatModel("d", base_url="http://127.0.0.1:1")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_ENDPOINT"):
        AzureOpenAIChatModel("d")
    async with FakeOpenAIServer(["ok"]) as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.endpoint)
        monkeypatch.setenv("OPENAI_API_VERSION", "2025-01-01-preview")
        model = resolve("azure:my-deployment")
        assert isinstance(model, AzureOpenAIChatModel)
        async with model:
            await model.complete([Msg.user("hi")])
    assert server.requests[0].query["api-version"] == "2025-01-01-preview"
    assert server.requests[0].path == "/openai/deployments/my-deployment/chat/completions"


async def test_the_fake_azure_route_checks_key_and_version() -> None:
    async with FakeOpenAIServer(["never"]) as server:
        url = f"{server.endpoint}/openai/deployments/d/chat/completions"
        body = {"model": "d", "messages": [{"role": "user", "content": "x"}]}
        async with aiohttp.ClientSession() as session:
            async with session.post(url, json=body, params={"api-version": "v"}) as resp:
                assert resp.status == 401
                assert (await resp.json())["error"]["code"] == "401"
            async with session.post(url, json=body, headers={"api-key": "k"}) as resp:
                assert resp.status == 404
    assert len(server.requests) == 2
    assert server.remaining == 1


async def test_azure_errors_carry_the_azure_provider() -> None:
    async with FakeOpenAIServer(["x"]) as server:
        server.fail(1, status=400, error_type="content_filter", message="filtered")
        async with AzureOpenAIChatModel("d", base_url=server.endpoint, api_key="k") as model:
            with pytest.raises(InvalidRequestError) as info:
                await model.complete([Msg.user("hi")])
    assert info.value.provider == "azure"
    assert info.value.provider_code == "content_filter"


# -- registry --------------------------------------------------------------------------------------


async def test_resolve_deepseek(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "ds-key")
    deepseek = resolve("deepseek:deepseek-chat")
    assert isinstance(deepseek, OpenAIChatModel)
    assert deepseek._url(stream=True) == "https://api.deepseek.com/chat/completions"
    assert deepseek.api_key == "ds-key"


# -- retries and failures --------------------------------------------------------------------------


async def test_retry_after_ms_is_the_wait_and_the_error_keeps_it() -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer(["never"]) as server:
        server.fail(1, status=429, headers={"retry-after-ms": "250"})
        server.fail(2, status=429, headers={"retry-after-ms": "10"})
        async with client(server, max_retries=policy(sleeps, retries=1)) as model:
            with pytest.raises(RateLimitedError) as info:
                await model.complete([Msg.user("hi")])
    assert sleeps.delays == [0.25]
    assert info.value.retry_after == 0.01
    assert len(server.requests) == 2


async def test_an_exhausted_quota_is_a_rate_limit_that_is_never_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer(["never"]) as server:
        server.fail(1, status=429, error_type="insufficient_quota", message="quota")
        async with client(server, max_retries=policy(sleeps)) as model:
            with pytest.raises(RateLimitedError) as info:
                await model.complete([Msg.user("hi")])
    err = info.value
    assert (err.status, err.provider_code, err.recoverable) == (429, "insufficient_quota", False)
    assert len(server.requests) == 1
    assert sleeps.delays == []
