"""`DashScopeFormatter.parse_request`: a generation request body → messages, tools and options.

The inverse of `_request`, used by the fake server; what `format` normalises comes back
normalised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rxagent.formatters._openai_style import parse_arguments
from rxagent.formatters.base import malformed
from rxagent.formatters.dashscope._errors import PROVIDER
from rxagent.formatters.dashscope._request import TOOL_ERROR_PREFIX
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models.base import ModelOptions, ToolSchema

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["read_request"]

_OWN_PARAMS: Final = frozenset({"result_format", "incremental_output"})
_OPTION_PARAMS: Final = frozenset(
    {
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "temperature",
        "max_tokens",
        "stop",
        "seed",
        "response_format",
    }
)


def read_request(body: Any) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
    """Read a request body back (see `DashScopeFormatter.parse_request`)."""
    try:
        raw_messages = body["input"]["messages"]
        params = body.get("parameters") or {}
        messages = [_read_message(m) for m in raw_messages]
        tools = [
            ToolSchema(
                name=t["function"]["name"],
                description=t["function"].get("description", ""),
                parameters=t["function"].get("parameters") or {},
            )
            for t in params.get("tools") or ()
        ]
        options = _read_options(body, params)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise malformed(PROVIDER, f"not a generation request ({exc!r})", body) from None
    return messages, tools, options


def _read_options(body: Mapping[str, Any], params: Mapping[str, Any]) -> ModelOptions:
    fields: dict[str, Any] = {}
    choice = params.get("tool_choice")
    if isinstance(choice, dict):
        fields["tool_choice"] = choice["function"]["name"]
    elif choice is not None:
        fields["tool_choice"] = choice
    for wire, name in (
        ("parallel_tool_calls", "parallel_tool_calls"),
        ("temperature", "temperature"),
        ("max_tokens", "max_output_tokens"),
        ("seed", "seed"),
        ("response_format", "response_format"),
    ):
        if wire in params:
            fields[name] = params[wire]
    stop = params.get("stop")
    if stop is not None:
        fields["stop"] = (stop,) if isinstance(stop, str) else tuple(stop)
    extra = {k: v for k, v in params.items() if k not in _OPTION_PARAMS and k not in _OWN_PARAMS}
    extra.update((k, v) for k, v in body.items() if k not in ("model", "input", "parameters"))
    if extra:
        fields["extra"] = extra
    return ModelOptions(**fields)


def _read_message(raw: Mapping[str, Any]) -> Msg:
    role = raw["role"]
    content: Any = raw.get("content")
    name = raw.get("name")
    if role == "tool":
        text = _text_of(content)
        is_error = text.startswith(TOOL_ERROR_PREFIX)
        if is_error:
            text = text[len(TOOL_ERROR_PREFIX) :]
        result = ToolResultBlock(
            id=raw["tool_call_id"], name=name or "", output=text, is_error=is_error
        )
        return Msg(role="tool", content=(result,))
    if role == "assistant":
        blocks: list[Block] = []
        if "reasoning_content" in raw:
            blocks.append(ThinkingBlock(thinking=raw["reasoning_content"] or ""))
        text = _text_of(content)
        if text:
            blocks.append(TextBlock(text=text))
        blocks.extend(_tool_use(c["id"], c["function"]) for c in raw.get("tool_calls") or ())
        if len(blocks) == 1 and type(blocks[0]) is TextBlock and isinstance(content, str):
            return Msg(role="assistant", content=text, name=name)
        return Msg(role="assistant", content=blocks if blocks else "", name=name)
    if isinstance(content, str):
        return Msg(role=role, content=content, name=name)
    if role == "system":
        return Msg(role=role, content=_text_of(content), name=name)
    parts: list[Block] = [
        _image_block(part["image"]) if "image" in part else TextBlock(text=part["text"])
        for part in content
    ]
    return Msg(role=role, content=parts, name=name)


def _text_of(content: Any) -> str:
    """The text of a wire content: a string, or the `text` items of a list joined."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return "".join(part["text"] for part in content if "text" in part)


def _tool_use(call_id: str, function: Mapping[str, Any]) -> ToolUseBlock:
    args = function.get("arguments") or ""
    parsed = parse_arguments(args)
    if parsed is not None:
        return ToolUseBlock(id=call_id, name=function["name"], input=parsed)
    return ToolUseBlock(id=call_id, name=function["name"], raw_input=args)


def _image_block(url: str) -> ImageBlock:
    if url.startswith("data:") and ";base64," in url:
        media_type, _, data = url[5:].partition(";base64,")
        return ImageBlock(data=data, media_type=media_type)
    return ImageBlock(url=url)
