"""`resolve_output`: the strategy per provider and settings, and what each request carries."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from pydantic import BaseModel, Field

from rxagent.errors import ConfigurationError
from rxagent.formatters.anthropic import AnthropicFormatter
from rxagent.formatters.base import Capabilities
from rxagent.formatters.dashscope import DashScopeFormatter
from rxagent.formatters.gemini import GeminiFormatter
from rxagent.formatters.ollama import OllamaFormatter
from rxagent.formatters.openai import OpenAIFormatter
from rxagent.messages import Msg, TextBlock, ToolUseBlock
from rxagent.models import ModelOptions, ToolSchema
from rxagent.output import (
    FINAL_ANSWER_TOOL,
    REPAIR_METADATA,
    RESPONSE_FORMAT_HEADER,
    OutputFailure,
    resolve_output,
)


class City(BaseModel):
    """A city."""

    name: str
    population: int | None = None


THINKING = ModelOptions(extra={"thinking": {"type": "enabled", "budget_tokens": 1024}})


def caps(formatter: Any, options: ModelOptions | None = None) -> Capabilities:
    found: Capabilities = formatter.capabilities_for(options or ModelOptions())
    return found


@pytest.mark.parametrize(
    ("capabilities", "has_tools", "strategy", "alone", "beside"),
    [
        (OpenAIFormatter.capabilities, False, "native", None, None),
        (OpenAIFormatter.capabilities, True, "native", None, None),
        (GeminiFormatter.capabilities, False, "native", None, None),
        (GeminiFormatter.capabilities, True, "tool", FINAL_ANSWER_TOOL, "required"),
        (OllamaFormatter.capabilities, False, "native", None, None),
        (OllamaFormatter.capabilities, True, "tool", None, None),
        (AnthropicFormatter.capabilities, False, "tool", FINAL_ANSWER_TOOL, "required"),
        (AnthropicFormatter.capabilities, True, "tool", FINAL_ANSWER_TOOL, "required"),
        (caps(AnthropicFormatter(), THINKING), False, "tool", None, None),
        (caps(AnthropicFormatter(), THINKING), True, "tool", None, None),
        (DashScopeFormatter().capabilities, False, "tool", FINAL_ANSWER_TOOL, None),
        (DashScopeFormatter().capabilities, True, "tool", FINAL_ANSWER_TOOL, None),
        (
            caps(DashScopeFormatter(), ModelOptions(extra={"enable_thinking": True})),
            False,
            "tool",
            None,
            None,
        ),
        (None, False, "prompted", None, None),
        (None, True, "prompted", None, None),
    ],
)
def test_auto_picks_by_capabilities_and_settings(capabilities, has_tools, strategy, alone, beside):
    plan = resolve_output(City, capabilities=capabilities, has_tools=has_tools)
    assert plan.strategy == strategy
    assert plan.requested == "auto"
    assert plan.reason
    if strategy == "tool":
        assert (plan.choice_alone, plan.choice_with_tools) == (alone, beside)
        forced = beside if has_tools else alone
        # a model left free to answer in text is asked for the tool in the system prompt
        assert (plan.instructions is None) == (forced is not None)


def test_auto_falls_back_to_prompted_without_tools():
    bare = Capabilities(supports_tools=False, preferred_output="tool")
    assert resolve_output(City, capabilities=bare).strategy == "prompted"
    no_schema = Capabilities(preferred_output="native")
    plan = resolve_output(City, capabilities=no_schema)
    assert plan.strategy == "tool"
    assert "JSON-schema" in plan.reason


def test_explicit_strategies_are_used_or_refused():
    anthropic = AnthropicFormatter.capabilities
    assert resolve_output(City, strategy="prompted", capabilities=anthropic).strategy == "prompted"
    with pytest.raises(ConfigurationError, match="output_strategy='native' needs"):
        resolve_output(City, strategy="native", capabilities=anthropic)
    with pytest.raises(ConfigurationError, match="output_strategy='tool' needs"):
        resolve_output(City, strategy="tool", capabilities=Capabilities(supports_tools=False))
    with pytest.raises(ConfigurationError, match="output_strategy must be one of"):
        resolve_output(City, strategy="json")  # type: ignore[arg-type]
    # an explicit strategy on a model that declares nothing is trusted
    assert resolve_output(City, strategy="native").strategy == "native"
    gemini = GeminiFormatter.capabilities
    assert resolve_output(
        City, strategy="native", capabilities=gemini, has_tools=True
    ).strategy == ("native")


def test_a_response_format_in_the_options_conflicts_with_native():
    options = ModelOptions(response_format={"type": "json_object"})
    with pytest.raises(ConfigurationError, match="response_format"):
        resolve_output(City, capabilities=OpenAIFormatter.capabilities, options=options)
    plan = resolve_output(City, strategy="prompted", options=options)
    assert plan.strategy == "prompted"


def test_native_openai_is_strict_and_named_after_the_type():
    plan = resolve_output(City, capabilities=OpenAIFormatter.capabilities)
    fmt = plan.response_format
    assert fmt is not None
    assert fmt["type"] == "json_schema"
    spec = fmt["json_schema"]
    assert spec["name"] == "City"
    assert spec["strict"] is True
    assert list(spec["schema"]["required"]) == ["name", "population"]
    assert plan.reader.strict_nulls
    tools, options = plan.request((), ModelOptions(temperature=0.5))
    assert tools == ()
    assert options.response_format == fmt
    assert options.temperature == 0.5
    # the request carries the response format as OpenAI takes it
    body = OpenAIFormatter().format([Msg.user("x")], tools, options, model="m", stream=False)
    assert body["response_format"]["json_schema"]["schema"]["additionalProperties"] is False


def test_native_falls_back_to_a_non_strict_schema_for_free_form_mappings():
    plan = resolve_output(dict[str, int], capabilities=OpenAIFormatter.capabilities)
    assert plan.response_format is not None
    spec = plan.response_format["json_schema"]
    assert spec["strict"] is False
    assert spec["name"] == "output"
    assert spec["schema"]["type"] == "object"
    tool_plan = resolve_output(
        dict[str, int],
        strategy="tool",
        capabilities=caps(OpenAIFormatter(), ModelOptions(parallel_tool_calls=False)),
    )
    assert tool_plan.tool is not None
    assert not tool_plan.tool.strict


def test_native_gemini_and_ollama_schemas():
    gemini = resolve_output(list[City], capabilities=GeminiFormatter.capabilities)
    assert gemini.response_format is not None
    schema = gemini.response_format["json_schema"]["schema"]
    assert schema["type"] == "array"
    assert not gemini.reader.wrapped
    assert "default" not in schema["$defs"]["City"]["properties"]["population"]
    ollama = resolve_output(City, capabilities=OllamaFormatter.capabilities)
    assert ollama.response_format is not None
    assert (
        ollama.response_format["json_schema"]["schema"]["properties"]["population"]["default"]
        is None
    )


def test_a_non_object_output_is_wrapped_for_openai():
    plan = resolve_output(list[int], capabilities=OpenAIFormatter.capabilities)
    assert plan.reader.wrapped
    assert plan.provider_schema.schema["required"] == ["value"]


def test_tool_plan_offers_the_final_answer_tool():
    plan = resolve_output(City, capabilities=AnthropicFormatter.capabilities)
    assert plan.tool is not None
    assert plan.tool.name == FINAL_ANSWER_TOOL
    assert plan.tool.description.endswith("The answer: A city.")
    assert plan.tool.parameters["type"] == "object"
    add = ToolSchema(name="add")
    tools, options = plan.request((add,), ModelOptions())
    assert [t.name for t in tools] == ["add", FINAL_ANSWER_TOOL]
    assert options.tool_choice == "required"
    tools, options = plan.request((), ModelOptions())
    assert options.tool_choice == FINAL_ANSWER_TOOL
    _, kept = plan.request((add,), ModelOptions(tool_choice="auto"))
    assert kept.tool_choice == "auto"  # the run's own choice wins


def test_the_final_answer_tool_avoids_the_runs_tool_names():
    plan = resolve_output(
        City, strategy="tool", tool_names=("final_answer", "final_answer_2"), has_tools=True
    )
    assert plan.tool is not None
    assert plan.tool.name == "final_answer_3"
    assert plan.choice_alone == "final_answer_3"
    assert plan.choice_with_tools == "required"


def test_strict_tools_only_without_parallel_calls():
    serial = caps(OpenAIFormatter(), ModelOptions(parallel_tool_calls=False))
    plan = resolve_output(City, strategy="tool", capabilities=serial)
    assert plan.tool is not None
    assert plan.tool.strict
    assert plan.tool.parameters["additionalProperties"] is False
    parallel = resolve_output(
        City, strategy="tool", capabilities=caps(OpenAIFormatter(), ModelOptions())
    )
    assert parallel.tool is not None
    assert not parallel.tool.strict
    assert "additionalProperties" not in parallel.tool.parameters


def test_gemini_tool_parameters_follow_gemini_rules():
    plan = resolve_output(list[City], capabilities=GeminiFormatter.capabilities, has_tools=True)
    assert plan.tool is not None
    params = plan.tool.parameters
    assert params["type"] == "object"
    assert list(params["required"]) == ["value"]
    assert "default" not in params["$defs"]["City"]["properties"]["population"]


def test_prompted_plan_adds_the_response_format_section():
    plan = resolve_output(City)
    assert plan.strategy == "prompted"
    assert plan.instructions is not None
    assert plan.system_prompt("Be brief.") == f"Be brief.\n\n{plan.instructions}"
    assert plan.system_prompt("") == plan.instructions
    assert plan.instructions.startswith(
        f"{RESPONSE_FORMAT_HEADER}\nYou MUST respond with valid JSON only.\n\nExpected JSON schema:"
    )
    tools, options = plan.request((ToolSchema(name="add"),), ModelOptions())
    assert [t.name for t in tools] == ["add"]
    assert options == ModelOptions()
    native = resolve_output(City, strategy="native")
    assert native.system_prompt("Be brief.") == "Be brief."


def test_remembered_turns_final_answer_calls_into_text():
    plan = resolve_output(list[int], strategy="tool")
    call = ToolUseBlock(id="c1", name=FINAL_ANSWER_TOOL, input={"value": [1, 2]})
    other = ToolUseBlock(id="c2", name="add", input={})
    response = Msg.assistant([TextBlock(text="Done."), call, other])
    kept = plan.remembered(response)
    assert kept.id == response.id
    assert kept.text == "Done.[1, 2]"
    assert kept.tool_calls == (other,)
    assert plan.final_calls(response) == (call,)
    raw = ToolUseBlock(id="c3", name=FINAL_ANSWER_TOOL, raw_input="[1,")
    assert plan.remembered(Msg.assistant([raw])).text == "[1,"
    text_only = Msg.assistant("hi")
    assert plan.remembered(text_only) is text_only
    prompted = resolve_output(int)
    assert prompted.remembered(response) is response
    assert prompted.final_calls(response) == ()


def test_repair_messages_name_the_fix():
    failure = OutputFailure("x", ({"type": "missing", "loc": ["name"], "msg": "Field required"},))
    tool = resolve_output(City, strategy="tool")
    called = tool.repair_message(failure, called=True)
    assert called.role == "user"
    assert called.metadata[REPAIR_METADATA] is True
    assert "name: Field required" in called.text
    assert "Call the `final_answer` tool again" in called.text
    assert "do not answer in plain text" in tool.repair_message(failure, called=False).text
    text = resolve_output(City).repair_message(failure, called=False)
    assert "only the corrected JSON value" in text.text


def test_bad_types_are_refused():
    class Plain:
        pass

    with pytest.raises(ConfigurationError, match="cannot be described as a JSON schema"):
        resolve_output(Plain)


def test_field_descriptions_reach_the_schema():
    class Described(BaseModel):
        when: str = Field(description="ISO date")

    plan = resolve_output(Described, strategy="tool", capabilities=AnthropicFormatter.capabilities)
    assert plan.tool is not None
    assert plan.tool.parameters["properties"]["when"]["description"] == "ISO date"
    assert replace(AnthropicFormatter.capabilities).preferred_output == "tool"
