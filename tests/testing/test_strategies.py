from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from pydantic import TypeAdapter

from rxagent.events import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    AgentEvent,
    BaseEvent,
    PostActingEvent,
    PostCallEvent,
    PreReasoningEvent,
)
from rxagent.hooks import HookChain
from rxagent.messages import Block, Msg, Role, ToolUseBlock
from rxagent.models import ModelOptions, ResponseBuilder, ToolSchema
from rxagent.testing import ScriptedModel, Turn
from rxagent.testing import strategies as rst
from rxagent.testing._builders import turn_to_blocks

BLOCK_ADAPTER: TypeAdapter[Block] = TypeAdapter(Block)


@given(rst.events())
def test_events_round_trip_through_event_adapter(event: AgentEvent) -> None:
    again = EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event))
    assert again == event
    assert type(again) is type(event)


@pytest.mark.parametrize("cls", EVENT_TYPES)
def test_every_built_in_event_can_be_drawn(cls: type[BaseEvent]) -> None:
    @given(rst.events(types=[cls]))
    def check(event: BaseEvent) -> None:
        assert type(event) is cls
        assert EVENT_ADAPTER.validate_python(event.model_dump()) == event

    check()


@given(rst.events(types=[PostActingEvent, PostCallEvent]))
def test_paired_payloads_agree(event: BaseEvent) -> None:
    if isinstance(event, PostActingEvent):
        assert event.result.id == event.tool_call.id
    else:
        assert isinstance(event, PostCallEvent)
        assert event.result.reply == event.reply


def test_events_refuses_unknown_classes() -> None:
    with pytest.raises(ValueError, match="built-in events only"):
        rst.events(types=[BaseEvent])
    with pytest.raises(ValueError, match="nothing"):
        rst.events(types=[])


@given(rst.blocks())
def test_blocks_round_trip(block: Block) -> None:
    assert BLOCK_ADAPTER.validate_json(BLOCK_ADAPTER.dump_json(block)) == block


@given(rst.messages())
def test_messages_suit_their_role(msg: Msg) -> None:
    assert Msg.model_validate_json(msg.model_dump_json()) == msg
    kinds = {b.type for b in msg.blocks}
    allowed: dict[Role, set[str]] = {
        "system": {"text"},
        "user": {"text", "image"},
        "assistant": {"text", "thinking", "tool_use"},
        "tool": {"tool_result"},
    }
    assert kinds <= allowed[msg.role]


@given(rst.messages(roles=["tool"]))
def test_messages_respects_roles(msg: Msg) -> None:
    assert msg.role == "tool"
    assert len(msg.tool_results) == 1


@given(rst.conversations())
def test_conversations_pair_every_tool_call(history: list[Msg]) -> None:
    position = 0
    if history[0].role == "system":
        position = 1
    assert history[position].role == "user"
    expecting: list[ToolUseBlock] = []
    previous = None
    for msg in history[position:]:
        if expecting:
            assert msg.role == "tool", "a tool call is not followed by its result"
            (result,) = msg.tool_results
            call = expecting.pop(0)
            assert (result.id, result.name) == (call.id, call.name)
        else:
            assert msg.role != "tool", "a tool result without a call"
            assert msg.role != previous
            expecting = list(msg.tool_calls)
            if msg.tool_calls:
                assert msg.role == "assistant"
        previous = msg.role
    assert not expecting
    assert history[-1].role == "assistant"
    assert not history[-1].tool_calls
    ids = [c.id for m in history for c in m.tool_calls]
    assert ids == [f"call_{i}" for i in range(1, len(ids) + 1)]


@given(rst.conversations(min_turns=2, max_turns=2, tool_names=["search"], system=True))
def test_conversations_options(history: list[Msg]) -> None:
    assert history[0].role == "system"
    assert sum(m.role == "user" for m in history) == 2
    assert {c.name for m in history for c in m.tool_calls} <= {"search"}


def test_conversations_checks_its_bounds() -> None:
    with pytest.raises(ValueError, match="min_turns"):
        rst.conversations(min_turns=3, max_turns=1)


@given(rst.tool_schemas())
def test_tool_schemas_describe_objects(schema: ToolSchema) -> None:
    assert schema.parameters["type"] == "object"
    assert ToolSchema.model_validate_json(schema.model_dump_json()) == schema


@given(rst.model_options())
def test_model_options_round_trip(options: ModelOptions) -> None:
    assert ModelOptions.model_validate_json(options.model_dump_json()) == options


@given(rst.hook_chains())
def test_hook_chains_compose_as_predicted(spec: rst.HookChainSpec) -> None:
    hooks, log = spec.build()
    event = PreReasoningEvent(messages=[Msg.user("hi", id="u")])
    chain = HookChain(hooks)
    out = asyncio.run(chain.dispatch(event))
    assert out == spec.expected(event)
    assert log == spec.expected_log()
    assert [h.name for h in chain.for_event(PreReasoningEvent)] == [
        s.name for s in spec.run_order()
    ]
    assert out.modified_by == tuple(s.name for s in spec.run_order() if s.modifies)


@given(rst.hook_chains(min_size=3, max_size=3))
def test_hook_chains_are_tagged_in_registration_order(spec: rst.HookChainSpec) -> None:
    assert [s.tag for s in spec.specs] == ["h0", "h1", "h2"]


@given(rst.scripts())
def test_scripts_play_and_end_with_text(script: list[Turn]) -> None:
    model = ScriptedModel(script)
    *tool_turns, answer = model.turns
    assert answer
    assert all(b.type == "text" for b in answer)
    for turn in tool_turns:
        calls = [b for b in turn if isinstance(b, ToolUseBlock)]
        assert calls
        assert {c.name for c in calls} <= set(rst.DEFAULT_TOOL_NAMES)
        assert all(c.id == "" for c in calls)
        assert [b.type for b in turn][-len(calls) :] == ["tool_use"] * len(calls)


@given(rst.scripts(tool_names=["echo"], explicit_ids=True, max_parallel=2))
def test_scripts_with_explicit_ids(script: list[Turn]) -> None:
    ids = [b.id for turn in script for b in turn_to_blocks(turn) if isinstance(b, ToolUseBlock)]
    assert ids == [f"tc_{i}" for i in range(1, len(ids) + 1)]


@given(rst.scripts())
async def test_scripts_stream_through_response_builder(script: list[Turn]) -> None:
    model = ScriptedModel(script, chunk_size=5)
    for expected in model.turns:
        builder = ResponseBuilder()
        async for delta in model.stream([Msg.user("go")], [], ModelOptions()):
            builder.add(delta)
        assert [b.type for b in builder.build().blocks] == [b.type for b in expected]
    assert model.remaining == 0


def test_scripts_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="at least one tool"):
        rst.scripts(tool_names=[])
    with pytest.raises(ValueError, match="at least one tool"):
        rst.scripts(tools=[])
    with pytest.raises(ValueError, match="max_parallel >= 1"):
        rst.scripts(max_parallel=0)
