"""An incremental partial-JSON parser for streaming structured output.

`PartialJSON` reads one JSON value chunk by chunk and shows, after every chunk, the best-effort
value of the text so far. It keeps a stack of open containers and the state of the token being
read, so each `feed` costs time proportional to the new text only; nothing is ever re-parsed.

What it accepts:

- leading whitespace;
- an optional leading Markdown fence: three backticks and an optional `json` tag (any case),
  followed by whitespace or the value. After a fenced value the closing fence (three backticks)
  is accepted, followed by whitespace only;
- then exactly one JSON value (RFC 8259, with the same string rules as `json.loads`: no raw
  control characters, lone surrogates allowed, duplicate keys keep the last value), followed by
  whitespace only.

Anything else raises `json.JSONDecodeError` (a `ValueError`) whose `pos` is the offset of the
offending character in `text`.
"""

from __future__ import annotations

import re
from enum import Enum, auto
from json import JSONDecodeError
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PartialJSON"]

_WHITESPACE: Final = frozenset(" \t\n\r")
_STRING_RUN: Final = re.compile(r'[^"\\\x00-\x1f]+')
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_DIGITS: Final = frozenset("0123456789")
_NUMBER_CHARS: Final = _DIGITS | frozenset("+-.eE")
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")
_LITERALS: Final[dict[str, tuple[str, Any]]] = {
    "t": ("true", True),
    "f": ("false", False),
    "n": ("null", None),
}
_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_FENCE_TAGS: Final = frozenset({"", "json"})
_MISSING: Final = object()  # "no value has started", distinct from JSON null


class _Mode(Enum):
    START = auto()  # leading whitespace, maybe a fence
    FENCE_OPEN = auto()  # inside the opening backticks
    FENCE_TAG = auto()  # the language tag after the opening backticks
    VALUE = auto()  # a value must start here
    ARRAY_FIRST = auto()  # after '[': a value or ']'
    OBJECT_FIRST = auto()  # after '{': a key or '}'
    OBJECT_KEY = auto()  # after ',' in an object: a key
    COLON = auto()  # after a key
    AFTER_VALUE = auto()  # inside a container, after a value: ',' or the closing bracket
    STRING = auto()
    NUMBER = auto()
    LITERAL = auto()
    TRAILER = auto()  # after the top-level value: whitespace, maybe the closing fence
    FENCE_CLOSE = auto()  # inside the closing backticks
    END = auto()  # after the closing fence: whitespace only


_Container = list[Any] | dict[str, Any]


def _copy_json(value: Any) -> Any:
    """Copy the containers of a JSON value (strings and numbers are immutable)."""
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    return value


@final
class PartialJSON:
    r"""Parse one JSON value incrementally and show the best-effort value at any point.

    `value` follows these rules for the unfinished part of the text:

    - an unfinished string is the text decoded so far (an unfinished escape is left out);
    - an unfinished array holds the items read so far;
    - an unfinished object holds the keys whose values have started; a key whose value has not
      started yet is left out;
    - an unfinished number or literal (`-1.`, `tru`) is left out rather than guessed.

    So every `value` is a prefix of the final value: strings grow at the end, and containers gain
    items and keys at the end.

    A top-level number has no closing character, so it completes only on `finish()`: until then
    `value` is `None` and `done` is `False`. Every other top-level value is `done` as soon as its
    last character is fed.

    Example:
        ```python
        from rxagent.output._partial import PartialJSON

        parser = PartialJSON()
        parser.feed('```json\n{"city": "Par')
        assert parser.value == {"city": "Par"}
        parser.feed('is", "days": [1, 2')
        assert parser.value == {"city": "Paris", "days": [1]}  # `2` may go on: `25`
        parser.feed("]}\n```")
        assert parser.done
        assert parser.value == {"city": "Paris", "days": [1, 2]}
        ```
    """

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._offset = 0  # absolute position of the current chunk's first character
        self._mode = _Mode.START
        self._stack: list[_Container] = []
        self._keys: list[str | None] = []  # per open container: the key whose value is pending
        self._root: Any = None
        self._done = False
        self._finished = False
        self._fenced = False
        self._ticks = 0
        self._tag: list[str] = []
        # the string being read
        self._string_parts: list[str] = []
        self._string_is_key = False
        self._escape = False
        self._hex: str | None = None  # digits of a \uXXXX escape being read
        self._high_surrogate: str | None = None  # waits for a low surrogate escape
        # the number or literal being read
        self._token = ""
        self._token_start = 0
        self._handlers: dict[_Mode, Callable[[str, int], int]] = {
            _Mode.START: self._read_start,
            _Mode.FENCE_OPEN: self._read_fence_open,
            _Mode.FENCE_TAG: self._read_fence_tag,
            _Mode.VALUE: self._read_value,
            _Mode.ARRAY_FIRST: self._read_array_first,
            _Mode.OBJECT_FIRST: self._read_object_first,
            _Mode.OBJECT_KEY: self._read_object_key,
            _Mode.COLON: self._read_colon,
            _Mode.AFTER_VALUE: self._read_after_value,
            _Mode.STRING: self._read_string,
            _Mode.NUMBER: self._read_number,
            _Mode.LITERAL: self._read_literal,
            _Mode.TRAILER: self._read_trailer,
            _Mode.FENCE_CLOSE: self._read_fence_close,
            _Mode.END: self._read_end,
        }

    # -- public API --------------------------------------------------------------------------

    def feed(self, text: str) -> None:
        r"""Read the next chunk of text.

        Args:
            text: The chunk; any split of the stream is fine, even inside an escape.

        Raises:
            json.JSONDecodeError: The text so far is not a prefix of accepted input (a
                `ValueError`; `pos` is the offending character's offset in `text`), or
                `finish()` was already called.

        Example:
            ```python
            from rxagent.output._partial import PartialJSON

            parser = PartialJSON()
            for chunk in ['[tr', 'ue, "a\\u00', 'e9"]']:
                parser.feed(chunk)
            assert parser.value == [True, "a\u00e9"]
            ```
        """
        if self._finished and text:
            self._chunks.append(text)
            self._fail("text after finish()", self._offset)
        self._chunks.append(text)
        index, size = 0, len(text)
        while index < size:
            index = self._handlers[self._mode](text, index)
        self._offset += size

    def finish(self) -> None:
        """Declare the end of the input: completes a top-level number, checks the value is whole.

        Raises:
            json.JSONDecodeError: The text holds no complete JSON value, or ends inside the
                closing fence.

        Example:
            ```python
            from rxagent.output._partial import PartialJSON

            parser = PartialJSON()
            parser.feed("-12.5")
            assert parser.value is None and not parser.done  # more digits may follow
            parser.finish()
            assert parser.value == -12.5 and parser.done
            ```
        """
        if self._mode is _Mode.NUMBER and not self._stack:
            self._end_number()
        if not self._done:
            self._fail("incomplete JSON value", self._offset)
        if self._mode is _Mode.FENCE_CLOSE:
            self._fail("incomplete closing fence", self._offset)
        self._finished = True

    @property
    def value(self) -> Any:
        """The best-effort value of the text so far; `None` if no value has started.

        A fresh copy on every access (it costs time proportional to the value's size), so
        changing it never affects the parser.

        Example:
            ```python
            from rxagent.output._partial import PartialJSON

            parser = PartialJSON()
            parser.feed('{"a": 1, "b": "x", "c"')
            assert parser.value == {"a": 1, "b": "x"}  # "c" has no value yet
            ```
        """
        if self._done:
            return _copy_json(self._root)
        partial: Any = self._partial_string()
        for depth in range(len(self._stack) - 1, -1, -1):
            container = _copy_json(self._stack[depth])
            if partial is not _MISSING:
                if isinstance(container, list):
                    container.append(partial)
                else:
                    key = self._keys[depth]
                    assert key is not None  # a value has started, so its key was read
                    container[key] = partial
            partial = container
        return None if partial is _MISSING else partial

    @property
    def done(self) -> bool:
        """Whether a complete top-level value has been read.

        Example:
            ```python
            from rxagent.output._partial import PartialJSON

            parser = PartialJSON()
            parser.feed('{"ok": true')
            assert not parser.done
            parser.feed("}")
            assert parser.done
            ```
        """
        return self._done

    @property
    def text(self) -> str:
        """All the text fed so far, fence and whitespace included.

        Example:
            ```python
            from rxagent.output._partial import PartialJSON

            parser = PartialJSON()
            parser.feed(" [1,")
            parser.feed(" 2]")
            assert parser.text == " [1, 2]"
            ```
        """
        if len(self._chunks) > 1:
            self._chunks = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    # -- helpers -----------------------------------------------------------------------------

    def _fail(self, message: str, pos: int) -> NoReturn:
        raise JSONDecodeError(message, self.text, pos)

    def _partial_string(self) -> Any:
        if self._mode is not _Mode.STRING or self._string_is_key:
            return _MISSING
        if len(self._string_parts) > 1:
            self._string_parts = ["".join(self._string_parts)]
        return self._string_parts[0] if self._string_parts else ""

    def _commit(self, value: Any) -> None:
        """Store a finished value in its container, or as the top-level value."""
        if not self._stack:
            self._root = value
            self._done = True
            self._mode = _Mode.TRAILER
            return
        container = self._stack[-1]
        if isinstance(container, list):
            container.append(value)
        else:
            key = self._keys[-1]
            assert key is not None
            container[key] = value
            self._keys[-1] = None
        self._mode = _Mode.AFTER_VALUE

    def _open(self, container: _Container, mode: _Mode) -> None:
        self._stack.append(container)
        self._keys.append(None)
        self._mode = mode

    def _close(self) -> None:
        self._keys.pop()
        self._commit(self._stack.pop())

    def _start_string(self, *, is_key: bool) -> None:
        self._string_parts = []
        self._string_is_key = is_key
        self._mode = _Mode.STRING

    def _end_number(self) -> None:
        token = self._token
        if not _NUMBER.fullmatch(token):
            self._fail(f"invalid number {token!r}", self._token_start)
        is_float = "." in token or "e" in token or "E" in token
        self._commit(float(token) if is_float else int(token))

    # -- one handler per mode: each reads from chunk[index] on and returns the next index ----

    def _read_start(self, chunk: str, index: int) -> int:
        char = chunk[index]
        if char in _WHITESPACE:
            return index + 1
        if char == "`":
            self._mode, self._ticks = _Mode.FENCE_OPEN, 1
            return index + 1
        self._mode = _Mode.VALUE
        return index

    def _read_fence_open(self, chunk: str, index: int) -> int:
        if chunk[index] != "`":
            self._fail("expected ``` to open a fence", self._offset + index)
        self._ticks += 1
        if self._ticks == 3:
            self._mode, self._fenced = _Mode.FENCE_TAG, True
        return index + 1

    def _read_fence_tag(self, chunk: str, index: int) -> int:
        char = chunk[index]
        if char.isascii() and char.isalnum():
            self._tag.append(char)
            return index + 1
        if "".join(self._tag).lower() not in _FENCE_TAGS:
            self._fail("the fence's language tag must be 'json'", self._offset + index)
        self._mode = _Mode.VALUE
        return index

    def _read_value(self, chunk: str, index: int) -> int:
        char = chunk[index]
        if char in _WHITESPACE:
            return index + 1
        if char == "{":
            self._open({}, _Mode.OBJECT_FIRST)
        elif char == "[":
            self._open([], _Mode.ARRAY_FIRST)
        elif char == '"':
            self._start_string(is_key=False)
        elif char == "-" or char in _DIGITS:
            self._mode, self._token, self._token_start = _Mode.NUMBER, char, self._offset + index
        elif char in _LITERALS:
            self._mode, self._token = _Mode.LITERAL, char
        else:
            self._fail("expected a JSON value", self._offset + index)
        return index + 1

    def _read_array_first(self, chunk: str, index: int) -> int:
        char = chunk[index]
        if char in _WHITESPACE:
            return index + 1
        if char == "]":
            self._close()
            return index + 1
        self._mode = _Mode.VALUE
        return index

    def _read_object_first(self, chunk: str, index: int) -> int:
        if chunk[index] == "}":
            self._close()
            return index + 1
        return self._read_object_key(chunk, index)

    def _read_object_key(self, chunk: str, index: int) -> int:
        char = chunk[index]
        if char in _WHITESPACE:
            return index + 1
        if char != '"':
            self._fail("expected a string key", self._offset + index)
        self._start_string(is_key=True)
        return index + 1

    def _read_colon(self, chunk: str, index: int) -> int:
        char = chunk[index]
        if char in _WHITESPACE:
            return index + 1
        if char != ":":
            self._fail("expected ':'", self._offset + index)
        self._mode = _Mode.VALUE
        return index + 1

    def _read_after_value(self, chunk: str, index: int) -> int:
        char = chunk[index]
        if char in _WHITESPACE:
            return index + 1
        is_list = isinstance(self._stack[-1], list)
        if char == ",":
            self._mode = _Mode.VALUE if is_list else _Mode.OBJECT_KEY
        elif char == ("]" if is_list else "}"):
            self._close()
        else:
            expected = "']'" if is_list else "'}'"
            self._fail(f"expected ',' or {expected}", self._offset + index)
        return index + 1

    def _read_string(self, chunk: str, index: int) -> int:
        if self._hex is not None:
            return self._read_unicode_escape(chunk, index)
        char = chunk[index]
        if self._escape:
            self._escape = False
            if char == "u":
                self._hex = ""
                return index + 1
            if char not in _ESCAPES:
                self._fail(f"invalid escape '\\{char}'", self._offset + index - 1)
            self._append_text(_ESCAPES[char])
            return index + 1
        run = _STRING_RUN.match(chunk, index)
        if run is not None:
            self._append_text(run.group())
            return run.end()
        if char == "\\":
            self._escape = True
        elif char == '"':
            self._end_string()
        else:
            self._fail("invalid control character in string", self._offset + index)
        return index + 1

    def _read_unicode_escape(self, chunk: str, index: int) -> int:
        assert self._hex is not None
        char = chunk[index]
        if char not in _HEX_DIGITS:
            self._fail("invalid \\uXXXX escape", self._offset + index)
        self._hex += char
        if len(self._hex) == 4:
            code, self._hex = int(self._hex, 16), None
            pending, self._high_surrogate = self._high_surrogate, None
            if pending is not None and 0xDC00 <= code <= 0xDFFF:
                high, low = ord(pending) - 0xD800, code - 0xDC00
                self._string_parts.append(chr(0x10000 + (high << 10) + low))
            elif 0xD800 <= code <= 0xDBFF:
                if pending is not None:
                    self._string_parts.append(pending)
                self._high_surrogate = chr(code)  # shown once we know what follows
            else:
                self._append_text(chr(code) if pending is None else pending + chr(code))
        return index + 1

    def _append_text(self, text: str) -> None:
        if self._high_surrogate is not None:
            text, self._high_surrogate = self._high_surrogate + text, None
        self._string_parts.append(text)

    def _end_string(self) -> None:
        self._append_text("")
        text = "".join(self._string_parts)
        self._string_parts = []
        if self._string_is_key:
            self._keys[-1] = text
            self._mode = _Mode.COLON
        else:
            self._commit(text)

    def _read_number(self, chunk: str, index: int) -> int:
        if chunk[index] in _NUMBER_CHARS:
            self._token += chunk[index]
            return index + 1
        self._end_number()
        return index  # the character after the number belongs to the next mode

    def _read_literal(self, chunk: str, index: int) -> int:
        word, literal = _LITERALS[self._token[0]]
        if chunk[index] != word[len(self._token)]:
            self._fail(f"invalid literal, expected {word!r}", self._offset + index)
        self._token += chunk[index]
        if self._token == word:
            self._commit(literal)
        return index + 1

    def _read_trailer(self, chunk: str, index: int) -> int:
        char = chunk[index]
        if char in _WHITESPACE:
            return index + 1
        if char == "`" and self._fenced:
            self._mode, self._ticks = _Mode.FENCE_CLOSE, 1
            return index + 1
        self._fail("extra data after the JSON value", self._offset + index)

    def _read_fence_close(self, chunk: str, index: int) -> int:
        if chunk[index] != "`":
            self._fail("expected ``` to close the fence", self._offset + index)
        self._ticks += 1
        if self._ticks == 3:
            self._mode = _Mode.END
        return index + 1

    def _read_end(self, chunk: str, index: int) -> int:
        if chunk[index] not in _WHITESPACE:
            self._fail("extra data after the closing fence", self._offset + index)
        return index + 1
