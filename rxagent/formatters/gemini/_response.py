"""Reading replies: whole `GenerateContentResponse`s, their stream, finish reasons and usage."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent._fast import trusted
from rxagent.errors import ErrorCode
from rxagent.formatters.base import malformed, provider_error
from rxagent.formatters.gemini._errors import api_error
from rxagent.models.base import (
    FinishDelta,
    ModelDelta,
    ModelResponse,
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageDelta,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rxagent.formatters.framing import SSEEvent

__all__ = ["FINISH_ERRORS", "FINISH_REASON_MAP", "GeminiStreamParser", "parse_response"]

FINISH_REASON_MAP: Final[Mapping[str, str]] = {
    "STOP": "stop",
    "FINISH_REASON_UNSPECIFIED": "stop",
    "MAX_TOKENS": "length",
    "CONTINUATION": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "LANGUAGE": "content_filter",
    "OTHER": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_OTHER": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "NO_IMAGE": "content_filter",
    "ESCALATION": "content_filter",
    "PUP_LIMITED_DISABLED": "content_filter",
    "MODEL_ARMOR": "content_filter",
}
"""Gemini's finish reasons → rxagent's vocabulary (`"stop"` becomes `"tool_calls"` when the reply
has function calls). `FINISH_ERRORS` lists the ones that raise; any other value is malformed."""

FINISH_ERRORS: Final[Mapping[str, ErrorCode]] = {
    "MALFORMED_FUNCTION_CALL": ErrorCode.PROVIDER_ERROR,
    "UNEXPECTED_TOOL_CALL": ErrorCode.PROVIDER_ERROR,
    "TOO_MANY_TOOL_CALLS": ErrorCode.PROVIDER_ERROR,
    "MALFORMED_RESPONSE": ErrorCode.PROVIDER_ERROR,
    "MISSING_THOUGHT_SIGNATURE": ErrorCode.INVALID_REQUEST,
}
"""Finish reasons that mean the reply failed: `PROVIDER_ERROR` ones are recoverable (the model
produced a broken reply; trying the step again usually works), `INVALID_REQUEST` is not."""

_UNREADABLE_PARTS: Final = (
    "inlineData",
    "fileData",
    "executableCode",
    "codeExecutionResult",
    "functionResponse",
    "toolCall",
    "toolResponse",
)

_TEXT: Final = 1
_THOUGHT: Final = 2


def parse_response(body: Any, provider: str) -> ModelResponse:
    """Read a whole `GenerateContentResponse` (see `GeminiFormatter.parse`)."""
    if not isinstance(body, dict):
        raise malformed(provider, "the response is not a JSON object", body)
    parser = GeminiStreamParser(provider=provider)
    builder = ResponseBuilder(id_factory=str)  # no id: "" (the agent assigns call_<n>)
    for delta in parser.read(body):
        builder.add(delta)
    if not parser.finished:
        raise malformed(provider, "the response has no finishReason", body)
    for delta in parser.close():
        builder.add(delta)
    return builder.response()


class GeminiStreamParser:
    r"""Turns the chunks of one `streamGenerateContent?alt=sse` response into deltas.

    Each SSE event's data is a whole `GenerateContentResponse` holding the next parts. Usage is
    cumulative, so the last chunk's is reported once, with the finish reason, at `close()`.

    Args:
        provider: The name errors carry.

    Example:
        ```python
        from rxagent.formatters.gemini import GeminiStreamParser
        from rxagent.formatters.framing import SSEDecoder

        raw = (
            b'data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]}'
            b'\r\n\r\n'
            b'data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}, '
            b'"finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 3, '
            b'"candidatesTokenCount": 1}}\r\n\r\n'
        )
        parser = GeminiStreamParser()
        deltas = [d for event in SSEDecoder().feed(raw) for d in parser.feed(event)]
        deltas += parser.close()
        assert [d.text for d in deltas[:2]] == ["Hel", "lo"] and deltas[1].index == 0
        assert deltas[2].usage.input_tokens == 3 and deltas[3].reason == "stop"
        ```
    """

    __slots__ = ("_calls", "_finish", "_next", "_open", "_open_index", "_usage", "provider")

    def __init__(self, *, provider: str = "gemini") -> None:
        self.provider = provider
        self._next = 0  # the index of the next block
        self._open = 0  # the kind of block the next text part may extend (_TEXT, _THOUGHT, 0)
        self._open_index = -1
        self._usage: Any = None
        self._finish: str | None = None
        self._calls = False

    @property
    def finished(self) -> bool:
        """True once a chunk with a finish reason (or a blocked prompt) arrived."""
        return self._finish is not None

    def feed(self, event: SSEEvent) -> list[ModelDelta]:
        """Parse one SSE event (one response chunk).

        Raises:
            AgentRunError: The event is an error object, typed by its status, or the finish
                reason means the reply failed.
            ProviderError: The event is not a response chunk.
        """
        data = event.data
        if not data:  # a comment or keep-alive
            return []
        try:
            chunk = json.loads(data)
        except ValueError:
            raise malformed(self.provider, "a stream event is not JSON", data) from None
        if type(chunk) is not dict:
            raise malformed(self.provider, "a stream event is not a JSON object", data)
        return self.read(chunk)

    def read(self, chunk: dict[str, Any]) -> list[ModelDelta]:
        """Parse one decoded `GenerateContentResponse` chunk."""
        error = chunk.get("error")
        if error is not None:
            if not isinstance(error, dict):
                raise malformed(self.provider, "an error event without an error object", chunk)
            raise api_error(self.provider, error, json.dumps(chunk))
        deltas: list[ModelDelta] = []
        try:
            usage = chunk.get("usageMetadata")
            if usage is not None:
                self._usage = usage
            candidates = chunk.get("candidates")
            if candidates:
                candidate = candidates[0]
                content = candidate.get("content")
                if content:
                    for part in content.get("parts") or ():
                        self._part(part, deltas)
                reason = candidate.get("finishReason")
                if reason is not None:
                    self._finish_with(reason, chunk)
            else:
                feedback = chunk.get("promptFeedback")
                if feedback and feedback.get("blockReason"):
                    self._finish = "content_filter"
        except (AttributeError, TypeError, KeyError, IndexError) as exc:
            raise malformed(self.provider, f"not a response chunk ({exc!r})", chunk) from None
        return deltas

    def close(self) -> list[ModelDelta]:
        """End the stream: report the usage and the finish reason.

        Raises:
            ProviderError: No chunk with a finish reason arrived (recoverable).
        """
        finish = self._finish
        if finish is None:
            raise provider_error(
                ErrorCode.PROVIDER_ERROR,
                "the stream ended early: no chunk with a finishReason arrived",
                provider=self.provider,
                recoverable=True,
            )
        if finish == "stop" and self._calls:
            finish = "tool_calls"
        return [
            trusted(UsageDelta, usage=_usage(self.provider, self._usage)),
            trusted(FinishDelta, reason=finish),
        ]

    def _new(self, kind: int) -> int:
        index = self._next
        self._next = index + 1
        self._open = kind
        self._open_index = index
        return index

    def _signature_only(self, signature: str, deltas: list[ModelDelta]) -> None:
        """Add a signature-only thinking block: the signature of the part that follows."""
        deltas.append(trusted(ThinkingDelta, index=self._new(0), text="", signature=signature))

    def _part(self, part: dict[str, Any], deltas: list[ModelDelta]) -> None:
        signature = part.get("thoughtSignature")
        text = part.get("text")
        if text is not None:
            if type(text) is not str:
                raise TypeError("a text part whose text is not a string")
            if part.get("thought"):
                index = self._open_index if self._open == _THOUGHT else self._new(_THOUGHT)
                deltas.append(trusted(ThinkingDelta, index=index, text=text, signature=signature))
                if signature is not None:
                    self._open = 0  # a signed thought is complete
                return
            if signature is not None:
                self._signature_only(signature, deltas)
            elif self._open == _TEXT:
                if text:
                    deltas.append(trusted(TextDelta, index=self._open_index, text=text))
                return
            if text:
                deltas.append(trusted(TextDelta, index=self._new(_TEXT), text=text))
            return
        call = part.get("functionCall")
        if call is not None:
            if signature is not None:
                self._signature_only(signature, deltas)
            name = call["name"]
            if type(name) is not str:
                raise TypeError("a functionCall whose name is not a string")
            args = call.get("args")
            deltas.append(
                trusted(
                    ToolCallDelta,
                    index=self._new(0),
                    id=call.get("id") or None,
                    name=name,
                    args=json.dumps({} if args is None else args),
                )
            )
            self._calls = True
            return
        kind = next((k for k in _UNREADABLE_PARTS if k in part), None)
        if kind is None and signature is not None:  # a part that is only a signature
            self._signature_only(signature, deltas)
            return
        raise provider_error(
            ErrorCode.PROVIDER_ERROR,
            f"the response has a {kind or 'unknown'} part, which rxagent cannot read "
            "(it reads text, thoughts and function calls)",
            provider=self.provider,
            body=json.dumps(part),
            recoverable=False,
        )

    def _finish_with(self, reason: Any, chunk: Mapping[str, Any]) -> None:
        mapped = FINISH_REASON_MAP.get(reason) if isinstance(reason, str) else None
        if mapped is not None:
            self._finish = mapped
            return
        code = FINISH_ERRORS.get(reason) if isinstance(reason, str) else None
        if code is None:
            raise malformed(self.provider, f"unknown finishReason {reason!r}", dict(chunk))
        raise provider_error(
            code,
            f"the model's reply failed with finishReason {reason}",
            provider=self.provider,
            provider_code=reason,
            body=json.dumps(chunk),
            recoverable=code is ErrorCode.PROVIDER_ERROR,
        )


def _count(meta: Mapping[str, Any], key: str) -> int:
    value = meta.get(key)
    if value is None:
        return 0
    if type(value) is not int:
        raise TypeError(f"usageMetadata.{key} is not an integer")
    return value


def _usage(provider: str, meta: Any) -> Usage:
    if meta is None:
        return trusted(Usage, requests=1)
    try:
        return trusted(
            Usage,
            input_tokens=_count(meta, "promptTokenCount") + _count(meta, "toolUsePromptTokenCount"),
            output_tokens=_count(meta, "candidatesTokenCount") + _count(meta, "thoughtsTokenCount"),
            cache_read_tokens=_count(meta, "cachedContentTokenCount"),
            requests=1,
        )
    except (AttributeError, TypeError) as exc:
        raise malformed(provider, f"bad usageMetadata ({exc})", meta) from None
