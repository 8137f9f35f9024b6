from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models import (
    FinishDelta,
    ModelDelta,
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)
from rxagent.testing import strategies as rst
from rxagent.testing import text, thinking, tool_call
from rxagent.testing._builders import (
    Turn,
    estimate_tokens,
    messages_chars,
    turn_to_blocks,
    turn_to_deltas,
)

# -- builders ----------------------------------------------------------------------------------


def test_text_and_thinking_blocks() -> None:
    assert text("hi") == TextBlock(text="hi")
    assert thinking("hmm") == ThinkingBlock(thinking="hmm")
    assert thinking("hmm", signature="s").signature == "s"


def test_tool_call_without_id_leaves_it_to_the_agent() -> None:
    call = tool_call("add", a=1, b=2)
    assert call == ToolUseBlock(id="", name="add", input={"a": 1, "b": 2})


def test_tool_call_accepts_an_id_and_an_argument_called_name() -> None:
    call = tool_call("greet", id="call_9", name="Ada")
    assert call.id == "call_9"
    assert call.name == "greet"
    assert dict(call.input) == {"name": "Ada"}


# -- turn_to_blocks ----------------------------------------------------------------------------


def test_a_str_turn_is_one_text_block() -> None:
    assert turn_to_blocks("hi") == (TextBlock(text="hi"),)


def test_a_sequence_turn_keeps_order_and_turns_strs_into_text() -> None:
    turn: Turn = [thinking("t"), "a", tool_call("add"), tool_call("echo")]
    assert [b.type for b in turn_to_blocks(turn)] == ["thinking", "text", "tool_use", "tool_use"]


def test_an_assistant_msg_turn_gives_its_blocks() -> None:
    msg = Msg.assistant([text("a"), tool_call("add", a=1)])
    assert turn_to_blocks(msg) == msg.blocks
    assert turn_to_blocks(Msg.assistant("plain")) == (TextBlock(text="plain"),)


def test_a_msg_inside_a_sequence_is_flattened() -> None:
    blocks = turn_to_blocks([Msg.assistant("a"), tool_call("add")])
    assert [b.type for b in blocks] == ["text", "tool_use"]


def test_empty_text_is_dropped() -> None:
    assert turn_to_blocks("") == ()
    assert turn_to_blocks(["", tool_call("add")]) == (tool_call("add"),)


def test_a_non_assistant_msg_is_refused() -> None:
    with pytest.raises(ValueError, match="assistant message, got role 'user'"):
        turn_to_blocks(Msg.user("hi"))


@pytest.mark.parametrize(
    "bad",
    [
        ToolResultBlock(id="x", name="add", output="3"),
        ImageBlock(url="https://example.com/a.png"),
        [text("a"), ImageBlock(url="https://example.com/a.png")],
    ],
)
def test_blocks_a_model_cannot_stream_are_refused(bad: Turn) -> None:
    with pytest.raises(TypeError, match="text, thinking and tool calls only"):
        turn_to_blocks(bad)


def test_other_values_are_refused_with_the_turn_named() -> None:
    with pytest.raises(TypeError, match=r"turn #3: expected a str.*got int"):
        turn_to_blocks(42, where="turn #3")  # type: ignore[arg-type]


# -- turn_to_deltas ----------------------------------------------------------------------------


def test_text_is_chunked() -> None:
    deltas = turn_to_deltas("abcdefg", chunk_size=3)
    assert deltas[:3] == [
        TextDelta(index=0, text="abc"),
        TextDelta(index=0, text="def"),
        TextDelta(index=0, text="g"),
    ]
    assert deltas[-1] == FinishDelta(reason="stop")


def test_thinking_signature_rides_on_the_last_piece() -> None:
    deltas = turn_to_deltas([thinking("abcd", signature="sig"), "ok"], chunk_size=3)
    assert deltas[:3] == [
        ThinkingDelta(index=0, text="abc"),
        ThinkingDelta(index=0, text="d", signature="sig"),
        TextDelta(index=1, text="ok"),
    ]


def test_empty_thinking_still_streams_its_signature() -> None:
    deltas = turn_to_deltas([thinking("", signature="sig")], chunk_size=3)
    assert deltas[0] == ThinkingDelta(index=0, text="", signature="sig")


def test_tool_call_streams_head_then_argument_fragments() -> None:
    deltas = turn_to_deltas([tool_call("add", a=1), tool_call("echo", id="c2")], chunk_size=4)
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert calls[0] == ToolCallDelta(index=0, id=None, name="add", args="")
    first_args = "".join(d.args for d in calls if d.index == 0)
    assert first_args == json.dumps({"a": 1})
    assert all(d.id is None and d.name is None for d in calls[1:] if d.index == 0)
    second = [d for d in calls if d.index == 1]
    assert second[0] == ToolCallDelta(index=1, id="c2", name="echo", args="")
    assert "".join(d.args for d in second) == "{}"
    assert deltas[-1] == FinishDelta(reason="tool_calls")


def test_raw_input_is_streamed_verbatim() -> None:
    broken = ToolUseBlock(id="", name="add", input={}, raw_input='{"a": 1')
    deltas = turn_to_deltas([broken], chunk_size=100)
    assert [d.args for d in deltas if isinstance(d, ToolCallDelta)] == ["", '{"a": 1']
    built = ResponseBuilder()
    for d in deltas:
        built.add(d)
    assert built.build().tool_calls[0].raw_input == '{"a": 1'


def test_non_json_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="tool call 'add' are not JSON-serializable"):
        turn_to_deltas([tool_call("add", a=object())])


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size must be at least 1"):
        turn_to_deltas("hi", chunk_size=0)


def test_usage_estimates_chars_over_four() -> None:
    request = [Msg.system("s" * 10), Msg.user("u" * 9)]
    deltas = turn_to_deltas("r" * 8, chunk_size=4, messages=request)
    usage = deltas[-2]
    assert isinstance(usage, UsageDelta)
    assert usage.usage.input_tokens == 19 // 4 + 1
    assert usage.usage.output_tokens == 8 // 4 + 1
    assert usage.usage.requests == 1


def test_messages_chars_counts_the_payload() -> None:
    call = ToolUseBlock(id="c", name="add", input={"a": 1})
    history = [
        Msg.user("abc"),
        Msg.assistant([text("de"), thinking("f"), call]),
        Msg.tool(ToolResultBlock(id="c", name="add", output="3")),
        Msg.user([ImageBlock(url="https://example.com/a.png")]),
    ]
    assert messages_chars(history) == 3 + 2 + 1 + len("add") + len('{"a": 1}') + 1
    assert estimate_tokens(0) == 1
    assert estimate_tokens(8) == 3


# -- the round trip through ResponseBuilder ----------------------------------------------------

_response_blocks = st.one_of(
    rst.text_blocks(),
    st.builds(ThinkingBlock, thinking=st.text(max_size=20), signature=st.none() | st.text()),
    st.builds(
        ToolUseBlock,
        id=st.sampled_from(["", "call_x", "c1"]),
        name=st.sampled_from(["add", "echo", "search"]),
        input=st.dictionaries(st.text(max_size=5), rst.json_values(), max_size=3),
    ),
)


def _rebuild(deltas: list[ModelDelta]) -> tuple[ResponseBuilder, list[int]]:
    counter = itertools.count(1)
    builder = ResponseBuilder(id_factory=lambda: f"assigned_{next(counter)}")
    positions = [builder.add(d) for d in deltas]
    return builder, positions


@given(st.lists(_response_blocks, max_size=5), st.integers(min_value=1, max_value=12))
def test_deltas_rebuild_the_original_blocks(blocks: list[Block], chunk_size: int) -> None:
    deltas = turn_to_deltas(blocks, chunk_size=chunk_size)
    builder, positions = _rebuild(deltas)
    rebuilt = builder.build().blocks
    expected = turn_to_blocks(blocks)
    assert len(rebuilt) == len(expected)
    for original, again in zip(expected, rebuilt, strict=True):
        if isinstance(original, ToolUseBlock) and not original.id:
            assert isinstance(again, ToolUseBlock)
            assert again.id.startswith("assigned_")
            again = again.model_copy(update={"id": ""})
        assert again == original
    # a delta's index is the position ResponseBuilder reports for its block
    content = deltas[:-2]
    assert positions[: len(content)] == [d.index for d in content]  # type: ignore[union-attr]
    assert all(len(getattr(d, "text", "") or getattr(d, "args", "")) <= chunk_size for d in content)
    assert isinstance(deltas[-2], UsageDelta)
    assert isinstance(deltas[-1], FinishDelta)
    calls_tools = any(isinstance(b, ToolUseBlock) for b in expected)
    assert builder.finish_reason == ("tool_calls" if calls_tools else "stop")


@given(rst.scripts(), st.integers(min_value=1, max_value=16))
def test_script_turns_rebuild(script: list[Turn], chunk_size: int) -> None:
    for turn in script:
        builder, _ = _rebuild(turn_to_deltas(turn, chunk_size=chunk_size))
        rebuilt = builder.build()
        expected = turn_to_blocks(turn)
        assert [b.type for b in rebuilt.blocks] == [b.type for b in expected]
        assert [c.input for c in rebuilt.tool_calls] == [
            b.input for b in expected if isinstance(b, ToolUseBlock)
        ]
