"""What each provider's chat format adds around the payload, and how tool schemas are rendered.

The numbers and their sources are tabled in the `TokenCounter` docstring.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.models.base import ToolSchema

__all__ = ["ChatFormat", "chat_format", "compact_json", "tool_schema_tokens"]


@dataclass(frozen=True, slots=True)
class ChatFormat:
    """The tokens a provider's chat format adds around the payload."""

    per_message: int
    """Framing of every message, the role included."""
    per_name: int
    """Extra framing of a message with a `name` (the name's own tokens are counted too)."""
    reply_priming: int
    """Tokens that start the reply, once per request."""
    per_tool_call: int
    """Framing of a tool call, besides its name and JSON arguments."""
    per_tool_result: int
    """Framing of a tool result, besides its output."""
    image: int
    """The fixed cost of one image (a 1024x1024 image)."""
    tools_preamble: int
    """Tokens added once when a request has tools."""
    per_tool: int
    """Framing of each tool schema."""
    typescript_tools: bool = False
    """True when tool schemas are rendered the way OpenAI does, else they count as JSON."""


_OPENAI: Final = ChatFormat(4, 1, 3, 3, 3, 765, 12, 7, typescript_tools=True)
_FORMATS: Final[Mapping[str, ChatFormat]] = {
    "openai": _OPENAI,
    "anthropic": ChatFormat(4, 1, 3, 3, 3, 1398, 346, 2),
    "gemini": ChatFormat(4, 1, 3, 3, 3, 1032, 0, 2),
    "dashscope": ChatFormat(5, 1, 3, 16, 8, 1282, 92, 1),
    "ollama": ChatFormat(5, 1, 4, 8, 3, 576, 51, 1),
}
# OpenAI's cookbook: 10 tokens per function for cl100k models (gpt-4, gpt-3.5-turbo).
_OPENAI_CL100K: Final = replace(_OPENAI, per_tool=10)
# Schema keys the TypeScript rendering shows in other ways, or not at all.
_SHOWN_KEYS: Final = frozenset({"type", "description", "enum", "title"})
_OBJECT_KEYS: Final = frozenset(
    {"type", "properties", "required", "title", "description", "additionalProperties"}
)


def chat_format(provider: str, encoding_name: str) -> ChatFormat:
    """Return the numbers for `provider` (openai's when unknown)."""
    fmt = _FORMATS.get(provider.lower(), _OPENAI)
    return _OPENAI_CL100K if fmt is _OPENAI and encoding_name == "cl100k_base" else fmt


def compact_json(value: Any) -> str:
    """JSON as providers send it: not ASCII-escaped; unserializable values as their `str`."""
    return json.dumps(value, ensure_ascii=False, default=str)


def tool_schema_tokens(schema: ToolSchema, fmt: ChatFormat, count: Callable[[str], int]) -> int:
    """Count one tool schema as `fmt` renders it, with `count` counting text."""
    if not fmt.typescript_tools:
        payload = {
            "name": schema.name,
            "description": schema.description,
            "parameters": schema.parameters,
        }
        return fmt.per_tool + count(compact_json(payload))
    total = fmt.per_tool + count(f"{schema.name}:{schema.description.removesuffix('.')}")
    params = schema.parameters
    properties = params.get("properties")
    if isinstance(properties, Mapping) and properties:
        total += 3
        for key, prop in properties.items():
            total += 3 + _typescript_property_tokens(str(key), prop, count)
    rest = {k: v for k, v in params.items() if k not in _OBJECT_KEYS}
    if rest:  # $defs and the like
        total += count(compact_json(rest))
    return total


def _typescript_property_tokens(key: str, prop: Any, count: Callable[[str], int]) -> int:
    if not isinstance(prop, Mapping):
        return count(f"{key}:{compact_json(prop)}")
    kind = prop.get("type", "any")
    description = str(prop.get("description", "")).removesuffix(".")
    total = count(f"{key}:{kind if isinstance(kind, str) else compact_json(kind)}:{description}")
    enum = prop.get("enum")
    if isinstance(enum, tuple | list):
        total += -3 + sum(3 + count(str(item)) for item in enum)
    rest = {k: v for k, v in prop.items() if k not in _SHOWN_KEYS}
    if rest:  # nested objects, array items, unions, formats, defaults
        total += count(compact_json(rest))
    return total
