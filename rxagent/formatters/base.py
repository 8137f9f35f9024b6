"""The formatter contract: pure translation between rxagent messages and one provider's wire format.

A formatter does no I/O. It builds request bodies (`format`), reads whole responses (`parse`), turns
decoded stream events into `ModelDelta`s (`stream_parser` / `parse_stream`) and classifies error
responses (`error_from_response`). The model clients in `rxagent.models` do the HTTP, the transport
framing (SSE, NDJSON) and the retries, and hand formatters decoded events only.

Every provider speaks one finish-reason vocabulary after parsing (`FINISH_REASONS`), and every
failure is a typed `AgentRunError` carrying the provider, the HTTP status, the provider's own error
code and a short excerpt of what it sent: never a `KeyError`.

Example:
    ```python
    from rxagent.formatters.base import excerpt, status_error

    err = status_error("openai", 429, b'{"error": {"message": "slow down"}}', message="slow down")
    assert err.code == "RATE_LIMITED" and err.recoverable and err.status == 429
    assert excerpt(b"<html>" + b"x" * 1000).endswith("...")
    ```
"""

from __future__ import annotations

import json
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, Protocol, TypeAlias, TypeVar

from rxagent._fast import trusted
from rxagent.errors import (
    AgentRunError,
    ErrorCode,
    InvalidRequestError,
    ProviderError,
    error_class_for,
)
from rxagent.messages import TextBlock, ThinkingBlock, ToolUseBlock
from rxagent.models.base import Capabilities as Capabilities
from rxagent.models.base import (
    FinishDelta,
    ModelDelta,
    ModelResponse,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)
from rxagent.models.base import OutputMode as OutputMode
from rxagent.models.base import SchemaDialect as SchemaDialect

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

    from rxagent.messages import Msg
    from rxagent.models.base import ModelOptions, ToolSchema

__all__ = [
    "EXCERPT_CHARS",
    "FINISH_REASONS",
    "BaseFormatter",
    "Capabilities",
    "FinishReason",
    "Formatter",
    "OutputMode",
    "SchemaDialect",
    "StreamParser",
    "capabilities_for",
    "excerpt",
    "json_body",
    "malformed",
    "parse_retry_after",
    "parse_stream",
    "provider_error",
    "response_to_deltas",
    "status_error",
    "unsupported",
]

E_contra = TypeVar("E_contra", contravariant=True)
E = TypeVar("E")

FinishReason: TypeAlias = Literal["stop", "length", "tool_calls", "content_filter", "pause"]
"""The one finish-reason vocabulary every formatter parses into.

- `"stop"`: the model ended its turn (or hit a stop sequence);
- `"length"`: the output-token limit (or the context window) cut the reply;
- `"tool_calls"`: the reply asks for tools;
- `"content_filter"`: the provider withheld or refused the reply;
- `"pause"`: the provider paused a long turn (Anthropic `pause_turn`); send it back to go on.
"""

FINISH_REASONS: Final[frozenset[str]] = frozenset(
    ("stop", "length", "tool_calls", "content_filter", "pause")
)
"""Every value of `FinishReason`."""

EXCERPT_CHARS: Final = 300
"""How much of a provider's body an error carries."""


def capabilities_for(formatter: object, options: ModelOptions) -> Capabilities | None:
    """Return what `formatter` can do for a request with `options`, or None when unknown.

    Some capabilities depend on the request: Anthropic refuses a forced tool choice while
    extended thinking is on, and OpenAI holds tools to their schema only without parallel tool
    calls. A formatter with such rules has a `capabilities_for(options)` method; any other
    formatter's `capabilities` hold for every request. An object with neither gives None.

    Example:
        ```python
        from rxagent.formatters.anthropic import AnthropicFormatter
        from rxagent.formatters.base import capabilities_for
        from rxagent.models import ModelOptions

        fmt = AnthropicFormatter()
        assert capabilities_for(fmt, ModelOptions()).supports_tool_choice_required
        thinking = ModelOptions(extra={"thinking": {"type": "enabled", "budget_tokens": 2048}})
        assert not capabilities_for(fmt, thinking).supports_tool_choice_required
        assert capabilities_for(object(), ModelOptions()) is None
        ```
    """
    method = getattr(formatter, "capabilities_for", None)
    if callable(method):
        found = method(options)
        return found if isinstance(found, Capabilities) else None
    found = getattr(formatter, "capabilities", None)
    return found if isinstance(found, Capabilities) else None


class StreamParser(Protocol[E_contra]):
    """Turns one response's decoded stream events into deltas, incrementally."""

    def feed(self, event: E_contra) -> list[ModelDelta]:
        """Return the deltas this event completes (often one, sometimes none).

        Raises:
            AgentRunError: An error the provider sent inside the stream, typed by its code, or a
                `ProviderError` for an event that cannot be read.
        """
        ...

    def close(self) -> list[ModelDelta]:
        """End the stream: return what is left.

        Raises:
            ProviderError: The stream ended before the provider said it was complete.
        """
        ...


class Formatter(Protocol[E_contra]):
    """Pure translation for one provider. `E_contra` is its decoded stream event type.

    A formatter may also have an optional fast path, not part of this protocol (the HTTP
    clients look it up with `getattr` once, when the model is built):

    `parse_deltas(body: Any) -> list[ModelDelta]` reads a whole (non-streamed) response,
    already decoded from JSON, straight into the deltas a stream of it would give, one per
    block and then the `UsageDelta` and the `FinishDelta`, as `response_to_deltas(parse(body))`
    does, but without building the response: a tool call's argument text is passed through as
    `ToolCallDelta.args` instead of being parsed, frozen and written back as JSON. It must agree
    with `parse`: `ResponseBuilder` over its deltas gives `parse(body)`'s message, usage and
    finish reason, and a body `parse` refuses raises the same typed error. Without it (or when a
    subclass overrides `parse` below the class that defines it) the clients use
    `response_to_deltas(parse(body))`. The OpenAI and DashScope formatters have it.

    A formatter whose capabilities depend on the request (extended thinking, parallel tool
    calls) also has `capabilities_for(options: ModelOptions) -> Capabilities`; read them with
    `capabilities_for(formatter, options)`, which falls back to `capabilities`.

    Attributes:
        provider: The provider's name, as used in `"provider:model"` strings.
        capabilities: What its wire format can carry.
    """

    provider: str
    capabilities: Capabilities

    def format(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSchema],
        options: ModelOptions,
        *,
        model: str,
        stream: bool,
    ) -> dict[str, Any]:
        """Build the request body.

        Raises:
            InvalidRequestError: A message or option the provider cannot carry.
        """
        ...

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole (non-streamed) response body, already decoded from JSON.

        Raises:
            ProviderError: A body that is not this provider's response.
        """
        ...

    def stream_parser(self) -> StreamParser[E_contra]:
        """Return a parser for one streamed response."""
        ...

    def parse_stream(self, events: Iterable[E_contra]) -> Iterator[ModelDelta]:
        """Parse a whole sequence of decoded stream events (see `parse_stream`)."""
        ...

    def error_from_response(
        self, status: int, body: bytes, headers: Mapping[str, str]
    ) -> AgentRunError:
        """Classify a failed HTTP response (status >= 400) by status and the provider's code."""
        ...


class BaseFormatter(Generic[E]):
    """Shared parts of the formatters: `parse_stream` on top of `stream_parser`."""

    provider: str
    capabilities: Capabilities

    def stream_parser(self) -> StreamParser[E]:
        """Return a parser for one streamed response."""
        raise NotImplementedError

    def parse_stream(self, events: Iterable[E]) -> Iterator[ModelDelta]:
        """Parse a whole sequence of decoded stream events into deltas."""
        return parse_stream(self, events)  # type: ignore[arg-type]


def parse_stream(formatter: Formatter[E], events: Iterable[E]) -> Iterator[ModelDelta]:
    r"""Parse a whole sequence of decoded stream events (the `Formatter.parse_stream` of §7).

    Example:
        ```python
        from rxagent.formatters.base import parse_stream
        from rxagent.formatters.openai import OpenAIFormatter
        from rxagent.formatters.framing import SSEDecoder

        raw = (
            b'data: {"id":"1","object":"chat.completion.chunk","created":0,"model":"m",'
            b'"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
            b"data: [DONE]\n\n"
        )
        deltas = list(parse_stream(OpenAIFormatter(), SSEDecoder().feed(raw)))
        assert deltas[0].text == "hi" and deltas[-1].reason == "stop"
        ```
    """
    parser = formatter.stream_parser()
    for event in events:
        yield from parser.feed(event)
    yield from parser.close()


# -- errors ----------------------------------------------------------------------------------------


def excerpt(body: bytes | str, limit: int = EXCERPT_CHARS) -> str:
    """Return the start of a body as text for an error message, whitespace collapsed."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def provider_error(
    code: ErrorCode,
    message: str,
    *,
    provider: str,
    status: int | None = None,
    provider_code: str | None = None,
    body: bytes | str | None = None,
    recoverable: bool | None = None,
    retry_after: float | None = None,
) -> AgentRunError:
    """Build the typed error for `code`, with the provider's details attached.

    The message is prefixed with the provider and status, so it reads on its own in a log.
    """
    where = f"{provider}" + (f" HTTP {status}" if status is not None else "")
    detail = f" [{provider_code}]" if provider_code else ""
    return error_class_for(code)(
        f"{where}{detail}: {message}",
        source="model",
        recoverable=recoverable,
        provider=provider,
        status=status,
        provider_code=provider_code,
        excerpt=excerpt(body) if body is not None else None,
        retry_after=retry_after,
    )


_RETRYABLE_STATUS: Final = frozenset((408, 409, 425, 429, 500, 502, 503, 504, 529))


def status_error(
    provider: str,
    status: int,
    body: bytes | str,
    *,
    message: str | None = None,
    provider_code: str | None = None,
    code: ErrorCode | None = None,
    headers: Mapping[str, str] | None = None,
) -> AgentRunError:
    """Classify an HTTP failure by status, unless the provider's own code already decided `code`.

    400/404/422 → `INVALID_REQUEST`; 401/403 → `AUTH`; 413 → `CONTEXT_TOO_LONG`;
    429 → `RATE_LIMITED`; 408/409/425/5xx/529 → `PROVIDER_ERROR`. The error is recoverable (and so
    retried) exactly when its status is 408, 409, 425, 429, 5xx or 529, and its code is not
    `CONTEXT_TOO_LONG`, `AUTH` or `INVALID_REQUEST`.
    """
    if code is None:
        if status in (401, 403):
            code = ErrorCode.AUTH
        elif status == 413:
            code = ErrorCode.CONTEXT_TOO_LONG
        elif status == 429:
            code = ErrorCode.RATE_LIMITED
        elif status >= 500 or status in _RETRYABLE_STATUS:
            code = ErrorCode.PROVIDER_ERROR
        else:
            code = ErrorCode.INVALID_REQUEST
    never = code in (ErrorCode.CONTEXT_TOO_LONG, ErrorCode.AUTH, ErrorCode.INVALID_REQUEST)
    retryable = not never and (status in _RETRYABLE_STATUS or status >= 500)
    return provider_error(
        code,
        message or excerpt(body) or f"HTTP {status}",
        provider=provider,
        status=status,
        provider_code=provider_code,
        body=body,
        recoverable=retryable,
        retry_after=parse_retry_after(headers) if headers else None,
    )


def json_body(provider: str, body: bytes | str, status: int | None = None) -> Any:
    """Decode a JSON body, or raise `ProviderError` with an excerpt (an HTML page, say)."""
    try:
        return json.loads(body)
    except ValueError:
        raise provider_error(
            ErrorCode.PROVIDER_ERROR,
            "the response is not JSON",
            provider=provider,
            status=status,
            body=body,
            recoverable=False,
        ) from None


def unsupported(provider: str, what: str, fix: str) -> InvalidRequestError:
    """The error for a message block or option that `provider` cannot carry."""
    err = provider_error(
        ErrorCode.INVALID_REQUEST,
        f"cannot send {what}; {fix}",
        provider=provider,
        recoverable=False,
    )
    assert isinstance(err, InvalidRequestError)
    return err


def malformed(provider: str, what: str, data: Any, status: int | None = None) -> ProviderError:
    """The error for a response or stream event that does not have the provider's shape."""
    text = data if isinstance(data, bytes | str) else json.dumps(data, default=str)
    err = provider_error(
        ErrorCode.PROVIDER_ERROR,
        f"malformed response: {what}",
        provider=provider,
        status=status,
        body=text,
        recoverable=False,
    )
    assert isinstance(err, ProviderError)
    return err


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Read `retry-after-ms`, then `Retry-After` (seconds or an HTTP date) from response headers.

    Header names are matched case-insensitively. Returns seconds, or None when neither is usable.

    Example:
        ```python
        from rxagent.formatters.base import parse_retry_after

        assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
        assert parse_retry_after({"Retry-After": "2"}) == 2.0
        assert parse_retry_after({"Retry-After": "Thu, 01 Jan 1970 00:00:10 GMT"}, now=4) == 6
        assert parse_retry_after({"Retry-After": "soon"}) is None
        ```
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000
        except ValueError:
            value = -1.0
        if value >= 0:
            return value
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw).timestamp()
        except (TypeError, ValueError, IndexError):
            return None
        import time

        seconds = when - (time.time() if now is None else now)
        return max(seconds, 0.0)
    return seconds if seconds >= 0 else None


# -- responses -------------------------------------------------------------------------------------


def response_to_deltas(response: ModelResponse) -> list[ModelDelta]:
    """Return a whole response as the deltas a stream of it would give (one per block).

    Non-streaming requests go through the same loop as streamed ones this way.
    """
    deltas: list[ModelDelta] = []
    content = response.message.content
    blocks = (TextBlock(text=content),) if isinstance(content, str) and content else content
    for index, block in enumerate(blocks):
        if isinstance(block, TextBlock):
            deltas.append(trusted(TextDelta, index=index, text=block.text))
        elif isinstance(block, ThinkingBlock):
            deltas.append(
                trusted(ThinkingDelta, index=index, text=block.thinking, signature=block.signature)
            )
        elif isinstance(block, ToolUseBlock):
            args = block.raw_input if block.raw_input is not None else json.dumps(block.input)
            deltas.append(
                trusted(ToolCallDelta, index=index, id=block.id or None, name=block.name, args=args)
            )
    deltas.append(trusted(UsageDelta, usage=response.usage))
    deltas.append(trusted(FinishDelta, reason=response.finish_reason))
    return deltas
