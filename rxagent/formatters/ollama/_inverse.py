"""`parse_request`: an Ollama `/api/chat` request body back to messages, tools and options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rxagent.formatters.base import malformed
from rxagent.formatters.ollama._shared import PROVIDER, TOOL_ERROR_PREFIX, tool_use_block
from rxagent.messages import ImageBlock, Msg, TextBlock, ThinkingBlock, ToolResultBlock
from rxagent.models.base import ModelOptions, ToolSchema

if TYPE_CHECKING:
    from rxagent.messages import Block, ToolUseBlock

__all__ = ["parse_request"]

_BODY_KEYS: Final = frozenset(("model", "messages", "stream", "tools", "options", "format"))
_IMAGE_MAGIC: Final = (
    ("iVBORw0KGgo", "image/png"),
    ("/9j/", "image/jpeg"),
    ("R0lGOD", "image/gif"),
    ("UklGR", "image/webp"),
)


def parse_request(body: Any) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
    """Read a request body back into messages, tools and options: the inverse of `format_request`.

    Raises:
        ProviderError: A body that is not an `/api/chat` request.
    """
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise malformed(PROVIDER, "a request body without a messages list", body)
    try:
        messages = _parse_messages(body["messages"])
        tools = [_parse_tool(t) for t in body.get("tools") or ()]
        options = _parse_options(body)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise malformed(
            PROVIDER, f"not an /api/chat request body ({type(exc).__name__}: {exc})", body
        ) from None
    return messages, tools, options


def _parse_messages(raw: list[Any]) -> list[Msg]:
    out: list[Msg] = []
    pending: list[ToolUseBlock] = []  # calls of the last assistant message not yet answered
    for item in raw:
        role = item["role"]
        content = item.get("content") or ""
        if not isinstance(content, str):
            raise TypeError(f"the content of a {role} message is not a string")
        if role == "tool":
            out.append(_parse_tool_message(item, content, pending))
        elif role == "assistant":
            msg = _parse_assistant(item, content)
            pending = list(msg.tool_calls)
            out.append(msg)
        elif role == "user" or role == "system":
            with_images = _with_images(content, item)
            if role == "system" and not isinstance(with_images, str):
                raise ValueError("a system message with images")
            out.append(Msg(role=role, content=with_images))
        else:
            raise ValueError(f"unknown role {role!r}")
    return out


def _parse_assistant(item: dict[str, Any], content: str) -> Msg:
    blocks: list[Block] = []
    thinking = item.get("thinking")
    if thinking is not None:
        blocks.append(ThinkingBlock(thinking=thinking))
    if content:
        blocks.append(TextBlock(text=content))
    for call in item.get("tool_calls") or ():
        function = call["function"]
        call_id = call.get("id") or ""
        args = function.get("arguments", {})
        blocks.append(tool_use_block(call_id, function["name"], args))
    if len(blocks) == (1 if content else 0):
        return Msg(role="assistant", content=content)
    return Msg(role="assistant", content=tuple(blocks))


def _parse_tool_message(item: dict[str, Any], content: str, pending: list[ToolUseBlock]) -> Msg:
    call_id = item.get("tool_call_id") or ""
    name = item.get("tool_name") or ""
    match = next(
        (
            call
            for call in pending
            if (call.id == call_id if call_id else not name or call.name == name)
        ),
        None,
    )
    if match is not None:
        pending.remove(match)
        call_id = call_id or match.id
        name = name or match.name
    is_error = content.startswith(TOOL_ERROR_PREFIX)
    if is_error:
        content = content[len(TOOL_ERROR_PREFIX) :]
    output = _with_images(content, item)
    result = ToolResultBlock(id=call_id, name=name, output=output, is_error=is_error)
    return Msg(role="tool", content=(result,))


def _with_images(text: str, item: dict[str, Any]) -> str | tuple[Block, ...]:
    """Return `text` alone, or as a text block (when not empty) followed by `item`'s images."""
    images = tuple(_parse_image(data) for data in item.get("images") or ())
    if not images:
        return text
    return ((TextBlock(text=text),) if text else ()) + images


def _parse_image(data: Any) -> ImageBlock:
    if not isinstance(data, str):
        raise TypeError("an image that is not a base64 string")
    media_type = next(
        (kind for magic, kind in _IMAGE_MAGIC if data.startswith(magic)),
        "application/octet-stream",
    )
    return ImageBlock(data=data, media_type=media_type)


def _parse_tool(tool: Any) -> ToolSchema:
    function = tool["function"]
    fields: dict[str, Any] = {"name": function["name"]}
    if function.get("description"):
        fields["description"] = function["description"]
    if function.get("parameters") is not None:
        fields["parameters"] = function["parameters"]
    return ToolSchema(**fields)


def _parse_options(body: dict[str, Any]) -> ModelOptions:
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    sampling = body.get("options") or {}
    if not isinstance(sampling, dict):
        raise TypeError("options is not an object")
    rest: dict[str, Any] = {}
    for key, value in sampling.items():
        if key == "temperature":
            fields["temperature"] = value
        elif key == "num_predict":
            fields["max_output_tokens"] = value
        elif key == "stop" and isinstance(value, list):
            fields["stop"] = tuple(value)
        elif key == "seed":
            fields["seed"] = value
        else:
            rest[key] = value
    if rest:
        extra["options"] = rest
    fmt = body.get("format")
    if fmt == "json":
        fields["response_format"] = {"type": "json_object"}
    elif isinstance(fmt, dict):
        fields["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": fmt},
        }
    elif fmt is not None:
        extra["format"] = fmt
    extra.update((key, value) for key, value in body.items() if key not in _BODY_KEYS)
    if extra:
        fields["extra"] = extra
    return ModelOptions(**fields)
