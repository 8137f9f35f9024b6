"""Request bodies: rxagent messages, tools and options to a Messages API request.

Also the prompt-cache breakpoints of `extra["cache_breakpoints"]`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from rxagent.formatters.anthropic._constants import (
    CACHE_TARGETS,
    NO_SAMPLING_API_VERSION,
    PROVIDER,
    REDACTED_THINKING_PREFIX,
)
from rxagent.formatters.base import unsupported
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rxagent.models.base import ModelOptions, ToolSchema

__all__ = ["format_request"]

_DATA_URL: Final = re.compile(r"\Adata:([^;,]+);base64,(.*)\Z", re.DOTALL)


def format_request(
    messages: Sequence[Msg],
    tools: Sequence[ToolSchema],
    options: ModelOptions,
    *,
    model: str,
    stream: bool,
    max_tokens: int,
    api_version: str,
) -> dict[str, Any]:
    """Build the body of `POST /v1/messages` (`AnthropicFormatter.format` has the rules).

    `max_tokens` is sent when `options.max_output_tokens` is unset; `api_version` decides
    whether `temperature` may be sent.
    """
    if options.seed is not None:
        raise unsupported(PROVIDER, "seed", "Anthropic has no sampling seed; leave seed unset")
    if options.response_format is not None:
        raise unsupported(
            PROVIDER,
            "response_format",
            "this formatter has no native structured-output mode; ask for JSON in the "
            "prompt or use a tool whose input schema is the output",
        )
    extra = options.extra
    cache = _cache_targets(extra) if "cache_breakpoints" in extra else frozenset()
    system, wire = _wire_messages(messages)
    max_output_tokens = options.max_output_tokens
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens if max_output_tokens is None else max_output_tokens,
        "messages": wire,
    }
    if system:
        body["system"] = system
    if tools:
        body["tools"] = tool_list = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            if t.description
            else {"name": t.name, "input_schema": t.parameters}
            for t in tools
        ]
        choice = _tool_choice(options)
        if choice is not None:
            body["tool_choice"] = choice
        if "tools" in cache:
            tool_list[-1] = {**tool_list[-1], "cache_control": {"type": "ephemeral"}}
    if options.temperature is not None:
        if api_version >= NO_SAMPLING_API_VERSION:
            raise unsupported(
                PROVIDER,
                f"temperature under anthropic-version {api_version}",
                f"API versions from {NO_SAMPLING_API_VERSION} refuse sampling parameters; "
                "leave temperature unset, or use anthropic-version 2023-06-01",
            )
        body["temperature"] = options.temperature
    if options.stop is not None:
        body["stop_sequences"] = list(options.stop)
    if stream:
        body["stream"] = True
    body.update({k: v for k, v in extra.items() if k != "cache_breakpoints"})
    if "system" in cache and system:
        system[-1]["cache_control"] = {"type": "ephemeral"}
    if "history" in cache and wire:
        last = wire[-1]
        if isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"]}]
        _mark_last(last["content"])
    return body


def _cache_targets(extra: Mapping[str, Any]) -> frozenset[str]:
    value = extra.get("cache_breakpoints", False)
    if value is True:
        return frozenset(CACHE_TARGETS)
    if value is False or value is None:
        return frozenset()
    if isinstance(value, list | tuple) and all(v in CACHE_TARGETS for v in value):
        return frozenset(value)
    raise unsupported(
        PROVIDER,
        f"extra['cache_breakpoints']={value!r}",
        "use True (all) or a list of 'system', 'tools' and 'history'",
    )


def _mark_last(blocks: list[dict[str, Any]]) -> None:
    for block in reversed(blocks):
        if block.get("type") not in ("thinking", "redacted_thinking"):
            block["cache_control"] = {"type": "ephemeral"}
            return


def _tool_choice(options: ModelOptions) -> dict[str, Any] | None:
    choice, parallel = options.tool_choice, options.parallel_tool_calls
    if choice is None and parallel is None:
        return None
    if choice == "none":
        return {"type": "none"}
    if choice is None or choice == "auto":
        wire: dict[str, Any] = {"type": "auto"}
    elif choice == "required":
        wire = {"type": "any"}
    else:
        wire = {"type": "tool", "name": choice}
    if parallel is not None:
        wire["disable_parallel_tool_use"] = not parallel
    return wire


def _wire_messages(
    messages: Sequence[Msg],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The top-level `system` blocks and the alternating user/assistant `messages`."""
    system: list[dict[str, Any]] = []
    wire: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None  # an open user message of tool results
    for msg in messages:
        role = msg.role
        if role == "tool":
            if results is None:
                results = []
                wire.append({"role": "user", "content": results})
            results.append(_tool_result(msg))
            continue
        if role == "user":
            content = _user_content(msg)
            if results is not None:  # joins the tool results before it
                if isinstance(content, str):
                    results.append({"type": "text", "text": content})
                else:
                    results.extend(content)
                results = None
            else:
                wire.append({"role": "user", "content": content})
            continue
        if role == "assistant":
            results = None
            said = msg.content
            if isinstance(said, str):
                wire.append({"role": "assistant", "content": said})
            else:
                blocks = [b for b in map(_assistant_block, said) if b is not None]
                if blocks or not said:
                    wire.append({"role": "assistant", "content": blocks})
        else:
            system.extend(_system_blocks(msg))
    return system, wire


def _user_content(msg: Msg) -> str | list[dict[str, Any]]:
    content, name = msg.content, msg.name
    if isinstance(content, str):
        return f"{name}: {content}" if name else content
    blocks = [_user_block(b, "a user message") for b in content]
    if name:
        blocks.insert(0, {"type": "text", "text": f"{name}:"})
    return blocks


def _system_blocks(msg: Msg) -> list[dict[str, Any]]:
    if isinstance(msg.content, str):
        return [{"type": "text", "text": msg.content}]
    blocks = []
    for block in msg.content:
        if not isinstance(block, TextBlock):
            raise unsupported(
                PROVIDER, f"a {block.type} block in a system message", "system prompts are text"
            )
        blocks.append({"type": "text", "text": block.text})
    return blocks


def _image(block: ImageBlock) -> dict[str, Any]:
    if block.data is not None:
        source = {"type": "base64", "media_type": block.media_type, "data": block.data}
    elif block.url is not None and block.url.startswith("data:"):
        match = _DATA_URL.match(block.url)
        if match is None:
            raise unsupported(
                PROVIDER, "a data: URL image that is not base64", "pass data=... and media_type=..."
            )
        source = {"type": "base64", "media_type": match[1], "data": match[2]}
    else:
        source = {"type": "url", "url": block.url}
    return {"type": "image", "source": source}


def _user_block(block: Block, where: str) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        return _image(block)
    raise unsupported(
        PROVIDER,
        f"a {block.type} block in {where}",
        "user content and tool results hold text and images only (tool results go in "
        "Msg.tool(...), thinking and tool calls in assistant messages)",
    )


def _assistant_block(block: Block) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ThinkingBlock):
        signature = block.signature
        if signature:
            if signature.startswith(REDACTED_THINKING_PREFIX):
                return {
                    "type": "redacted_thinking",
                    "data": signature[len(REDACTED_THINKING_PREFIX) :],
                }
            return {"type": "thinking", "thinking": block.thinking, "signature": signature}
        if block.thinking:  # unsigned (another provider's): Anthropic would reject it as thinking
            return {"type": "text", "text": f"<thinking>\n{block.thinking}\n</thinking>"}
        return None  # unsigned and empty: it carries nothing
    raise unsupported(
        PROVIDER,
        f"a {block.type} block in an assistant message",
        "assistant messages hold text, thinking and tool calls; images go in user messages",
    )


def _tool_result(msg: Msg) -> dict[str, Any]:
    content = msg.content
    if isinstance(content, str) or len(content) != 1 or not isinstance(content[0], ToolResultBlock):
        raise unsupported(
            PROVIDER,
            "a tool message that is not one ToolResultBlock",
            "build it with Msg.tool(result)",
        )
    result = content[0]
    output = result.output
    wire: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": result.id,
        "content": output
        if isinstance(output, str)
        else [_user_block(b, "a tool result") for b in output],
    }
    if result.is_error:
        wire["is_error"] = True
    return wire
