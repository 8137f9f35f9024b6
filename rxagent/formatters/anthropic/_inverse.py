"""Request bodies read back into messages, tools and options: the inverse of `format_request`."""

from __future__ import annotations

import re
from typing import Any, Final

from rxagent.errors import AgentRunError, ErrorCode
from rxagent.formatters.anthropic._constants import (
    CACHE_TARGETS,
    PROVIDER,
    REDACTED_THINKING_PREFIX,
    SHAPE_ERRORS,
)
from rxagent.formatters.base import provider_error
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

__all__ = ["parse_request"]

_THINKING_TEXT: Final = re.compile(r"\A<thinking>\n(.*)\n</thinking>\Z", re.DOTALL)


def parse_request(
    body: Any, *, max_tokens: int
) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
    """Read a request body (`AnthropicFormatter.parse_request` has the rules).

    A `max_tokens` equal to the given default comes back as `max_output_tokens=None`.
    """
    if not isinstance(body, dict):
        raise _bad_request("not a JSON object")
    try:
        return _parse_request(body, max_tokens)
    except AgentRunError:
        raise
    except SHAPE_ERRORS as exc:
        raise _bad_request(f"{type(exc).__name__}: {exc}") from None


def _bad_request(what: str) -> AgentRunError:
    return provider_error(
        ErrorCode.INVALID_REQUEST,
        f"invalid request body: {what}",
        provider=PROVIDER,
        recoverable=False,
    )


def _parse_request(
    body: dict[str, Any], max_tokens: int
) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            raise _bad_request(f"{key}: Field required")
    cache: list[str] = []
    messages = _parse_system(body.get("system"), cache)
    names: dict[str, str] = {}
    wire = body["messages"]
    if not isinstance(wire, list):
        raise TypeError("messages must be a list")
    for i, item in enumerate(wire):
        role, content = item["role"], item["content"]
        if i == len(wire) - 1 and isinstance(content, list) and _marked(content):
            cache.append("history")
        if role == "assistant":
            messages.append(_parse_assistant(content, names))
        elif role == "user":
            messages.extend(_parse_user(content, names))
        elif role == "system":
            messages.append(
                Msg(
                    role="system",
                    content=content
                    if isinstance(content, str)
                    else "".join(map(_text_of, content)),
                )
            )
        else:
            raise ValueError(f"unknown role {role!r}")
    tools = [
        ToolSchema(
            name=tool["name"],
            description=tool.get("description", ""),
            parameters=tool["input_schema"],
        )
        for tool in body.get("tools") or ()
    ]
    if tools and "cache_control" in body["tools"][-1]:
        cache.append("tools")
    return messages, tools, _parse_options(body, cache, max_tokens)


def _parse_options(body: dict[str, Any], cache: list[str], max_tokens: int) -> ModelOptions:
    fields: dict[str, Any] = {}
    if body["max_tokens"] != max_tokens:
        fields["max_output_tokens"] = body["max_tokens"]
    if "temperature" in body:
        fields["temperature"] = body["temperature"]
    if "stop_sequences" in body:
        fields["stop"] = tuple(body["stop_sequences"])
    choice = body.get("tool_choice")
    if choice is not None:
        kind = choice["type"]
        fields["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}.get(kind)
        if kind == "tool":
            fields["tool_choice"] = choice["name"]
        elif fields["tool_choice"] is None:
            raise ValueError(f"unknown tool_choice type {kind!r}")
        if "disable_parallel_tool_use" in choice:
            fields["parallel_tool_calls"] = not choice["disable_parallel_tool_use"]
    known = {"model", "max_tokens", "messages", "system", "tools", "tool_choice", "stream"}
    known.update(("temperature", "stop_sequences"))
    extra = {k: v for k, v in body.items() if k not in known}
    if cache:
        extra["cache_breakpoints"] = (
            True if len(cache) == len(CACHE_TARGETS) else sorted(cache, key=CACHE_TARGETS.index)
        )
    if extra:
        fields["extra"] = extra
    return ModelOptions(**fields)


def _parse_system(system: Any, cache: list[str]) -> list[Msg]:
    if system is None:
        return []
    if isinstance(system, str):
        return [Msg(role="system", content=system)]
    if not isinstance(system, list):
        raise TypeError("system must be a string or a list of text blocks")
    if system and "cache_control" in system[-1]:
        cache.append("system")
    return [Msg(role="system", content=_text_of(b)) for b in system]


def _parse_assistant(content: Any, names: dict[str, str]) -> Msg:
    if isinstance(content, str):
        return Msg(role="assistant", content=content)
    blocks: list[Block] = []
    for b in content:
        kind = b["type"]
        if kind == "text":
            match = _THINKING_TEXT.match(b["text"])
            blocks.append(ThinkingBlock(thinking=match[1]) if match else TextBlock(text=b["text"]))
        elif kind == "thinking":
            blocks.append(ThinkingBlock(thinking=b["thinking"], signature=b["signature"] or None))
        elif kind == "redacted_thinking":
            blocks.append(
                ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + b["data"])
            )
        elif kind == "tool_use":
            names[b["id"]] = b["name"]
            blocks.append(ToolUseBlock(id=b["id"], name=b["name"], input=b["input"]))
        else:
            raise ValueError(f"unsupported assistant block type {kind!r}")
    return Msg(role="assistant", content=blocks)


def _parse_user(content: Any, names: dict[str, str]) -> list[Msg]:
    if isinstance(content, str):
        return [Msg(role="user", content=content)]
    out: list[Msg] = []
    run: list[Block] = []
    for b in content:
        if b["type"] != "tool_result":
            run.append(_parse_user_block(b))
            continue
        if run:
            out.append(Msg(role="user", content=run))
            run = []
        raw = b.get("content", "")
        output: str | list[Block] = (
            raw if isinstance(raw, str) else [_parse_user_block(x) for x in raw]
        )
        result = ToolResultBlock(
            id=b["tool_use_id"],
            name=names.get(b["tool_use_id"], ""),
            output=output,
            is_error=bool(b.get("is_error", False)),
        )
        out.append(Msg.tool(result))
    if run:
        out.append(Msg(role="user", content=run))
    return out


def _parse_user_block(b: dict[str, Any]) -> Block:
    kind = b["type"]
    if kind == "text":
        return TextBlock(text=b["text"])
    if kind == "image":
        source = b["source"]
        if source["type"] == "base64":
            return ImageBlock(data=source["data"], media_type=source["media_type"])
        if source["type"] == "url":
            return ImageBlock(url=source["url"])
        raise ValueError(f"unsupported image source {source['type']!r}")
    raise ValueError(f"unsupported user block type {kind!r}")


def _marked(content: list[Any]) -> bool:
    """Whether the history breakpoint is set: on the last block that is not thinking."""
    for block in reversed(content):
        if isinstance(block, dict) and block.get("type") not in ("thinking", "redacted_thinking"):
            return "cache_control" in block
    return False


def _text_of(block: Any) -> str:
    if (
        not isinstance(block, dict)
        or block.get("type") != "text"
        or not isinstance(block["text"], str)
    ):
        raise TypeError(f"expected a text block, got {block!r}")
    text: str = block["text"]
    return text
