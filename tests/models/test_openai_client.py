"""OpenAIChatModel and AzureOpenAIChatModel against FakeOpenAIServer: requests, retries, agents."""

from __future__ import annotations

import aiohttp
import pytest

from rxagent import ReActAgent, tool
from rxagent.errors import (
    AuthenticationError,
    ConfigurationError,
    ContextTooLongError,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
)
from rxagent.events import ErrorEvent, PostCallEvent, ReasoningChunkEvent, RetryEvent
from rxagent.messages import Block, Msg, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from rxagent.models import (
    AzureOpenAIChatModel,
    ModelOptions,
    OpenAIChatModel,
    TextDelta,
    ToolCallDelta,
    ToolSchema,
    Usage,
    resolve,
)
from rxagent.models.retry import RetryPolicy
from rxagent.testing import RecordingSleep, text, thinking, tool_call
from rxagent.testing.providers import FakeOpenAIServer, Fault, Reply


def policy(sleeps: RecordingSleep, retries: int = 2) -> RetryPolicy:
    return RetryPolicy(max_retries=retries, sleep=sleeps, random=lambda: 0.5)


def client(server: FakeOpenAIServer, **kwargs: object) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-4o-mini", base_url=server.base_url, api_key="sk-test", **kwargs)  # type: ignore[arg-type]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


ADD = ToolSchema(name="add", description="Add.", parameters={"type": "object"})


# -- requests and responses ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_text_tool_calls_and_usage(stream: bool) -> None:
    usage = Usage(input_tokens=40, output_tokens=9, cache_read_tokens=32, requests=1)
    turn: list[Block] = [
        text("Adding."),
        tool_call("add", id="call_a", a=1, b=2),
        tool_call("add", a=3, b=4),
    ]
    async with FakeOpenAIServer([Reply(turn, usage=usage)], chunk_size=3) as server:
        async with client(server, stream=stream) as model:
            response = await model.complete([Msg.user("sums?")], [ADD])
    msg = response.message
    assert msg.text == "Adding."
    assert [(c.id, dict(c.input)) for c in msg.tool_calls] == [
        ("call_a", {"a": 1, "b": 2}),
        ("call_1_2", {"a": 3, "b": 4}),
    ]
    assert response.finish_reason == "tool_calls"
    assert response.usage == usage
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.body["model"] == "gpt-4o-mini"
    assert request.body["tools"][0]["function"]["name"] == "add"
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


async def test_streamed_deltas_have_block_indexes_and_thinking() -> None:
    async with FakeOpenAIServer([[thinking("Two and two."), text("Four.")]], chunk_size=4) as s:
        async with client(s) as model:
            deltas = [d async for d in model.stream([Msg.user("2+2")], [], ModelOptions())]
    assert {d.index for d in deltas if d.type == "thinking_delta"} == {0}
    assert [d.text for d in deltas if isinstance(d, TextDelta)] == ["Four", "."]
    assert {d.index for d in deltas if isinstance(d, TextDelta)} == {1}
    assert deltas[-1].type == "finish_delta"


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
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIChatModel("gpt-4o")
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


async def test_resolve_openai_and_deepseek(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeOpenAIServer(["resolved"]) as server:
        model = resolve("openai:gpt-4o-mini", api_key="sk-x", base_url=server.base_url)
        assert isinstance(model, OpenAIChatModel)
        assert model.model == "gpt-4o-mini"
        async with model:
            assert (await model.complete([Msg.user("hi")])).message.text == "resolved"
    monkeypatch.setenv("DEEPSEEK_API_KEY", "ds-key")
    deepseek = resolve("deepseek:deepseek-chat")
    assert isinstance(deepseek, OpenAIChatModel)
    assert deepseek._url(stream=True) == "https://api.deepseek.com/chat/completions"
    assert deepseek.api_key == "ds-key"


async def test_an_agent_built_from_a_model_string_uses_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with FakeOpenAIServer([tool_call("add", a=2, b=3), "5"]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        async with ReActAgent("calc", "Add.", model="openai:gpt-4o-mini", tools=[add]) as agent:
            result = await agent.call("2 + 3?")
    assert result.text == "5"
    assert result.tools_used == ("add",)
    assert server.requests[0].headers["Authorization"] == "Bearer sk-env"


# -- retries and failures --------------------------------------------------------------------------


async def test_429_with_retry_after_is_retried_after_that_delay() -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer(["ok"]) as server:
        server.fail(1, status=429, headers={"retry-after-ms": "250"})
        server.fail(2, status=429, headers={"retry-after": "2"})
        async with client(server, max_retries=policy(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert sleeps.delays == [0.25, 2.0]
    assert len(server.requests) == 3
    assert response.usage.requests == 3  # the answer, plus two failed requests


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault(status=400, message="bad"), InvalidRequestError),
        (Fault(status=401), AuthenticationError),
        (Fault(status=403, message="forbidden"), AuthenticationError),
        (Fault(status=400, error_type="context_length_exceeded"), ContextTooLongError),
        (Fault(status=429, error_type="insufficient_quota"), RateLimitedError),
    ],
)
async def test_errors_that_are_never_retried(fault: Fault, error: type[Exception]) -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer(["ok"]) as server:
        server.fail(1, fault)
        async with client(server, max_retries=policy(sleeps)) as model:
            with pytest.raises(error) as info:
                await model.complete([Msg.user("hi")])
    assert type(info.value) is error
    assert len(server.requests) == 1
    assert sleeps.delays == []
    assert info.value.status == fault.status  # type: ignore[attr-defined]


async def test_a_server_error_before_the_first_delta_is_retried_with_backoff() -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer(["ok"]) as server:
        server.fail(1, status=500, error_type="server_error")
        server.fail(
            2, status=503, body=b"<html>Service Unavailable</html>", content_type="text/html"
        )
        async with client(server, max_retries=policy(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert sleeps.delays == [0.5, 1.0]


async def test_retries_run_out() -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer(["ok"]) as server:
        for n in (1, 2):
            server.fail(n, status=429, headers={"retry-after-ms": "10"})
        async with client(server, max_retries=policy(sleeps, retries=1)) as model:
            with pytest.raises(RateLimitedError) as info:
                await model.complete([Msg.user("hi")])
    assert info.value.retry_after == 0.01
    assert info.value.provider_code == "rate_limit_exceeded"
    assert len(server.requests) == 2


async def test_an_error_event_before_the_first_delta_is_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer(["hello"]) as server:
        server.fail(1, mid_stream_error=0, error_type="server_error", message="overloaded")
        async with client(server, max_retries=policy(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "hello"
    assert len(server.requests) == 2


async def test_a_mid_stream_error_after_the_first_delta_is_recoverable_and_not_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer(["a long enough answer"], chunk_size=2) as server:
        server.fail(1, mid_stream_error=3, error_type="server_error", message="the model crashed")
        async with client(server, max_retries=policy(sleeps)) as model:
            seen: list[str] = []

            async def consume() -> None:
                async for delta in model.stream([Msg.user("hi")], [], ModelOptions()):
                    if isinstance(delta, TextDelta):
                        seen.append(delta.text)

            with pytest.raises(ProviderError, match="the model crashed") as info:
                await consume()
    assert seen == ["a ", "lo"]
    assert info.value.recoverable
    assert info.value.provider_code == "server_error"
    assert len(server.requests) == 1


async def test_a_stream_without_done_ends_early() -> None:
    async with FakeOpenAIServer(["abcdef"], chunk_size=2) as server:
        server.fail(1, drop_after=4)
        async with client(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await model.complete([Msg.user("hi")])
    assert info.value.recoverable


async def test_a_dropped_connection_before_any_delta_is_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer(["ok"]) as server:
        server.fail(1, drop_after=0)
        async with client(server, max_retries=policy(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert len(sleeps.delays) == 1


async def test_a_slow_first_byte_times_out() -> None:
    async with FakeOpenAIServer(["late"]) as server:
        server.fail(1, first_byte_delay=0.3)
        async with client(server, timeout=0.1, max_retries=0) as model:
            with pytest.raises(ProviderError, match="timeout") as info:
                await model.complete([Msg.user("hi")])
    assert info.value.recoverable


async def test_a_non_json_response_is_a_provider_error() -> None:
    async with FakeOpenAIServer(["x"]) as server:
        server.fail(1, status=200, body=b"<html>login page</html>", content_type="text/html")
        async with client(server, stream=False, max_retries=0) as model:
            with pytest.raises(ProviderError, match="not JSON") as info:
                await model.complete([Msg.user("hi")])
    assert info.value.excerpt == "<html>login page</html>"


# -- through an agent ------------------------------------------------------------------------------


async def test_an_agent_run_with_a_tool_call_then_an_answer() -> None:
    async with FakeOpenAIServer([tool_call("add", a=2, b=3), "2 + 3 = 5"]) as server:
        async with client(server) as model:
            agent = ReActAgent("calc", "You add numbers.", model, tools=[add])
            events = [e async for e in agent.events("What is 2 + 3?")]
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.reply.text == "2 + 3 = 5"
    kinds = [e.type for e in events]
    assert kinds[0] == "pre_call"
    assert "pre_acting" in kinds
    assert "post_acting" in kinds
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    call_id = second[2]["tool_calls"][0]["id"]
    assert second[3] == {"role": "tool", "tool_call_id": call_id, "content": "5"}
    assert server.requests[0].body["tools"][0]["function"]["name"] == "add"


async def test_retries_appear_as_run_events() -> None:
    sleeps = RecordingSleep()
    async with FakeOpenAIServer([tool_call("add", a=1, b=2), "3"]) as server:
        server.fail(1, status=429, headers={"retry-after": "2"})
        async with client(server, max_retries=policy(sleeps)) as model:
            agent = ReActAgent("calc", model=model, tools=[add])
            events = [e async for e in agent.events("1 + 2?")]
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert [(r.attempt, r.delay_s, r.code) for r in retries] == [(2, 2.0, "RATE_LIMITED")]
    first_chunk = next(i for i, e in enumerate(events) if isinstance(e, ReasoningChunkEvent))
    assert events.index(retries[0]) < first_chunk
    assert isinstance(events[-1], PostCallEvent)
    assert events[-1].reply.text == "3"


async def test_a_broken_stream_restarts_the_agent_step() -> None:
    async with FakeOpenAIServer(["first try", "second try"], chunk_size=3) as server:
        server.fail(1, mid_stream_error=2, error_type="server_error", consume_turn=True)
        async with client(server, max_retries=0) as model:
            events = [e async for e in ReActAgent("a", model=model).events("go")]
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1
    assert errors[0].recoverable
    assert isinstance(events[-1], PostCallEvent)
    assert events[-1].reply.text == "second try"
    assert len(server.requests) == 2
