"""Responses: whole `/api/chat` replies, streamed NDJSON lines, finish reasons, usage, errors."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

from rxagent._fast import trusted
from rxagent.errors import AgentRunError, ErrorCode
from rxagent.formatters.base import malformed, provider_error, status_error
from rxagent.formatters.ollama._shared import PROVIDER, tool_use_block
from rxagent.messages import Msg, TextBlock, ThinkingBlock
from rxagent.models.base import (
    FinishDelta,
    ModelDelta,
    ModelResponse,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageDelta,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rxagent.messages import Block

__all__ = ["OllamaStreamParser", "error_from_response", "parse_response"]

_CONTEXT_MARKER: Final = "exceeds maximum context length"
_MODEL_NOT_FOUND: Final = re.compile(r"\bmodel\s+['\"]?[^'\"]*['\"]?\s+not found", re.IGNORECASE)


def parse_response(body: Any) -> ModelResponse:
    """Read a whole (`"stream": false`) response.

    Raises:
        ProviderError: A body that is not a finished chat response (or has an unknown
            `done_reason`).
        AgentRunError: The body is an Ollama error (`{"error": "..."}`), typed by its text.
    """
    if not isinstance(body, dict):
        raise malformed(PROVIDER, "the response is not a JSON object", body)
    message = body.get("message")
    if not isinstance(message, dict):
        if isinstance(body.get("error"), str):
            raise _error_from_text(body["error"], body)
        raise malformed(PROVIDER, "the response has no message object", body)
    if body.get("done") is not True:
        raise malformed(PROVIDER, "a whole response must have done: true", body)
    thinking, content, calls = _message_parts(message, body)
    blocks: list[Block] = []
    if thinking:
        blocks.append(ThinkingBlock(thinking=thinking))
    if content:
        blocks.append(TextBlock(text=content))
    for call in calls:
        call_id, name, args = _tool_call(call, body)
        blocks.append(tool_use_block(call_id or "", name, args))
    return ModelResponse(
        message=Msg(role="assistant", content=tuple(blocks)),
        usage=_usage(body),
        finish_reason=_finish_reason(body.get("done_reason"), bool(calls), body),
    )


class OllamaStreamParser:
    """Turns the decoded NDJSON lines of one streamed `/api/chat` response into deltas.

    Each line's `message` may carry `thinking` and `content` pieces and whole `tool_calls`; a
    block's index is its position in the response (in order of first appearance). The line with
    `"done": true` gives the usage and the finish reason; the stream is complete only after it.

    Example:
        ```python
        from rxagent.formatters.ollama import OllamaStreamParser

        parser = OllamaStreamParser()
        call = {"function": {"name": "add", "arguments": {"a": 1}}}
        [delta] = parser.feed({"message": {"role": "assistant", "content": "",
                                           "tool_calls": [call]}, "done": False})
        assert (delta.id, delta.name, delta.args) == (None, "add", '{"a": 1}')
        ```
    """

    __slots__ = ("_calls", "_done", "_next", "_text", "_thinking")

    def __init__(self) -> None:
        self._next = 0
        self._text = -1
        self._thinking = -1
        self._calls = False
        self._done = False

    def feed(self, event: Any) -> list[ModelDelta]:
        """Return the deltas of one decoded line (lines after the done line are ignored).

        Raises:
            AgentRunError: An `{"error": "..."}` line, typed by its text.
            ProviderError: A line that is not an Ollama chat chunk.
        """
        if self._done:
            return []
        try:
            message = event["message"]
        except (KeyError, TypeError, IndexError):
            return self._without_message(event)
        if type(message) is not dict:
            raise malformed(PROVIDER, "a stream line whose message is not an object", event)
        thinking, content, calls = _message_parts(message, event)
        out: list[ModelDelta] = []
        if thinking:
            if self._thinking < 0:
                self._thinking = self._claim_index()
            out.append(trusted(ThinkingDelta, index=self._thinking, text=thinking))
        if content:
            if self._text < 0:
                self._text = self._claim_index()
            out.append(trusted(TextDelta, index=self._text, text=content))
        if calls:
            for call in calls:
                call_id, name, args = _tool_call(call, event)
                text = args if isinstance(args, str) else json.dumps(args)
                out.append(
                    trusted(
                        ToolCallDelta, index=self._claim_index(), id=call_id, name=name, args=text
                    )
                )
            self._calls = True
        if event.get("done") is True:
            out.extend(self._finish(event))
        return out

    def close(self) -> list[ModelDelta]:
        """End the stream.

        Raises:
            ProviderError: (recoverable) The stream ended before its `"done": true` line.
        """
        if not self._done:
            raise provider_error(
                ErrorCode.PROVIDER_ERROR,
                'the stream ended early: no line with "done": true arrived',
                provider=PROVIDER,
                recoverable=True,
            )
        return []

    def _claim_index(self) -> int:
        """Return the next block index (blocks are numbered in order of first appearance)."""
        index = self._next
        self._next += 1
        return index

    def _without_message(self, event: Any) -> list[ModelDelta]:
        if not isinstance(event, dict):
            raise malformed(PROVIDER, "a stream line that is not a JSON object", event)
        error = event.get("error")
        if error is not None:
            raise _error_from_text(error if isinstance(error, str) else json.dumps(error), event)
        if event.get("done") is True:
            return self._finish(event)
        raise malformed(PROVIDER, "a stream line without a message", event)

    def _finish(self, event: dict[str, Any]) -> list[ModelDelta]:
        reason = _finish_reason(event.get("done_reason"), self._calls, event)
        self._done = True
        return [trusted(UsageDelta, usage=_usage(event)), trusted(FinishDelta, reason=reason)]


def error_from_response(status: int, body: bytes, headers: Mapping[str, str]) -> AgentRunError:
    """Classify a failed response by its HTTP status (see `OllamaFormatter.error_from_response`)."""
    message = _error_message(body)
    code = ErrorCode.CONTEXT_TOO_LONG if message and _CONTEXT_MARKER in message.lower() else None
    return status_error(PROVIDER, status, body, message=message, code=code, headers=headers)


def _error_from_text(message: str, data: Any) -> AgentRunError:
    """The typed error for an Ollama error that came without an HTTP status (in a body or stream).

    `"model '...' not found"` is `INVALID_REQUEST` (as its 404 would be), a message containing
    `"exceeds maximum context length"` is `CONTEXT_TOO_LONG`; anything else is a recoverable
    `PROVIDER_ERROR` (the model runner failed mid-answer).
    """
    lowered = message.lower()
    if _CONTEXT_MARKER in lowered:
        code, recoverable = ErrorCode.CONTEXT_TOO_LONG, False
    elif _MODEL_NOT_FOUND.search(message):
        code, recoverable = ErrorCode.INVALID_REQUEST, False
    else:
        code, recoverable = ErrorCode.PROVIDER_ERROR, True
    body = data if isinstance(data, str) else json.dumps(data, default=str)
    return provider_error(code, message, provider=PROVIDER, body=body, recoverable=recoverable)


def _message_parts(message: dict[str, Any], data: Any) -> tuple[str, str, list[Any]]:
    """Return a reply message's `(thinking, content, tool_calls)`, each empty when missing."""
    thinking = message.get("thinking") or ""
    if not isinstance(thinking, str):
        raise malformed(PROVIDER, "message.thinking is not a string", data)
    content = message.get("content") or ""
    if not isinstance(content, str):
        raise malformed(PROVIDER, "message.content is not a string", data)
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise malformed(PROVIDER, "message.tool_calls is not a list", data)
    return thinking, content, calls


def _tool_call(call: Any, data: Any) -> tuple[str | None, str, Any]:
    """Return `(id or None, name, arguments)` of one wire tool call."""
    try:
        function = call["function"]
        name = function["name"]
        args = function.get("arguments", {})
    except (KeyError, TypeError, IndexError, AttributeError):
        raise malformed(PROVIDER, "a tool call without function.name", data) from None
    if not isinstance(name, str) or not isinstance(args, dict | str):
        raise malformed(PROVIDER, "a tool call whose name or arguments have the wrong type", data)
    call_id = call.get("id")
    return (call_id if isinstance(call_id, str) and call_id else None), name, args


def _usage(event: dict[str, Any]) -> Usage:
    prompt = event.get("prompt_eval_count") or 0
    output = event.get("eval_count") or 0
    if type(prompt) is not int or type(output) is not int:
        raise malformed(PROVIDER, "token counts that are not integers", event)
    return trusted(Usage, input_tokens=prompt, output_tokens=output, requests=1)


def _finish_reason(raw: Any, calls: bool, data: Any) -> str:
    if raw is None or raw == "stop" or raw == "load" or raw == "unload":
        return "tool_calls" if calls else "stop"
    if raw == "length":
        return "length"
    raise malformed(PROVIDER, f"unknown done_reason {raw!r}", data)


def _error_message(body: bytes) -> str | None:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, str):
        return error
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])  # an OpenAI-style proxy in front of Ollama
    return None
