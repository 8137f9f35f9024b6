"""Choosing how a run asks for structured output, and what that changes in each request.

`resolve_output` turns an output type, the requested strategy and what the model can do (its
formatter's `Capabilities` for the run's options) into an `OutputPlan`: the strategy used, the
provider schema, the final-answer tool or `response_format`, the tool choice and the system
prompt section. The loop applies the plan to every request and reads answers with its
`OutputReader`.

The choice of `output_strategy="auto"` (each step is documented on `resolve_output`):

| model | no tools in the run | with tools |
|---|---|---|
| OpenAI | native | native |
| Gemini | native | tool (required) |
| Ollama | native | tool (auto + repair) |
| Anthropic | tool (named) | tool (required) |
| Anthropic, thinking on | tool (auto + repair) | tool (auto + repair) |
| DashScope | tool (named) | tool (auto + repair) |
| DashScope, thinking on | tool (auto + repair) | tool (auto + repair) |
| unknown (test models) | prompted | prompted |
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import ConfigurationError
from rxagent.messages import freeze
from rxagent.models.base import ModelOptions, ToolSchema
from rxagent.output._partial_type import PartialOutput
from rxagent.output._plan import (
    FINAL_ANSWER_TOOL,
    OUTPUT_STRATEGIES,
    RESPONSE_FORMAT_HEADER,
    OutputPlan,
    OutputStrategy,
)
from rxagent.output._read import OutputReader
from rxagent.output._schema import (
    ProviderSchema,
    gemini_schema,
    json_schema_for,
    object_root,
    openai_strict_schema,
)

if TYPE_CHECKING:
    from collections.abc import Collection

    from rxagent.models.base import Capabilities, OutputMode

__all__ = ["resolve_output"]

_NAME_CHARS: Final = re.compile(r"[^a-zA-Z0-9_-]+")


def resolve_output(
    output_type: Any,
    *,
    strategy: OutputStrategy = "auto",
    capabilities: Capabilities | None = None,
    options: ModelOptions | None = None,
    has_tools: bool = False,
    tool_names: Collection[str] = (),
) -> OutputPlan:
    """Decide how a run asks for `output_type`, and build what each request carries.

    With `strategy="auto"` the model's `capabilities` decide (None means unknown: a test model,
    say):

    1. start from `capabilities.preferred_output` (`"prompted"` when unknown);
    2. native needs `supports_json_schema`, and, when the run has tools,
       `supports_json_schema_with_tools`; otherwise use tool;
    3. tool needs `supports_tools`; otherwise use prompted.

    An explicit strategy is used as asked; native on a model without a JSON-schema mode, or tool
    on one without tools, is refused.

    The tool strategy forces the tool choice where it can: when the final-answer tool is the only
    tool offered, it names it (`supports_named_tool_choice`) or asks for any tool
    (`supports_tool_choice_required`); beside other tools it asks for any tool. Where neither
    applies (Anthropic with thinking on, Ollama, DashScope with tools), the choice stays auto,
    the system prompt asks for the tool, and an answer in text is read too (and repaired).

    Schemas follow `capabilities.json_schema_dialect`: OpenAI strict (optional fields become
    required and nullable; when the type cannot be strict, e.g. a `dict[str, X]`, a non-strict
    schema is sent), Gemini's subset, or JSON Schema as pydantic writes it. Tool parameters
    and OpenAI's `response_format` need an object at the root: another output is wrapped in
    `{"value": ...}` and unwrapped when read. A strict final-answer tool is used where the
    provider holds tools to their schema (`supports_strict_tools`: OpenAI with
    `parallel_tool_calls=False`).

    Args:
        output_type: The output type (a pydantic model, dataclass, TypedDict, `list[...]`,
            union or scalar).
        strategy: `"auto"`, `"native"`, `"tool"` or `"prompted"`.
        capabilities: What the model can do for the run's options
            (`rxagent.formatters.base.capabilities_for`), or None when unknown.
        options: The run's options; a `response_format` there conflicts with the native
            strategy.
        has_tools: Whether the run offers tools of its own.
        tool_names: The names of those tools (the final-answer tool avoids them).

    Returns:
        The plan.

    Raises:
        ConfigurationError: The type has no JSON schema, the strategy is unknown or the model
            cannot do it, or the options already set a `response_format`.

    Example:
        ```python
        from pydantic import BaseModel

        from rxagent.formatters.anthropic import AnthropicFormatter
        from rxagent.formatters.openai import OpenAIFormatter
        from rxagent.models import ModelOptions
        from rxagent.output import resolve_output


        class City(BaseModel):
            name: str


        openai = resolve_output(City, capabilities=OpenAIFormatter.capabilities)
        assert openai.strategy == "native"
        assert openai.response_format["json_schema"]["strict"] is True
        anthropic = resolve_output(City, capabilities=AnthropicFormatter.capabilities)
        assert anthropic.strategy == "tool" and anthropic.choice_alone == "final_answer"
        assert resolve_output(City).strategy == "prompted"
        ```
    """
    if strategy not in OUTPUT_STRATEGIES:
        raise ConfigurationError(
            f"output_strategy must be one of {', '.join(map(repr, OUTPUT_STRATEGIES))}, "
            f"got {strategy!r}"
        )
    schema = json_schema_for(output_type)
    mode, reason = _choose(strategy, capabilities, has_tools)
    options = options or ModelOptions()
    if mode == "native" and options.response_format is not None:
        raise ConfigurationError(
            "options.response_format is set and output_type asks for the native strategy; "
            "drop response_format (the output type sets it) or pass output_strategy='prompted'"
        )
    dialect = capabilities.json_schema_dialect if capabilities is not None else "json_schema"
    common: dict[str, Any] = {
        "output_type": output_type,
        "strategy": mode,
        "requested": strategy,
        "reason": reason,
        "schema": schema,
        "partial": PartialOutput(output_type),
    }
    if mode == "native":
        sent, strict = _native_schema(schema, dialect)
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": _schema_name(schema), "schema": sent.schema, "strict": strict},
        }
        return OutputPlan(
            **common,
            provider_schema=sent,
            reader=OutputReader(output_type, schema, wrapped=sent.wrapped, strict_nulls=strict),
            response_format=freeze(response_format),
        )
    if mode == "tool":
        return _tool_plan(common, schema, capabilities, has_tools, tool_names)
    text = json.dumps(schema, ensure_ascii=False)
    instructions = (
        f"{RESPONSE_FORMAT_HEADER}\nYou MUST respond with valid JSON only.\n\n"
        f"Expected JSON schema:\n{text}"
    )
    return OutputPlan(
        **common,
        provider_schema=ProviderSchema(schema=schema, wrapped=False),
        reader=OutputReader(output_type, schema),
        instructions=instructions,
    )


def _choose(
    strategy: OutputStrategy, capabilities: Capabilities | None, has_tools: bool
) -> tuple[OutputMode, str]:
    if strategy != "auto":
        if capabilities is not None:
            if strategy == "native" and not capabilities.supports_json_schema:
                raise ConfigurationError(
                    "output_strategy='native' needs a model with a JSON-schema mode, and this "
                    "one has none (for these options); use output_strategy='tool', 'prompted' "
                    "or 'auto'"
                )
            if strategy == "tool" and not capabilities.supports_tools:
                raise ConfigurationError(
                    "output_strategy='tool' needs a model with tools; use 'prompted' or 'auto'"
                )
        return strategy, f"output_strategy={strategy!r} was asked for"
    if capabilities is None:
        return "prompted", "the model declares no capabilities"
    mode = capabilities.preferred_output
    reason = f"the provider prefers {mode!r}"
    if mode == "native" and not capabilities.supports_json_schema:
        mode, reason = "tool", "the provider has no JSON-schema mode for these options"
    elif mode == "native" and has_tools and not capabilities.supports_json_schema_with_tools:
        mode, reason = "tool", "the provider's JSON-schema mode does not combine with tools"
    if mode == "tool" and not capabilities.supports_tools:
        mode, reason = "prompted", "the provider has no tools"
    return mode, reason


def _native_schema(schema: dict[str, Any], dialect: str) -> tuple[ProviderSchema, bool]:
    if dialect == "openai_strict":
        try:
            return openai_strict_schema(schema), True
        except ConfigurationError:  # e.g. a free-form mapping: send it non-strict, repair
            return object_root(schema), False
    if dialect == "gemini":
        return ProviderSchema(schema=gemini_schema(schema), wrapped=False), False
    return ProviderSchema(schema=schema, wrapped=False), False


def _tool_plan(
    common: dict[str, Any],
    schema: dict[str, Any],
    capabilities: Capabilities | None,
    has_tools: bool,
    tool_names: Collection[str],
) -> OutputPlan:
    name = FINAL_ANSWER_TOOL
    suffix = 1
    while name in tool_names:
        suffix += 1
        name = f"{FINAL_ANSWER_TOOL}_{suffix}"
    strict = False
    dialect = capabilities.json_schema_dialect if capabilities is not None else "json_schema"
    if capabilities is not None and capabilities.supports_strict_tools:
        try:
            sent, strict = openai_strict_schema(schema), True
        except ConfigurationError:
            sent = object_root(schema)
    elif dialect == "gemini":
        sent = object_root(gemini_schema(schema))
    else:
        sent = object_root(schema)
    about = schema.get("description")
    description = (
        "Give your final answer: call this once, when you are done, with the answer as the "
        "arguments. The run ends with it."
    )
    if isinstance(about, str) and about:
        description += f" The answer: {about}"
    tool = ToolSchema(name=name, description=description, parameters=sent.schema, strict=strict)
    if capabilities is None:
        alone: str | None = name
        beside: str | None = "required"
    else:
        required = "required" if capabilities.supports_tool_choice_required else None
        alone = name if capabilities.supports_named_tool_choice else required
        beside = required
    instructions = None
    if (beside if has_tools else alone) is None:
        instructions = (
            f"{RESPONSE_FORMAT_HEADER}\nWhen you have the final answer, call the `{name}` tool "
            "with it as the arguments. Do not answer in plain text."
        )
    return OutputPlan(
        **common,
        provider_schema=sent,
        reader=OutputReader(
            common["output_type"], schema, wrapped=sent.wrapped, strict_nulls=strict
        ),
        tool=tool,
        choice_alone=alone,
        choice_with_tools=beside,
        instructions=instructions,
    )


def _schema_name(schema: dict[str, Any]) -> str:
    title = schema.get("title")
    name = _NAME_CHARS.sub("_", title).strip("_")[:64] if isinstance(title, str) else ""
    return name or "output"
