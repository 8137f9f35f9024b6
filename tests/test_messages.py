"""Messages and blocks: freezing, helpers, JSON round trips, the response builder."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from rxagent import ImageBlock, Msg, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from rxagent.messages import FrozenDict, freeze, thaw
from rxagent.models import (
    FinishDelta,
    ModelDelta,
    ModelOptions,
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageDelta,
)


def test_msg_is_frozen_all_the_way_down():
    msg = Msg.assistant([ToolUseBlock(id="1", name="t", input={"xs": [1, {"y": 2}]})])
    assert isinstance(msg.content, tuple)
    args = msg.tool_calls[0].input
    assert isinstance(args, FrozenDict)
    assert args["xs"] == (1, {"y": 2})
    with pytest.raises(TypeError, match="frozen"):
        args["z"] = 1
    with pytest.raises(TypeError):
        args["xs"][1]["y"] = 3
    with pytest.raises(ValidationError, match="frozen"):
        msg.role = "user"  # type: ignore[misc]
    assert thaw(args) == {"xs": [1, {"y": 2}]}


def test_round_trips_json_pickle_and_copy():
    msg = Msg(
        role="assistant",
        content=[
            ThinkingBlock(thinking="hmm", signature="sig=="),
            TextBlock(text="hi"),
            ToolUseBlock(id="c", name="t", input={"a": [1, 2]}),
            ImageBlock(data="aGk=", media_type="image/png"),
        ],
        name="bot",
        metadata={"k": [1]},
    )
    assert Msg.model_validate_json(msg.model_dump_json()) == msg
    assert pickle.loads(pickle.dumps(msg)) == msg
    assert copy.deepcopy(msg) == msg
    result = Msg.tool(
        ToolResultBlock(id="c", name="t", output=[TextBlock(text="a"), TextBlock(text="b")])
    )
    assert Msg.model_validate_json(result.model_dump_json()) == result
    assert result.tool_results[0].text == "a\nb"


def test_helpers():
    msg = Msg.assistant([TextBlock(text="a"), ToolUseBlock(id="1", name="x"), TextBlock(text="b")])
    assert msg.text == "ab"
    assert [c.id for c in msg.tool_calls] == ["1"]
    assert Msg.user("hey").blocks == (TextBlock(text="hey"),)
    assert Msg.user("").blocks == ()
    assert Msg.user("a").id != Msg.user("a").id


def test_image_block_needs_a_source():
    with pytest.raises(ValidationError, match="url"):
        ImageBlock()
    with pytest.raises(ValidationError, match="media_type"):
        ImageBlock(data="abc")
    assert ImageBlock(url="https://x/y.png").url


def test_freeze_is_idempotent():
    frozen = freeze({"a": [1, {"b": [2]}]})
    assert freeze(frozen) is frozen
    assert hash(frozen) == hash(freeze({"a": [1, {"b": [2]}]}))


def test_response_builder_orders_blocks_and_assigns_ids():
    ids = iter(["call_7", "call_8"])
    builder = ResponseBuilder(id_factory=lambda: next(ids))
    deltas: list[ModelDelta] = [
        ThinkingDelta(index=0, text="th"),
        ThinkingDelta(index=0, text="ink", signature="s"),
        TextDelta(index=1, text="Hel"),
        ToolCallDelta(index=2, name="add"),
        TextDelta(index=1, text="lo"),
        ToolCallDelta(index=2, args='{"a": 1}'),
        ToolCallDelta(index=3, id="given", name="bad", args="{not json"),
        UsageDelta(usage=Usage(input_tokens=3, output_tokens=4, requests=1)),
        FinishDelta(reason="tool_calls"),
    ]
    positions = [builder.add(d) for d in deltas]
    assert positions == [0, 0, 1, 2, 1, 2, 3, -1, -1]
    response = builder.response()
    blocks = response.message.content
    assert isinstance(blocks, tuple)
    assert blocks[0] == ThinkingBlock(thinking="think", signature="s")
    assert blocks[1] == TextBlock(text="Hello")
    assert blocks[2] == ToolUseBlock(id="call_7", name="add", input={"a": 1})
    assert blocks[3] == ToolUseBlock(id="given", name="bad", input={}, raw_input="{not json")
    assert response.usage.total_tokens == 7
    assert response.finish_reason == "tool_calls"


def test_model_options_merge_and_usage_add():
    base = ModelOptions(temperature=0.5, extra={"a": 1})
    merged = base.merged(ModelOptions(seed=1, extra={"b": 2}))
    assert merged.temperature == 0.5
    assert merged.seed == 1
    assert merged.extra == {"a": 1, "b": 2}
    assert base.merged(None) is base
    total = Usage(input_tokens=1, cache_read_tokens=2, requests=1) + Usage(
        output_tokens=3, requests=1
    )
    assert total == Usage(input_tokens=1, output_tokens=3, cache_read_tokens=2, requests=2)


@given(text=st.text(), role=st.sampled_from(["user", "assistant", "system"]))
def test_the_text_constructors_build_what_validation_builds(text: str, role: str) -> None:
    made = getattr(Msg, role)(text)
    validated = Msg(role=role, content=text)
    assert made.model_dump(exclude={"id"}) == validated.model_dump(exclude={"id"})
    assert Msg.model_validate_json(made.model_dump_json()) == made
    assert len(made.id) == 32
    assert made.id != getattr(Msg, role)(text).id
