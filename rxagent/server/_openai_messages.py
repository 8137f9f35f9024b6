"""The `messages` of a Chat Completions request: their checks and their conversion to `Msg`s.

Checks name the parameter the way OpenAI does (`messages[2].content`). Conversion is
`OpenAIFormatter.parse_request`, the inverse of the formatter rxagent sends OpenAI requests with
(`developer` messages become system messages, a tool message's `"Error: "` prefix sets
`is_error`, ...).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any, Final

from rxagent.formatters.openai import OpenAIFormatter
from rxagent.server._openai_errors import (
    invalid,
    missing,
    read_object,
    read_text,
    unsupported,
    wrong_type,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rxagent.errors import ApiError
    from rxagent.messages import Msg

__all__ = ["new_input", "read_messages"]

_ROLES: Final = ("system", "developer", "user", "assistant", "tool")
_PART_TYPES: Final = frozenset(("text", "image_url", "input_audio", "file", "refusal"))
_FORMATTER: Final = OpenAIFormatter()


def _check_parts(content: object, param: str, allowed: tuple[str, ...]) -> None:
    """`content` is a string, or an array of parts whose types are in `allowed`."""
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise wrong_type(param, "a string or an array of content parts", content)
    for j, raw in enumerate(content):
        where = f"{param}[{j}]"
        part = read_object(raw, where)
        kind = read_text(part, "type", where)
        if kind not in allowed:
            listed = ", ".join(f"'{a}'" for a in allowed)
            if kind in _PART_TYPES:
                raise unsupported(
                    f"{where}.type",
                    f"Content parts of type '{kind}' are not supported in this message; "
                    f"supported: {listed}.",
                )
            raise invalid(
                f"{where}.type", f"Invalid value: '{kind}'. Supported values are: {listed}."
            )
        if kind == "image_url":
            image = read_object(part.get("image_url"), f"{where}.image_url")
            url = read_text(image, "url", f"{where}.image_url") or ""
            head, _, data = url.partition(",")
            if head.startswith("data:") and head.endswith(";base64") and not _is_base64(data):
                raise invalid(
                    f"{where}.image_url.url",
                    "Invalid image data URL: the data after 'base64,' is not valid base64.",
                )
        else:
            read_text(part, kind, where)


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _check_tool_calls(calls: object, param: str) -> None:
    if not isinstance(calls, list):
        raise wrong_type(param, "an array", calls)
    for j, raw in enumerate(calls):
        where = f"{param}[{j}]"
        call = read_object(raw, where)
        read_text(call, "id", where)
        kind = call.get("type", "function")
        if kind != "function":
            raise unsupported(
                f"{where}.type", f"Tool calls of type {kind!r} are not supported; use 'function'."
            )
        function = read_object(call.get("function"), f"{where}.function")
        read_text(function, "name", f"{where}.function")
        arguments = read_text(function, "arguments", f"{where}.function") or ""
        try:
            parsed = json.loads(arguments) if arguments else {}
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise invalid(
                f"{where}.function.arguments",
                "Invalid 'arguments': expected a JSON object (in a string) of the arguments.",
            )


def _check_message(raw: object, param: str) -> None:
    """Check one wire message's shape."""
    item = read_object(raw, param)
    role = read_text(item, "role", param)
    if role == "function":
        raise unsupported(
            f"{param}.role",
            "The deprecated 'function' role is not supported: this server runs the agent's "
            "tools itself.",
        )
    if role not in _ROLES:
        supported = ", ".join(f"'{r}'" for r in _ROLES)
        raise invalid(
            f"{param}.role", f"Invalid value: '{role}'. Supported values are: {supported}."
        )
    read_text(item, "name", param, required=False)
    content = item.get("content")
    if role == "assistant":
        if content is not None:
            _check_parts(content, f"{param}.content", ("text", "refusal"))
        read_text(item, "reasoning_content", param, required=False)
        if item.get("tool_calls") is not None:
            _check_tool_calls(item["tool_calls"], f"{param}.tool_calls")
    elif content is None:
        raise missing(f"{param}.content")
    else:
        allowed = ("text", "image_url") if role == "user" else ("text",)
        _check_parts(content, f"{param}.content", allowed)
    if role == "tool":
        read_text(item, "tool_call_id", param)


def _unanswered(pending: dict[str, int]) -> ApiError:
    return invalid(
        f"messages[{min(pending.values())}].tool_calls",
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        f"{', '.join(sorted(pending))}.",
    )


def _check_pairs(wire: Sequence[Mapping[str, Any]]) -> None:
    """Every tool message answers a call of the assistant message just before its run."""
    pending: dict[str, int] = {}  # unanswered call id → the assistant message's position
    for i, item in enumerate(wire):
        role = item["role"]
        if role == "tool":
            call_id = item["tool_call_id"]
            if pending.pop(call_id, None) is None:
                raise invalid(
                    f"messages[{i}].tool_call_id",
                    "Invalid parameter: a message with role 'tool' must answer a tool call of "
                    f"the assistant message before it; no unanswered call has id {call_id!r}.",
                )
            continue
        if pending:
            raise _unanswered(pending)
        if role == "assistant":
            ids = [c["id"] for c in item.get("tool_calls") or ()]
            if len(set(ids)) != len(ids):
                raise invalid(f"messages[{i}].tool_calls", "Tool call ids must be unique.")
            pending = dict.fromkeys(ids, i)
    if pending:
        raise _unanswered(pending)


def read_messages(value: object) -> tuple[Msg, ...]:
    """Check the `messages` array and convert it with `OpenAIFormatter.parse_request`."""
    if value is None:
        raise missing("messages")
    if not isinstance(value, list):
        raise wrong_type("messages", "an array", value)
    if not value:
        raise invalid(
            "messages", "Invalid 'messages': empty array. Expected an array with minimum length 1."
        )
    for i, raw in enumerate(value):
        _check_message(raw, f"messages[{i}]")
    _check_pairs(value)
    if value[-1]["role"] == "assistant":
        raise invalid(
            "messages",
            "The last message is the assistant's: end 'messages' with the user's message (this "
            "server does not continue a partial assistant message).",
        )
    messages, _, _ = _FORMATTER.parse_request({"messages": value})
    return tuple(messages)


def new_input(messages: Sequence[Msg], *, has_history: bool) -> tuple[Msg, ...]:
    """The messages a run on a session takes from a request's `messages`.

    A session without history takes them all. A session with history already holds everything
    up to the last assistant message, so it takes the messages after that one, except system
    messages (a session's instructions are set when it starts).

    Raises:
        ApiError: 422 when a session with history would get no user message, or a tool message
            (this server never hands out tool calls, so the client has none to answer).

    Example:
        ```python
        from rxagent import Msg
        from rxagent.server._openai_messages import new_input

        sent = [Msg.system("Be brief."), Msg.user("hi"), Msg.assistant("Hello!"), Msg.user("2+2?")]
        assert new_input(sent, has_history=False) == tuple(sent)
        assert [m.text for m in new_input(sent, has_history=True)] == ["2+2?"]
        ```
    """
    if not has_history:
        return tuple(messages)
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    fresh = tuple(m for m in messages[last + 1 :] if m.role != "system")
    if not fresh or any(m.role == "tool" for m in fresh):
        raise invalid(
            "messages",
            "With X-Session-Id, the messages after the last assistant message are the new input, "
            "and they must be user messages (system messages there are ignored: a session keeps "
            "the instructions it started with).",
        )
    return fresh
