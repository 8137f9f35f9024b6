"""Properties of the Gemini formatter: request round trips and stream parsing split anywhere."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from rxagent.formatters.framing import SSEDecoder
from rxagent.formatters.gemini import AGENT_CALL_ID, GeminiFormatter
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models import ModelOptions, ModelResponse, ResponseBuilder, ToolSchema, Usage
from rxagent.models.base import ToolCallDelta
from rxagent.testing import strategies as rst
from rxagent.testing.providers import FakeGeminiServer, RecordedRequest
from rxagent.testing.providers._base import ScriptedResponse

FMT = GeminiFormatter()
IDENTS = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
REQUEST = RecordedRequest(
    method="POST",
    path="/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    query={"alt": "sse"},
    headers={},
    body={},
)

# -- format → parse_request ----------------------------------------------------------------------


def _expected_result(block: ToolResultBlock) -> ToolResultBlock:
    """A tool output of blocks comes back as its joined text, then its images."""
    if isinstance(block.output, str):
        return block
    joined = "\n".join(b.text for b in block.output if isinstance(b, TextBlock))
    images = tuple(b for b in block.output if isinstance(b, ImageBlock))
    output: str | tuple[Block, ...] = joined
    if images:
        output = ((TextBlock(text=joined),) if joined else ()) + images
    return block.model_copy(update={"output": output})


def _without_agent_id(block: Block) -> Block:
    """With `call_ids="model"`, the agent's own `call_<n>` ids are not sent, so come back empty."""
    if isinstance(block, ToolUseBlock | ToolResultBlock) and AGENT_CALL_ID.fullmatch(block.id):
        return block.model_copy(update={"id": ""})
    return block


def expected_messages(
    messages: list[Msg], call_ids: str = "always"
) -> list[tuple[str, tuple[Block, ...]]]:
    """The documented normalisation: names as a leading text part, all system text first,
    empty messages gone, tool outputs of blocks joined; message ids and metadata ignored."""
    system: list[Block] = []
    out: list[tuple[str, tuple[Block, ...]]] = []
    for msg in messages:
        blocks = list(msg.blocks)
        if call_ids == "model":
            blocks = [_without_agent_id(b) for b in blocks]
        if msg.name is not None:
            blocks.insert(0, TextBlock(text=f"{msg.name}: "))
        if msg.role == "system":
            system.extend(blocks)
        elif msg.role == "tool":
            out.extend(
                ("tool", (_expected_result(b),)) for b in blocks if isinstance(b, ToolResultBlock)
            )
        elif blocks:
            out.append((msg.role, tuple(blocks)))
    return [("system", tuple(system))] * bool(system) + out


def expected_options(options: ModelOptions, tools: list[ToolSchema]) -> ModelOptions:
    fmt = options.response_format
    if fmt is not None and fmt.get("type") == "json_schema":
        fmt = {
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": fmt["json_schema"]["schema"]},
        }
    return ModelOptions(
        temperature=options.temperature,
        max_output_tokens=options.max_output_tokens,
        tool_choice=options.tool_choice if tools else None,
        response_format=fmt,
        stop=options.stop or None,
        seed=options.seed,
        extra=options.extra,
    )


extra_messages = st.lists(rst.messages(roles=["system", "user", "assistant"]), max_size=3)
schemas = st.lists(rst.tool_schemas(), max_size=3, unique_by=lambda t: t.name)
json_schema_formats = st.builds(
    lambda schema, strict: {
        "type": "json_schema",
        "json_schema": {"name": "out", "schema": schema, "strict": strict},
    },
    st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={"properties": st.dictionaries(IDENTS, st.just({"type": "string"}), max_size=2)},
    ),
    st.booleans(),
)


@given(
    history=rst.conversations(),
    extra=extra_messages,
    position=st.integers(min_value=0),
    tools=schemas,
    options=rst.model_options(),
    json_format=st.none() | json_schema_formats,
    call_ids=st.sampled_from(("model", "always")),
)
def test_format_then_parse_request_round_trips(
    history: list[Msg],
    extra: list[Msg],
    position: int,
    tools: list[ToolSchema],
    options: ModelOptions,
    json_format: dict[str, Any] | None,
    call_ids: Any,
) -> None:
    assume(
        not {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
        & set(options.extra)
    )
    cut = position % (len(history) + 1)
    messages = history[:cut] + extra + history[cut:]
    update: dict[str, Any] = {"parallel_tool_calls": None}
    if json_format is not None:
        update["response_format"] = json_format
    options = options.model_copy(update=update)
    fmt = GeminiFormatter(call_ids=call_ids)
    body = fmt.format(messages, tools, options, model="m", stream=True)
    json.dumps(body)  # plain JSON all the way down
    back, back_tools, back_options = fmt.parse_request(json.loads(json.dumps(body)))
    assert [(m.role, m.blocks) for m in back] == expected_messages(messages, call_ids)
    assert back_tools == tools
    assert back_options == expected_options(options, tools)


# -- streams split anywhere ----------------------------------------------------------------------

signatures = st.binary(min_size=1, max_size=24).map(lambda b: base64.b64encode(b).decode())
unicode_text = st.text(min_size=1, max_size=40)
call_args = st.dictionaries(st.text(max_size=8), rst.json_values(), max_size=4)


@st.composite
def response_blocks(draw: st.DrawFn) -> tuple[Block, ...]:
    blocks: list[Block] = []
    for i in range(draw(st.integers(min_value=0, max_value=5))):
        kind = draw(st.sampled_from(("text", "thought", "signature", "call")))
        if kind == "text":
            blocks.append(TextBlock(text=draw(unicode_text)))
        elif kind == "thought":
            blocks.append(
                ThinkingBlock(thinking=draw(unicode_text), signature=draw(st.none() | signatures))
            )
        elif kind == "signature":
            blocks.append(ThinkingBlock(thinking="", signature=draw(signatures)))
        else:
            call_id = draw(st.sampled_from(("", f"id{i}")))
            blocks.append(ToolUseBlock(id=call_id, name=draw(IDENTS), input=draw(call_args)))
    return tuple(blocks)


def wire(blocks: tuple[Block, ...], chunk_size: int, usage: Usage) -> tuple[bytes, Any]:
    calls = any(isinstance(b, ToolUseBlock) for b in blocks)
    response = ScriptedResponse(Msg.assistant(blocks), usage, "tool_calls" if calls else "stop", 1)
    server = FakeGeminiServer(chunk_size=chunk_size)
    return b"".join(server.render_stream(response, REQUEST)), server.render(response, REQUEST)


def parse_bytes(raw: bytes, cuts: list[int]) -> ModelResponse:
    decoder = SSEDecoder()
    parser = FMT.stream_parser()
    builder = ResponseBuilder(id_factory=str)
    start = 0
    for end in [*sorted(cuts), len(raw)]:
        for event in decoder.feed(raw[start:end]):
            for delta in parser.feed(event):
                builder.add(delta)
        start = max(start, end)
    for event in decoder.close():
        for delta in parser.feed(event):
            builder.add(delta)
    for delta in parser.close():
        builder.add(delta)
    return builder.response()


def same(a: ModelResponse, b: ModelResponse) -> bool:
    return (a.message.content, a.usage, a.finish_reason) == (
        b.message.content,
        b.usage,
        b.finish_reason,
    )


@given(
    blocks=response_blocks(),
    chunk_size=st.integers(min_value=1, max_value=12),
    usage=st.builds(
        Usage,
        input_tokens=st.integers(min_value=0, max_value=10**6),
        output_tokens=st.integers(min_value=0, max_value=10**6),
        cache_read_tokens=st.integers(min_value=0, max_value=10**6),
        requests=st.just(1),
    ),
    data=st.data(),
)
def test_a_byte_stream_split_anywhere_parses_the_same(
    blocks: tuple[Block, ...], chunk_size: int, usage: Usage, data: st.DataObject
) -> None:
    raw, whole = wire(blocks, chunk_size, usage)
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(raw)), max_size=12))
    reference = parse_bytes(raw, [])
    assert same(parse_bytes(raw, cuts), reference)
    assert same(FMT.parse(whole), reference)  # streamed and whole responses agree
    assert reference.usage == usage
    # what was sent survives: text, thoughts, calls and every signature, in order
    content = reference.message.content
    assert isinstance(content, tuple)
    assert "".join(b.text for b in content if isinstance(b, TextBlock)) == "".join(
        b.text for b in blocks if isinstance(b, TextBlock)
    )
    assert [(c.id, c.name, c.input) for c in content if isinstance(c, ToolUseBlock)] == [
        (c.id, c.name, c.input) for c in blocks if isinstance(c, ToolUseBlock)
    ]
    assert [b.signature for b in content if isinstance(b, ThinkingBlock) and b.signature] == [
        b.signature for b in blocks if isinstance(b, ThinkingBlock) and b.signature
    ]


@given(args=call_args, data=st.data())
def test_function_call_arguments_split_anywhere_accumulate_to_the_same_json(
    args: dict[str, Any], data: st.DataObject
) -> None:
    raw, _ = wire((ToolUseBlock(id="", name="tool", input=args),), 8, Usage(requests=1))
    cut = data.draw(st.integers(min_value=0, max_value=len(raw)))
    decoder, parser = SSEDecoder(), FMT.stream_parser()
    deltas = [
        d for part in (raw[:cut], raw[cut:]) for e in decoder.feed(part) for d in parser.feed(e)
    ]
    deltas += [d for e in decoder.close() for d in parser.feed(e)] + parser.close()
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert {d.index for d in calls} == {0}
    assert calls[0].id is None
    assert calls[0].name == "tool"
    assert json.loads("".join(d.args for d in calls)) == args
