"""Properties of the Ollama formatter: format -> parse_request round trips (modulo the documented
normalisation), NDJSON streams split at any byte parse the same, tool arguments survive any split.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rxagent.formatters.base import response_to_deltas
from rxagent.formatters.framing import NDJSONDecoder
from rxagent.formatters.ollama import TOOL_ERROR_PREFIX, OllamaFormatter
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    thaw,
)
from rxagent.models import ModelOptions, ModelResponse, ResponseBuilder, ToolCallDelta, Usage
from rxagent.testing import strategies as rst
from rxagent.testing.providers import FakeOllamaServer
from rxagent.testing.providers._base import RecordedRequest, ScriptedResponse

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
FMT = OllamaFormatter()
REQUEST = RecordedRequest("POST", "/api/chat", {}, {}, {"model": "llama3.2", "messages": []})


# -- helpers ---------------------------------------------------------------------------------------


def sendable(msg: Msg) -> Msg:
    """The message with what Ollama refuses replaced: URL images by bytes, no speaker name."""

    def fix(block: Block) -> Block:
        if isinstance(block, ImageBlock) and block.url is not None:
            return ImageBlock(data=PNG, media_type="image/png")
        if isinstance(block, ToolResultBlock) and not isinstance(block.output, str):
            return block.model_copy(update={"output": tuple(fix(b) for b in block.output)})
        return block

    content = msg.content if isinstance(msg.content, str) else tuple(fix(b) for b in msg.content)
    return msg.model_copy(update={"content": content, "name": None})


def image(block: ImageBlock) -> ImageBlock:
    kind = (
        "image/png" if (block.data or "").startswith("iVBORw0KGgo") else "application/octet-stream"
    )
    return ImageBlock(data=block.data, media_type=kind)


def with_text(text: str, images: list[ImageBlock]) -> str | tuple[Block, ...]:
    if not images:
        return text
    return ((TextBlock(text=text),) if text else ()) + tuple(images)


def normalised(msg: Msg) -> tuple[str, Any]:
    """What parse_request gives back for `msg` (the documented normalisation), ids ignored."""
    if isinstance(msg.content, str) and msg.role != "tool":
        return msg.role, msg.content
    blocks = msg.blocks
    texts = [b.text for b in blocks if isinstance(b, TextBlock)]
    if msg.role == "tool":
        [result] = msg.tool_results
        output = result.output
        parts = (
            [output]
            if isinstance(output, str)
            else [b.text for b in output if isinstance(b, TextBlock)]
        )
        images = (
            []
            if isinstance(output, str)
            else [image(b) for b in output if isinstance(b, ImageBlock)]
        )
        text, is_error = "\n".join(parts), result.is_error
        if not is_error and text.startswith(TOOL_ERROR_PREFIX):
            text, is_error = text[len(TOOL_ERROR_PREFIX) :], True
        return "tool", ToolResultBlock(
            id=result.id, name=result.name, output=with_text(text, images), is_error=is_error
        )
    if msg.role != "assistant":
        return msg.role, with_text(
            "\n".join(texts), [image(b) for b in blocks if isinstance(b, ImageBlock)]
        )
    thoughts = [b.thinking for b in blocks if isinstance(b, ThinkingBlock)]
    out: list[Block] = [ThinkingBlock(thinking="\n".join(thoughts))] if thoughts else []
    if "\n".join(texts):
        out.append(TextBlock(text="\n".join(texts)))
    out.extend(
        ToolUseBlock(id=b.id, name=b.name, input=b.input)
        for b in blocks
        if isinstance(b, ToolUseBlock)
    )
    if not thoughts and not msg.tool_calls:
        return "assistant", "\n".join(texts)
    return "assistant", tuple(out)


def comparable(msg: Msg) -> tuple[str, Any]:
    if msg.role == "tool":
        return "tool", msg.tool_results[0]
    return msg.role, msg.content


def rendered(blocks: list[Block], finish: str = "stop") -> ScriptedResponse:
    usage = Usage(input_tokens=17, output_tokens=5, requests=1)
    return ScriptedResponse(Msg.assistant(blocks), usage, finish, 1)


def stream_bytes(response: ScriptedResponse, chunk_size: int) -> bytes:
    server = FakeOllamaServer(chunk_size=chunk_size)
    return b"".join(server.render_stream(response, REQUEST))


def parse_bytes(pieces: list[bytes]) -> ModelResponse:
    decoder, parser, builder = NDJSONDecoder(), FMT.stream_parser(), ResponseBuilder()
    for piece in pieces:
        for event in decoder.feed(piece):
            for delta in parser.feed(event):
                builder.add(delta)
    for event in decoder.close():
        for delta in parser.feed(event):
            builder.add(delta)
    for delta in parser.close():
        builder.add(delta)
    return builder.response()


def key(response: ModelResponse) -> tuple[Any, ...]:
    """A response without its message id."""
    return response.message.content, response.usage, response.finish_reason


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


response_blocks = st.tuples(
    st.lists(st.text(max_size=20), max_size=1),
    st.text(max_size=40),
    st.lists(
        st.sampled_from(rst.DEFAULT_TOOL_NAMES).flatmap(
            lambda name: rst.tool_args(name).map(
                lambda args: ToolUseBlock(id="", name=name, input=args)
            )
        ),
        max_size=3,
    ),
).map(
    lambda parts: [
        *(ThinkingBlock(thinking=t) for t in parts[0] if t),
        *([TextBlock(text=parts[1])] if parts[1] else []),
        *parts[2],
    ]
)


# -- properties ------------------------------------------------------------------------------------


@given(
    rst.conversations(),
    st.lists(rst.tool_schemas(["add", "echo"]), max_size=2, unique_by=lambda t: t.name),
)
def test_conversations_round_trip(history: list[Msg], tools: list[Any]) -> None:
    history = [sendable(m) for m in history]
    body = json.loads(
        json.dumps(FMT.format(history, tools, ModelOptions(), model="m", stream=True))
    )
    messages, parsed_tools, options = FMT.parse_request(body)
    assert [comparable(m) for m in messages] == [normalised(m) for m in history]
    assert parsed_tools == tools
    assert options == ModelOptions()


@given(rst.messages())
def test_any_message_round_trips(msg: Msg) -> None:
    msg = sendable(msg)
    body = json.loads(json.dumps(FMT.format([msg], [], ModelOptions(), model="m", stream=False)))
    [parsed] = FMT.parse_request(body)[0]
    assert comparable(parsed) == normalised(msg)


@given(rst.model_options())
def test_options_round_trip(options: ModelOptions) -> None:
    tools_choice = options.tool_choice
    refused = tools_choice not in (None, "auto", "none") or options.parallel_tool_calls is False
    try:
        body = FMT.format([Msg.user("x")], [], options, model="m", stream=True)
    except Exception:
        assert refused
        return
    _, _, parsed = FMT.parse_request(json.loads(json.dumps(body)))
    # tool choice and parallel_tool_calls are not on Ollama's wire
    expected = options.model_copy(update={"tool_choice": None, "parallel_tool_calls": None})
    assert parsed == expected
    assert FMT.format([Msg.user("x")], [], parsed, model="m", stream=True) == body


@given(
    response_blocks,
    st.integers(min_value=1, max_value=9),
    st.lists(st.integers(min_value=0), max_size=8),
)
def test_a_stream_split_at_any_bytes_parses_the_same(
    blocks: list[Block], chunk_size: int, cuts: list[int]
) -> None:
    response = rendered(
        blocks, "tool_calls" if any(isinstance(b, ToolUseBlock) for b in blocks) else "stop"
    )
    data = stream_bytes(response, chunk_size)
    whole = parse_bytes([data])
    assert key(parse_bytes(split_at(data, cuts))) == key(whole)
    assert key(parse_bytes([data[i : i + 1] for i in range(len(data))])) == key(whole)
    # ... and the same as the whole (non-streamed) response, read by parse()
    builder = ResponseBuilder()
    for delta in response_to_deltas(FMT.parse(FakeOllamaServer().render(response, REQUEST))):
        builder.add(delta)
    assert key(builder.response()) == key(whole)
    merged = [b for b in blocks if not isinstance(b, ThinkingBlock)]
    assert whole.message.text == "".join(b.text for b in merged if isinstance(b, TextBlock))
    assert [dict(c.input) for c in whole.message.tool_calls] == [
        dict(b.input) for b in blocks if isinstance(b, ToolUseBlock)
    ]
    assert whole.usage == response.usage
    assert whole.finish_reason == response.finish


@given(
    rst.json_values().filter(lambda v: isinstance(v, dict)) | rst.tool_args(""),
    st.integers(min_value=0),
)
def test_tool_arguments_survive_any_split(args: dict[str, Any], cut: int) -> None:
    line = {
        "model": "m",
        "message": {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "f", "arguments": args}}],
        },
        "done": False,
    }
    data = (
        json.dumps(line).encode()
        + b"\n"
        + json.dumps({"done": True, "done_reason": "stop"}).encode()
    )
    response = parse_bytes(split_at(data, [cut]))
    [call] = response.message.tool_calls
    assert thaw(call.input) == args
    decoder, parser = NDJSONDecoder(), FMT.stream_parser()
    deltas = [
        d for part in split_at(data, [cut]) for e in decoder.feed(part) for d in parser.feed(e)
    ]
    text = "".join(d.args for d in deltas if isinstance(d, ToolCallDelta))
    assert json.loads(text) == args
