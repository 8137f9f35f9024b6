r"""Incremental decoders for streamed HTTP bodies: Server-Sent Events and NDJSON.

Model clients feed the bytes of a response as they arrive, in chunks split anywhere (inside a
multi-byte UTF-8 character, between `\r` and `\n`, inside a BOM), and get decoded events back.
Formatters only ever see `SSEEvent`s or JSON values, never transport framing (ARCHITECTURE §7).

Lines are split on the raw bytes and each complete line is decoded on its own. Line terminators
are ASCII, and ASCII bytes never occur inside a multi-byte UTF-8 sequence, so this is the same
as decoding the whole stream incrementally, and it lets `max_line_bytes` count real bytes. At
most one incomplete line and one incomplete event are held in memory.

Example:
    ```python
    from rxagent.formatters.framing import SSEDecoder

    decoder = SSEDecoder()
    assert decoder.feed(b"event: ping\ndata: {}\n") == []
    [event] = decoder.feed(b"\n")
    assert (event.event, event.data) == ("ping", "{}")
    ```
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, final

from rxagent.errors import ProviderError

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, AsyncIterator, Sequence

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "NDJSONDecoder",
    "SSEDecoder",
    "SSEEvent",
    "is_done",
    "iter_ndjson",
    "iter_sse",
]

DEFAULT_MAX_LINE_BYTES: Final = 10 * 1024 * 1024
"""The longest line (in bytes, without its terminator) a decoder accepts: 10 MiB."""

_BOM: Final = b"\xef\xbb\xbf"
_SSE_EOL: Final = re.compile(rb"\r\n|\r|\n")
_NDJSON_EOL: Final = re.compile(rb"\n")
_EXCERPT_CHARS: Final = 200
_SKIP: Final[Any] = object()  # a blank NDJSON line


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class SSEEvent:
    r"""One dispatched Server-Sent Event.

    A block holding only comments (a keep-alive such as `: ping`) is dispatched too, with
    `data == ""` and `event is None`, so callers can read comment lines such as DashScope's
    `:HTTP_STATUS/200`.

    Example:
        ```python
        from rxagent.formatters.framing import SSEDecoder, SSEEvent

        [event] = SSEDecoder().feed(b"id:1\nevent:result\n:HTTP_STATUS/200\ndata:{}\n\n")
        assert event == SSEEvent(event="result", data="{}", id="1", comments=("HTTP_STATUS/200",))
        ```
    """

    event: str | None = None
    """The `event` field; None when absent or empty (the spec's default type, `"message"`)."""
    data: str = ""
    r"""The `data` lines of the event, joined with `"\n"`."""
    id: str | None = None
    """The `id` field of this event's block, or None; see `SSEDecoder.last_event_id`."""
    retry: int | None = None
    """The `retry` field of this block in milliseconds, when it is all ASCII digits."""
    extra: tuple[tuple[str, str], ...] = ()
    """Non-standard `(field, value)` pairs, in order of arrival."""
    comments: tuple[str, ...] = ()
    """Comment lines (those starting with `:`), without the colon, in order of arrival."""


@final
class _LineSplitter:
    """Bytes in, complete raw lines out; holds back one partial line and a partial BOM."""

    __slots__ = ("_cr_is_eol", "_eol", "_head", "_max", "_parts", "_pending", "_skip_lf", "_what")

    def __init__(self, max_line_bytes: int, *, cr_is_eol: bool, what: str) -> None:
        self._max = max_line_bytes
        self._cr_is_eol = cr_is_eol
        self._eol = _SSE_EOL if cr_is_eol else _NDJSON_EOL
        self._what = what
        self._parts: list[bytes] = []
        self._pending = 0
        self._skip_lf = False
        self._head: bytes | None = b""  # None once the stream's first bytes were checked for a BOM

    def split(self, chunk: bytes) -> list[bytes]:
        if self._head is not None:
            chunk = self._head + chunk
            if len(chunk) < len(_BOM) and _BOM.startswith(chunk):
                self._head = chunk  # maybe the start of a BOM: wait for more bytes
                return []
            self._head = None
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        if not chunk:
            return []
        start = 0
        if self._skip_lf:  # the previous chunk ended with the CR of a CRLF
            self._skip_lf = False
            if chunk[0] == 0x0A:
                start = 1
        lines: list[bytes] = []
        for match in self._eol.finditer(chunk, start):
            piece = chunk[start : match.start()]
            if self._parts:
                self._parts.append(piece)
                piece = b"".join(self._parts)
                self._parts.clear()
                self._pending = 0
            self._check(len(piece))
            lines.append(piece)
            start = match.end()
        if start < len(chunk):
            self._pending += len(chunk) - start
            self._check(self._pending)
            self._parts.append(chunk[start:])
        elif self._cr_is_eol and chunk[-1] == 0x0D:
            self._skip_lf = True
        return lines

    def flush(self) -> bytes | None:
        """The unterminated last line, if any; the splitter is then back in its initial state."""
        rest = self._head or b""
        if self._parts:
            rest = b"".join(self._parts)
        has_rest = bool(rest)
        self._parts.clear()
        self._pending = 0
        self._skip_lf = False
        self._head = b""
        return rest if has_rest else None

    def _check(self, size: int) -> None:
        if size > self._max:
            raise ProviderError(
                f"{self._what} stream has a line longer than max_line_bytes={self._max}; "
                "refusing to buffer it",
                source="model",
            )


@final
class SSEDecoder:
    r"""Incremental Server-Sent Events parser following the WHATWG rules.

    Lines end with CRLF, LF or CR; `field:value` loses one optional space after the colon; `data`
    lines are joined with `"\n"`; a blank line dispatches the event. A block is dispatched when
    it has a `data` line, a non-empty `event` name or a comment; blocks with only `id`, `retry`
    or unknown fields update the decoder state and are not dispatched. Unlike the spec (which
    drops an unfinished event at end of stream), `close()` dispatches it.

    Args:
        max_line_bytes: The longest line accepted; a longer one raises `ProviderError`.

    Attributes:
        last_event_id: The last `id` seen on the stream (sticky, per the spec), for reconnection.
        retry: The last valid `retry` value seen on the stream, or None.

    Example:
        ```python
        from rxagent.formatters.framing import SSEDecoder

        decoder = SSEDecoder()
        body = "data: 1\r\ndata: €\r\n\r\ndata: tail".encode()
        events = [e for i in range(len(body)) for e in decoder.feed(body[i : i + 1])]
        events += decoder.close()
        assert [e.data for e in events] == ["1\n€", "tail"]
        ```
    """

    __slots__ = (
        "_comments",
        "_data",
        "_event",
        "_extra",
        "_id",
        "_lines",
        "_retry",
        "last_event_id",
        "retry",
    )

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._lines = _LineSplitter(max_line_bytes, cr_is_eol=True, what="SSE")
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self._extra: list[tuple[str, str]] = []
        self._comments: list[str] = []
        self.last_event_id = ""
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        r"""Parse the next bytes of the body and return the events they complete.

        Raises:
            ProviderError: A line is longer than `max_line_bytes`.

        Example:
            ```python
            from rxagent.formatters.framing import SSEDecoder

            decoder = SSEDecoder()
            assert decoder.feed(b"data:{\"a\"") == []
            assert decoder.feed(b":1}\n\n")[0].data == '{"a":1}'
            ```
        """
        events: list[SSEEvent] = []
        lines = self._lines
        if lines._head == b"" and len(chunk) >= len(_BOM) and not chunk.startswith(_BOM):
            lines._head = None  # the stream's first bytes, and they are no BOM
        if (  # the common case: whole LF-terminated lines and nothing held back; decode once
            lines._head is None
            and not lines._parts
            and not lines._skip_lf
            and chunk[-1:] == b"\n"
            and b"\r" not in chunk
            and len(chunk) <= lines._max
        ):
            line = self._line
            for text in chunk.decode("utf-8", "replace").split("\n")[:-1]:
                line(text, events)
            return events
        for raw in lines.split(chunk):
            self._line(raw.decode("utf-8", "replace"), events)
        return events

    def close(self) -> list[SSEEvent]:
        r"""End the stream: parse an unterminated last line and dispatch a pending event.

        The decoder is then ready for a new stream; `last_event_id` and `retry` are kept.

        Example:
            ```python
            from rxagent.formatters.framing import SSEDecoder

            decoder = SSEDecoder()
            assert decoder.feed(b"event: done\ndata: bye") == []
            [event] = decoder.close()
            assert (event.event, event.data) == ("done", "bye")
            ```
        """
        events: list[SSEEvent] = []
        rest = self._lines.flush()
        if rest is not None:
            self._line(rest.decode("utf-8", "replace"), events)
        self._line("", events)
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(events)
        elif line[0] == ":":
            self._comments.append(line[1:])
        elif line.startswith("data: "):  # the usual spelling, without the general parse
            self._data.append(line[6:])
        else:
            name, _, value = line.partition(":")
            if value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value or None
            elif name == "id":
                if "\0" not in value:  # the spec ignores an id containing NULL
                    self._id = self.last_event_id = value
            elif name == "retry":
                if value.isascii() and value.isdigit() and len(value) < 4000:
                    self._retry = self.retry = int(value)
            else:
                self._extra.append((name, value))

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data or self._event is not None or self._comments:
            events.append(
                SSEEvent(
                    event=self._event,
                    data="\n".join(self._data),
                    id=self._id,
                    retry=self._retry,
                    extra=tuple(self._extra),
                    comments=tuple(self._comments),
                )
            )
        self._data.clear()
        self._extra.clear()
        self._comments.clear()
        self._event = self._id = self._retry = None


@final
class NDJSONDecoder:
    r"""Incremental newline-delimited JSON parser (Ollama's `/api/chat` stream).

    One JSON value per line; lines end with LF or CRLF; blank lines are skipped.

    Args:
        max_line_bytes: The longest line accepted; a longer one raises `ProviderError`.

    Example:
        ```python
        from rxagent.formatters.framing import NDJSONDecoder

        decoder = NDJSONDecoder()
        assert decoder.feed(b'{"done": false}\r\n\n{"do') == [{"done": False}]
        assert decoder.feed(b'ne": true}') == []
        assert decoder.close() == [{"done": True}]
        ```
    """

    __slots__ = ("_line_no", "_lines")

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._lines = _LineSplitter(max_line_bytes, cr_is_eol=False, what="NDJSON")
        self._line_no = 0

    def feed(self, chunk: bytes) -> list[Any]:
        r"""Parse the next bytes of the body and return the JSON values of the lines they complete.

        Raises:
            ProviderError: A line is not valid JSON (the message carries an excerpt of it), or
                is longer than `max_line_bytes`.

        Example:
            ```python
            from rxagent.errors import ProviderError
            from rxagent.formatters.framing import NDJSONDecoder

            try:
                NDJSONDecoder().feed(b"<html>Bad Gateway</html>\n")
            except ProviderError as exc:
                assert "<html>Bad Gateway" in str(exc)
            ```
        """
        return [
            value for raw in self._lines.split(chunk) if (value := self._parse(raw)) is not _SKIP
        ]

    def close(self) -> list[Any]:
        """End the stream: parse an unterminated last line. The decoder is then reset.

        Example:
            ```python
            from rxagent.formatters.framing import NDJSONDecoder

            decoder = NDJSONDecoder()
            assert decoder.feed(b"[1, 2]") == []
            assert decoder.close() == [[1, 2]]
            ```
        """
        rest = self._lines.flush()
        values = [] if rest is None or (value := self._parse(rest)) is _SKIP else [value]
        self._line_no = 0
        return values

    def _parse(self, raw: bytes) -> Any:
        self._line_no += 1
        if not raw.strip():
            return _SKIP
        text = raw.decode("utf-8", "replace")
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as exc:
            excerpt = text[:_EXCERPT_CHARS]
            raise ProviderError(
                f"malformed NDJSON on line {self._line_no} ({exc}): {excerpt!r}", source="model"
            ) from exc


def is_done(event: SSEEvent) -> bool:
    r"""Whether `event` is OpenAI's end-of-stream marker, `data: [DONE]`.

    Example:
        ```python
        from rxagent.formatters.framing import SSEDecoder, is_done

        events = SSEDecoder().feed(b'data: {"choices": []}\n\ndata: [DONE]\n\n')
        assert [is_done(e) for e in events] == [False, True]
        ```
    """
    data = event.data
    return len(data) < 16 and data.strip() == "[DONE]"


T_co = TypeVar("T_co", covariant=True)


class _Decoder(Protocol[T_co]):
    def feed(self, chunk: bytes) -> Sequence[T_co]: ...
    def close(self) -> Sequence[T_co]: ...


async def _decode(decoder: _Decoder[T_co], chunks: AsyncIterable[bytes]) -> AsyncIterator[T_co]:
    """Feed `chunks` to `decoder` as they arrive and yield what it decodes, then flush it."""
    async for chunk in chunks:
        for item in decoder.feed(chunk):
            yield item
    for item in decoder.close():
        yield item


async def iter_sse(
    chunks: AsyncIterable[bytes], *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> AsyncIterator[SSEEvent]:
    r"""Decode Server-Sent Events from body chunks as they arrive.

    Pass aiohttp's `response.content.iter_any()`. The final event is flushed at end of body.

    Raises:
        ProviderError: A line is longer than `max_line_bytes`.

    Example:
        ```python
        import asyncio

        from rxagent.formatters.framing import iter_sse


        async def body():
            yield b"data: hel"
            yield b"lo\n\nda"
            yield b"ta: [DONE]\n\n"


        async def main() -> list[str]:
            return [event.data async for event in iter_sse(body())]


        assert asyncio.run(main()) == ["hello", "[DONE]"]
        ```
    """
    async for event in _decode(SSEDecoder(max_line_bytes=max_line_bytes), chunks):
        yield event


async def iter_ndjson(
    chunks: AsyncIterable[bytes], *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> AsyncIterator[Any]:
    r"""Decode newline-delimited JSON values from body chunks as they arrive.

    Raises:
        ProviderError: A line is not valid JSON, or is longer than `max_line_bytes`.

    Example:
        ```python
        import asyncio

        from rxagent.formatters.framing import iter_ndjson


        async def body():
            yield b'{"message": {"content": "Hi"}, "done": false}\n{"done"'
            yield b": true}\n"


        async def main() -> list[bool]:
            return [value["done"] async for value in iter_ndjson(body())]


        assert asyncio.run(main()) == [False, True]
        ```
    """
    async for value in _decode(NDJSONDecoder(max_line_bytes=max_line_bytes), chunks):
        yield value
