"""Responses: a whole `Message` and the SSE events of a stream, with stop reasons and usage."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final, final

from rxagent._fast import trusted
from rxagent.errors import ErrorCode
from rxagent.formatters.anthropic._constants import (
    PROVIDER,
    REDACTED_THINKING_PREFIX,
    SHAPE_ERRORS,
)
from rxagent.formatters.anthropic._errors import error_from_object
from rxagent.formatters.base import malformed, provider_error
from rxagent.messages import Block, Msg, TextBlock, ThinkingBlock, ToolUseBlock
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

    from rxagent.formatters.framing import SSEEvent

__all__ = ["AnthropicStreamParser", "parse_response"]

_FINISH: Final[dict[str, FinishDelta]] = {
    wire: trusted(FinishDelta, reason=ours)
    for wire, ours in (
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause"),
    )
}


def parse_response(body: Any) -> ModelResponse:
    """Read a whole response (`AnthropicFormatter.parse` has the rules)."""
    if not isinstance(body, dict):
        raise malformed(PROVIDER, "the response is not a JSON object", body)
    if body.get("type") == "error":
        raise error_from_object(body, json.dumps(body))
    try:
        blocks = [b for b in map(_response_block, body["content"]) if b is not None]
        stop = body.get("stop_reason")
        finish = None if stop is None else _FINISH.get(stop)
        if stop is not None and finish is None:
            raise malformed(PROVIDER, f"unknown stop_reason {stop!r}", body)
        usage = _message_usage(body["usage"])
    except SHAPE_ERRORS as exc:
        raise malformed(PROVIDER, f"not a Message ({type(exc).__name__}: {exc})", body) from None
    return ModelResponse(
        message=Msg(role="assistant", content=blocks),
        usage=usage,
        finish_reason=finish.reason if finish is not None else None,
    )


def _response_block(b: dict[str, Any]) -> Block | None:
    kind = b["type"]
    if kind == "text":
        text = b["text"]
        return TextBlock(text=text) if text else None
    if kind == "tool_use":
        raw = b["input"]
        if isinstance(raw, dict):
            return ToolUseBlock(id=b["id"], name=b["name"], input=raw)
        return ToolUseBlock(id=b["id"], name=b["name"], raw_input=json.dumps(raw))
    if kind == "thinking":
        thought, signature = b["thinking"], b.get("signature") or None
        if not thought and signature is None:
            return None  # carries nothing (a stream of it gives no delta either)
        return ThinkingBlock(thinking=thought, signature=signature)
    if kind == "redacted_thinking":
        return ThinkingBlock(thinking="", signature=_redacted_signature(b))
    raise ValueError(f"content block type {kind!r} is not supported by rxagent")


def _redacted_signature(block: Mapping[str, Any]) -> str:
    """The `ThinkingBlock.signature` that stands for a `redacted_thinking` block."""
    data = block["data"]
    if not isinstance(data, str):
        raise TypeError("redacted_thinking data must be a string")
    return REDACTED_THINKING_PREFIX + data


def _block_index(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("index must be an integer")
    return value


def _string(obj: Mapping[str, Any], key: str) -> str:
    value = obj[key]
    if type(value) is not str:
        raise TypeError(f"{key} must be a string")
    return value


def _token_count(usage: Mapping[str, Any], key: str, missing: int) -> int:
    """`usage[key]`, or `missing` where it is absent or null."""
    value = usage.get(key)
    if value is None:
        return missing
    if type(value) is not int:
        raise TypeError(f"usage.{key} must be an integer")
    return value


def _message_usage(usage: Mapping[str, Any]) -> Usage:
    read = _token_count(usage, "cache_read_input_tokens", 0)
    write = _token_count(usage, "cache_creation_input_tokens", 0)
    return _usage_from_counts(
        _token_count(usage, "input_tokens", 0),
        _token_count(usage, "output_tokens", 0),
        read,
        write,
        requests=1,
    )


def _usage_from_counts(
    input_tokens: int, output_tokens: int, read: int, write: int, *, requests: int
) -> Usage:
    # Anthropic's input_tokens leaves the cached prompt tokens out; ours counts every one.
    return trusted(
        Usage,
        input_tokens=input_tokens + read + write,
        output_tokens=output_tokens,
        cache_read_tokens=read,
        cache_write_tokens=write,
        requests=requests,
    )


@final
class AnthropicStreamParser:
    """Turns the SSE events of one streamed Messages response into deltas, one event at a time.

    Block `index` from the wire is the delta index. `message_start` gives the prompt usage and
    `message_delta` the (cumulative) output usage, each as the increase since the last
    `UsageDelta`. `ping` and unknown event types are ignored (Anthropic may add event types);
    `citations_delta` is ignored (citations are not carried). An `error` event raises its typed
    error; `close()` without `message_stop` raises a recoverable `ProviderError`.

    Example:
        ```python
        from rxagent.formatters.anthropic import AnthropicStreamParser
        from rxagent.formatters.framing import SSEEvent

        parser = AnthropicStreamParser()
        delta = parser.feed(SSEEvent(
            event="content_block_delta",
            data='{"type":"content_block_delta","index":0,'
            '"delta":{"type":"text_delta","text":"Hi"}}',
        ))
        assert delta[0].text == "Hi" and delta[0].index == 0
        ```
    """

    __slots__ = ("_done", "_in", "_out", "_pending", "_read", "_write")

    def __init__(self) -> None:
        self._done = False
        self._in = self._out = self._read = self._write = 0
        self._pending: dict[int, Any] = {}  # tool inputs given whole at block start

    def feed(self, event: SSEEvent) -> list[ModelDelta]:
        """Return the deltas of one SSE event.

        Raises:
            AgentRunError: An `error` event, typed by its `error.type`.
            ProviderError: An event that is not JSON or does not have Anthropic's shape.
        """
        data = event.data
        if not data:
            return []  # a comment-only keep-alive
        try:
            obj = json.loads(data)
        except (ValueError, RecursionError):
            raise malformed(PROVIDER, "a stream event is not JSON", data) from None
        try:
            kind = obj["type"]
            if kind == "content_block_delta":
                return self._delta(obj["index"], obj["delta"])
            if kind == "content_block_start":
                return self._start(obj["index"], obj["content_block"])
            if kind == "content_block_stop":
                pending = self._pending.pop(obj["index"], None) if self._pending else None
                if pending is None:
                    return []
                args = json.dumps(pending)
                return [trusted(ToolCallDelta, index=obj["index"], args=args)]
            if kind == "message_start":
                return self._message_start(obj["message"])
            if kind == "message_delta":
                return self._message_delta(obj["delta"], obj["usage"])
            if kind == "message_stop":
                self._done = True
                return []
            if kind == "error":
                raise error_from_object(obj, data)
            return []  # ping, and event types added after this was written
        except SHAPE_ERRORS as exc:
            what = f"unexpected {event.event or 'stream'} event ({type(exc).__name__}: {exc})"
            raise malformed(PROVIDER, what, data) from None

    def close(self) -> list[ModelDelta]:
        """End the stream.

        Raises:
            ProviderError: `message_stop` never came (recoverable: the stream ended early).
        """
        if not self._done:
            raise provider_error(
                ErrorCode.PROVIDER_ERROR,
                "the stream ended early (no message_stop event)",
                provider=PROVIDER,
                recoverable=True,
            )
        return []

    def _delta(self, index: Any, delta: Any) -> list[ModelDelta]:
        index, kind = _block_index(index), delta["type"]
        if kind == "text_delta":
            return [trusted(TextDelta, index=index, text=_string(delta, "text"))]
        if kind == "input_json_delta":
            part = _string(delta, "partial_json")
            if self._pending:
                self._pending.pop(index, None)  # the fragments replace a start input
            return [trusted(ToolCallDelta, index=index, args=part)] if part else []
        if kind == "thinking_delta":
            return [trusted(ThinkingDelta, index=index, text=_string(delta, "thinking"))]
        if kind == "signature_delta":
            signature = _string(delta, "signature")
            return [trusted(ThinkingDelta, index=index, text="", signature=signature)]
        if kind == "citations_delta":
            return []
        raise ValueError(f"unknown delta type {kind!r}")

    def _start(self, index: Any, block: Any) -> list[ModelDelta]:
        index, kind = _block_index(index), block["type"]
        if kind == "text":
            text = block.get("text") or ""
            if type(text) is not str:
                raise TypeError("text must be a string")
            return [trusted(TextDelta, index=index, text=text)] if text else []
        if kind == "tool_use":
            call_id, name, start = block["id"], block["name"], block.get("input")
            if type(call_id) is not str or type(name) is not str:
                raise TypeError("tool_use id and name must be strings")
            if start:
                self._pending[index] = start
            return [trusted(ToolCallDelta, index=index, id=call_id or None, name=name)]
        if kind == "thinking":
            text, signature = block.get("thinking") or "", block.get("signature") or None
            if type(text) is not str or (signature is not None and type(signature) is not str):
                raise TypeError("thinking and signature must be strings")
            if not text and signature is None:
                return []
            return [trusted(ThinkingDelta, index=index, text=text, signature=signature)]
        if kind == "redacted_thinking":
            signature = _redacted_signature(block)
            return [trusted(ThinkingDelta, index=index, text="", signature=signature)]
        raise ValueError(f"content block type {kind!r} is not supported by rxagent")

    def _message_start(self, message: Any) -> list[ModelDelta]:
        if message["content"]:
            raise ValueError("message_start carries content")
        return self._usage_delta(message["usage"], first=True)

    def _message_delta(self, delta: Any, usage: Any) -> list[ModelDelta]:
        deltas = self._usage_delta(usage, first=False)
        stop = delta.get("stop_reason")
        if stop is not None:
            finish = _FINISH.get(stop)
            if finish is None:
                raise ValueError(f"unknown stop_reason {stop!r}")
            deltas.append(finish)
        return deltas

    def _usage_delta(self, usage: Any, *, first: bool) -> list[ModelDelta]:
        # Counts are cumulative: a value given replaces the last one, a missing one keeps it.
        old = (self._in, self._out, self._read, self._write)
        self._in = _token_count(usage, "input_tokens", self._in)
        self._out = _token_count(usage, "output_tokens", self._out)
        self._read = _token_count(usage, "cache_read_input_tokens", self._read)
        self._write = _token_count(usage, "cache_creation_input_tokens", self._write)
        d_in, d_out = self._in - old[0], self._out - old[1]
        d_read, d_write = self._read - old[2], self._write - old[3]
        if not first and not (d_in or d_out or d_read or d_write):
            return []
        usage_delta = _usage_from_counts(d_in, d_out, d_read, d_write, requests=1 if first else 0)
        return [trusted(UsageDelta, usage=usage_delta)]
