"""Properties of OpenAIFormatter: format → parse_request round trips (modulo the documented
normalisation), streams parse the same however their bytes are split, and tool-call argument JSON
accumulates to the same value wherever it is cut.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rxagent.formatters.framing import SSEDecoder, SSEEvent
from rxagent.formatters.openai import ERROR_PREFIX, IMAGES_ONLY_NOTE, OpenAIFormatter
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models import ModelOptions, ResponseBuilder, ToolCallDelta, ToolSchema, Usage
from rxagent.testing import strategies as rst
from rxagent.testing.providers import FakeOpenAIServer
from rxagent.testing.providers._base import RecordedRequest, ScriptedResponse

KNOWN_KEYS = {
    "model",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "max_completion_tokens",
    "max_tokens",
    "response_format",
    "stop",
    "seed",
    "stream",
    "stream_options",
}


# -- the documented normalisation ------------------------------------------------------------------


def _tool_result(block: ToolResultBlock, name: str) -> ToolResultBlock:
    if isinstance(block.output, str):
        text, images = block.output, []
    else:
        text = "\n".join(b.text for b in block.output if isinstance(b, TextBlock))
        images = [b for b in block.output if isinstance(b, ImageBlock)]
    is_error = block.is_error
    if not is_error and text.startswith(ERROR_PREFIX):  # indistinguishable on the wire
        is_error, text = True, text[len(ERROR_PREFIX) :]
    output: str | tuple[Block, ...] = text
    if images:
        head = (TextBlock(text=text),) if text and text != IMAGES_ONLY_NOTE else ()
        output = (*head, *images)
    return ToolResultBlock(id=block.id, name=name, output=output, is_error=is_error)


def _assistant(msg: Msg, reasoning: bool) -> Any:
    if isinstance(msg.content, str):
        return ("assistant", msg.name, msg.content)
    thinking = "".join(b.thinking for b in msg.content if isinstance(b, ThinkingBlock))
    calls = [b for b in msg.content if isinstance(b, ToolUseBlock)]
    text = msg.text
    blocks: list[Block] = []
    if reasoning and thinking:
        blocks.append(ThinkingBlock(thinking=thinking))
    if not blocks and not calls:
        return ("assistant", msg.name, text)
    if text:
        blocks.append(TextBlock(text=text))
    return ("assistant", msg.name, (*blocks, *calls))


def normalise(messages: list[Msg], *, reasoning: bool = False) -> list[Any]:
    """What parse_request(format(messages)) gives back, ids and metadata aside."""
    out: list[Any] = []
    names: dict[str, str] = {}
    for msg in messages:
        if msg.role == "system":
            out.append(("system", msg.name, msg.text))
        elif msg.role == "user":
            out.append(("user", msg.name, msg.content))
        elif msg.role == "assistant":
            names.update((c.id, c.name) for c in msg.tool_calls)
            out.append(_assistant(msg, reasoning))
        else:
            out.extend(
                ("tool", None, (_tool_result(r, names.get(r.id, "")),)) for r in msg.tool_results
            )
    return out


def view(messages: list[Msg]) -> list[Any]:
    return [(m.role, m.name, m.content) for m in messages]


def _options(options: ModelOptions, tools: list[ToolSchema]) -> ModelOptions:
    update: dict[str, Any] = {
        "extra": {k: v for k, v in options.extra.items() if k not in KNOWN_KEYS}
    }
    if not tools:
        update.update(tool_choice=None, parallel_tool_calls=None)
    return options.model_copy(update=update)


# -- round trips -----------------------------------------------------------------------------------


@given(
    history=rst.conversations(max_turns=3),
    tools=st.lists(rst.tool_schemas(), max_size=3),
    options=rst.model_options(),
    stream=st.booleans(),
    reasoning=st.booleans(),
)
def test_conversations_round_trip(
    history: list[Msg],
    tools: list[ToolSchema],
    options: ModelOptions,
    stream: bool,
    reasoning: bool,
) -> None:
    fmt = OpenAIFormatter(reasoning_content=reasoning)
    options = _options(options, tools)
    body = fmt.format(history, tools, options, model="gpt-4o", stream=stream)
    messages, back_tools, back_options = fmt.parse_request(json.loads(json.dumps(body)))
    assert view(messages) == normalise(history, reasoning=reasoning)
    assert back_tools == tools
    assert back_options == options


@given(
    messages=st.lists(rst.messages(), min_size=1, max_size=8),
    reasoning=st.booleans(),
    developer=st.booleans(),
)
def test_messages_of_every_role_round_trip(
    messages: list[Msg], reasoning: bool, developer: bool
) -> None:
    fmt = OpenAIFormatter(
        reasoning_content=reasoning, system_role="developer" if developer else "system"
    )
    body = fmt.format(messages, [], ModelOptions(), model="m", stream=False)
    back, _, _ = fmt.parse_request(json.loads(json.dumps(body)))
    assert view(back) == normalise(messages, reasoning=reasoning)


# -- streams split anywhere ------------------------------------------------------------------------

_calls = st.sampled_from(("add", "echo", "lookup")).flatmap(
    lambda name: st.builds(
        ToolUseBlock,
        id=st.uuids().map(lambda u: f"call_{u.hex}"),
        name=st.just(name),
        input=rst.tool_args(name),
    )
)
_turn_blocks = st.tuples(st.text(max_size=40), st.text(max_size=40), st.lists(_calls, max_size=3))


def _scripted(thinking: str, text: str, calls: list[ToolUseBlock]) -> ScriptedResponse:
    blocks: list[Block] = []
    if thinking:
        blocks.append(ThinkingBlock(thinking=thinking))
    if text:
        blocks.append(TextBlock(text=text))
    blocks.extend(calls)
    usage = Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2, requests=1)
    return ScriptedResponse(Msg.assistant(blocks), usage, "tool_calls" if calls else "stop", 1)


def _recorded_stream(
    response: ScriptedResponse, *, chunk_size: int, interleave: bool, include_usage: bool
) -> bytes:
    server = FakeOpenAIServer(chunk_size=chunk_size, interleave_tool_calls=interleave)
    body: dict[str, Any] = {"model": "m", "messages": [], "stream": True}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    request = RecordedRequest("POST", "/v1/chat/completions", {}, {}, body)
    return b"".join(server.render_stream(response, request))


def _parse(pieces: list[bytes]) -> list[Any]:
    decoder = SSEDecoder()
    parser = OpenAIFormatter().stream_parser()
    deltas = [d for piece in pieces for event in decoder.feed(piece) for d in parser.feed(event)]
    deltas += [d for event in decoder.close() for d in parser.feed(event)]
    return deltas + parser.close()


@given(
    turn=_turn_blocks,
    chunk_size=st.integers(min_value=1, max_value=12),
    interleave=st.booleans(),
    include_usage=st.booleans(),
    cuts=st.lists(st.floats(min_value=0, max_value=1), max_size=12),
)
def test_a_stream_parses_the_same_however_its_bytes_are_split(
    turn: tuple[str, str, list[ToolUseBlock]],
    chunk_size: int,
    interleave: bool,
    include_usage: bool,
    cuts: list[float],
) -> None:
    response = _scripted(*turn)
    raw = _recorded_stream(
        response, chunk_size=chunk_size, interleave=interleave, include_usage=include_usage
    )
    positions = sorted({int(c * len(raw)) for c in cuts})
    pieces = [raw[a:b] for a, b in zip([0, *positions], [*positions, len(raw)], strict=True)]
    whole = _parse([raw])
    assert _parse(pieces) == whole
    builder = ResponseBuilder()
    for delta in whole:
        builder.add(delta)
    assert builder.build().blocks == response.message.blocks
    assert builder.finish_reason == response.finish
    expected_usage = response.usage if include_usage else Usage(requests=1)
    assert builder.usage == expected_usage
    # a whole response of the same turn parses to the same message
    server = FakeOpenAIServer()
    body = server.render(response, RecordedRequest("POST", "/", {}, {}, {"model": "m"}))
    parsed = OpenAIFormatter().parse(json.loads(json.dumps(body)))
    assert parsed.message.blocks == response.message.blocks
    assert parsed.usage == response.usage


# -- tool-call arguments cut anywhere --------------------------------------------------------------


def _call_chunk(index: int, args: str, head: tuple[str, str] | None = None) -> SSEEvent:
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if head is not None:
        fragment["id"], fragment["function"]["name"] = head
        fragment["type"] = "function"
    delta = {"tool_calls": [fragment]}
    return SSEEvent(data=json.dumps({"choices": [{"index": 0, "delta": delta}]}))


def _cut(text: str, cuts: list[float]) -> list[str]:
    positions = sorted({int(c * len(text)) for c in cuts})
    return [text[a:b] for a, b in zip([0, *positions], [*positions, len(text)], strict=True)]


@given(
    first=rst.tool_args("lookup"),
    second=rst.tool_args("echo"),
    cuts_first=st.lists(st.floats(min_value=0, max_value=1), max_size=10),
    cuts_second=st.lists(st.floats(min_value=0, max_value=1), max_size=10),
    interleave=st.booleans(),
)
def test_argument_json_cut_anywhere_accumulates_to_the_same_value(
    first: dict[str, Any],
    second: dict[str, Any],
    cuts_first: list[float],
    cuts_second: list[float],
    interleave: bool,
) -> None:
    a, b = _cut(json.dumps(first), cuts_first), _cut(json.dumps(second), cuts_second)
    events = [_call_chunk(0, "", ("c0", "lookup")), _call_chunk(1, "", ("c1", "echo"))]
    if interleave:
        for i in range(max(len(a), len(b))):
            events += [_call_chunk(n, p[i]) for n, p in ((0, a), (1, b)) if i < len(p)]
    else:
        events += [_call_chunk(0, piece) for piece in a] + [_call_chunk(1, piece) for piece in b]
    events.append(SSEEvent(data="[DONE]"))
    parser = OpenAIFormatter().stream_parser()
    deltas = [d for event in events for d in parser.feed(event)] + parser.close()
    builder = ResponseBuilder()
    for delta in deltas:
        builder.add(delta)
    calls = builder.build().tool_calls
    assert [(c.id, c.name) for c in calls] == [("c0", "lookup"), ("c1", "echo")]
    assert [c.raw_input for c in calls] == [None, None]
    assert [json.loads(json.dumps(c.input)) for c in calls] == [first, second]
    indexes = {d.index for d in deltas if isinstance(d, ToolCallDelta)}
    assert indexes == {0, 1}
