"""Properties of the Anthropic formatter: request round trips, split streams, split tool JSON.

The round trip `parse_request(format(x)) == x` holds modulo the documented normalisation:

- message ids and metadata are ignored (names are not drawn: a name becomes text);
- system messages come back first, in order (Anthropic has one system prompt);
- content is compared as blocks: a user message that joined tool results, or the last message
  marked as a cache breakpoint, comes back as blocks rather than a string;
- an unsigned, empty thinking block is not sent, and an assistant message left empty is not;
- `max_output_tokens` equal to the formatter's default comes back as None; `tool_choice` and
  `parallel_tool_calls` come back only with tools, `tool_choice="none"` without
  `parallel_tool_calls`, and `parallel_tool_calls` alone as `tool_choice="auto"`;
- `cache_breakpoints` comes back as the targets that had something to mark (`True` for all three).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rxagent.formatters.anthropic import (
    CACHE_TARGETS,
    REDACTED_THINKING_PREFIX,
    AnthropicFormatter,
)
from rxagent.formatters.framing import SSEDecoder, SSEEvent
from rxagent.messages import Block, Msg, ThinkingBlock, ToolUseBlock, freeze
from rxagent.models.base import ModelOptions, ResponseBuilder, ToolSchema, Usage
from rxagent.testing import strategies as rst
from rxagent.testing._builders import turn_to_blocks
from rxagent.testing.providers._base import RecordedRequest, ScriptedResponse
from rxagent.testing.providers.anthropic import FakeAnthropicServer

F = AnthropicFormatter()
BODY_KEYS = {
    "model",
    "max_tokens",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "stream",
    "temperature",
    "stop_sequences",
    "cache_breakpoints",
}


# -- request round trip --------------------------------------------------------------------------


def redact(block: Block) -> Block:
    if isinstance(block, ThinkingBlock) and block.signature:
        return ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + block.signature)
    return block


@st.composite
def histories(draw: st.DrawFn) -> list[Msg]:
    history = draw(rst.conversations(max_turns=3))
    if draw(st.booleans()):  # some signed thinking comes back redacted
        history = [
            m.model_copy(update={"content": tuple(map(redact, m.content))})
            if m.role == "assistant" and not isinstance(m.content, str)
            else m
            for m in history
        ]
    loose = rst.messages(roles=["user", "assistant", "system"]).map(
        lambda m: m.model_copy(update={"name": None})
    )
    for extra in draw(st.lists(loose, max_size=3)):  # images, late system messages, ...
        history.insert(draw(st.integers(0, len(history))), extra)
    return history


@st.composite
def requests(draw: st.DrawFn) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
    tools = draw(st.lists(rst.tool_schemas(), max_size=3, unique_by=lambda t: t.name))
    options = draw(rst.model_options())
    extra = {k: v for k, v in options.extra.items() if k not in BODY_KEYS}
    cache = draw(st.none() | st.just(True) | st.lists(st.sampled_from(CACHE_TARGETS), unique=True))
    if cache is not None:
        extra["cache_breakpoints"] = cache
    options = options.model_copy(update={"seed": None, "response_format": None, "extra": extra})
    return draw(histories()), tools, ModelOptions.model_validate(options.model_dump())


def sent(block: Block) -> bool:
    return not (isinstance(block, ThinkingBlock) and not block.signature and not block.thinking)


def markable(block: Block) -> bool:
    return not (isinstance(block, ThinkingBlock) and block.signature)


def normal_messages(messages: list[Msg]) -> list[tuple[str, tuple[Block, ...]]]:
    systems: list[tuple[str, tuple[Block, ...]]] = []
    rest: list[tuple[str, tuple[Block, ...]]] = []
    for m in messages:
        blocks = tuple(filter(sent, m.blocks))
        if m.role == "assistant" and m.blocks and not blocks:
            continue
        (systems if m.role == "system" else rest).append((m.role, blocks))
    return systems + rest


def normal_options(
    options: ModelOptions, messages: list[Msg], tools: list[ToolSchema]
) -> ModelOptions:
    choice, parallel = options.tool_choice, options.parallel_tool_calls
    if not tools:
        choice = parallel = None
    elif choice == "none":
        parallel = None
    elif choice is None and parallel is not None:
        choice = "auto"
    extra = dict(options.extra)
    asked = extra.pop("cache_breakpoints", None)
    asked = set(CACHE_TARGETS) if asked is True else set(asked or ())
    rest = normal_messages(messages)
    present = {
        "system": any(role == "system" for role, _ in rest),
        "tools": bool(tools),
        "history": any(role != "system" for role, _ in rest)
        and any(map(markable, [b for role, b in rest if role != "system"][-1])),
    }
    marked = [t for t in CACHE_TARGETS if t in asked and present[t]]
    if marked:
        extra["cache_breakpoints"] = True if len(marked) == 3 else marked
    max_tokens = options.max_output_tokens
    return options.model_copy(
        update={
            "tool_choice": choice,
            "parallel_tool_calls": parallel,
            "max_output_tokens": None if max_tokens == F.max_tokens else max_tokens,
            "extra": freeze(extra),
        }
    )


@given(requests(), st.booleans())
def test_format_then_parse_request_gives_the_request_back(
    request_: tuple[list[Msg], list[ToolSchema], ModelOptions], stream: bool
) -> None:
    messages, tools, options = request_
    body = json.loads(json.dumps(F.format(messages, tools, options, model="m", stream=stream)))
    back_messages, back_tools, back_options = F.parse_request(body)
    assert normal_messages(back_messages) == normal_messages(messages)
    assert back_tools == tools
    assert back_options == normal_options(options, messages, tools)


@given(histories())
def test_messages_alternate_and_tool_results_lead_their_user_message(history: list[Msg]) -> None:
    body = F.format(history, [], ModelOptions(), model="m", stream=False)
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            continue
        kinds = [b["type"] for b in content]
        if "tool_result" in kinds:  # results first, then whatever joined them
            first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
            assert "tool_result" not in kinds[first_other:]
    results = [m for m in history if m.role == "tool"]
    wire_results = [
        b
        for m in body["messages"]
        if not isinstance(m["content"], str)
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert [b["tool_use_id"] for b in wire_results] == [m.tool_results[0].id for m in results]


# -- split streams -------------------------------------------------------------------------------

SERVER = FakeAnthropicServer()
REQUEST = RecordedRequest(
    method="POST", path="/v1/messages", query={}, headers={}, body={"model": "claude"}
)


@st.composite
def responses(draw: st.DrawFn) -> tuple[ScriptedResponse, int]:
    turn = draw(rst.scripts(explicit_ids=True, max_tool_turns=1))[0]
    blocks = turn_to_blocks(turn)
    if draw(st.booleans()):
        blocks = tuple(map(redact, blocks))
    read, write, fresh = (draw(st.integers(0, 10_000)) for _ in range(3))
    usage = Usage(
        input_tokens=fresh + read + write,
        output_tokens=draw(st.integers(0, 5000)),
        cache_read_tokens=read,
        cache_write_tokens=write,
        requests=1,
    )
    finish = draw(st.sampled_from(("stop", "length", "tool_calls", "content_filter", "pause")))
    return ScriptedResponse(Msg.assistant(blocks), usage, finish, 1), draw(st.integers(1, 12))


def parse_chunks(chunks: list[bytes]) -> tuple[list[Any], ResponseBuilder]:
    decoder, parser, deltas = SSEDecoder(), F.stream_parser(), []
    for chunk in chunks:
        for event in decoder.feed(chunk):
            deltas.extend(parser.feed(event))
    for event in decoder.close():
        deltas.extend(parser.feed(event))
    deltas.extend(parser.close())
    builder = ResponseBuilder()
    for delta in deltas:
        builder.add(delta)
    return deltas, builder


@given(responses(), st.data())
def test_a_stream_split_at_any_bytes_parses_to_the_same_response(
    case: tuple[ScriptedResponse, int], data: st.DataObject
) -> None:
    response, chunk_size = case
    SERVER.chunk_size = chunk_size
    raw = b"".join(SERVER.render_stream(response, REQUEST))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=12)))
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    whole_deltas, _whole = parse_chunks([raw])
    split_deltas, split = parse_chunks(pieces)
    assert split_deltas == whole_deltas
    expected = tuple(filter(sent, response.message.blocks))
    assert split.build().content == expected
    assert (split.usage, split.finish_reason) == (response.usage, response.finish)
    # and the whole (non-streamed) body says the same
    parsed = F.parse(json.loads(json.dumps(SERVER.render(response, REQUEST))))
    assert parsed.message.content == expected
    assert (parsed.usage, parsed.finish_reason) == (response.usage, response.finish)


@given(rst.tool_args("value"), st.data())
def test_tool_arguments_split_anywhere_accumulate_to_the_same_json(
    args: dict[str, Any], data: st.DataObject
) -> None:
    text = json.dumps(args, ensure_ascii=data.draw(st.booleans()))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=10)))
    fragments = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    start = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    events: list[dict[str, Any]] = [
        {"type": "content_block_start", "index": 0, "content_block": start},
        *(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": f},
            }
            for f in fragments
        ),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
    ]
    parser, builder = F.stream_parser(), ResponseBuilder()
    for event in events:
        for delta in parser.feed(SSEEvent(event=event["type"], data=json.dumps(event))):
            builder.add(delta)
    parser.close()
    [call] = builder.build().tool_calls
    assert call == ToolUseBlock(id="toolu_1", name="f", input=args)
