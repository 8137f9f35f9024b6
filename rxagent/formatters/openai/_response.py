"""OpenAI responses: a whole `chat.completion`, and `chat.completion.chunk` streams.

Finish reasons and usage are read here for both; the stream parser is on the hot path, so its
per-chunk work stays inline (no helper calls beyond what each chunk needs).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent._fast import trusted
from rxagent.errors import ErrorCode
from rxagent.formatters._openai_style import parse_arguments
from rxagent.formatters.base import malformed, provider_error, response_to_deltas
from rxagent.formatters.openai._errors import stream_error
from rxagent.messages import Block, Msg, TextBlock, ThinkingBlock, ToolUseBlock, freeze
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
    from rxagent.formatters.openai._formatter import OpenAIFormatter

__all__ = [
    "FINISH_REASON_MAP",
    "OpenAIStreamParser",
    "completion_deltas",
    "parse_completion",
    "read_tool_call",
]

FINISH_REASON_MAP: Final[Mapping[str, str]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
    "function_call": "tool_calls",
}
"""OpenAI's finish reasons → rxagent's vocabulary; any other value is a malformed response."""


def parse_completion(body: Any, provider: str) -> ModelResponse:
    """Read a whole `chat.completion` response (see `OpenAIFormatter.parse`)."""
    if isinstance(body, dict) and body.get("error") is not None:
        raise stream_error(provider, body, json.dumps(body))
    try:
        choice = body["choices"][0]
        wire = choice["message"]
        blocks: list[Block] = []
        reasoning = wire.get("reasoning_content") or wire.get("reasoning")
        if reasoning:
            blocks.append(trusted(ThinkingBlock, thinking=str(reasoning), signature=None))
        for key in ("content", "refusal"):
            text = wire.get(key)
            if text:
                blocks.append(trusted(TextBlock, text=str(text)))
        blocks.extend(read_tool_call(call) for call in wire.get("tool_calls") or ())
        finish = _finish(choice.get("finish_reason"))
        usage = _usage(body.get("usage"))
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise malformed(provider, f"not a chat completion ({exc!r})", body) from exc
    except _UnknownFinish as exc:
        raise malformed(provider, f"unknown finish_reason {exc.args[0]!r}", body) from None
    message = trusted(Msg, role="assistant", content=tuple(blocks))
    return trusted(ModelResponse, message=message, usage=usage, finish_reason=finish)


def completion_deltas(body: Any, provider: str) -> list[ModelDelta]:
    """Read a whole `chat.completion` into deltas (see `OpenAIFormatter.parse_deltas`).

    The same reading as `parse_completion`, in the same order, so it fails the same way; a
    tool call's `arguments` text is passed through as `ToolCallDelta.args` (not parsed here:
    `ResponseBuilder` reads it as it reads a streamed call's). One delta per block, then usage
    and the finish reason, as `response_to_deltas(parse_completion(body))` gives.
    """
    if isinstance(body, dict) and body.get("error") is not None:
        raise stream_error(provider, body, json.dumps(body))
    try:
        choice = body["choices"][0]
        wire = choice["message"]
        deltas: list[ModelDelta] = []
        reasoning = wire.get("reasoning_content") or wire.get("reasoning")
        if reasoning:
            deltas.append(trusted(ThinkingDelta, index=0, text=str(reasoning)))
        text = wire.get("content")
        if text:
            deltas.append(trusted(TextDelta, index=len(deltas), text=str(text)))
        text = wire.get("refusal")
        if text:
            deltas.append(trusted(TextDelta, index=len(deltas), text=str(text)))
        for call in wire.get("tool_calls") or ():
            function = call["function"]
            args = function.get("arguments") or ""
            if type(args) is not str:  # `parse` refuses it: the same error, from the same code
                return response_to_deltas(parse_completion(body, provider))
            deltas.append(
                trusted(
                    ToolCallDelta,
                    index=len(deltas),
                    id=str(call.get("id") or "") or None,
                    name=str(function["name"]),
                    args=args,
                )
            )
        finish = _finish(choice.get("finish_reason"))
        usage = _usage(body.get("usage"))
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise malformed(provider, f"not a chat completion ({exc!r})", body) from exc
    except _UnknownFinish as exc:
        raise malformed(provider, f"unknown finish_reason {exc.args[0]!r}", body) from None
    deltas.append(trusted(UsageDelta, usage=usage))
    deltas.append(trusted(FinishDelta, reason=finish))
    return deltas


def read_tool_call(call: Mapping[str, Any]) -> ToolUseBlock:
    """A `tool_calls` item → `ToolUseBlock` (arguments that are not a JSON object kept raw)."""
    function = call["function"]
    args = function.get("arguments") or ""
    parsed = parse_arguments(args)
    raw = None
    if parsed is None:
        parsed, raw = {}, args
    return trusted(
        ToolUseBlock,
        id=str(call.get("id") or ""),
        name=str(function["name"]),
        input=freeze(parsed),
        raw_input=raw,
    )


class _UnknownFinish(Exception):
    pass


def _finish(reason: Any) -> str | None:
    if reason is None:
        return None
    mapped = FINISH_REASON_MAP.get(reason) if isinstance(reason, str) else None
    if mapped is None:
        raise _UnknownFinish(reason)
    return mapped


def _usage(wire: Any) -> Usage:
    if not wire:
        return trusted(Usage, requests=1)
    details = wire.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if details else None
    return trusted(
        Usage,
        input_tokens=wire.get("prompt_tokens") or 0,
        output_tokens=wire.get("completion_tokens") or 0,
        cache_read_tokens=cached or 0,
        requests=1,
    )


class OpenAIStreamParser:
    r"""Turns `chat.completion.chunk` SSE events into deltas, incrementally.

    Block indexes follow first appearance: reasoning, text and each tool call (by the wire's
    `tool_calls[].index`, so interleaved fragments of parallel calls keep their own index).
    Usage and the finish reason are held until `data: [DONE]`, then sent as a `UsageDelta`
    (the last usage seen; `requests=1`) and a `FinishDelta`. A stream that ends without
    `[DONE]` raises a recoverable `ProviderError` from `close()`.

    Example:
        ```python
        from rxagent.formatters.openai import OpenAIFormatter
        from rxagent.formatters.framing import SSEDecoder

        parser = OpenAIFormatter().stream_parser()
        raw = (
            b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
            b"data: [DONE]\n\n"
        )
        deltas = [d for event in SSEDecoder().feed(raw) for d in parser.feed(event)]
        assert [d.type for d in deltas] == ["text_delta", "usage_delta", "finish_delta"]
        assert parser.close() == []
        ```
    """

    __slots__ = ("_calls", "_done", "_finish", "_fmt", "_next", "_text", "_thinking", "_usage")

    def __init__(self, formatter: OpenAIFormatter) -> None:
        self._fmt = formatter
        self._next = 0  # the next block index
        self._text = -1  # the text block's index, once it started
        self._thinking = -1
        self._calls: dict[int, int] = {}  # the wire's tool-call index → block index
        self._usage: Any = None
        self._finish: str | None = None
        self._done = False

    def feed(self, event: SSEEvent) -> list[ModelDelta]:
        """Return the deltas of one SSE event.

        Raises:
            AgentRunError: An `{"error": ...}` event, typed by its code.
            ProviderError: An event that is not a chunk (non-JSON data, wrong shape, an unknown
                finish reason).
        """
        data = event.data
        if not data or self._done:
            return []  # a keep-alive comment, or something after [DONE]
        try:
            chunk = json.loads(data)
        except ValueError:
            if data.strip() == "[DONE]":
                return self._end()
            raise malformed(self._fmt.provider, "a stream event is not JSON", data) from None
        try:
            get = chunk.get  # AttributeError for anything but an object
            if get("error") is not None or get("object") == "error":
                raise stream_error(self._fmt.provider, chunk, data)
            usage = get("usage")
            if usage:
                if type(usage) is not dict:
                    raise TypeError("usage is not an object")
                self._usage = usage
            choices = get("choices")
            if not choices:
                return []
            choice = choices[0]
            if choice.get("index"):
                return []  # another choice of an n > 1 request: only choice 0 is read
            out: list[ModelDelta] = []
            delta = choice["delta"] if "delta" in choice else None
            if delta:
                self._delta(delta, out)
            reason = choice.get("finish_reason")
            if reason is not None:
                self._finish = _finish(reason)
            return out
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise malformed(
                self._fmt.provider, f"a stream chunk has the wrong shape ({exc!r})", data
            ) from None
        except _UnknownFinish as exc:
            raise malformed(
                self._fmt.provider, f"unknown finish_reason {exc.args[0]!r}", data
            ) from None

    def _delta(self, delta: dict[str, Any], out: list[ModelDelta]) -> None:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            if self._thinking < 0:
                self._thinking = self._next
                self._next += 1
            out.append(trusted(ThinkingDelta, index=self._thinking, text=_text(reasoning)))
        content = delta.get("content") or delta.get("refusal")
        if content:
            if self._text < 0:
                self._text = self._next
                self._next += 1
            out.append(trusted(TextDelta, index=self._text, text=_text(content)))
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                self._call(call, out)

    def _call(self, call: dict[str, Any], out: list[ModelDelta]) -> None:
        wire_index = call.get("index")
        if type(wire_index) is not int:  # a server that leaves the index out: id starts a call
            wire_index = len(self._calls) - (0 if call.get("id") or not self._calls else 1)
        function = call.get("function") or {}
        args = function.get("arguments") or ""
        index = self._calls.get(wire_index)
        if index is None:
            index = self._calls[wire_index] = self._next
            self._next += 1
            name = function.get("name")
            out.append(
                trusted(
                    ToolCallDelta,
                    index=index,
                    id=call.get("id") or None,
                    name=name if isinstance(name, str) else None,
                    args=_text(args),
                )
            )
        elif args:
            out.append(trusted(ToolCallDelta, index=index, args=_text(args)))

    def _end(self) -> list[ModelDelta]:
        self._done = True
        usage = trusted(UsageDelta, usage=_usage(self._usage))
        if self._finish is None:
            return [usage]
        return [usage, trusted(FinishDelta, reason=self._finish)]

    def close(self) -> list[ModelDelta]:
        """End the stream.

        Raises:
            ProviderError: `data: [DONE]` never came (recoverable: the stream ended early).
        """
        if self._done:
            return []
        raise provider_error(
            ErrorCode.PROVIDER_ERROR,
            "the stream ended early (no data: [DONE])",
            provider=self._fmt.provider,
            recoverable=True,
        )


def _text(value: Any) -> str:
    if type(value) is str:
        return value
    raise TypeError(f"expected a string, got {type(value).__name__}")
