"""Properties of the DashScope formatter: request round trips, stream splitting, argument splitting.

Normalisation for the round trip (documented in docs/providers/dashscope.md): message ids and
metadata are not sent; texts of one message are joined; thinking is joined into one block without
signature; tool-result blocks are joined with newlines; a tool message's speaker name is not sent
(its `name` is the tool's); an image given as base64 data comes back as data.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rxagent.formatters.dashscope import DashScopeFormatter
from rxagent.formatters.framing import SSEDecoder
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models import ModelOptions, ResponseBuilder, Usage
from rxagent.models.base import ModelDelta
from rxagent.testing import strategies as rst
from rxagent.testing.providers import FakeDashScopeServer
from rxagent.testing.providers._base import RecordedRequest, ScriptedResponse
from rxagent.testing.providers.dashscope import MULTIMODAL_PATH, TEXT_PATH

TEXT = DashScopeFormatter()
VL = DashScopeFormatter(multimodal=True)
_WIRE_KEYS = frozenset(
    {
        "model",
        "input",
        "parameters",
        "result_format",
        "incremental_output",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "temperature",
        "max_tokens",
        "stop",
        "seed",
        "response_format",
    }
)


# -- what the wire can carry -----------------------------------------------------------------------


def _carriable(msg: Msg, multimodal: bool) -> Msg:
    """Drop what DashScope refuses (tested elsewhere): tool-result images, text-mode images."""
    if isinstance(msg.content, str):
        return msg
    blocks: list[Block] = []
    for block in msg.content:
        if isinstance(block, ImageBlock) and not multimodal:
            continue
        if isinstance(block, ToolResultBlock) and not isinstance(block.output, str):
            output = tuple(b for b in block.output if not isinstance(b, ImageBlock))
            block = block.model_copy(update={"output": output})
        blocks.append(block)
    return msg.model_copy(update={"content": tuple(blocks)})


def _image(block: ImageBlock) -> str:
    return block.url or f"data:{block.media_type};base64,{block.data}"


def canonical(msg: Msg) -> Any:
    """What survives the wire, in comparable form."""
    blocks = msg.blocks
    if msg.role == "tool":
        [result] = blocks
        assert isinstance(result, ToolResultBlock)
        return ("tool", result.id, result.name, result.text, result.is_error)
    if msg.role == "assistant":
        thoughts = [b.thinking for b in blocks if isinstance(b, ThinkingBlock)]
        calls = [
            (b.id, b.name, dict(b.input), b.raw_input)
            for b in blocks
            if isinstance(b, ToolUseBlock)
        ]
        return ("assistant", msg.name, "".join(thoughts) if thoughts else None, msg.text, calls)
    parts: list[tuple[str, str]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            if not block.text:
                continue
            if parts and parts[-1][0] == "text":
                parts[-1] = ("text", parts[-1][1] + block.text)
            else:
                parts.append(("text", block.text))
        elif isinstance(block, ImageBlock):
            parts.append(("image", _image(block)))
    return (msg.role, msg.name, parts)


@st.composite
def histories(draw: st.DrawFn, multimodal: bool) -> list[Msg]:
    history = draw(rst.conversations(max_turns=2))
    extra = draw(st.lists(rst.messages(), max_size=4))
    for msg in extra:
        history.insert(draw(st.integers(0, len(history))), msg)
    return [_carriable(m, multimodal) for m in history]


def _wire_options(options: ModelOptions) -> ModelOptions:
    """Options DashScope carries: no "required", and no extra key that names a wire field."""
    extra = {k: v for k, v in options.extra.items() if k not in _WIRE_KEYS}
    choice = None if options.tool_choice == "required" else options.tool_choice
    return options.model_copy(update={"extra": extra, "tool_choice": choice})


@given(
    st.booleans().flatmap(lambda mm: st.tuples(st.just(mm), histories(mm))),
    st.lists(rst.tool_schemas(), max_size=3, unique_by=lambda t: t.name),
    rst.model_options().map(_wire_options),
    st.booleans(),
)
def test_format_then_parse_request_gives_the_conversation_back(
    mode_and_history: tuple[bool, list[Msg]],
    tools: list[Any],
    options: ModelOptions,
    stream: bool,
) -> None:
    multimodal, history = mode_and_history
    formatter = VL if multimodal else TEXT
    body = formatter.format(history, tools, options, model="qwen-plus", stream=stream)
    sent = json.loads(json.dumps(body, ensure_ascii=False))
    messages, tools_back, options_back = formatter.parse_request(sent)
    assert [canonical(m) for m in messages] == [canonical(m) for m in history]
    assert tools_back == tools
    assert options_back == options
    assert sent["parameters"]["result_format"] == "message"
    assert sent["parameters"].get("incremental_output") is (True if stream else None)


# -- streams split anywhere ------------------------------------------------------------------------

_turns = st.tuples(
    st.none() | st.text(min_size=1, max_size=40),
    st.text(max_size=60),
    st.lists(st.tuples(st.sampled_from(rst.DEFAULT_TOOL_NAMES), rst.json_values()), max_size=3),
).map(
    lambda t: (
        tuple([ThinkingBlock(thinking=t[0])] if t[0] is not None else [])
        + ((TextBlock(text=t[1]),) if t[1] else ())
        + tuple(
            ToolUseBlock(id=f"call_{i}", name=name, input={"value": value})
            for i, (name, value) in enumerate(t[2])
        )
    )
)


def _recorded(blocks: tuple[Block, ...], chunk_size: int, multimodal: bool) -> bytes:
    server = FakeDashScopeServer(chunk_size=chunk_size)
    calls = any(isinstance(b, ToolUseBlock) for b in blocks)
    usage = Usage(input_tokens=11, output_tokens=7, cache_read_tokens=3, requests=1)
    response = ScriptedResponse(Msg.assistant(blocks), usage, "tool_calls" if calls else "stop", 1)
    request = RecordedRequest(
        method="POST",
        path=MULTIMODAL_PATH if multimodal else TEXT_PATH,
        query={},
        headers={},
        body={"parameters": {"incremental_output": True}},
    )
    return b"".join(server.render_stream(response, request))


def _parse(formatter: DashScopeFormatter, pieces: list[bytes]) -> list[ModelDelta]:
    decoder = SSEDecoder()
    parser = formatter.stream_parser()
    deltas: list[ModelDelta] = []
    for piece in pieces:
        for event in decoder.feed(piece):
            deltas.extend(parser.feed(event))
    for event in decoder.close():
        deltas.extend(parser.feed(event))
    deltas.extend(parser.close())
    return deltas


@given(
    _turns,
    st.integers(min_value=1, max_value=9),
    st.booleans(),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_a_recorded_stream_split_anywhere_parses_the_same(
    blocks: tuple[Block, ...], chunk_size: int, multimodal: bool, cuts: list[int]
) -> None:
    raw = _recorded(blocks, chunk_size, multimodal)
    formatter = VL if multimodal else TEXT
    points = sorted({c % (len(raw) + 1) for c in cuts})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    whole = _parse(formatter, [raw])
    assert _parse(formatter, pieces) == whole
    builder = ResponseBuilder()
    for delta in whole:
        builder.add(delta)
    assert builder.build().blocks == blocks
    assert builder.usage == Usage(input_tokens=11, output_tokens=7, cache_read_tokens=3, requests=1)
    assert builder.finish_reason == (
        "tool_calls" if any(b.type == "tool_use" for b in blocks) else "stop"
    )


@given(rst.json_values(), st.lists(st.integers(min_value=0, max_value=500), max_size=8))
def test_tool_call_arguments_split_anywhere_accumulate_to_the_same_json(
    value: Any, cuts: list[int]
) -> None:
    args = json.dumps({"value": value}, ensure_ascii=False)
    points = sorted({c % (len(args) + 1) for c in cuts})
    pieces = [args[a:b] for a, b in zip([0, *points], [*points, len(args)], strict=True)]

    def frame(call: dict[str, Any], finish: str = "null") -> str:
        message = {"role": "assistant", "content": "", "tool_calls": [call]}
        return json.dumps({"output": {"choices": [{"message": message, "finish_reason": finish}]}})

    head = {
        "index": 0,
        "id": "call_x",
        "type": "function",
        "function": {"name": "echo", "arguments": ""},
    }
    frames = [frame(head)]
    frames += [
        frame({"index": 0, "id": "", "type": "function", "function": {"name": "", "arguments": p}})
        for p in pieces
    ]
    frames.append(
        json.dumps(
            {"output": {"choices": [{"message": {"content": ""}, "finish_reason": "tool_calls"}]}}
        )
    )
    raw = "".join(
        f"id:{i}\nevent:result\n:HTTP_STATUS/200\ndata:{f}\n\n" for i, f in enumerate(frames)
    )
    builder = ResponseBuilder()
    for delta in _parse(TEXT, [raw.encode()]):
        builder.add(delta)
    [call] = builder.build().tool_calls
    assert (call.id, call.name) == ("call_x", "echo")
    assert json.loads(json.dumps(dict(call.input))) == {"value": value}
    assert call.raw_input is None
