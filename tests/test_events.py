"""Events: discriminated JSON round trips, replace() rules, immutability."""

from __future__ import annotations

import pytest

from rxagent import (
    EVENT_ADAPTER,
    AgentResult,
    ErrorCode,
    ErrorEvent,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreReasoningEvent,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.errors import HookContractError
from rxagent.events import EVENT_TYPES, BaseEvent


def test_every_built_in_event_has_a_snake_case_type_without_event():
    names = [cls.model_fields["type"].default for cls in EVENT_TYPES]
    assert len(set(names)) == len(names)
    for cls, name in zip(EVENT_TYPES, names, strict=True):
        assert name.islower()
        assert "event" not in name
        assert cls.__name__.lower().replace("_", "") == name.replace("_", "") + "event"


def test_json_round_trip_keeps_type_and_tuples():
    reply = Msg.assistant("done")
    events: list[BaseEvent] = [
        PreReasoningEvent(messages=[Msg.user("hi")], seq=1),
        PostReasoningEvent(response=reply, stop=True),
        PostCallEvent(reply=reply, result=AgentResult(reply=reply, tools_used=("a",))),
        ErrorEvent(code=ErrorCode.TOOL_TIMEOUT, message="slow", source="tool:x", recoverable=True),
    ]
    for event in events:
        again = EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event))  # type: ignore[arg-type]
        assert type(again) is type(event)
        assert again == event
    assert isinstance(events[0].messages, tuple)  # type: ignore[attr-defined]


def test_replace_allows_only_modifiable_fields_and_validates():
    event = PostActingEvent(
        tool_call=ToolUseBlock(id="1", name="t"),
        result=ToolResultBlock(id="1", name="t", output="x"),
    )
    changed = event.replace(stop=True)
    assert changed.stop
    assert not event.stop
    with pytest.raises(HookContractError) as info:
        event.replace(tool_call=ToolUseBlock(id="2", name="t"))
    assert info.value.field == "tool_call"
    with pytest.raises(Exception, match="valid"):
        event.replace(stop="not a bool at all")
    pre = PreActingEvent(tool_call=ToolUseBlock(id="1", name="t"))
    assert pre.replace(
        tool_call=ToolUseBlock(id="1", name="t", input={"a": [1]})
    ).tool_call.input == {"a": (1,)}


def test_modifiable_table_matches_the_architecture():
    table = {cls.__name__: set(cls.MODIFIABLE) for cls in EVENT_TYPES[:9]}
    assert table == {
        "PreCallEvent": set(),
        "PreReasoningEvent": {"messages", "tools", "options"},
        "ReasoningChunkEvent": set(),
        "PostReasoningEvent": {"response", "stop"},
        "PreActingEvent": {"tool_call"},
        "ActingChunkEvent": set(),
        "PostActingEvent": {"result", "stop"},
        "PostCallEvent": {"reply"},
        "ErrorEvent": set(),
    }
