"""AnthropicChatModel against FakeAnthropicServer: requests, streams, usage, retries, agents."""

from __future__ import annotations

import time
from typing import Any

import pytest

from rxagent import ReActAgent, tool
from rxagent.errors import (
    AgentRunError,
    AuthenticationError,
    ConfigurationError,
    ContextTooLongError,
    ErrorCode,
    InvalidRequestError,
    ProviderError,
)
from rxagent.events import (
    ErrorEvent,
    PostActingEvent,
    PostCallEvent,
    ReasoningChunkEvent,
    RetryEvent,
)
from rxagent.messages import Msg, ThinkingBlock
from rxagent.models import AnthropicChatModel, ModelOptions, RetryPolicy, resolve
from rxagent.models.base import ModelDelta, TextDelta, Usage
from rxagent.testing import RecordingSleep, Turn, assert_event_protocol, thinking, tool_call
from rxagent.testing.providers import FakeAnthropicServer, Reply


def model_for(server: FakeAnthropicServer, **kwargs: Any) -> AnthropicChatModel:
    return AnthropicChatModel("claude-test", base_url=server.base_url, api_key="sk-ant", **kwargs)


def policy(sleep: RecordingSleep, retries: int = 2) -> RetryPolicy:
    return RetryPolicy(max_retries=retries, sleep=sleep, random=lambda: 0.5)


async def collect(model: AnthropicChatModel, text: str = "Hi") -> list[ModelDelta]:
    return [d async for d in model.stream([Msg.user(text)], [], ModelOptions())]


# -- requests and responses ----------------------------------------------------------------------


async def test_streaming_request_and_response() -> None:
    async with FakeAnthropicServer(["Hello there, friend"] * 2, chunk_size=4) as server:
        async with model_for(server) as model:
            deltas = await collect(model)
            response = await model.complete([Msg.user("again")])
    texts = [d for d in deltas if isinstance(d, TextDelta)]
    assert len(texts) == 5
    assert "".join(d.text for d in texts) == "Hello there, friend"
    sent = server.requests[0]
    assert sent.method == "POST"
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "anthropic-beta" not in sent.headers
    assert "Authorization" not in sent.headers
    assert sent.body == {
        "model": "claude-test",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": True,
    }
    assert response.finish_reason == "stop"
    assert response.usage.requests == 1
    assert response.message.text == "Hello there, friend"


async def test_non_streaming_with_thinking_and_a_tool_call() -> None:
    turn: Turn = [
        thinking("Sum it.", signature="sig=="),
        "Adding.",
        tool_call("add", id="toolu_1", a=1),
    ]
    async with FakeAnthropicServer([turn]) as server:
        async with model_for(server, stream=False) as model:
            response = await model.complete([Msg.user("1?")])
    assert "stream" not in server.requests[0].body
    assert response.message.content[0] == ThinkingBlock(thinking="Sum it.", signature="sig==")
    assert response.message.text == "Adding."
    assert response.message.tool_calls[0].id == "toolu_1"
    assert dict(response.message.tool_calls[0].input) == {"a": 1}
    assert response.finish_reason == "tool_calls"


async def test_version_betas_max_tokens_and_options() -> None:
    async with FakeAnthropicServer(["a", "b"]) as server:
        async with model_for(
            server,
            anthropic_version="2024-10-22",
            betas=["prompt-caching-2024-07-31", "x-1"],
            max_tokens=1000,
        ) as model:
            await model.complete([Msg.user("Hi")])
            await model.complete([Msg.user("Hi")], options=ModelOptions(max_output_tokens=12))
    first, second = server.requests
    assert first.headers["anthropic-version"] == "2024-10-22"
    assert first.headers["anthropic-beta"] == "prompt-caching-2024-07-31,x-1"
    assert first.body["max_tokens"] == 1000
    assert second.body["max_tokens"] == 12


def test_environment_defaults_and_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    model = AnthropicChatModel("claude-x")
    assert model.base_url == "https://api.anthropic.com"
    assert model.api_key == "from-env"
    assert model._url(stream=True) == "https://api.anthropic.com/v1/messages"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    assert AnthropicChatModel("c")._url(stream=False) == "http://127.0.0.1:9/v1/messages"
    assert AnthropicChatModel("c", betas="one")._auth_headers()["anthropic-beta"] == "one"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        AnthropicChatModel("claude-x")
    with pytest.raises(ConfigurationError, match="max_tokens"):
        AnthropicChatModel("claude-x", api_key="k", max_tokens=-5)
    with pytest.raises(ConfigurationError, match="anthropic_version"):
        AnthropicChatModel("claude-x", api_key="k", anthropic_version="")


def test_resolve_builds_the_client() -> None:
    model = resolve("anthropic:claude-x", api_key="k", base_url="http://127.0.0.1:9")
    assert isinstance(model, AnthropicChatModel)
    assert model.model == "claude-x"


@pytest.mark.parametrize("stream", [True, False])
async def test_usage_with_cached_tokens(stream: bool) -> None:
    usage = Usage(
        input_tokens=1200,
        output_tokens=40,
        cache_read_tokens=1000,
        cache_write_tokens=150,
        requests=1,
    )
    async with FakeAnthropicServer([Reply("cached", usage=usage)]) as server:
        async with model_for(server, stream=stream) as model:
            response = await model.complete([Msg.user("Hi")])
    assert response.usage == usage


async def test_cache_breakpoints_reach_the_wire() -> None:
    options = ModelOptions(extra={"cache_breakpoints": ["system", "history"]})
    async with FakeAnthropicServer(["ok"]) as server:
        async with model_for(server, options=options) as model:
            await model.complete([Msg.system("Long prompt"), Msg.user("Hi")])
    body = server.requests[0].body
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_breakpoints" not in body


# -- failures and retries ------------------------------------------------------------------------


async def test_429_with_retry_after_is_retried_after_the_given_wait() -> None:
    sleep = RecordingSleep()
    async with FakeAnthropicServer(["ok"]) as server:
        server.fail(1, status=429, headers={"retry-after": "3"})
        async with model_for(server, max_retries=policy(sleep)) as model:
            response = await model.complete([Msg.user("Hi")])
    assert response.message.text == "ok"
    assert len(server.requests) == 2
    assert sleep.delays == [3.0]
    assert response.usage.requests == 2


async def test_529_overloaded_is_retried_with_backoff() -> None:
    sleep = RecordingSleep()
    async with FakeAnthropicServer(["ok"]) as server:
        server.fail(1, status=529).fail(2, status=529)
        async with model_for(server, max_retries=policy(sleep)) as model:
            response = await model.complete([Msg.user("Hi")])
    assert response.message.text == "ok"
    assert sleep.delays == [0.5, 1.0]


async def test_retries_run_out() -> None:
    sleep = RecordingSleep()
    async with FakeAnthropicServer(["ok"]) as server:
        for n in (1, 2, 3):
            server.fail(n, status=529, message="Overloaded")
        async with model_for(server, max_retries=policy(sleep)) as model:
            with pytest.raises(ProviderError, match="Overloaded") as info:
                await model.complete([Msg.user("Hi")])
    assert info.value.status == 529
    assert info.value.provider_code == "overloaded_error"
    assert len(server.requests) == 3
    assert len(sleep.delays) == 2


@pytest.mark.parametrize(
    ("status", "kind", "cls"),
    [
        (400, None, InvalidRequestError),
        (400, "invalid_request_error", InvalidRequestError),
        (401, None, AuthenticationError),
        (403, None, AuthenticationError),
        (413, None, ContextTooLongError),
    ],
)
async def test_client_errors_are_never_retried(
    status: int, kind: str | None, cls: type[AgentRunError]
) -> None:
    sleep = RecordingSleep()
    async with FakeAnthropicServer(["ok"]) as server:
        server.fail(1, status=status, error_type=kind, message="prompt is too long")
        async with model_for(server, max_retries=policy(sleep)) as model:
            with pytest.raises(cls) as info:
                await model.complete([Msg.user("Hi")])
    assert len(server.requests) == 1
    assert sleep.delays == []
    assert info.value.status == status
    assert not info.value.recoverable


async def test_a_stream_error_before_the_first_delta_is_retried() -> None:
    sleep = RecordingSleep()
    async with FakeAnthropicServer(["fine"]) as server:
        server.fail(1, mid_stream_error=2)  # after message_start and ping
        async with model_for(server, max_retries=policy(sleep)) as model:
            response = await model.complete([Msg.user("Hi")])
    assert response.message.text == "fine"
    assert len(server.requests) == 2
    assert sleep.delays == [0.5]
    assert response.usage.requests == 2  # the first attempt's usage is not counted


async def test_a_stream_error_after_the_first_delta_raises_recoverable() -> None:
    sleep = RecordingSleep()
    seen: list[ModelDelta] = []
    async with FakeAnthropicServer(["a long answer"], chunk_size=2) as server:
        server.fail(1, mid_stream_error=4, message="Overloaded")
        async with model_for(server, max_retries=policy(sleep)) as model:

            async def drain() -> None:
                async for delta in model.stream([Msg.user("Hi")], [], ModelOptions()):
                    seen.append(delta)

            with pytest.raises(ProviderError, match="Overloaded") as info:
                await drain()
    assert info.value.recoverable
    assert info.value.provider_code == "overloaded_error"
    assert [d.text for d in seen if isinstance(d, TextDelta)] == ["a "]
    assert len(server.requests) == 1
    assert sleep.delays == []


async def test_a_dropped_connection_mid_stream_raises_recoverable() -> None:
    async with FakeAnthropicServer(["a long answer"], chunk_size=2) as server:
        server.fail(1, drop_after=5)
        async with model_for(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await collect(model)
    assert info.value.recoverable
    assert info.value.provider == "anthropic"


async def test_a_dropped_connection_before_any_delta_is_retried() -> None:
    sleep = RecordingSleep()
    async with FakeAnthropicServer(["ok"]) as server:
        server.fail(1, drop_after=1)
        async with model_for(server, max_retries=policy(sleep)) as model:
            response = await model.complete([Msg.user("Hi")])
    assert response.message.text == "ok"
    assert len(server.requests) == 2


async def test_a_slow_first_byte_times_out() -> None:
    async with FakeAnthropicServer(["late"]) as server:
        server.fail(1, first_byte_delay=0.4)
        async with model_for(server, timeout=0.1, max_retries=0) as model:
            started = time.monotonic()
            with pytest.raises(ProviderError, match="timeout") as info:
                await model.complete([Msg.user("Hi")])
            assert time.monotonic() - started < 0.35
    assert info.value.recoverable


async def test_an_html_error_page_is_typed() -> None:
    page = b"<html><h1>502 Bad Gateway</h1></html>"
    async with FakeAnthropicServer(["ok"]) as server:
        server.fail(1, status=502, body=page, content_type="text/html")
        async with model_for(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await model.complete([Msg.user("Hi")])
    assert info.value.status == 502
    assert "Bad Gateway" in (info.value.excerpt or "")


async def test_the_fake_server_refuses_requests_anthropic_would_refuse() -> None:
    async with FakeAnthropicServer(["ok"]) as server:
        async with AnthropicChatModel(
            "claude-test", base_url=server.base_url, api_key="k", headers={"x-api-key": ""}
        ) as model:
            with pytest.raises(AuthenticationError, match="x-api-key"):
                await model.complete([Msg.user("Hi")])
        async with model_for(server, options=ModelOptions(extra={"messages": "bad"})) as model:
            with pytest.raises(InvalidRequestError, match="invalid request body"):
                await model.complete([Msg.user("Hi")])
    assert server.remaining == 1
    assert len(server.requests) == 2


# -- through an agent ----------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


async def test_an_agent_run_with_a_tool_call_then_an_answer() -> None:
    turns: list[Turn] = [
        [thinking("Use the tool.", signature="c2ln"), tool_call("add", id="toolu_7", a=2, b=3)],
        "2 + 3 = 5",
    ]
    sleep = RecordingSleep()
    async with FakeAnthropicServer(turns, chunk_size=3) as server:
        server.fail(1, status=429, headers={"retry-after": "0.25"})
        async with model_for(server, max_retries=policy(sleep), context_window=200_000) as model:
            agent = ReActAgent("calc", "You add numbers.", model, tools=[add])
            events = [e async for e in agent.events("What is 2 + 3?")]
    assert_event_protocol(events)
    result = events[-1].result if isinstance(events[-1], PostCallEvent) else None
    assert result is not None
    assert result.ok
    assert result.text == "2 + 3 = 5"
    assert result.tools_used == ("add",)
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert [(e.attempt, e.delay_s, e.code) for e in retries] == [(2, 0.25, ErrorCode.RATE_LIMITED)]
    assert sleep.delays == [0.25]
    assert not [e for e in events if isinstance(e, ErrorEvent)]
    acted = [e for e in events if isinstance(e, PostActingEvent)]
    assert acted[0].tool_call.id == "toolu_7"
    assert acted[0].result.output == "5"
    assert any(isinstance(e, ReasoningChunkEvent) for e in events)
    # request 1 failed (429), 2 played the tool call, 3 carried the result back
    third = server.requests[2].body
    assert third["system"] == [{"type": "text", "text": "You add numbers."}]
    assistant, results = third["messages"][1], third["messages"][2]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "Use the tool.",
        "signature": "c2ln",
    }
    assert assistant["content"][1]["type"] == "tool_use"
    assert results == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_7", "content": "5"}],
    }
    assert third["tools"][0]["name"] == "add"
    assert "input_schema" in third["tools"][0]
    assert result.usage.requests == 3


async def test_a_mid_stream_failure_in_an_agent_run_is_a_recoverable_error_event() -> None:
    async with FakeAnthropicServer(["partial answer", "whole answer"], chunk_size=2) as server:
        server.fail(1, mid_stream_error=4, consume_turn=True)
        async with model_for(server, max_retries=0, context_window=200_000) as model:
            agent = ReActAgent("a", model=model)
            events = [e async for e in agent.events("Hi")]
    assert_event_protocol(events)
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [(e.code, e.recoverable) for e in errors] == [(ErrorCode.PROVIDER_ERROR, True)]
    final = events[-1]
    assert isinstance(final, PostCallEvent)
    assert final.result.ok
    assert final.result.text == "whole answer"
    assert len(server.requests) == 2
