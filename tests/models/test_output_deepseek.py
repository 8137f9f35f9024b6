"""OpenAI-compatible servers that lack OpenAI's features: DeepSeek, and `capabilities=` for any.

DeepSeek has no `json_schema` response format and no strict tools (outside its beta endpoint), so
`"auto"` structured output must use a non-strict final-answer tool there.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from pydantic import BaseModel

from rxagent import ReActAgent, current_run, hook
from rxagent.errors import ConfigurationError, InvalidInputError
from rxagent.events import PreReasoningEvent
from rxagent.formatters.base import Capabilities
from rxagent.formatters.openai import OpenAIFormatter
from rxagent.models import ModelOptions, OpenAIChatModel, resolve
from rxagent.models.registry import DEEPSEEK_CAPABILITIES
from rxagent.testing import tool_call
from rxagent.testing.providers import FakeOpenAIServer


class City(BaseModel):
    name: str
    population: int | None = None


OSLO = City(name="Oslo", population=700_000)


def _formatter(model: Any) -> OpenAIFormatter:
    assert isinstance(model, OpenAIChatModel)
    formatter = model.formatter
    assert isinstance(formatter, OpenAIFormatter)
    return formatter


# -- the capabilities override ---------------------------------------------------------------------


def test_a_mapping_changes_only_the_fields_it_names():
    fmt = OpenAIFormatter(capabilities={"supports_json_schema": False, "preferred_output": "tool"})
    assert fmt.capabilities == replace(
        OpenAIFormatter.capabilities, supports_json_schema=False, preferred_output="tool"
    )
    assert OpenAIFormatter().capabilities is OpenAIFormatter.capabilities


def test_a_whole_capabilities_replaces_openais():
    mine = Capabilities(supports_tools=False)
    assert OpenAIFormatter(capabilities=mine).capabilities is mine


def test_strict_tools_still_follow_parallel_tool_calls():
    fmt = OpenAIFormatter(capabilities={"supports_vision": False})
    assert not fmt.capabilities_for(ModelOptions()).supports_strict_tools
    serial = fmt.capabilities_for(ModelOptions(parallel_tool_calls=False))
    assert serial.supports_strict_tools
    assert not serial.supports_vision


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"supports_json": False}, "unknown field 'supports_json'"),
        ({"supports_thinking": True}, "unknown field 'supports_thinking'"),
        ({"supports_tools": "no"}, "supports_tools must be True or False"),
        ({"preferred_output": "json"}, "preferred_output must be one of"),
        ({"json_schema_dialect": "draft-7"}, "json_schema_dialect must be one of"),
        (["supports_tools"], "a Capabilities or a mapping"),
    ],
)
def test_bad_capabilities_are_refused_when_the_client_is_built(given: Any, message: str):
    with pytest.raises(ValueError, match=message):
        OpenAIFormatter(capabilities=given)
    with pytest.raises(ConfigurationError, match=message):
        OpenAIChatModel("m", api_key="k", capabilities=given)


# -- the registry ----------------------------------------------------------------------------------


def test_deepseek_clients_have_no_json_schema_and_no_strict_tools(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delenv("DEEPSEEK_BASE_URL", raising=False)
    model = resolve("deepseek:deepseek-chat", api_key="k")
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url == "https://api.deepseek.com"
    caps = _formatter(model).capabilities_for(ModelOptions(parallel_tool_calls=False))
    assert not caps.supports_json_schema
    assert not caps.supports_strict_tools
    assert caps.supports_tools
    assert caps.supports_named_tool_choice
    assert caps.preferred_output == "tool"
    assert _formatter(resolve("openai:gpt-4o", api_key="k")).capabilities.supports_json_schema


def test_a_capabilities_mapping_is_merged_over_deepseeks():
    model = resolve("deepseek:deepseek-chat", api_key="k", capabilities={"supports_vision": False})
    caps = _formatter(model).capabilities
    assert not caps.supports_vision
    assert not caps.supports_json_schema
    whole = Capabilities(supports_tools=False)
    assert _formatter(resolve("deepseek:x", api_key="k", capabilities=whole)).capabilities is whole
    assert dict(DEEPSEEK_CAPABILITIES)["supports_json_schema"] is False  # the preset is unchanged


def test_deepseek_base_url_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DEEPSEEK_BASE_URL", "http://127.0.0.1:9/beta/")
    from_env = resolve("deepseek:deepseek-chat", api_key="k")
    assert isinstance(from_env, OpenAIChatModel)
    assert from_env.base_url == "http://127.0.0.1:9/beta"
    explicit = resolve("deepseek:deepseek-chat", api_key="k", base_url="http://127.0.0.1:8")
    assert isinstance(explicit, OpenAIChatModel)
    assert explicit.base_url == "http://127.0.0.1:8"


# -- end to end ------------------------------------------------------------------------------------


@pytest.mark.parametrize("parallel", [None, False])
async def test_deepseek_structured_output_uses_the_final_answer_tool(
    monkeypatch: pytest.MonkeyPatch, parallel: bool | None
):
    answer = tool_call("final_answer", name="Oslo", population=700_000)
    async with FakeOpenAIServer([answer], chunk_size=5) as server:
        monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek")
        monkeypatch.setenv("DEEPSEEK_BASE_URL", server.base_url)
        agent = ReActAgent("geo", "Answer with facts.", "deepseek:deepseek-chat")
        async with agent:
            result = await agent.call(
                "The capital of Norway?",
                output_type=City,
                options=ModelOptions(parallel_tool_calls=parallel),
            )
    assert result.output == OSLO
    assert result.stop_reason == "final_answer"
    request = server.requests[0]
    assert request.headers["Authorization"] == "Bearer sk-deepseek"
    body = request.body
    assert body["model"] == "deepseek-chat"
    assert "response_format" not in body
    (final,) = body["tools"]
    assert final["function"]["name"] == "final_answer"
    assert "strict" not in final["function"]  # strict tools are DeepSeek beta only
    assert final["function"]["parameters"]["required"] == ["name"]  # not OpenAI strict rules
    assert body["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}


async def test_an_explicit_native_strategy_is_refused_on_deepseek(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
    agent = ReActAgent("geo", "", "deepseek:deepseek-chat")
    with pytest.raises(InvalidInputError, match="JSON-schema mode"):
        await agent.call("?", output_type=City, output_strategy="native")


@pytest.mark.parametrize(
    ("capabilities", "strategy"),
    [
        (None, "native"),
        ({"supports_json_schema": False}, "tool"),
        ({"supports_json_schema": False, "supports_tools": False}, "prompted"),
    ],
)
async def test_a_compatible_server_says_what_it_lacks_in_one_argument(
    capabilities: dict[str, Any] | None, strategy: str
):
    plans: list[str] = []

    @hook(PreReasoningEvent)
    def note_plan(event: PreReasoningEvent) -> None:
        plan = current_run().output_plan
        assert plan is not None
        plans.append(plan.strategy)

    answers: dict[str, Any] = {
        "native": '{"name": "Oslo", "population": 700000}',
        "tool": tool_call("final_answer", name="Oslo", population=700_000),
        "prompted": '{"name": "Oslo", "population": 700000}',
    }
    async with FakeOpenAIServer([answers[strategy]]) as server:
        model = OpenAIChatModel(
            "llama-3.1-8b", base_url=server.base_url, api_key="unused", capabilities=capabilities
        )
        async with model:
            agent = ReActAgent("geo", "", model, hooks=[note_plan])
            result = await agent.call("The capital of Norway?", output_type=City)
    assert result.output == OSLO
    assert plans == [strategy]
    body = server.requests[0].body
    assert ("response_format" in body) is (strategy == "native")
    assert ("tools" in body) is (strategy == "tool")
    assert ("[Response Format]" in body["messages"][0]["content"]) is (strategy == "prompted")
