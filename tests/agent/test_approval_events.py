"""`ApprovalRequestedEvent`: serialization, drawing, and its rules in `assert_event_protocol`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

import rxagent
from rxagent import EVENT_ADAPTER, ApprovalRequestedEvent, Msg, ToolResultBlock, ToolUseBlock
from rxagent.events import (
    EVENT_TYPES,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
)
from rxagent.result import AgentResult
from rxagent.testing import EventProtocolError, assert_event_protocol
from rxagent.testing import strategies as rst

CALL = ToolUseBlock(id="c1", name="delete_file", input={"path": "a"})


def test_the_event_is_exported_and_built_in() -> None:
    assert "ApprovalRequestedEvent" in rxagent.__all__
    assert ApprovalRequestedEvent in EVENT_TYPES
    assert ApprovalRequestedEvent.model_fields["type"].default == "approval_requested"
    assert not ApprovalRequestedEvent.is_modifiable()


def test_it_round_trips_through_the_event_adapter() -> None:
    event = ApprovalRequestedEvent(approval_id="ap_1", tool_call=CALL, reason="why", seq=4)
    again = EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event))
    assert again == event
    assert isinstance(again, ApprovalRequestedEvent)


@given(rst.events(types=[ApprovalRequestedEvent]))
def test_drawn_events_are_valid(event: Any) -> None:
    assert isinstance(event, ApprovalRequestedEvent)
    assert EVENT_ADAPTER.validate_python(event.model_dump()) == event


def _run(*middle: Any, pending: tuple[str, ...] = ("ap_1",)) -> list[Any]:
    reply = Msg.assistant("")
    events = [PreCallEvent(input=[Msg.user("hi")]), *middle]
    result = AgentResult[Any](
        reply=reply, stop_reason="approval_pending", pending_approvals=pending
    )
    events.append(PostCallEvent(reply=reply, result=result))
    return [e.model_copy(update={"seq": i}) for i, e in enumerate(events)]


def _requested(approval_id: str = "ap_1") -> ApprovalRequestedEvent:
    return ApprovalRequestedEvent(approval_id=approval_id, tool_call=CALL)


def test_a_parked_run_keeps_the_protocol() -> None:
    response = Msg.assistant([CALL])
    assert_event_protocol(
        _run(
            PreReasoningEvent(messages=[]),
            PostReasoningEvent(response=response),
            _requested(),
        )
    )


@pytest.mark.parametrize(
    ("middle", "pending", "invariant"),
    [
        (
            [PreReasoningEvent(messages=[]), _requested()],
            ("ap_1",),
            "ApprovalRequested outside model and tool calls",
        ),
        (
            [PreActingEvent(tool_call=CALL), _requested()],
            ("ap_1",),
            "ApprovalRequested outside model and tool calls",
        ),
        ([_requested(), _requested()], ("ap_1",), "approval ids unique"),
        ([_requested("ap_1"), _requested("ap_2")], ("ap_1",), "announced approvals pending"),
    ],
)
def test_broken_approval_rules_are_named(
    middle: list[Any], pending: tuple[str, ...], invariant: str
) -> None:
    with pytest.raises(EventProtocolError) as caught:
        assert_event_protocol(_run(*middle, pending=pending))
    assert caught.value.invariant.startswith(invariant)
    assert "approval_id=" in str(caught.value)


def test_a_call_may_be_parked_after_other_calls_closed() -> None:
    other = ToolUseBlock(id="c0", name="look", input={})
    result = PostActingEvent(
        tool_call=other, result=ToolResultBlock(id="c0", name="look", output="x")
    )
    assert_event_protocol(_run(PreActingEvent(tool_call=other), result, _requested()))
