"""What OpenAI Chat Completions and DashScope's native API share: OpenAI-style message pieces.

DashScope wraps OpenAI-like chat messages in its own envelope, so a few rules are the same on
both wires and live here once: how an assistant message's blocks are sorted into text, tool
calls and thinking, how a tool call is written (`{"id", "type": "function", "function": {"name",
"arguments"}}`), how a named `tool_choice` is written, how base64 image data becomes a `data:` URL,
and how a tool call's `arguments` text is read back. The rest differs between the two wires
(tool schemas, content parts, tool messages, usage, finish reasons, errors, stream deltas) and
stays in each provider's package. Pure: no I/O; the one global is a bounded cache of each tool
call's argument JSON, by block identity (a frozen block's input never changes), which changes
no result.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent._cache import IdentityCache
from rxagent.formatters.base import unsupported
from rxagent.messages import FrozenDict, ImageBlock, TextBlock, ThinkingBlock, ToolUseBlock

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rxagent.messages import Block

__all__ = [
    "assistant_parts",
    "image_data_url",
    "named_tool_choice",
    "parse_arguments",
    "tool_arguments",
]


def image_data_url(block: ImageBlock) -> str:
    """The URL an image is sent as: its `url`, or its base64 `data` as a `data:` URL."""
    if block.url is not None:
        return block.url
    return f"data:{block.media_type};base64,{block.data}"


def named_tool_choice(name: str) -> dict[str, Any]:
    """The `tool_choice` that forces the tool called `name`."""
    return {"type": "function", "function": {"name": name}}


def _dumps_input(block: ToolUseBlock) -> str:
    return json.dumps(block.input, ensure_ascii=False)


_arguments: Final[IdentityCache[ToolUseBlock, str]] = IdentityCache(_dumps_input, limit=10_000)
"""A tool call's input as JSON text, once per `ToolUseBlock` (the history resends each call)."""


def tool_arguments(block: ToolUseBlock) -> str:
    """A tool call's `arguments` text (computed once per block object).

    The model's own text when it was not a JSON object, else the input as JSON.
    """
    args = block.raw_input
    if args is None:
        # a frozen block's input never changes; a plain dict (model_construct) may: not cached
        if type(block.input) is FrozenDict:
            return _arguments(block)
        return json.dumps(block.input, ensure_ascii=False)
    return args


def assistant_parts(
    blocks: Iterable[Block], *, provider: str, fix: str
) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """Sort an assistant message's blocks into its texts, wire tool calls and thinking texts.

    A tool call is written `{"id", "type": "function", "function": {"name", "arguments"}}`.

    Args:
        blocks: The message's blocks, in order.
        provider: The name the error carries.
        fix: What the error suggests for a block an assistant message cannot carry.

    Raises:
        InvalidRequestError: A block other than text, thinking or a tool call.
    """
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thoughts: list[str] = []
    for block in blocks:
        if type(block) is TextBlock:
            texts.append(block.text)
        elif type(block) is ToolUseBlock:
            calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {"name": block.name, "arguments": tool_arguments(block)},
                }
            )
        elif type(block) is ThinkingBlock:
            thoughts.append(block.thinking)
        else:
            raise unsupported(provider, f"a {block.type} block in an assistant message", fix)
    return texts, calls, thoughts


def parse_arguments(args: str) -> dict[str, Any] | None:
    """Read a tool call's `arguments` text: its JSON object, `{}` when blank, else None.

    None (not JSON, or JSON that is not an object) tells the caller to keep the text as
    `ToolUseBlock.raw_input`.
    """
    try:
        parsed = json.loads(args) if args.strip() else {}
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None
