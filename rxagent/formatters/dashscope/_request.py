"""`DashScopeFormatter.format`: rxagent messages, tools and options → a generation request body."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rxagent.formatters._openai_style import assistant_parts, image_data_url, named_tool_choice
from rxagent.formatters.base import unsupported
from rxagent.formatters.dashscope._errors import PROVIDER
from rxagent.messages import ImageBlock, TextBlock, ToolResultBlock, thaw

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rxagent.messages import Msg
    from rxagent.models.base import ModelOptions, ToolSchema

__all__ = ["TOOL_ERROR_PREFIX", "TOP_LEVEL_EXTRA", "build_body"]

TOOL_ERROR_PREFIX: Final = "[tool error] "
"""Prepended to the content of a failed tool result (DashScope has no error flag)."""

TOP_LEVEL_EXTRA: Final = frozenset({"resources"})
"""`options.extra` keys placed at the top of the body instead of in `parameters`."""

_RESPONSE_FORMATS: Final = frozenset({"text", "json_object", "json_schema"})


def build_body(
    messages: Sequence[Msg],
    tools: Sequence[ToolSchema],
    options: ModelOptions,
    *,
    model: str,
    stream: bool,
    multimodal: bool,
) -> dict[str, Any]:
    """Build the request body (see `DashScopeFormatter.format`)."""
    wire = [_message(m, multimodal) for m in messages]
    params: dict[str, Any] = {"result_format": "message"}
    if stream:
        params["incremental_output"] = True
    if tools:
        params["tools"] = [_tool_schema(t) for t in tools]
    if options.tool_choice is not None:
        params["tool_choice"] = _tool_choice(options.tool_choice)
    if options.parallel_tool_calls is not None:
        params["parallel_tool_calls"] = options.parallel_tool_calls
    if options.temperature is not None:
        params["temperature"] = options.temperature
    if options.max_output_tokens is not None:
        params["max_tokens"] = options.max_output_tokens
    if options.stop is not None:
        params["stop"] = list(options.stop)
    if options.seed is not None:
        params["seed"] = options.seed
    if options.response_format is not None:
        params["response_format"] = _response_format(options.response_format)
    body: dict[str, Any] = {"model": model, "input": {"messages": wire}, "parameters": params}
    if options.extra:
        _merge_extra(body, params, options.extra, stream=stream)
    return body


def _tool_schema(tool: ToolSchema) -> dict[str, Any]:
    # Unlike OpenAI's, the description is always sent (empty or not) and the schema as given.
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _tool_choice(choice: str) -> str | dict[str, Any]:
    if choice in ("auto", "none"):
        return choice
    if choice == "required":
        raise unsupported(
            PROVIDER,
            'tool_choice="required"',
            'DashScope takes "auto", "none" or a tool name; name the tool (tool_choice="add")',
        )
    return named_tool_choice(choice)


def _response_format(value: Mapping[str, Any]) -> dict[str, Any]:
    kind = value.get("type")
    if kind not in _RESPONSE_FORMATS:
        raise unsupported(
            PROVIDER,
            f"response_format of type {kind!r}",
            'use {"type": "json_object"} or {"type": "json_schema", "json_schema": {...}}',
        )
    formatted: dict[str, Any] = thaw(value)
    return formatted


def _merge_extra(
    body: dict[str, Any], params: dict[str, Any], extra: Mapping[str, Any], *, stream: bool
) -> None:
    for key, value in extra.items():
        if key == "result_format" and value != "message":
            raise unsupported(
                PROVIDER,
                f"extra result_format={value!r}",
                'rxagent reads result_format="message" only; remove it from extra',
            )
        if key == "incremental_output" and stream and value is not True:
            raise unsupported(
                PROVIDER,
                f"extra incremental_output={value!r} while streaming",
                "rxagent parses incremental streams only; remove it from extra",
            )
        (body if key in TOP_LEVEL_EXTRA else params)[key] = thaw(value)


def _message(msg: Msg, multimodal: bool) -> dict[str, Any]:
    role = msg.role
    if role == "assistant":
        return _assistant(msg, multimodal)
    if role == "tool":
        return _tool_message(msg, multimodal)
    content = msg.content
    wire: dict[str, Any]
    if isinstance(content, str):
        wire = {"role": role, "content": [{"text": content}] if multimodal else content}
    else:
        parts: list[dict[str, str]] = []
        for block in content:
            if type(block) is TextBlock:
                parts.append({"text": block.text})
            elif type(block) is ImageBlock and role == "user":
                if not multimodal:
                    raise unsupported(
                        PROVIDER,
                        "an image with a text model",
                        "use a Qwen-VL model (its name has '-vl') or "
                        "DashScopeChatModel(..., multimodal=True)",
                    )
                parts.append({"image": image_data_url(block)})
            else:
                raise unsupported(
                    PROVIDER,
                    f"a {block.type} block in a {role} message",
                    "send tool results as Msg.tool(...) and images in user messages",
                )
        text = parts if multimodal else "".join(p["text"] for p in parts)
        wire = {"role": role, "content": text}
    if msg.name is not None:
        wire["name"] = msg.name
    return wire


def _assistant(msg: Msg, multimodal: bool) -> dict[str, Any]:
    content = msg.content
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    if isinstance(content, str):
        text = content
    else:
        texts, calls, thoughts = assistant_parts(
            content,
            provider=PROVIDER,
            fix="assistant messages carry text, thinking and tool calls",
        )
        text = "".join(texts)
    wire: dict[str, Any] = {
        "role": "assistant",
        "content": ([{"text": text}] if text else []) if multimodal else text,
    }
    if thoughts:
        wire["reasoning_content"] = "".join(thoughts)
    if calls:
        wire["tool_calls"] = calls
    if msg.name is not None:
        wire["name"] = msg.name
    return wire


TOOL_IMAGE_NOTE: Final = "[the tool returned an image; DashScope tool messages carry text only]"
"""What an image in a tool result becomes: DashScope tool messages take no images."""


def _tool_message(msg: Msg, multimodal: bool) -> dict[str, Any]:
    content = msg.content
    if isinstance(content, str) or len(content) != 1 or type(content[0]) is not ToolResultBlock:
        raise unsupported(
            PROVIDER,
            "a tool message that is not exactly one tool result",
            "build it with Msg.tool(ToolResultBlock(...))",
        )
    result: ToolResultBlock = content[0]
    output = result.output
    if isinstance(output, str):
        text = output
    else:
        texts: list[str] = []
        for block in output:
            if type(block) is ImageBlock:  # tool messages carry text only: the model is told
                texts.append(TOOL_IMAGE_NOTE)
                continue
            if type(block) is not TextBlock:
                raise unsupported(
                    PROVIDER,
                    f"a {block.type} block inside a tool result",
                    "DashScope tool messages carry text only; return text",
                )
            texts.append(block.text)
        text = "\n".join(texts)
    if result.is_error:
        text = TOOL_ERROR_PREFIX + text
    return {
        "role": "tool",
        "content": [{"text": text}] if multimodal else text,
        "tool_call_id": result.id,
        "name": result.name,
    }
