"""Structured output over random pydantic models: provider rules, round trips and streaming.

- every provider schema of a random model follows that provider's documented rules and
  validates as the official SDK's request type;
- valid JSON for an instance reads back to an equal object, for every strategy's reader;
- the JSON streamed in random chunk splits gives partial outputs whose last one equals the
  output, and the run's output equals the non-streamed one.
"""

from __future__ import annotations

import json
from typing import Any

from anthropic.types import ToolParam
from google.genai import types as genai
from hypothesis import given
from hypothesis import strategies as st
from ollama._types import ChatRequest
from openai.types.shared_params import ResponseFormatJSONSchema
from pydantic import BaseModel, TypeAdapter

from rxagent import ReActAgent
from rxagent.formatters.anthropic import AnthropicFormatter
from rxagent.formatters.base import Capabilities
from rxagent.formatters.dashscope import DashScopeFormatter
from rxagent.formatters.gemini import GeminiFormatter
from rxagent.formatters.ollama import OllamaFormatter
from rxagent.formatters.openai import OpenAIFormatter
from rxagent.messages import Msg, ToolUseBlock
from rxagent.models import ModelOptions, TextDelta
from rxagent.output import (
    NO_PARTIAL,
    OutputStream,
    ParsedOutput,
    json_schema_for,
    resolve_output,
)
from rxagent.output._schema import GEMINI_KEYWORDS
from rxagent.testing import ScriptedModel
from rxagent.testing import strategies as rst

RESPONSE_FORMAT = TypeAdapter(ResponseFormatJSONSchema)
TOOL_PARAM = TypeAdapter(ToolParam)
SERIAL = ModelOptions(parallel_tool_calls=False)


def nodes(node: Any):
    """Every subschema of a JSON schema (not the property-name mappings themselves)."""
    if not isinstance(node, dict):
        return
    yield node
    for key in ("items", "additionalProperties", "not"):
        yield from nodes(node.get(key))
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for child in node.get(key, ()):
            yield from nodes(child)
    for key in ("properties", "$defs"):
        for child in node.get(key, {}).values():
            yield from nodes(child)


def assert_openai_strict(schema: dict[str, Any]) -> None:
    """OpenAI's "Supported schemas": objects closed and fully required, supported keywords."""
    assert schema["type"] == "object"
    unsupported = {"default", "oneOf", "const", "discriminator", "uniqueItems", "$schema"}
    for node in nodes(schema):
        assert not unsupported & node.keys(), node
        if "$ref" in node:
            assert set(node) == {"$ref"}, node
        if node.get("type") == "object" or "properties" in node:
            assert node["additionalProperties"] is False
            assert list(node["required"]) == list(node["properties"])


def assert_gemini(schema: dict[str, Any]) -> None:
    """The google-genai `response_json_schema` rules, and its `JSONSchema` type."""
    for node in nodes(schema):
        assert node.keys() <= GEMINI_KEYWORDS, node.keys() - GEMINI_KEYWORDS
        if "$ref" in node:
            assert all(key.startswith("$") for key in node), node
        for value in node.get("enum", ()):
            assert isinstance(value, str | int | float)
            assert not isinstance(value, bool)
    genai.JSONSchema.model_validate(schema)
    genai.GenerateContentConfig(response_mime_type="application/json", response_json_schema=schema)


def thawed(value: Any) -> Any:
    return json.loads(json.dumps(value))


@given(rst.output_models())
def test_every_provider_schema_follows_the_provider_rules(case):
    model, _ = case
    openai = resolve_output(model, capabilities=OpenAIFormatter.capabilities)
    assert openai.response_format is not None
    spec = thawed(openai.response_format)
    assert_openai_strict(spec["json_schema"]["schema"])
    RESPONSE_FORMAT.validate_python(spec)

    strict_tool = resolve_output(
        model, strategy="tool", capabilities=OpenAIFormatter().capabilities_for(SERIAL)
    )
    assert strict_tool.tool is not None
    assert strict_tool.tool.strict
    assert_openai_strict(thawed(strict_tool.tool.parameters))

    gemini = resolve_output(model, capabilities=GeminiFormatter.capabilities)
    assert gemini.response_format is not None
    assert_gemini(thawed(gemini.response_format["json_schema"]["schema"]))
    gemini_tool = resolve_output(model, capabilities=GeminiFormatter.capabilities, has_tools=True)
    assert gemini_tool.tool is not None
    assert_gemini(thawed(gemini_tool.tool.parameters))

    anthropic = resolve_output(model, capabilities=AnthropicFormatter.capabilities)
    assert anthropic.tool is not None
    wire = AnthropicFormatter().format(
        [Msg.user("x")], [anthropic.tool], ModelOptions(), model="m", stream=False
    )
    assert wire["tools"][0]["input_schema"]["type"] == "object"
    TOOL_PARAM.validate_python(wire["tools"][0])

    dashscope = resolve_output(
        model, strategy="native", capabilities=DashScopeFormatter().capabilities
    )
    assert dashscope.response_format is not None
    sent = DashScopeFormatter().format(
        [Msg.user("x")],
        [],
        ModelOptions(response_format=dashscope.response_format),
        model="qwen-plus",
        stream=False,
    )["parameters"]["response_format"]
    assert_openai_strict(sent["json_schema"]["schema"])  # DashScope takes OpenAI's form
    RESPONSE_FORMAT.validate_python(sent)

    native = resolve_output(model, capabilities=OllamaFormatter.capabilities)
    assert native.response_format is not None
    body = OllamaFormatter().format(
        [Msg.user("x")],
        [],
        ModelOptions(response_format=native.response_format),
        model="llama3.2",
        stream=False,
    )
    ChatRequest(model="llama3.2", messages=[], format=body["format"])


def _all_caps() -> list[tuple[Capabilities | None, str]]:
    return [
        (OpenAIFormatter.capabilities, "native"),
        (OpenAIFormatter().capabilities_for(SERIAL), "tool"),
        (OpenAIFormatter.capabilities, "tool"),
        (GeminiFormatter.capabilities, "native"),
        (GeminiFormatter.capabilities, "tool"),
        (OllamaFormatter.capabilities, "native"),
        (AnthropicFormatter.capabilities, "tool"),
        (None, "prompted"),
    ]


@given(rst.output_models(), st.sampled_from(_all_caps()))
def test_valid_json_reads_back_to_an_equal_object(case, setting):
    model, instance = case
    capabilities, strategy = setting
    plan = resolve_output(model, strategy=strategy, capabilities=capabilities)
    data = instance.model_dump(mode="json")
    if plan.reader.strict_nulls:  # strict mode sends every property; unset ones as null
        data = {**dict.fromkeys(model.model_fields), **data}
        data = {
            k: v
            for k, v in data.items()
            if v is not None or k in instance.model_fields_set or _admits_none(model, k)
        }
    if plan.tool is not None:
        args = {"value": data} if plan.reader.wrapped else data
        outcome = plan.reader.read_call(ToolUseBlock(id="c", name=plan.tool.name, input=args))
    else:
        text = json.dumps({"value": data} if plan.reader.wrapped else data)
        outcome = plan.reader.read_text(text)
    assert isinstance(outcome, ParsedOutput), outcome
    assert outcome.value == instance


def _admits_none(model: type[BaseModel], name: str) -> bool:
    try:
        model.model_validate({name: None}, strict=False)
    except Exception as exc:  # pydantic's ValidationError: look for this field's own error
        return not any(e["loc"] == (name,) for e in exc.errors())  # type: ignore[attr-defined]
    return True


@given(rst.output_models(), st.data())
def test_partials_of_random_splits_end_at_the_output(case, data):
    model, instance = case
    text = instance.model_dump_json()
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=8)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    plan = resolve_output(model)
    stream = OutputStream(plan)
    seen = [stream.feed(TextDelta(text=chunk)) for chunk in chunks]
    seen.append(stream.close())
    partials = [p for p in seen if p is not NO_PARTIAL]
    assert partials, text
    assert all(isinstance(p, plan.partial.type) for p in partials)
    whole = OutputStream(plan)
    once = [p for p in (whole.feed(TextDelta(text=text)), whole.close()) if p is not NO_PARTIAL]
    assert partials[-1] == once[-1]
    assert partials[-1].model_dump(mode="json") == instance.model_dump(mode="json")
    parsed = plan.reader.read_text(text)
    assert isinstance(parsed, ParsedOutput)
    assert parsed.value == instance


@given(rst.output_models(), st.integers(1, 12))
async def test_streamed_runs_give_the_non_streamed_output(case, chunk_size):
    model, instance = case
    text = instance.model_dump_json()
    streamed = ReActAgent("a", "", ScriptedModel([text], chunk_size=chunk_size))
    whole = ReActAgent("a", "", ScriptedModel([text], chunk_size=max(1, len(text))))
    first = await streamed.call("go", output_type=model)
    second = await whole.call("go", output_type=model)
    assert first.output == second.output == instance
    tools = ReActAgent(
        "a",
        "",
        ScriptedModel(
            [ToolUseBlock(id="", name="final_answer", input=json.loads(text))],
            chunk_size=chunk_size,
            capabilities=AnthropicFormatter.capabilities,
        ),
    )
    assert (await tools.call("go", output_type=model)).output == instance
    assert json_schema_for(model)
