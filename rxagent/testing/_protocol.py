"""`assert_event_protocol`: check a run's events against the event protocol.

The invariants (ARCHITECTURE section 3), each named in the error message when it is broken:

| invariant | meaning |
|---|---|
| `seq strictly increasing` | each event's `seq` is above the previous one's |
| `step never decreases` | each event's `step` is at least the previous one's |
| `same run_id and session_id` | every event belongs to the first event's run and session |
| `exactly one PreCall, first` | the run starts with its only `PreCallEvent` |
| `exactly one PostCall, last` | the run ends with its only `PostCallEvent` |
| `PreReasoning closed by exactly one PostReasoning` | before the next PreReasoning, PreActing or PostCall, unless an ErrorEvent ends the attempt |
| `ReasoningChunk inside Pre/PostReasoning` | chunks only stream while a model call is open |
| `OutputChunk inside Pre/PostReasoning` | partial outputs only while a model call is open |
| `PreActing closed by exactly one PostActing` | with the same `tool_call.id`, before the next PreReasoning or PostCall |
| `ActingChunk inside its call's Pre/PostActing` | progress only while that call is open |
| `tool calls never interleave with reasoning` | no reasoning event while a tool call is open |
| `PostCall result.reply equals reply` | the result carries the final reply |
| `ApprovalRequested outside model and tool calls` | a call is parked between steps, never inside a pair |
| `approval ids unique` | each `ApprovalRequestedEvent` of a run has its own `approval_id` |
| `announced approvals pending at PostCall` | each announced `approval_id` is in the PostCall's `result.pending_approvals` |
| `GuardEvent in its place` | an input verdict before any model call, a tool call's or tool result's inside that call's Pre/PostActing, none inside a model call (except a `retrieved` verdict, which follows the PreReasoning whose request it screened) |
| `changes name modifiable fields and their hooks` | each `FieldChange` names a modifiable field of its event type, and the hooks in `changes` appear in `modified_by`, in that order |
| `nested run inside its parent's span` | a nested run (a longer `path`) lies inside its parent run; inside one of the parent's open tool calls when the parent is an agent |

The events of nested runs (an agent called as a tool, a team's members) may come mixed into the
stream: each run (`run_id`) is checked on its own against the invariants above, and each nested
run against its parent's span.

An ErrorEvent ends an open reasoning attempt when it is not recoverable (the run is over) or when
its source is `"model"` (a broken stream: the step starts again with a new PreReasoning). An
`InterruptedEvent` ends it too: an interrupted stream has no response to post.
"""  # noqa: E501 - the table rows cannot wrap

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NoReturn

from rxagent.errors import EventProtocolError as EventProtocolError
from rxagent.events import (
    ActingChunkEvent,
    ApprovalRequestedEvent,
    BaseEvent,
    ErrorEvent,
    GuardEvent,
    InterruptedEvent,
    OutputChunkEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
)
from rxagent.testing._protocol_nesting import check_nesting, split_runs

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["assert_event_protocol"]

SEQ: Final = "seq strictly increasing"
STEP: Final = "step never decreases"
SAME_RUN: Final = "same run_id and session_id"
PRE_CALL: Final = "exactly one PreCall, first"
POST_CALL: Final = "exactly one PostCall, last"
REASONING_PAIR: Final = "PreReasoning closed by exactly one PostReasoning"
REASONING_CHUNK: Final = "ReasoningChunk inside Pre/PostReasoning"
OUTPUT_CHUNK: Final = "OutputChunk inside Pre/PostReasoning"
ACTING_PAIR: Final = "PreActing closed by exactly one PostActing"
ACTING_CHUNK: Final = "ActingChunk inside its call's Pre/PostActing"
NO_INTERLEAVE: Final = "tool calls never interleave with reasoning"
REPLY: Final = "PostCall result.reply equals reply"
APPROVAL_PLACE: Final = "ApprovalRequested outside model and tool calls"
APPROVAL_UNIQUE: Final = "approval ids unique"
APPROVAL_PENDING: Final = "announced approvals pending at PostCall"
GUARD_PLACE: Final = "GuardEvent in its place"
CHANGES: Final = "changes name modifiable fields and their hooks"

_CONTEXT_BEFORE: Final = 3


def _describe(position: int, event: BaseEvent) -> str:
    extra = ""
    if isinstance(event, PreActingEvent | PostActingEvent):
        extra = f", id={event.tool_call.id!r}"
    elif isinstance(event, ActingChunkEvent):
        extra = f", id={event.tool_call_id!r}"
    elif isinstance(event, ErrorEvent):
        extra = f", source={event.source!r}, recoverable={event.recoverable}"
    elif isinstance(event, ApprovalRequestedEvent):
        extra = f", approval_id={event.approval_id!r}, id={event.tool_call.id!r}"
    return f"#{position} {event.type}(seq={event.seq}, step={event.step}{extra})"


class _Checker:
    """Walks the events once, keeping the open reasoning call and the open tool calls."""

    def __init__(self, events: list[BaseEvent], complete: bool, label: str = "") -> None:
        self.events = events
        self.complete = complete
        self.label = label  # which run, when the stream holds nested runs
        self.reasoning: int | None = None  # position of the open PreReasoning
        self.acting: dict[str, int] = {}  # open tool call id -> position of its PreActing
        self.approvals: dict[str, int] = {}  # announced approval id -> position
        self.models_called = False  # a PreReasoning has been seen

    def fail(self, invariant: str, detail: str, position: int | None = None) -> NoReturn:
        lines = [f"event protocol violated: {invariant}: {detail}{self.label}"]
        event = None
        if position is not None:
            event = self.events[position]
            lines.append(f"  at {_describe(position, event)}; events around it:")
            start = max(0, position - _CONTEXT_BEFORE)
            for i in range(start, min(len(self.events), position + 2)):
                mark = ">" if i == position else " "
                lines.append(f"  {mark} {_describe(i, self.events[i])}")
        raise EventProtocolError(invariant, "\n".join(lines), position=position, event=event)

    def run(self) -> None:
        if not self.events:
            if self.complete:
                self.fail(PRE_CALL, "there are no events")
            return
        for position, event in enumerate(self.events):
            self.check_common(position, event)
            self.check_kind(position, event)
        if self.complete and not isinstance(self.events[-1], PostCallEvent):
            self.fail(POST_CALL, "the run has no PostCall at the end", len(self.events) - 1)

    def check_common(self, position: int, event: BaseEvent) -> None:
        if event.changes:
            self.check_changes(position, event)
        if position == 0:
            if not isinstance(event, PreCallEvent):
                self.fail(PRE_CALL, f"the first event is {event.type!r}, not 'pre_call'", 0)
            return
        first, prev = self.events[0], self.events[position - 1]
        if isinstance(prev, PostCallEvent):
            self.fail(POST_CALL, f"{event.type!r} comes after the PostCall", position)
        if event.seq <= prev.seq:
            self.fail(SEQ, f"seq {event.seq} follows seq {prev.seq}", position)
        if event.step < prev.step:
            self.fail(STEP, f"step {event.step} follows step {prev.step}", position)
        if event.run_id != first.run_id or event.session_id != first.session_id:
            self.fail(
                SAME_RUN,
                f"run_id={event.run_id!r}, session_id={event.session_id!r}; the run started "
                f"with run_id={first.run_id!r}, session_id={first.session_id!r}",
                position,
            )

    def check_changes(self, position: int, event: BaseEvent) -> None:
        by = iter(event.modified_by)  # consumed: the hooks must appear in this order
        last = None
        for change in event.changes:
            if change.field not in event.MODIFIABLE:
                self.fail(
                    CHANGES, f"{change.by!r} changed the fixed field {change.field!r}", position
                )
            # one hook may change several fields: it is named once in modified_by
            if change.by != last and change.by not in by:
                self.fail(
                    CHANGES,
                    f"{change.by!r} changed {change.field!r} but is not in modified_by "
                    f"{event.modified_by!r} (in order)",
                    position,
                )
            last = change.by

    def check_kind(self, position: int, event: BaseEvent) -> None:
        if isinstance(event, PreCallEvent):
            if position:
                self.fail(PRE_CALL, "a second PreCall", position)
        elif isinstance(
            event,
            PreReasoningEvent | ReasoningChunkEvent | OutputChunkEvent | PostReasoningEvent,
        ):
            self.reasoning_event(position, event)
        elif isinstance(event, PreActingEvent):
            self.pre_acting(position, event)
        elif isinstance(event, ActingChunkEvent):
            if event.tool_call_id not in self.acting:
                self.fail(
                    ACTING_CHUNK, f"tool call {event.tool_call_id!r} is not running", position
                )
        elif isinstance(event, PostActingEvent):
            if self.acting.pop(event.tool_call.id, None) is None:
                self.fail(
                    ACTING_PAIR,
                    f"a PostActing for {event.tool_call.id!r} without an open PreActing",
                    position,
                )
        elif isinstance(event, ErrorEvent):
            if not event.recoverable or event.source == "model":
                self.reasoning = None  # the error ends the model call
        elif isinstance(event, InterruptedEvent):
            self.reasoning = None  # an interrupted stream has no PostReasoning
        elif isinstance(event, ApprovalRequestedEvent):
            self.approval_requested(position, event)
        elif isinstance(event, GuardEvent):
            self.guard(position, event)
        elif isinstance(event, PostCallEvent):
            self.post_call(position, event)

    def reasoning_event(self, position: int, event: BaseEvent) -> None:
        if isinstance(event, PreReasoningEvent):
            self.models_called = True
            self.tool_calls_closed(position, "the next PreReasoning")
            self.reasoning_closed(position, "the next PreReasoning")
            self.reasoning = position
            return
        if self.acting:
            self.fail(
                NO_INTERLEAVE,
                f"{event.type!r} while tool calls {sorted(self.acting)} are open",
                position,
            )
        if self.reasoning is None:
            if isinstance(event, ReasoningChunkEvent):
                self.fail(REASONING_CHUNK, "no model call is open", position)
            if isinstance(event, OutputChunkEvent):
                self.fail(OUTPUT_CHUNK, "no model call is open", position)
            self.fail(REASONING_PAIR, "a PostReasoning without an open PreReasoning", position)
        if isinstance(event, PostReasoningEvent):
            self.reasoning = None

    def reasoning_closed(self, position: int, before: str) -> None:
        if self.reasoning is not None:
            self.fail(
                REASONING_PAIR,
                f"the PreReasoning #{self.reasoning} has no PostReasoning before {before}",
                position,
            )

    def tool_calls_closed(self, position: int, before: str) -> None:
        if self.acting:
            opened = ", ".join(f"{k!r} (#{v})" for k, v in self.acting.items())
            self.fail(
                ACTING_PAIR, f"tool calls {opened} have no PostActing before {before}", position
            )

    def pre_acting(self, position: int, event: PreActingEvent) -> None:
        self.reasoning_closed(position, "a PreActing")
        call_id = event.tool_call.id
        if call_id in self.acting:
            self.fail(
                ACTING_PAIR,
                f"a second PreActing for {call_id!r}, still open since #{self.acting[call_id]}",
                position,
            )
        self.acting[call_id] = position

    def approval_requested(self, position: int, event: ApprovalRequestedEvent) -> None:
        if self.reasoning is not None:
            self.fail(APPROVAL_PLACE, f"the model call #{self.reasoning} is open", position)
        if self.acting:
            self.fail(APPROVAL_PLACE, f"tool calls {sorted(self.acting)} are open", position)
        if event.approval_id in self.approvals:
            earlier = self.approvals[event.approval_id]
            self.fail(
                APPROVAL_UNIQUE, f"{event.approval_id!r} was announced at #{earlier}", position
            )
        self.approvals[event.approval_id] = position

    def guard(self, position: int, event: GuardEvent) -> None:
        if self.reasoning is not None and event.target != "retrieved":
            self.fail(GUARD_PLACE, f"the model call #{self.reasoning} is open", position)
        if event.target == "input" and self.models_called:
            self.fail(GUARD_PLACE, "an input verdict after a model call", position)
        if event.target in ("tool_call", "tool_result") and event.tool_call_id not in self.acting:
            self.fail(
                GUARD_PLACE, f"a {event.target} verdict outside its call's Pre/PostActing", position
            )

    def post_call(self, position: int, event: PostCallEvent) -> None:
        self.reasoning_closed(position, "the PostCall")
        self.tool_calls_closed(position, "the PostCall")
        if event.result.reply != event.reply:
            self.fail(REPLY, "result.reply differs from reply", position)
        missing = [a for a in self.approvals if a not in event.result.pending_approvals]
        if missing:
            self.fail(APPROVAL_PENDING, f"{missing} are not in result.pending_approvals", position)


def assert_event_protocol(events: Iterable[BaseEvent], *, complete: bool = True) -> None:
    """Check that `events`, the events of one run in emission order, keep the event protocol.

    See the module docs for the invariants. Pass the events a subscriber received, or those an
    `EventRecorder` recorded.

    Args:
        events: The run's events, in order.
        complete: When True (the default) the run must have ended with its PostCall. Pass False
            for the events of a run that was disposed of early: only the order is checked.

    Raises:
        EventProtocolError: Naming the broken invariant and the offending event, with the events
            around it.

    Example:
        ```python
        from rxagent.messages import Msg
        from rxagent.events import (
            PostCallEvent, PostReasoningEvent, PreCallEvent, PreReasoningEvent,
        )
        from rxagent.result import AgentResult
        from rxagent.testing import EventProtocolError, assert_event_protocol

        reply = Msg.assistant("Hello!")
        run = [
            PreCallEvent(input=[Msg.user("hi")], seq=0),
            PreReasoningEvent(messages=[Msg.user("hi")], seq=1),
            PostReasoningEvent(response=reply, seq=2),
            PostCallEvent(reply=reply, result=AgentResult(reply=reply), seq=3),
        ]
        assert_event_protocol(run)

        try:
            assert_event_protocol([run[0], run[1], run[3]])  # no PostReasoning
        except EventProtocolError as exc:
            assert exc.invariant == "PreReasoning closed by exactly one PostReasoning"
        else:
            raise AssertionError("expected a violation")
        ```
    """
    found = list(events)
    runs = split_runs(found)
    if len(runs) <= 1:
        _Checker(found, complete).run()
        return
    for run_id, run_events in runs.items():
        path = run_events[0].path
        _Checker(run_events, complete, f" (in run {run_id!r} at path {path!r})").run()
    check_nesting(found, runs)
