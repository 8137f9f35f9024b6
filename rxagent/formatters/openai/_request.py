"""`OpenAIFormatter.format`: rxagent messages, tools and options → a `/chat/completions` body."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rxagent._cache import IdentityCache, readonly_json
from rxagent.formatters._openai_style import assistant_parts, image_data_url, named_tool_choice
from rxagent.formatters.base import unsupported
from rxagent.messages import ImageBlock, TextBlock, ToolResultBlock, thaw

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rxagent.formatters.openai._formatter import OpenAIFormatter
    from rxagent.messages import Msg
    from rxagent.models.base import ModelOptions, ToolSchema

__all__ = ["ERROR_PREFIX", "IMAGES_MARK", "IMAGES_ONLY_NOTE", "build_body"]

ERROR_PREFIX: Final = "Error: "
"""What starts the tool message of a failed tool result (`is_error=True`)."""

IMAGES_ONLY_NOTE: Final = "(the tool returned images; they follow in the next message)"
"""The tool message text of a result that has images and no text."""

IMAGES_MARK: Final = "Images returned by tool call "
"""What starts the text part before a tool call's images in the user message that carries them."""


def build_body(
    fmt: OpenAIFormatter,
    messages: Sequence[Msg],
    tools: Sequence[ToolSchema],
    options: ModelOptions,
    *,
    model: str,
    stream: bool,
) -> dict[str, Any]:
    """Build the `/chat/completions` request body (see `OpenAIFormatter.format`)."""
    body: dict[str, Any] = {"model": model, "messages": _messages(fmt, messages)}
    if tools:
        wire = _tool_parameters
        body["tools"] = [_function(t, wire(t)) for t in tools]
        choice = options.tool_choice
        if choice is not None:
            body["tool_choice"] = (
                choice if choice in ("auto", "none", "required") else named_tool_choice(choice)
            )
        if options.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = options.parallel_tool_calls
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.max_output_tokens is not None:
        body[fmt.max_tokens_field] = options.max_output_tokens
    if options.response_format is not None:
        body["response_format"] = _response_format(options.response_format, fmt.provider)
    if options.stop is not None:
        body["stop"] = list(options.stop)
    if options.seed is not None:
        body["seed"] = options.seed
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if options.extra:
        body.update(thaw(options.extra))
    return body


_tool_parameters: Final[IdentityCache[ToolSchema, Any]] = IdentityCache(
    lambda tool: readonly_json(tool.parameters), limit=2_000
)
"""A tool schema's `parameters` as sent, computed once per `ToolSchema` object (it is frozen).

Every request shares the value, so it is read-only (`FrozenDict`s and `ReadOnlyList`s, equal to
plain dicts and lists and encoded the same); the dicts around it are new in every body. Each
entry holds its schema, so a schema's `id()` cannot be reused by another while it is cached."""


def _function(tool: ToolSchema, parameters: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = parameters
    if tool.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _image_part(block: ImageBlock) -> dict[str, Any]:
    """An image as an `image_url` content part (base64 data as a `data:` URL)."""
    return {"type": "image_url", "image_url": {"url": image_data_url(block)}}


def _response_format(fmt: Mapping[str, Any], provider: str) -> dict[str, Any]:
    kind = fmt.get("type")
    if kind == "json_schema" and isinstance(fmt.get("json_schema"), dict):
        return {"type": "json_schema", "json_schema": thaw(fmt["json_schema"])}
    if kind in ("json_object", "text"):
        return {"type": kind}
    raise unsupported(
        provider,
        f"response_format {dict(fmt)!r}",
        'use {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}} or '
        '{"type": "json_object"}',
    )


def _messages(fmt: OpenAIFormatter, messages: Sequence[Msg]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    carried: list[dict[str, Any]] = []  # image parts of tool results, sent after the tools
    for msg in messages:
        role = msg.role
        if role == "tool":
            _tool_messages(msg, out, carried, fmt.provider)
            continue
        if carried:
            out.append({"role": "user", "content": carried})
            carried = []
        if role == "user":
            out.append(_user(msg, fmt.provider))
        elif role == "assistant":
            out.append(_assistant(msg, fmt))
        else:
            out.append(_system(msg, fmt))
    if carried:
        out.append({"role": "user", "content": carried})
    return out


def _system(msg: Msg, fmt: OpenAIFormatter) -> dict[str, Any]:
    content = msg.content
    if not isinstance(content, str):
        for block in content:
            if type(block) is not TextBlock:
                raise unsupported(
                    fmt.provider,
                    f"a {block.type} block in a system message",
                    "system messages hold text only",
                )
        content = msg.text
    wire: dict[str, Any] = {"role": fmt.system_role, "content": content}
    if msg.name is not None:
        wire["name"] = msg.name
    return wire


def _user(msg: Msg, provider: str) -> dict[str, Any]:
    content = msg.content
    wire: dict[str, Any]
    if isinstance(content, str):
        wire = {"role": "user", "content": content}
    else:
        parts: list[dict[str, Any]] = []
        for block in content:
            if type(block) is TextBlock:
                parts.append({"type": "text", "text": block.text})
            elif type(block) is ImageBlock:
                parts.append(_image_part(block))
            else:
                raise unsupported(
                    provider,
                    f"a {block.type} block in a user message",
                    "user messages hold text and images; put tool results in role='tool' "
                    "messages (Msg.tool(...))",
                )
        wire = {"role": "user", "content": parts}
    if msg.name is not None:
        wire["name"] = msg.name
    return wire


def _assistant(msg: Msg, fmt: OpenAIFormatter) -> dict[str, Any]:
    content = msg.content
    wire: dict[str, Any]
    if isinstance(content, str):
        wire = {"role": "assistant", "content": content}
    else:
        texts, calls, thoughts = assistant_parts(
            content,
            provider=fmt.provider,
            fix="assistant messages hold text, thinking and tool calls",
        )
        wire = {"role": "assistant", "content": "".join(texts) if texts or not calls else None}
        if calls:
            wire["tool_calls"] = calls
        if thoughts and fmt.reasoning_content:
            wire["reasoning_content"] = "".join(thoughts)
    if msg.name is not None:
        wire["name"] = msg.name
    return wire


def _tool_messages(
    msg: Msg, out: list[dict[str, Any]], carried: list[dict[str, Any]], provider: str
) -> None:
    content = msg.content
    if isinstance(content, str) or not content:
        raise unsupported(
            provider,
            "a tool message without a ToolResultBlock",
            "build tool messages with Msg.tool(ToolResultBlock(id=..., name=..., output=...))",
        )
    for block in content:
        if type(block) is not ToolResultBlock:
            raise unsupported(
                provider,
                f"a {block.type} block in a tool message",
                "tool messages hold ToolResultBlocks only",
            )
        output = block.output
        if isinstance(output, str):
            text = output
        else:
            texts: list[str] = []
            images: list[dict[str, Any]] = []
            for part in output:
                if type(part) is TextBlock:
                    texts.append(part.text)
                elif type(part) is ImageBlock:
                    images.append(_image_part(part))
                else:
                    raise unsupported(
                        provider,
                        f"a {part.type} block in a tool result",
                        "tool results hold text and images",
                    )
            text = "\n".join(texts)
            if images:
                carried.append({"type": "text", "text": f"{IMAGES_MARK}{block.id}:"})
                carried.extend(images)
                if not text:
                    text = IMAGES_ONLY_NOTE
        if block.is_error:
            text = ERROR_PREFIX + text
        out.append({"role": "tool", "tool_call_id": block.id, "content": text})
