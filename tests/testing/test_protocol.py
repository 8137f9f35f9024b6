from __future__ import annotations

from typing import Any

import pytest

from rxagent.errors import ErrorCode
from rxagent.events import (
    ActingChunkEvent,
    BaseEvent,
    CustomEvent,
    ErrorEvent,
    GuardEvent,
    GuardTarget,
    GuardVerdict,
    InterruptedEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
    RetryEvent,
)
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock
from rxagent.models import TextDelta
from rxagent.result import AgentResult
from rxagent.testing import EventProtocolError, assert_event_protocol

REPLY = Msg.assistant("done", id="reply")


def pre_call(**kw: Any) -> BaseEvent:
    return PreCallEvent(input=[Msg.user("hi", id="u")], **kw)


def pre_r(**kw: Any) -> BaseEvent:
    return PreReasoningEvent(messages=[], **kw)


def chunk(**kw: Any) -> BaseEvent:
    return ReasoningChunkEvent(delta=TextDelta(text="x"), **kw)


def post_r(**kw: Any) -> BaseEvent:
    return PostReasoningEvent(response=REPLY, **kw)


def _call(call_id: str) -> ToolUseBlock:
    return ToolUseBlock(id=call_id, name="add", input={"a": 1})


def pre_a(call_id: str, **kw: Any) -> BaseEvent:
    return PreActingEvent(tool_call=_call(call_id), **kw)


def a_chunk(call_id: str, **kw: Any) -> BaseEvent:
    return ActingChunkEvent(tool_call_id=call_id, tool_name="add", chunk=0.5, **kw)


def post_a(call_id: str, **kw: Any) -> BaseEvent:
    result = ToolResultBlock(id=call_id, name="add", output="2")
    return PostActingEvent(tool_call=_call(call_id), result=result, **kw)


def error(*, recoverable: bool = False, source: str = "model", **kw: Any) -> BaseEvent:
    code = ErrorCode.PROVIDER_ERROR
    return ErrorEvent(code=code, message="boom", source=source, recoverable=recoverable, **kw)


def post_call(**kw: Any) -> BaseEvent:
    return PostCallEvent(reply=REPLY, result=AgentResult(reply=REPLY), **kw)


def numbered(*events: BaseEvent, run_id: str = "run", session_id: str = "s") -> list[BaseEvent]:
    """Give the events seq 0, 1, 2, ... and one run and session."""
    update = {"run_id": run_id, "session_id": session_id}
    return [e.model_copy(update={"seq": i, **update}) for i, e in enumerate(events)]


def violation(events: list[BaseEvent], *, complete: bool = True) -> EventProtocolError:
    with pytest.raises(EventProtocolError) as caught:
        assert_event_protocol(events, complete=complete)
    return caught.value


# -- valid runs --------------------------------------------------------------------------------

VALID_RUNS = {
    "text answer": numbered(pre_call(), pre_r(), chunk(), chunk(), post_r(), post_call()),
    "parallel tools": numbered(
        pre_call(),
        pre_r(),
        chunk(),
        post_r(),
        pre_a("a"),
        pre_a("b"),
        a_chunk("a"),
        a_chunk("b"),
        post_a("b"),
        a_chunk("a"),
        post_a("a"),
        pre_r(step=1),
        chunk(step=1),
        post_r(step=1),
        post_call(step=1),
    ),
    "model fails": numbered(pre_call(), pre_r(), chunk(), error(), post_call()),
    "hook fails the run": numbered(pre_call(), pre_r(), error(source="hook:h"), post_call()),
    "broken stream retried": numbered(
        pre_call(),
        pre_r(),
        chunk(),
        error(recoverable=True),
        pre_r(),
        chunk(),
        post_r(),
        post_call(),
    ),
    "isolated hook error inside a step": numbered(
        pre_call(),
        pre_r(),
        error(recoverable=True, source="hook:h"),
        chunk(),
        post_r(),
        post_call(),
    ),
    "rejected at PreCall": numbered(pre_call(), error(source="hook:guard"), post_call()),
    "interrupted mid-stream": numbered(
        pre_call(), pre_r(), chunk(), InterruptedEvent(checkpoint="chunk"), post_call()
    ),
    "extra events": numbered(
        pre_call(),
        CustomEvent(name="note"),
        RetryEvent(attempt=2, delay_s=0.1, code=ErrorCode.RATE_LIMITED),
        pre_r(),
        post_r(),
        pre_a("a"),
        CustomEvent(name="progress"),
        post_a("a"),
        InterruptedEvent(checkpoint="before_reasoning", step=1),
        post_call(step=1),
    ),
}


@pytest.mark.parametrize("name", list(VALID_RUNS))
def test_valid_runs_pass(name: str) -> None:
    assert_event_protocol(VALID_RUNS[name])


def test_seq_may_skip_numbers() -> None:
    events = [e.model_copy(update={"seq": e.seq * 10 + 5}) for e in VALID_RUNS["text answer"]]
    assert_event_protocol(events)


def test_any_iterable_is_accepted() -> None:
    assert_event_protocol(iter(VALID_RUNS["text answer"]))


def test_an_unfinished_run_passes_with_complete_false() -> None:
    events = numbered(pre_call(), pre_r(), chunk())
    assert_event_protocol(events, complete=False)
    assert_event_protocol([], complete=False)
    assert violation(events).invariant == "exactly one PostCall, last"


# -- one test per invariant --------------------------------------------------------------------


def test_seq_strictly_increasing() -> None:
    events = numbered(pre_call(), pre_r(), post_r(), post_call())
    events[2] = events[2].model_copy(update={"seq": 1})
    err = violation(events)
    assert err.invariant == "seq strictly increasing"
    assert "seq strictly increasing: seq 1 follows seq 1" in str(err)
    assert err.position == 2
    assert err.event is events[2]
    assert "> #2 post_reasoning(seq=1, step=0)" in str(err)


def test_step_never_decreases() -> None:
    events = numbered(pre_call(), pre_r(step=1), post_r(step=1), pre_r(step=0), post_call(step=1))
    err = violation(events)
    assert "step never decreases: step 0 follows step 1" in str(err)
    assert err.position == 3


@pytest.mark.parametrize("field", ["run_id", "session_id"])
def test_same_run_id_and_session_id(field: str) -> None:
    events = numbered(pre_call(), pre_r(), post_r(), post_call())
    events[2] = events[2].model_copy(update={field: "other"})
    err = violation(events)
    assert "same run_id and session_id" in str(err)
    assert err.position == 2


@pytest.mark.parametrize(
    ("events", "detail", "position"),
    [
        ([], "there are no events", None),
        (numbered(pre_r(), post_r(), post_call()), "the first event is 'pre_reasoning'", 0),
        (numbered(pre_call(), pre_call(), post_call()), "a second PreCall", 1),
    ],
)
def test_exactly_one_pre_call_first(
    events: list[BaseEvent], detail: str, position: int | None
) -> None:
    err = violation(events)
    assert f"exactly one PreCall, first: {detail}" in str(err)
    assert err.position == position


@pytest.mark.parametrize(
    ("events", "detail", "position"),
    [
        (numbered(pre_call(), pre_r(), post_r()), "the run has no PostCall at the end", 2),
        (numbered(pre_call(), post_call(), CustomEvent(name="late")), "'custom' comes after", 2),
        (numbered(pre_call(), post_call(), post_call()), "'post_call' comes after the PostCall", 2),
    ],
)
def test_exactly_one_post_call_last(events: list[BaseEvent], detail: str, position: int) -> None:
    err = violation(events)
    assert f"exactly one PostCall, last: {detail}" in str(err)
    assert err.position == position


@pytest.mark.parametrize(
    ("events", "detail", "position"),
    [
        (
            numbered(pre_call(), pre_r(), chunk(), pre_r(), post_r(), post_call()),
            "the PreReasoning #1 has no PostReasoning before the next PreReasoning",
            3,
        ),
        (
            numbered(pre_call(), pre_r(), pre_a("a"), post_a("a"), post_call()),
            "the PreReasoning #1 has no PostReasoning before a PreActing",
            2,
        ),
        (
            numbered(pre_call(), pre_r(), chunk(), post_call()),
            "the PreReasoning #1 has no PostReasoning before the PostCall",
            3,
        ),
        (
            numbered(pre_call(), post_r(), post_call()),
            "a PostReasoning without an open PreReasoning",
            1,
        ),
        (
            numbered(pre_call(), pre_r(), post_r(), post_r(), post_call()),
            "a PostReasoning without an open PreReasoning",
            3,
        ),
        (
            numbered(pre_call(), pre_r(), error(), post_r(), post_call()),
            "a PostReasoning without an open PreReasoning",
            3,
        ),
        (
            numbered(
                pre_call(),
                pre_r(),
                error(recoverable=True, source="tool:add"),
                pre_r(),
                post_call(),
            ),
            "the PreReasoning #1 has no PostReasoning before the next PreReasoning",
            3,
        ),
    ],
)
def test_pre_reasoning_closed_by_exactly_one_post_reasoning(
    events: list[BaseEvent], detail: str, position: int
) -> None:
    err = violation(events)
    assert f"PreReasoning closed by exactly one PostReasoning: {detail}" in str(err)
    assert err.position == position


@pytest.mark.parametrize(
    "events",
    [
        numbered(pre_call(), chunk(), post_call()),
        numbered(pre_call(), pre_r(), post_r(), chunk(), post_call()),
        numbered(pre_call(), pre_r(), error(), chunk(), post_call()),
    ],
)
def test_reasoning_chunk_inside_pre_post_reasoning(events: list[BaseEvent]) -> None:
    err = violation(events)
    assert "ReasoningChunk inside Pre/PostReasoning: no model call is open" in str(err)


@pytest.mark.parametrize(
    ("events", "detail", "position"),
    [
        (
            numbered(pre_call(), pre_r(), post_r(), pre_a("a"), post_call()),
            "tool calls 'a' (#3) have no PostActing before the PostCall",
            4,
        ),
        (
            numbered(pre_call(), pre_r(), post_r(), pre_a("a"), pre_r(), post_r(), post_call()),
            "tool calls 'a' (#3) have no PostActing before the next PreReasoning",
            4,
        ),
        (
            numbered(pre_call(), pre_r(), post_r(), pre_a("a"), post_a("b"), post_call()),
            "a PostActing for 'b' without an open PreActing",
            4,
        ),
        (
            numbered(pre_call(), pre_r(), post_r(), pre_a("a"), post_a("a"), post_a("a")),
            "a PostActing for 'a' without an open PreActing",
            5,
        ),
        (
            numbered(pre_call(), pre_r(), post_r(), pre_a("a"), pre_a("a"), post_a("a")),
            "a second PreActing for 'a', still open since #3",
            4,
        ),
    ],
)
def test_pre_acting_closed_by_exactly_one_post_acting(
    events: list[BaseEvent], detail: str, position: int
) -> None:
    err = violation(events)
    assert f"PreActing closed by exactly one PostActing: {detail}" in str(err)
    assert err.position == position


@pytest.mark.parametrize(
    "events",
    [
        numbered(pre_call(), pre_r(), post_r(), a_chunk("a"), post_call()),
        numbered(pre_call(), pre_r(), post_r(), pre_a("a"), a_chunk("b"), post_a("a")),
        numbered(pre_call(), pre_r(), post_r(), pre_a("a"), post_a("a"), a_chunk("a")),
    ],
)
def test_acting_chunk_inside_its_call(events: list[BaseEvent]) -> None:
    err = violation(events)
    assert "ActingChunk inside its call's Pre/PostActing" in str(err)
    assert "is not running" in str(err)


@pytest.mark.parametrize(
    "events",
    [
        numbered(pre_call(), pre_r(), post_r(), pre_a("a"), chunk(), post_a("a"), post_call()),
        numbered(pre_call(), pre_r(), post_r(), pre_a("a"), post_r(), post_a("a"), post_call()),
    ],
)
def test_tool_calls_never_interleave_with_reasoning(events: list[BaseEvent]) -> None:
    err = violation(events)
    assert "tool calls never interleave with reasoning" in str(err)
    assert "while tool calls ['a'] are open" in str(err)
    assert err.position == 4


def test_post_call_result_reply_equals_reply() -> None:
    other = Msg.assistant("something else")
    bad = PostCallEvent(reply=REPLY, result=AgentResult(reply=other))
    err = violation(numbered(pre_call(), bad))
    assert "PostCall result.reply equals reply" in str(err)
    assert err.position == 1


def test_the_error_shows_the_events_around_the_offender() -> None:
    events = numbered(pre_call(), pre_r(), post_r(), pre_a("a"), chunk(), post_a("a"), post_call())
    lines = str(violation(events)).splitlines()
    assert lines[1] == "  at #4 reasoning_chunk(seq=4, step=0); events around it:"
    assert lines[2:] == [
        "    #1 pre_reasoning(seq=1, step=0)",
        "    #2 post_reasoning(seq=2, step=0)",
        "    #3 pre_acting(seq=3, step=0, id='a')",
        "  > #4 reasoning_chunk(seq=4, step=0)",
        "    #5 post_acting(seq=5, step=0, id='a')",
    ]


def test_event_protocol_error_is_an_assertion_error() -> None:
    assert issubclass(EventProtocolError, AssertionError)


def _guard(target: GuardTarget, call_id: str | None = None) -> BaseEvent:
    verdict = GuardVerdict(flagged=True, score=1.0, stage="g")
    return GuardEvent(
        stage="g", verdict=verdict, action="flag", target=target, tool_call_id=call_id
    )


def test_guard_events_in_their_place() -> None:
    assert_event_protocol(
        numbered(
            pre_call(),
            _guard("input"),
            pre_r(),
            post_r(),
            pre_a("c1"),
            _guard("tool_call", "c1"),
            _guard("tool_result", "c1"),
            post_a("c1"),
            _guard("output"),
            post_call(),
        )
    )
    late_input = violation(numbered(pre_call(), pre_r(), post_r(), _guard("input"), post_call()))
    assert "GuardEvent in its place: an input verdict after a model call" in str(late_input)
    outside = violation(numbered(pre_call(), _guard("tool_result", "c9"), post_call()))
    assert "a tool_result verdict outside its call's Pre/PostActing" in str(outside)
    inside_model = violation(numbered(pre_call(), pre_r(), _guard("output"), post_r(), post_call()))
    assert "the model call #1 is open" in str(inside_model)
