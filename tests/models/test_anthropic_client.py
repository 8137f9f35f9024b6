"""What only AnthropicChatModel does, against FakeAnthropicServer.

What every provider client does is in `test_client_conformance*.py`.
"""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import ReActAgent, tool
from rxagent.errors import (
    AuthenticationError,
    ConfigurationError,
    InvalidRequestError,
    ProviderError,
)
from rxagent.messages import Msg, ThinkingBlock
from rxagent.models import AnthropicChatModel, ModelOptions, RetryPolicy
from rxagent.models.base import ModelDelta
from rxagent.testing import RecordingSleep, Turn, thinking, tool_call
from rxagent.testing.providers import FakeAnthropicServer


def model_for(server: FakeAnthropicServer, **kwargs: Any) -> AnthropicChatModel:
    return AnthropicChatModel("claude-test", base_url=server.base_url, api_key="sk-ant", **kwargs)


def policy(sleep: RecordingSleep, retries: int = 2) -> RetryPolicy:
    return RetryPolicy(max_retries=retries, sleep=sleep, random=lambda: 0.5)


async def collect(model: AnthropicChatModel, text: str = "Hi") -> list[ModelDelta]:
    return [d async for d in model.stream([Msg.user(text)], [], ModelOptions())]


# -- requests and responses ----------------------------------------------------------------------


async def test_the_request_as_anthropic_expects_it() -> None:
    async with FakeAnthropicServer(["Hello there, friend"], chunk_size=4) as server:
        async with model_for(server) as model:
            await collect(model)
    [sent] = server.requests
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


@pytest.mark.parametrize("stream", [True, False])
async def test_thinking_keeps_its_signature(stream: bool) -> None:
    turn: Turn = [thinking("Sum it.", signature="sig=="), "Adding."]
    async with FakeAnthropicServer([turn], chunk_size=3) as server:
        async with model_for(server, stream=stream) as model:
            response = await model.complete([Msg.user("1?")])
    assert ("stream" in server.requests[0].body) is stream
    assert response.message.content[0] == ThinkingBlock(thinking="Sum it.", signature="sig==")


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
    with pytest.raises(ConfigurationError, match="max_tokens"):
        AnthropicChatModel("claude-x", api_key="k", max_tokens=-5)
    with pytest.raises(ConfigurationError, match="anthropic_version"):
        AnthropicChatModel("claude-x", api_key="k", anthropic_version="")


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


async def test_529_overloaded_is_retried_with_backoff_until_retries_run_out() -> None:
    sleep = RecordingSleep()
    async with FakeAnthropicServer(["ok"]) as server:
        for n in (1, 2, 3):
            server.fail(n, status=529, message="Overloaded")
        async with model_for(server, max_retries=policy(sleep)) as model:
            with pytest.raises(ProviderError, match="Overloaded") as info:
                await model.complete([Msg.user("Hi")])
    assert (info.value.status, info.value.provider_code) == (529, "overloaded_error")
    assert info.value.recoverable
    assert len(server.requests) == 3
    assert sleep.delays == [0.5, 1.0]


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


async def test_an_agent_sends_back_signed_thinking_and_results_as_user_content() -> None:
    turns: list[Turn] = [
        [thinking("Use the tool.", signature="c2ln"), tool_call("add", id="toolu_7", a=2, b=3)],
        "2 + 3 = 5",
    ]
    async with FakeAnthropicServer(turns, chunk_size=3) as server:
        async with model_for(server, context_window=200_000) as model:
            agent = ReActAgent("calc", "You add numbers.", model, tools=[add])
            result = await agent.call("What is 2 + 3?")
    assert result.text == "2 + 3 = 5"
    second = server.requests[1].body
    assert second["system"] == [{"type": "text", "text": "You add numbers."}]
    assistant, results = second["messages"][1], second["messages"][2]
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
    assert "input_schema" in second["tools"][0]
