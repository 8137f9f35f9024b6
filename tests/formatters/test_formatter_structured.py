"""Structured output at the formatters: capability flags per request, and the request mapping."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionToolParam
from pydantic import BaseModel, TypeAdapter

from rxagent.errors import InvalidRequestError
from rxagent.formatters.anthropic import AnthropicFormatter
from rxagent.formatters.base import Capabilities, capabilities_for
from rxagent.formatters.dashscope import DashScopeFormatter
from rxagent.formatters.gemini import GeminiFormatter
from rxagent.formatters.ollama import OllamaFormatter
from rxagent.formatters.openai import OpenAIFormatter
from rxagent.messages import Msg, thaw
from rxagent.models import ModelOptions, ToolSchema
from rxagent.output import resolve_output


class City(BaseModel):
    name: str
    population: int | None = None


USER = [Msg.user("Capital of Norway?")]


def body(fmt: Any, tools: Any = (), options: ModelOptions | None = None) -> dict[str, Any]:
    built: dict[str, Any] = fmt.format(
        USER, list(tools), options or ModelOptions(), model="m", stream=False
    )
    return built


@pytest.mark.parametrize(
    ("fmt", "preferred", "json_schema", "required", "named", "with_tools", "dialect"),
    [
        (OpenAIFormatter(), "native", True, True, True, True, "openai_strict"),
        (GeminiFormatter(), "native", True, True, True, False, "gemini"),
        (OllamaFormatter(), "native", True, False, False, False, "json_schema"),
        (AnthropicFormatter(), "tool", False, True, True, False, "json_schema"),
        (DashScopeFormatter(), "tool", True, False, True, False, "openai_strict"),
        (DashScopeFormatter(multimodal=True), "tool", True, False, True, False, "openai_strict"),
    ],
)
def test_capability_flags(fmt, preferred, json_schema, required, named, with_tools, dialect):
    caps = fmt.capabilities
    assert caps.preferred_output == preferred
    assert caps.supports_json_schema is json_schema
    assert caps.supports_tool_choice_required is required
    assert caps.supports_named_tool_choice is named
    assert caps.supports_json_schema_with_tools is with_tools
    assert caps.json_schema_dialect == dialect
    assert capabilities_for(fmt, ModelOptions()) is not None


def test_settings_change_capabilities():
    anthropic = AnthropicFormatter()
    for kind in ("enabled", "adaptive"):
        on = capabilities_for(anthropic, ModelOptions(extra={"thinking": {"type": kind}}))
        assert on is not None
        assert not on.supports_tool_choice_required
        assert not on.supports_named_tool_choice
    off = capabilities_for(anthropic, ModelOptions(extra={"thinking": {"type": "disabled"}}))
    assert off is anthropic.capabilities
    openai = OpenAIFormatter()
    assert capabilities_for(openai, ModelOptions(parallel_tool_calls=True)) == Capabilities(
        **{**vars_of(openai.capabilities), "supports_strict_tools": False}
    )
    serial = capabilities_for(openai, ModelOptions(parallel_tool_calls=False))
    assert serial is openai.capabilities
    dashscope = DashScopeFormatter()
    assert capabilities_for(dashscope, ModelOptions(extra={"enable_thinking": False})) is (
        dashscope.capabilities
    )
    gemini = GeminiFormatter()
    assert capabilities_for(gemini, ModelOptions()) is gemini.capabilities


def vars_of(caps: Capabilities) -> dict[str, Any]:
    return {name: getattr(caps, name) for name in caps.__dataclass_fields__}


def test_capabilities_for_other_objects():
    class Declares:
        capabilities = Capabilities(preferred_output="tool")

    class Wrong:
        capabilities = "everything"

    class Method:
        def capabilities_for(self, options: ModelOptions) -> object:
            return "nope"

    assert capabilities_for(Declares(), ModelOptions()) == Capabilities(preferred_output="tool")
    assert capabilities_for(Wrong(), ModelOptions()) is None
    assert capabilities_for(Method(), ModelOptions()) is None


def test_openai_sends_the_strict_response_format_and_strict_tools():
    plan = resolve_output(City, capabilities=OpenAIFormatter.capabilities)
    _, options = plan.request((), ModelOptions())
    sent = body(OpenAIFormatter(), options=options)["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["name"] == "City"
    serial = ModelOptions(parallel_tool_calls=False)
    tool_plan = resolve_output(
        City, strategy="tool", capabilities=OpenAIFormatter().capabilities_for(serial)
    )
    tools, options = tool_plan.request((), serial)
    wire = body(OpenAIFormatter(), tools, options)
    function = wire["tools"][0]["function"]
    assert function["strict"] is True
    assert function["name"] == "final_answer"
    assert wire["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}
    TypeAdapter(ChatCompletionToolParam).validate_python(wire["tools"][0])
    _, read_tools, _ = OpenAIFormatter().parse_request(wire)
    assert read_tools[0].strict
    assert read_tools[0].name == tools[0].name
    assert thaw(read_tools[0].parameters) == thaw(tools[0].parameters)


def test_non_strict_tools_send_no_strict_field():
    wire = body(OpenAIFormatter(), [ToolSchema(name="add")])
    assert "strict" not in wire["tools"][0]["function"]
    _, read_tools, _ = OpenAIFormatter().parse_request(wire)
    assert not read_tools[0].strict


def test_gemini_sends_the_schema_as_response_json_schema():
    plan = resolve_output(list[City], capabilities=GeminiFormatter.capabilities)
    _, options = plan.request((), ModelOptions())
    config = body(GeminiFormatter(), options=options)["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"]["type"] == "array"


def test_gemini_tool_choice_names_the_final_answer_tool():
    plan = resolve_output(City, strategy="tool", capabilities=GeminiFormatter.capabilities)
    tools, options = plan.request((), ModelOptions())
    wire = body(GeminiFormatter(), tools, options)
    assert wire["toolConfig"]["functionCallingConfig"] == {
        "mode": "ANY",
        "allowedFunctionNames": ["final_answer"],
    }


def test_ollama_sends_the_schema_as_format():
    plan = resolve_output(City, capabilities=OllamaFormatter.capabilities)
    _, options = plan.request((), ModelOptions())
    wire = body(OllamaFormatter(), options=options)
    assert wire["format"]["title"] == "City"


def test_dashscope_native_and_tool_requests():
    plan = resolve_output(City, strategy="native", capabilities=DashScopeFormatter().capabilities)
    _, options = plan.request((), ModelOptions())
    params = body(DashScopeFormatter(), options=options)["parameters"]
    assert params["response_format"]["json_schema"]["strict"] is True
    tool_plan = resolve_output(City, capabilities=DashScopeFormatter().capabilities)
    tools, options = tool_plan.request((), ModelOptions())
    params = body(DashScopeFormatter(), tools, options)["parameters"]
    assert params["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}


def test_anthropic_tool_requests_and_refused_response_format():
    plan = resolve_output(City, capabilities=AnthropicFormatter.capabilities)
    tools, options = plan.request((ToolSchema(name="add"),), ModelOptions())
    wire = body(AnthropicFormatter(), tools, options)
    assert wire["tool_choice"] == {"type": "any"}
    final = wire["tools"][1]
    assert final["name"] == "final_answer"
    assert final["input_schema"]["type"] == "object"
    TypeAdapter(ToolParam).validate_python(final)
    with pytest.raises(InvalidRequestError, match="response_format"):
        body(AnthropicFormatter(), options=ModelOptions(response_format={"type": "json_object"}))


def test_capabilities_is_the_chat_model_seams_class_under_every_name():
    import rxagent.formatters
    import rxagent.formatters.base
    import rxagent.models
    import rxagent.models.base

    assert Capabilities is rxagent.models.base.Capabilities
    assert rxagent.formatters.Capabilities is rxagent.models.base.Capabilities
    assert rxagent.models.Capabilities is rxagent.models.base.Capabilities
    assert rxagent.formatters.base.OutputMode is rxagent.models.base.OutputMode
    assert rxagent.formatters.base.SchemaDialect is rxagent.models.base.SchemaDialect
