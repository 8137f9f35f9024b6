"""Request bodies: rxagent messages, tools and options to an Ollama `/api/chat` body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from rxagent.formatters.base import unsupported
from rxagent.formatters.ollama._shared import PROVIDER, TOOL_ERROR_PREFIX
from rxagent.messages import (
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    thaw,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.messages import Block, Msg
    from rxagent.models.base import ModelOptions, ToolSchema

__all__ = ["format_request"]

_RESERVED_EXTRA: Final = frozenset(("model", "messages", "stream"))


def format_request(
    messages: Sequence[Msg],
    tools: Sequence[ToolSchema],
    options: ModelOptions,
    *,
    model: str,
    stream: bool,
    think: bool | str | None,
    keep_alive: float | str | None,
) -> dict[str, Any]:
    """Build the `/api/chat` request body (the rules are on `OllamaFormatter`).

    Raises:
        InvalidRequestError: A message, block or option Ollama cannot carry.
    """
    body: dict[str, Any] = {
        "model": model,
        "messages": [_message(m) for m in messages],
        "stream": stream,
    }
    choice = options.tool_choice
    if choice not in (None, "auto", "none"):
        raise unsupported(
            PROVIDER,
            f"tool_choice={choice!r}",
            "Ollama cannot force a tool call; use tool_choice='auto' (or 'none') and ask "
            "for the tool in the prompt",
        )
    if tools and choice != "none":
        if options.parallel_tool_calls is False:
            raise unsupported(
                PROVIDER,
                "parallel_tool_calls=False",
                "Ollama cannot limit a reply to one tool call; leave parallel_tool_calls "
                "unset (the agent runs every call it gets)",
            )
        body["tools"] = [_tool(t) for t in tools]
    if options.response_format is not None:
        body["format"] = _format_field(options.response_format)
    if think is not None:
        body["think"] = think
    if keep_alive is not None:
        body["keep_alive"] = keep_alive
    _add_options(body, options)
    return body


def _message(msg: Msg) -> dict[str, Any]:
    if msg.name is not None:
        raise unsupported(
            PROVIDER,
            f"a message with name={msg.name!r}",
            "Ollama messages have no speaker name; put it into the text (for example "
            "'alice: ...') and leave Msg.name unset",
        )
    role = msg.role
    content = msg.content
    if role == "tool":
        return _tool_message(content)
    if isinstance(content, str):
        return {"role": role, "content": content}
    if role == "assistant":
        return _assistant_message(content)
    text, images = _text_and_images(
        content,
        images_allowed=role == "user",
        where=f"a {role} message",
        hint=f"{role} messages carry text" + (" and images" if role == "user" else ""),
    )
    out: dict[str, Any] = {"role": role, "content": text}
    if images:
        out["images"] = images
    return out


def _assistant_message(content: Sequence[Block]) -> dict[str, Any]:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thoughts.append(block.thinking)
        elif isinstance(block, ToolUseBlock):
            call: dict[str, Any] = {
                "function": {"name": block.name, "arguments": thaw(block.input)}
            }
            if block.id:
                call["id"] = block.id
            calls.append(call)
        else:
            raise unsupported(
                PROVIDER,
                f"a {block.type} block in an assistant message",
                "assistant messages carry text, thinking and tool calls",
            )
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts)}
    if thoughts:
        out["thinking"] = "\n".join(thoughts)
    if calls:
        out["tool_calls"] = calls
    return out


def _tool_message(content: str | tuple[Block, ...]) -> dict[str, Any]:
    if isinstance(content, str) or len(content) != 1 or not isinstance(content[0], ToolResultBlock):
        raise unsupported(
            PROVIDER,
            "a tool message without exactly one tool result",
            "build it with Msg.tool(ToolResultBlock(...))",
        )
    result = content[0]
    images: list[str] = []
    if isinstance(result.output, str):
        text = result.output
    else:
        text, images = _text_and_images(
            result.output,
            images_allowed=True,
            where="a tool result",
            hint="return text and images",
        )
    out: dict[str, Any] = {
        "role": "tool",
        "content": TOOL_ERROR_PREFIX + text if result.is_error else text,
        "tool_name": result.name,
    }
    if result.id:
        out["tool_call_id"] = result.id
    if images:
        out["images"] = images
    return out


def _text_and_images(
    blocks: Sequence[Block], *, images_allowed: bool, where: str, hint: str
) -> tuple[str, list[str]]:
    """Return the text blocks joined with newlines and the images as base64; refuse the rest."""
    texts: list[str] = []
    images: list[str] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ImageBlock) and images_allowed:
            images.append(_image_data(block))
        else:
            raise unsupported(PROVIDER, f"a {block.type} block in {where}", hint)
    return "\n".join(texts), images


def _image_data(block: ImageBlock) -> str:
    if block.data is not None:
        return block.data
    url = block.url or ""
    if url.startswith("data:"):
        header, comma, payload = url.partition(",")
        if comma and header.endswith(";base64"):
            return payload
    raise unsupported(
        PROVIDER,
        f"the image URL {url[:80]!r}",
        "Ollama takes image bytes only: download the image and pass "
        "ImageBlock(data=<base64>, media_type=...) (or a base64 data: URL)",
    )


def _add_options(body: dict[str, Any], options: ModelOptions) -> None:
    """Set `body["options"]` from the typed fields, then merge `extra` (see `OllamaFormatter`)."""
    sampling: dict[str, Any] = {}
    if options.temperature is not None:
        sampling["temperature"] = options.temperature
    if options.max_output_tokens is not None:
        sampling["num_predict"] = options.max_output_tokens
    if options.stop is not None:
        sampling["stop"] = list(options.stop)
    if options.seed is not None:
        sampling["seed"] = options.seed
    for key, value in options.extra.items():
        if key in _RESERVED_EXTRA:
            raise unsupported(
                PROVIDER,
                f"extra[{key!r}]",
                "the client sets it; pass the model name to the client and the messages to the "
                "call",
            )
        if key == "options":
            if not isinstance(value, Mapping):
                raise unsupported(
                    PROVIDER, "a non-object extra['options']", "pass a dict of Ollama options"
                )
            sampling.update(thaw(value))
        else:
            body[key] = thaw(value)
    if sampling:
        body["options"] = sampling


def _tool(schema: ToolSchema) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": schema.name,
            "description": schema.description,
            "parameters": thaw(schema.parameters),
        },
    }


def _format_field(response_format: Mapping[str, Any]) -> Any:
    kind = response_format.get("type")
    if kind == "json_object":
        return "json"
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        if isinstance(schema, Mapping):
            return thaw(schema)
    raise unsupported(
        PROVIDER,
        f"response_format={thaw(response_format)!r}",
        "use {'type': 'json_object'} or {'type': 'json_schema', 'json_schema': "
        "{'name': ..., 'schema': {...}}}",
    )
