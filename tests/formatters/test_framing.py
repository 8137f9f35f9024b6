"""SSE and NDJSON framing: the WHATWG rules, real provider streams, errors, and re-chunking."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.errors import ProviderError
from rxagent.formatters.framing import (
    NDJSONDecoder,
    SSEDecoder,
    SSEEvent,
    is_done,
    iter_ndjson,
    iter_sse,
)


def sse(body: bytes, splits: list[int] | None = None) -> list[SSEEvent]:
    decoder = SSEDecoder()
    cuts = [0, *(splits or []), len(body)]
    events = [e for a, b in itertools.pairwise(cuts) for e in decoder.feed(body[a:b])]
    return events + decoder.close()


def sse_bytewise(body: bytes) -> list[SSEEvent]:
    return sse(body, list(range(1, len(body))))


def ndjson(body: bytes, splits: list[int] | None = None) -> list[Any]:
    decoder = NDJSONDecoder()
    cuts = [0, *(splits or []), len(body)]
    values = [v for a, b in itertools.pairwise(cuts) for v in decoder.feed(body[a:b])]
    return values + decoder.close()


def check_sse(body: bytes) -> list[SSEEvent]:
    """Decode whole and byte by byte; both must agree."""
    whole = sse(body)
    assert sse_bytewise(body) == whole
    return whole


# -- the WHATWG rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_every_line_ending(eol: str):
    body = eol.join(["event: a", "data: 1", "data: 2", "", "data: 3", "", ""]).encode()
    assert check_sse(body) == [SSEEvent(event="a", data="1\n2"), SSEEvent(data="3")]


def test_mixed_line_endings_and_crlf_split_between_cr_and_lf():
    body = b"data: a\r\ndata: b\rdata: c\n\r\n"
    assert sse(body, [8]) == [SSEEvent(data="a\nb\nc")]
    assert check_sse(body) == [SSEEvent(data="a\nb\nc")]


def test_cr_then_cr_is_a_blank_line():
    assert check_sse(b"data: a\r\rdata: b\r\r") == [SSEEvent(data="a"), SSEEvent(data="b")]


def test_one_optional_space_after_the_colon():
    body = b"data:x\ndata: y\ndata:  z\ndata\ndata:\n\n"
    assert check_sse(body) == [SSEEvent(data="x\ny\n z\n\n")]


def test_value_may_contain_colons():
    assert check_sse(b'data: {"a": "b:c"}\n\n') == [SSEEvent(data='{"a": "b:c"}')]


def test_comments_are_kept_raw_and_comment_only_blocks_are_dispatched():
    body = b": keep-alive\n\n:HTTP_STATUS/200\ndata: x\n\n"
    assert check_sse(body) == [
        SSEEvent(comments=(" keep-alive",)),
        SSEEvent(data="x", comments=("HTTP_STATUS/200",)),
    ]


def test_id_and_retry_fields():
    decoder = SSEDecoder()
    events = decoder.feed(b"id: 7\nretry: 3000\ndata: a\n\ndata: b\n\nretry: 1x\nid\ndata: c\n\n")
    assert events == [
        SSEEvent(data="a", id="7", retry=3000),
        SSEEvent(data="b"),
        SSEEvent(data="c", id=""),
    ]
    assert decoder.last_event_id == ""
    assert decoder.retry == 3000


def test_id_with_null_and_non_ascii_digit_retry_are_ignored():
    decoder = SSEDecoder()
    assert decoder.feed("id: 1\nid: a\0b\nretry: ²\nretry: \ndata: x\n\n".encode()) == [
        SSEEvent(data="x", id="1")
    ]
    assert decoder.retry is None
    assert decoder.last_event_id == "1"


def test_huge_retry_is_ignored_not_a_crash():
    assert check_sse(b"retry: " + b"9" * 5000 + b"\ndata: x\n\n") == [SSEEvent(data="x")]


def test_unknown_fields_go_to_extra_in_order():
    body = b"foo: 1\nbar\nfoo:2\ndata: x\n\n"
    assert check_sse(body) == [SSEEvent(data="x", extra=(("foo", "1"), ("bar", ""), ("foo", "2")))]


def test_empty_blocks_are_skipped():
    body = b"\n\n\nid: 1\n\nretry: 5\n\nfoo: bar\n\nevent:\n\ndata: x\n\n"
    assert check_sse(body) == [SSEEvent(data="x")]


def test_event_name_without_data_is_dispatched():
    assert check_sse(b"event: ping\n\n") == [SSEEvent(event="ping")]


def test_empty_event_name_means_the_default_type():
    assert check_sse(b"event: a\nevent:\ndata: x\n\n") == [SSEEvent(data="x")]


def test_bom_stripped_once_even_when_split():
    body = b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n"
    events = check_sse(body)
    assert events == [SSEEvent(data="y")]  # the second BOM makes the first field "\ufeffdata"
    assert check_sse(b"\xef\xbb\xbfdata: x\n\n") == [SSEEvent(data="x")]


def test_partial_bom_at_end_of_stream_is_data():
    decoder = SSEDecoder()
    assert decoder.feed(b"\xef\xbb") == []
    assert decoder.close() == []  # a lone unknown field named "\ufffd", not dispatched


def test_multibyte_utf8_split_anywhere():
    body = "data: héllo €𝄞 你好\n\n".encode()
    assert check_sse(body) == [SSEEvent(data="héllo €𝄞 你好")]


def test_invalid_utf8_is_replaced():
    assert check_sse(b"data: a\xffb\n\n") == [SSEEvent(data="a\ufffdb")]


def test_close_flushes_the_final_event_and_resets():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b\r") == [SSEEvent(data="a")]
    assert decoder.close() == [SSEEvent(data="b")]
    assert decoder.feed(b"\ndata: c") == []  # a new stream: the LF is a blank line, not CRLF
    assert decoder.close() == [SSEEvent(data="c")]
    assert decoder.close() == []


def test_is_done():
    assert is_done(SSEEvent(data="[DONE]"))
    assert not is_done(SSEEvent(data="{}"))
    assert not is_done(SSEEvent(comments=("[DONE]",)))


# -- real provider streams -------------------------------------------------------------------------

OPENAI = (
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n'
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini",'
    b'"choices":[{"index":0,"delta":{"content":"Hi \xe2\x82\xac"},"finish_reason":null}]}\n\n'
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini",'
    b'"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def test_openai_stream():
    events = check_sse(OPENAI)
    assert [is_done(e) for e in events] == [False, False, False, True]
    chunks = [json.loads(e.data) for e in events[:-1]]
    assert [c["choices"][0]["delta"].get("content") for c in chunks] == ["", "Hi €", None]
    assert all(e.event is None for e in events)


ANTHROPIC = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":'
    b'"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_'
    b'sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}\n'
    b"\n"
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_us'
    b'e","id":"toolu_01","name":"get_weather","input":{}}}\n'
    b"\n"
    b"event: ping\n"
    b'data: {"type": "ping"}\n'
    b"\n"
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delt'
    b'a","partial_json":"{\\"location\\": \\"San Fra"}}\n'
    b"\n"
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delt'
    b'a","partial_json":"ncisco, CA\\"}"}}\n'
    b"\n"
    b"event: content_block_stop\n"
    b'data: {"type":"content_block_stop","index":0}\n'
    b"\n"
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence'
    b'":null},"usage":{"output_tokens":89}}\n'
    b"\n"
    b"event: message_stop\n"
    b'data: {"type":"message_stop"}\n'
    b"\n"
)


def test_anthropic_stream():
    events = check_sse(ANTHROPIC)
    assert [e.event for e in events] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    payloads = [json.loads(e.data) for e in events]
    assert all(p["type"] == e.event for p, e in zip(payloads, events, strict=True))
    args = "".join(
        p["delta"]["partial_json"] for p in payloads if p["type"] == "content_block_delta"
    )
    assert json.loads(args) == {"location": "San Francisco, CA"}


DASHSCOPE = (
    'id:1\nevent:result\n:HTTP_STATUS/200\ndata:{"output":{"choices":[{"message":{"content":'
    '"你好","role":"assistant"},"finish_reason":"null"}]},"usage":{"total_tokens":12,'
    '"input_tokens":10,"output_tokens":2},"request_id":"6c1a"}\n\n'
    'id:2\nevent:result\n:HTTP_STATUS/200\ndata:{"output":{"choices":[{"message":{"content":'
    '"!","role":"assistant"},"finish_reason":"stop"}]},"usage":{"total_tokens":13,'
    '"input_tokens":10,"output_tokens":3},"request_id":"6c1a"}\n\n'
).encode()


def test_dashscope_stream_without_space_after_colon():
    events = check_sse(DASHSCOPE)
    assert [(e.id, e.event, e.comments) for e in events] == [
        ("1", "result", ("HTTP_STATUS/200",)),
        ("2", "result", ("HTTP_STATUS/200",)),
    ]
    contents = [json.loads(e.data)["output"]["choices"][0]["message"]["content"] for e in events]
    assert contents == ["你好", "!"]


GEMINI = (
    b'data: {"candidates": [{"content": {"parts": [{"text": "Hello"}],"role": "model"},'
    b'"index": 0}],"usageMetadata": {"promptTokenCount": 4,"totalTokenCount": 4},'
    b'"modelVersion": "gemini-2.0-flash"}\r\n\r\n'
    b'data: {"candidates": [{"content": {"parts": [{"text": " world"}],"role": "model"},'
    b'"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 4,'
    b'"candidatesTokenCount": 2,"totalTokenCount": 6},"modelVersion": "gemini-2.0-flash"}\r\n\r\n'
)


def test_gemini_alt_sse_stream_with_crlf():
    events = check_sse(GEMINI)
    texts = [json.loads(e.data)["candidates"][0]["content"]["parts"][0]["text"] for e in events]
    assert texts == ["Hello", " world"]


OLLAMA = (
    b'{"model":"llama3.2","created_at":"2024-08-04T08:52:19.38Z","message":{"role":"assistant",'
    b'"content":"The"},"done":false}\n'
    b'{"model":"llama3.2","created_at":"2024-08-04T08:52:19.40Z","message":{"role":"assistant",'
    b'"content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},'
    b'"done":false}\n'
    b'{"model":"llama3.2","created_at":"2024-08-04T08:52:19.50Z","message":{"role":"assistant",'
    b'"content":""},"done":true,"done_reason":"stop","total_duration":4883583458,'
    b'"prompt_eval_count":26,"eval_count":282}\n'
)


def test_ollama_ndjson_stream():
    values = ndjson(OLLAMA)
    assert ndjson(OLLAMA, list(range(1, len(OLLAMA)))) == values
    assert [v["done"] for v in values] == [False, False, True]
    call = values[1]["message"]["tool_calls"][0]["function"]
    assert call == {"name": "get_weather", "arguments": {"city": "Paris"}}


def test_ndjson_crlf_blank_lines_and_unterminated_last_line():
    body = b'\r\n{"a": 1}\r\n\r\n  \n[2]\r\n"three"'
    assert ndjson(body) == [{"a": 1}, [2], "three"]
    assert ndjson(body, list(range(1, len(body)))) == [{"a": 1}, [2], "three"]


async def _chunks(body: bytes, size: int):
    for i in range(0, len(body), size):
        yield body[i : i + size]


async def test_iter_sse_feeds_as_bytes_arrive():
    events = [e async for e in iter_sse(_chunks(ANTHROPIC, 7))]
    assert events == sse(ANTHROPIC)


async def test_iter_ndjson_feeds_as_bytes_arrive():
    values = [v async for v in iter_ndjson(_chunks(OLLAMA, 5))]
    assert values == ndjson(OLLAMA)


# -- errors ----------------------------------------------------------------------------------------


def test_oversized_sse_line_raises_before_buffering_more():
    decoder = SSEDecoder(max_line_bytes=16)
    decoder.feed(b"data: 0123456789")  # exactly 16 bytes: accepted
    with pytest.raises(ProviderError, match="max_line_bytes=16"):
        decoder.feed(b"x")


def test_oversized_complete_line_in_one_chunk_raises():
    with pytest.raises(ProviderError, match="line longer"):
        SSEDecoder(max_line_bytes=8).feed(b"data: 0123456789\n\n")
    assert SSEDecoder(max_line_bytes=8).feed(b"data: 01\n\n") == [SSEEvent(data="01")]


def test_oversized_ndjson_line_raises():
    decoder = NDJSONDecoder(max_line_bytes=10)
    assert decoder.feed(b'"aaaaaaaa') == []
    with pytest.raises(ProviderError, match="NDJSON"):
        decoder.feed(b'aa"')


def test_malformed_ndjson_raises_provider_error_with_excerpt():
    body = b'{"ok": true}\n<html><body>502 Bad Gateway' + b"x" * 500 + b"</body></html>\n"
    with pytest.raises(ProviderError) as info:
        ndjson(body)
    message = str(info.value)
    assert "line 2" in message
    assert "<html><body>502 Bad Gateway" in message
    assert "x" * 300 not in message  # only a short excerpt
    assert isinstance(info.value.__cause__, json.JSONDecodeError)
    assert info.value.source == "model"


def test_malformed_unterminated_ndjson_raises_at_close():
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a": ') == []
    with pytest.raises(ProviderError, match="malformed NDJSON"):
        decoder.close()


def test_deeply_nested_ndjson_is_a_provider_error():
    with pytest.raises(ProviderError):
        ndjson(b"[" * 100_000 + b"\n")


# -- properties: any re-chunking decodes the same -------------------------------------------------

LINE_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12)
DATA_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=20)
FIELD_NAME = st.text(
    st.characters(codec="utf-8", exclude_characters="\r\n:\ufeff"), min_size=1, max_size=6
).filter(lambda name: name not in ("data", "event", "id", "retry"))

EVENTS = st.builds(
    SSEEvent,
    event=st.none() | LINE_TEXT.filter(bool),
    data=DATA_TEXT,
    id=st.none() | LINE_TEXT.filter(lambda s: "\0" not in s),
    retry=st.none() | st.integers(0, 10**12),
    extra=st.lists(st.tuples(FIELD_NAME, LINE_TEXT), max_size=2).map(tuple),
    comments=st.lists(LINE_TEXT, max_size=2).map(tuple),
)


def serialise(events: list[SSEEvent], eols: list[str], spaces: list[bool]) -> str:
    lines: list[str] = []

    def field(name: str, value: str) -> None:
        space = " " if spaces[len(lines) % len(spaces)] or value[:1] == " " else ""
        lines.append(f"{name}:{space}{value}")

    for event in events:
        lines.extend(":" + comment for comment in event.comments)
        if event.event is not None:
            field("event", event.event)
        if event.id is not None:
            field("id", event.id)
        if event.retry is not None:
            field("retry", str(event.retry))
        for name, value in event.extra:
            field(name, value)
        for part in event.data.split("\n"):
            field("data", part)
        lines.append("")
    out: list[str] = []
    for i, line in enumerate(lines):
        eol = eols[i % len(eols)]
        if not line and out and out[-1].endswith("\r") and eol[0] == "\n":
            eol = "\r"  # "\r" + "" + "\n" would read as one CRLF, losing the blank line
        out.append(line + eol)
    return "".join(out)


def split_points(draw: st.DrawFn, size: int) -> list[int]:
    return sorted(draw(st.sets(st.integers(0, size), max_size=size + 1)))


@st.composite
def sse_streams(draw: st.DrawFn) -> tuple[list[SSEEvent], bytes, list[int]]:
    events = draw(st.lists(EVENTS, max_size=5))
    eols = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=4))
    spaces = draw(st.lists(st.booleans(), min_size=1, max_size=3))
    bom = "\ufeff" if draw(st.booleans()) else ""
    body = (bom + serialise(events, eols, spaces)).encode()
    return events, body, split_points(draw, len(body))


@given(sse_streams())
def test_sse_round_trip_under_any_chunking(stream: tuple[list[SSEEvent], bytes, list[int]]):
    events, body, splits = stream
    assert sse(body) == events
    assert sse(body, splits) == events


@given(sse_streams())
def test_sse_single_byte_chunks(stream: tuple[list[SSEEvent], bytes, list[int]]):
    events, body, _ = stream
    assert sse_bytewise(body) == events


# Tricky fragments glued at random: BOMs, split UTF-8, CR/LF pairs, colons and field names.
FRAGMENTS = [
    *(b"data", b"event", b"id", b"retry", b"x", b"12", b":", b" ", b"\r", b"\n", b"\r\n"),
    *(b"\xef\xbb\xbf", b"\xef\xbb", b"\xe2\x82", b"\xac", b"\xf0\x9d\x84\x9e", b"\xff", b"\0"),
]


@given(st.data())
def test_any_bytes_decode_the_same_under_any_chunking(data: st.DataObject):
    body = b"".join(data.draw(st.lists(st.sampled_from(FRAGMENTS), max_size=40)))
    splits = data.draw(st.sets(st.integers(0, len(body)), max_size=len(body) + 1))
    assert sse(body, sorted(splits)) == sse(body)


_KEYS = st.text(st.characters(codec="utf-8"), max_size=5)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8"), max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def ndjson_streams(draw: st.DrawFn) -> tuple[list[Any], bytes, list[int]]:
    values = draw(st.lists(JSON_VALUES, max_size=5))
    ascii_only = draw(st.booleans())
    lines: list[str] = []
    for value in values:
        lines.extend([""] * draw(st.integers(0, 1)))
        lines.append(json.dumps(value, ensure_ascii=ascii_only))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(lines) + (eol if draw(st.booleans()) else "")
    body = text.encode()
    return values, body, split_points(draw, len(body))


@given(ndjson_streams())
def test_ndjson_round_trip_under_any_chunking(stream: tuple[list[Any], bytes, list[int]]):
    values, body, splits = stream
    assert ndjson(body) == values
    assert ndjson(body, splits) == values
    assert ndjson(body, list(range(1, len(body)))) == values


def test_rxagent_models_framing_still_exports_every_name() -> None:
    import rxagent.formatters.framing as framing
    import rxagent.models.framing as old_path

    assert old_path.__all__ == framing.__all__
    for name in framing.__all__:
        assert getattr(old_path, name) is getattr(framing, name), name
