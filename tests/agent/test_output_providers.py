"""Every structured-output strategy end to end: real clients against the fake provider servers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from rxagent import ErrorEvent, OutputChunkEvent, PostCallEvent, ReActAgent, tool
from rxagent.errors import ErrorCode
from rxagent.events import BaseEvent
from rxagent.models import (
    AnthropicChatModel,
    DashScopeChatModel,
    GeminiChatModel,
    ModelOptions,
    OllamaChatModel,
    OpenAIChatModel,
)
from rxagent.models._http import HTTPChatModel
from rxagent.result import AgentResult
from rxagent.testing import Turn, assert_event_protocol, tool_call
from rxagent.testing.providers import (
    FakeAnthropicServer,
    FakeDashScopeServer,
    FakeGeminiServer,
    FakeOllamaServer,
    FakeOpenAIServer,
    FakeProviderServer,
)


class Forecast(BaseModel):
    city: str
    celsius: float
    note: str | None = None


ANSWER = '{"city": "Rome", "celsius": 21.5, "note": null}'
EXPECTED = Forecast(city="Rome", celsius=21.5)


@tool
def weather(city: str) -> str:
    """Read the thermometer.

    Args:
        city: The city.
    """
    return f"{city}: 21.5 C"


Maker = Callable[..., HTTPChatModel]

OPENAI: Maker = lambda s, **kw: OpenAIChatModel(  # noqa: E731
    "gpt-4o-mini", base_url=s.base_url, api_key="k", context_window=128_000, **kw
)
ANTHROPIC: Maker = lambda s, **kw: AnthropicChatModel(  # noqa: E731
    "claude-sonnet-4-5", base_url=s.base_url, api_key="k", context_window=200_000, **kw
)
GEMINI: Maker = lambda s, **kw: GeminiChatModel(  # noqa: E731
    "gemini-2.5-flash", base_url=s.base_url, api_key="k", context_window=1_000_000, **kw
)
DASHSCOPE: Maker = lambda s, **kw: DashScopeChatModel(  # noqa: E731
    "qwen-plus", base_url=s.base_url, api_key="k", context_window=128_000, **kw
)
OLLAMA: Maker = lambda s, **kw: OllamaChatModel(  # noqa: E731
    "llama3.2", base_url=s.base_url, context_window=128_000, **kw
)


async def run(
    server: FakeProviderServer,
    make: Maker,
    *,
    tools: list[Any] | None = None,
    model_kw: dict[str, Any] | None = None,
    **call: Any,
) -> tuple[list[BaseEvent], AgentResult[Any]]:
    async with server:
        async with make(server, **(model_kw or {})) as model:
            agent = ReActAgent("a", "Report the weather.", model, tools=tools or [])
            events = [e async for e in agent.events("Rome?", output_type=Forecast, **call)]
    assert_event_protocol(events)
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    return events, last.result


def partials(events: list[BaseEvent]) -> list[Any]:
    return [e.partial for e in events if isinstance(e, OutputChunkEvent)]


# -- native --------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_openai_native_strict(stream: bool):
    server = FakeOpenAIServer([ANSWER], chunk_size=5)
    events, result = await run(server, OPENAI, model_kw={"stream": stream})
    assert result.output == EXPECTED
    body = server.requests[0].body
    spec = body["response_format"]["json_schema"]
    assert spec["strict"] is True
    assert spec["name"] == "Forecast"
    assert spec["schema"]["required"] == ["city", "celsius", "note"]
    if stream:
        assert partials(events)[-1].model_dump() == EXPECTED.model_dump()
    else:  # one chunk: one partial, the whole answer
        assert [p.model_dump() for p in partials(events)] == [EXPECTED.model_dump()]


async def test_openai_native_with_tools_and_a_wrapped_root():
    turns: list[Turn] = [tool_call("weather", city="Rome"), '{"value": [' + ANSWER + "]}"]
    server = FakeOpenAIServer(turns)
    async with server:
        async with OPENAI(server) as model:
            agent = ReActAgent("a", "", model, tools=[weather])
            result = await agent.call("Rome?", output_type=list[Forecast])
    assert result.output == [EXPECTED]
    first = server.requests[0].body
    assert [t["function"]["name"] for t in first["tools"]] == ["weather"]
    assert first["response_format"]["json_schema"]["schema"]["required"] == ["value"]


async def test_openai_native_repairs_through_the_server():
    server = FakeOpenAIServer(['{"city": "Rome"}', ANSWER])
    events, result = await run(server, OPENAI)
    assert result.output == EXPECTED
    repair = server.requests[1].body["messages"][-1]
    assert repair["role"] == "user"
    assert "celsius: Field required" in repair["content"]
    assert [e.code for e in events if isinstance(e, ErrorEvent)] == [ErrorCode.OUTPUT_INVALID]


async def test_gemini_native_without_tools():
    server = FakeGeminiServer([ANSWER], chunk_size=6)
    events, result = await run(server, GEMINI)
    assert result.output == EXPECTED
    config = server.requests[0].body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"]["required"] == ["city", "celsius"]
    assert partials(events)


async def test_ollama_native_without_tools():
    server = FakeOllamaServer([ANSWER], chunk_size=6)
    _, result = await run(server, OLLAMA)
    assert result.output == EXPECTED
    assert server.requests[0].body["format"]["required"] == ["city", "celsius"]


# -- tool ----------------------------------------------------------------------------------------


async def test_anthropic_tool_named_then_required_with_tools():
    server = FakeAnthropicServer(
        [tool_call("final_answer", city="Rome", celsius=21.5)], chunk_size=4
    )
    events, result = await run(server, ANTHROPIC)
    assert result.output == EXPECTED
    assert result.stop_reason == "final_answer"
    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "final_answer"}
    assert body["tools"][0]["input_schema"]["type"] == "object"
    assert partials(events)[-1].celsius == 21.5

    turns = [
        tool_call("weather", city="Rome"),
        tool_call("final_answer", city="Rome", celsius=21.5),
    ]
    server = FakeAnthropicServer(turns)
    _, result = await run(server, ANTHROPIC, tools=[weather])
    assert result.output == EXPECTED
    assert result.tools_used == ("weather",)
    assert server.requests[0].body["tool_choice"] == {"type": "any"}
    second = server.requests[1].body["messages"]
    assert second[-1]["content"][0]["type"] == "tool_result"


async def test_anthropic_with_thinking_falls_back_to_auto_choice_and_repair():
    thinking = ModelOptions(extra={"thinking": {"type": "enabled", "budget_tokens": 1024}})
    turns: list[Turn] = [
        "It is warm in Rome.",
        tool_call("final_answer", city="Rome", celsius=21.5),
    ]
    server = FakeAnthropicServer(turns)
    _, result = await run(server, ANTHROPIC, tools=[weather], options=thinking)
    assert result.output == EXPECTED
    first = server.requests[0].body
    assert "tool_choice" not in first
    assert "call the `final_answer` tool" in first["system"][0]["text"]
    repair = server.requests[1].body["messages"][-1]
    assert "do not answer in plain text" in str(repair["content"])


async def test_gemini_with_tools_uses_the_tool_in_any_mode():
    turns = [
        tool_call("weather", city="Rome"),
        tool_call("final_answer", city="Rome", celsius=21.5),
    ]
    server = FakeGeminiServer(turns)
    _, result = await run(server, GEMINI, tools=[weather])
    assert result.output == EXPECTED
    body = server.requests[0].body
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert "generationConfig" not in body
    names = [d["name"] for d in body["tools"][0]["functionDeclarations"]]
    assert names == ["weather", "final_answer"]


async def test_dashscope_tool_named_and_auto_beside_tools():
    server = FakeDashScopeServer([tool_call("final_answer", city="Rome", celsius=21.5)])
    _, result = await run(server, DASHSCOPE)
    assert result.output == EXPECTED
    params = server.requests[0].body["parameters"]
    assert params["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}

    turns = [
        tool_call("weather", city="Rome"),
        tool_call("final_answer", city="Rome", celsius=21.5),
    ]
    server = FakeDashScopeServer(turns)
    _, result = await run(server, DASHSCOPE, tools=[weather])
    assert result.output == EXPECTED
    assert "tool_choice" not in server.requests[0].body["parameters"]


async def test_ollama_with_tools_uses_the_tool_with_auto_choice():
    turns = [
        tool_call("weather", city="Rome"),
        tool_call("final_answer", city="Rome", celsius=21.5),
    ]
    server = FakeOllamaServer(turns)
    _, result = await run(server, OLLAMA, tools=[weather])
    assert result.output == EXPECTED
    body = server.requests[0].body
    assert "format" not in body
    assert [t["function"]["name"] for t in body["tools"]] == ["weather", "final_answer"]


@pytest.mark.parametrize(("parallel", "strict"), [(False, True), (None, False)])
async def test_openai_tool_is_strict_only_without_parallel_calls(parallel, strict):
    server = FakeOpenAIServer([tool_call("final_answer", city="Rome", celsius=21.5, note=None)])
    options = ModelOptions(parallel_tool_calls=parallel)
    _, result = await run(server, OPENAI, tools=[weather], output_strategy="tool", options=options)
    assert result.output == EXPECTED
    function = server.requests[0].body["tools"][1]["function"]
    assert function["name"] == "final_answer"
    assert function.get("strict", False) is strict
    assert server.requests[0].body["tool_choice"] == "required"


# -- prompted ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server_cls", "make"),
    [
        (FakeOpenAIServer, OPENAI),
        (FakeAnthropicServer, ANTHROPIC),
        (FakeGeminiServer, GEMINI),
        (FakeDashScopeServer, DASHSCOPE),
        (FakeOllamaServer, OLLAMA),
    ],
)
async def test_prompted_works_on_every_provider(server_cls: type[FakeProviderServer], make: Maker):
    server = server_cls(["```json\n" + ANSWER + "\n```"], chunk_size=7)
    events, result = await run(server, make, output_strategy="prompted")
    assert result.output == EXPECTED
    assert "[Response Format]" in str(server.requests[0].body)
    assert partials(events)[-1].model_dump() == EXPECTED.model_dump()


async def test_output_invalid_through_a_server():
    server = FakeOpenAIServer(["nope", "no", "never"])
    _, result = await run(server, OPENAI)
    assert result.error is not None
    assert result.error.code == ErrorCode.OUTPUT_INVALID
    assert result.error.raw_output == "never"
    assert len(server.requests) == 3
