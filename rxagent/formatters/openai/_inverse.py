"""`OpenAIFormatter.parse_request`: a `/chat/completions` body → messages, tools and options.

The inverse of `_request`, used by the fake server; what `format` normalises comes back
normalised.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from rxagent.formatters.base import malformed
from rxagent.formatters.openai._request import ERROR_PREFIX, IMAGES_MARK, IMAGES_ONLY_NOTE
from rxagent.formatters.openai._response import read_tool_call
from rxagent.messages import Block, ImageBlock, Msg, TextBlock, ThinkingBlock, ToolResultBlock
from rxagent.models.base import ModelOptions, ToolSchema

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["read_request"]

_IMAGES_MARK_RE: Final = re.compile(re.escape(IMAGES_MARK) + "(.*):", re.DOTALL)
_DATA_URL_RE: Final = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)
_KNOWN_KEYS: Final = frozenset(
    (
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "temperature",
        "max_completion_tokens",
        "max_tokens",
        "response_format",
        "stop",
        "seed",
        "stream",
        "stream_options",
    )
)


def read_request(
    body: Mapping[str, Any], provider: str
) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
    """Read a request body back (see `OpenAIFormatter.parse_request`)."""
    try:
        messages = _read_messages(body["messages"])
        tools = [
            ToolSchema(
                name=t["function"]["name"],
                description=t["function"].get("description") or "",
                parameters=t["function"].get("parameters") or {"type": "object", "properties": {}},
                strict=t["function"].get("strict") is True,
            )
            for t in body.get("tools") or ()
        ]
        options = _read_options(body)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        raise malformed(provider, f"not a chat completions request ({exc!r})", body) from exc
    return messages, tools, options


def _read_options(body: Mapping[str, Any]) -> ModelOptions:
    fields: dict[str, Any] = {}
    choice = body.get("tool_choice")
    if choice is not None:
        fields["tool_choice"] = choice if isinstance(choice, str) else choice["function"]["name"]
    for key in ("parallel_tool_calls", "temperature", "seed", "response_format"):
        if body.get(key) is not None:
            fields[key] = body[key]
    for key in ("max_completion_tokens", "max_tokens"):
        if body.get(key) is not None:
            fields["max_output_tokens"] = body[key]
    stop = body.get("stop")
    if stop is not None:
        fields["stop"] = (stop,) if isinstance(stop, str) else tuple(stop)
    extra = {k: v for k, v in body.items() if k not in _KNOWN_KEYS}
    if extra:
        fields["extra"] = extra
    return ModelOptions(**fields)


def _read_messages(wire: Sequence[Mapping[str, Any]]) -> list[Msg]:
    messages: list[Msg] = []
    names: dict[str, str] = {}  # tool call id → tool name
    tool_run: list[int] = []  # positions of the latest consecutive tool messages
    for item in wire:
        role = item["role"]
        if role != "tool":
            if role == "user" and tool_run and _fold_images(item, messages, tool_run):
                tool_run = []
                continue
            tool_run = []
        if role in ("system", "developer"):
            content = item["content"]
            if not isinstance(content, str):
                content = "".join(part["text"] for part in content)
            messages.append(Msg(role="system", content=content, name=item.get("name")))
        elif role == "user":
            messages.append(_read_user(item))
        elif role == "assistant":
            msg = _read_assistant(item)
            names.update((c.id, c.name) for c in msg.tool_calls)
            messages.append(msg)
        elif role == "tool":
            call_id = item["tool_call_id"]
            text = item["content"]
            if not isinstance(text, str):
                text = "\n".join(part["text"] for part in text)
            is_error = text.startswith(ERROR_PREFIX)
            if is_error:
                text = text[len(ERROR_PREFIX) :]
            result = ToolResultBlock(
                id=call_id, name=names.get(call_id, ""), output=text, is_error=is_error
            )
            tool_run.append(len(messages))
            messages.append(Msg.tool(result))
        else:
            raise ValueError(f"unknown role {role!r}")
    return messages


def _read_image(part: Mapping[str, Any]) -> ImageBlock:
    url = part["image_url"]["url"]
    match = _DATA_URL_RE.fullmatch(url)
    if match is not None:
        return ImageBlock(data=match.group(2), media_type=match.group(1))
    return ImageBlock(url=url)


def _read_user(item: Mapping[str, Any]) -> Msg:
    content = item["content"]
    if not isinstance(content, str):
        content = tuple(
            TextBlock(text=part["text"]) if part["type"] == "text" else _read_image(part)
            for part in content
        )
    return Msg(role="user", content=content, name=item.get("name"))


def _read_assistant(item: Mapping[str, Any]) -> Msg:
    blocks: list[Block] = []
    reasoning = item.get("reasoning_content")
    if reasoning:
        blocks.append(ThinkingBlock(thinking=reasoning))
    content = item.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text") or part.get("refusal") or "" for part in content)
    calls = item.get("tool_calls") or ()
    if not blocks and not calls:
        return Msg(role="assistant", content=content or "", name=item.get("name"))
    if content:
        blocks.append(TextBlock(text=content))
    blocks.extend(read_tool_call(call) for call in calls)
    return Msg(role="assistant", content=tuple(blocks), name=item.get("name"))


def _fold_images(item: Mapping[str, Any], messages: list[Msg], tool_run: list[int]) -> bool:
    """Fold a user message that carries tool-result images back into those results."""
    content = item.get("content")
    if isinstance(content, str) or not content or content[0].get("type") != "text":
        return False
    groups: dict[str, list[ImageBlock]] = {}
    current: list[ImageBlock] | None = None
    for part in content:
        if part.get("type") == "text":
            match = _IMAGES_MARK_RE.fullmatch(part.get("text", ""))
            if match is None:
                return False
            current = groups.setdefault(match.group(1), [])
        elif part.get("type") == "image_url" and current is not None:
            current.append(_read_image(part))
        else:
            return False
    by_id = {messages[i].tool_results[0].id: i for i in tool_run}
    if not set(groups) <= set(by_id):
        return False
    for call_id, images in groups.items():
        pos = by_id[call_id]
        result = messages[pos].tool_results[0]
        text = result.output if isinstance(result.output, str) else ""
        head: tuple[Block, ...] = (
            (TextBlock(text=text),) if text and text != IMAGES_ONLY_NOTE else ()
        )
        messages[pos] = Msg.tool(result.model_copy(update={"output": (*head, *images)}))
    return True
