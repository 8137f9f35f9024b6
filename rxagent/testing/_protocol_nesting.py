"""The nesting half of `assert_event_protocol`: nested runs inside their parents' spans.

A stream may hold the events of nested runs (agents called as tools, a team's members), each
with its own `run_id` and a `path` one agent longer than its parent's. Each run is checked on
its own by the checker of `_protocol.py`; here, each nested run is checked against its
parent: every event of it comes while the parent run is open (after its PreCall, before its
PostCall) and, when the parent is an agent (it reasons or acts), while one of the parent's tool
calls that was open when the nested run started is still open (its Acting span, where an agent
tool or a handoff runs the child).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, NoReturn

from rxagent.errors import EventProtocolError
from rxagent.events import (
    BaseEvent,
    PostActingEvent,
    PostCallEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["NESTING", "check_nesting", "split_runs"]

NESTING: Final = "nested run inside its parent's span"


def split_runs(events: Sequence[BaseEvent]) -> dict[str, list[BaseEvent]]:
    """The events of each run, by `run_id`, in order (runs in order of their first event).

    Only nested runs (a `path` longer than the first event's) are told apart by their
    `run_id`: an event at the first run's depth belongs to the first run, whose checker then
    reports a foreign `run_id` as a broken `same run_id and session_id`.
    """
    runs: dict[str, list[BaseEvent]] = {}
    if not events:
        return runs
    root = events[0]
    depth = len(root.path)
    for event in events:
        key = event.run_id if len(event.path) > depth else root.run_id
        runs.setdefault(key, []).append(event)
    return runs


@dataclass
class _RunState:
    path: tuple[str, ...]
    agent: bool  # it reasons or acts: its children must be inside its tool calls
    started: bool = False
    ended: bool = False
    open_calls: set[str] = field(default_factory=set)


def _fail(detail: str, position: int, event: BaseEvent) -> NoReturn:
    invariant = NESTING
    message = (
        f"event protocol violated: {invariant}: {detail}\n"
        f"  at #{position} {event.type}(seq={event.seq}, path={event.path!r})"
    )
    raise EventProtocolError(invariant, message, position=position, event=event)


def check_nesting(events: Sequence[BaseEvent], runs: dict[str, list[BaseEvent]]) -> None:
    """Check that every run but the first sits inside its parent's span.

    Raises:
        EventProtocolError: `nested run inside its parent's span`.
    """
    states = {
        run_id: _RunState(
            run[0].path,
            any(isinstance(e, PreReasoningEvent | PreActingEvent) for e in run),
        )
        for run_id, run in runs.items()
    }
    root = events[0].run_id
    root_depth = len(events[0].path)
    hosts: dict[str, tuple[str, frozenset[str]]] = {}  # child run -> its parent, open calls
    for position, event in enumerate(events):
        run_id = event.run_id if len(event.path) > root_depth else root
        state = states[run_id]
        if run_id != root:
            _check_inside(event, position, state, states, hosts)
        if isinstance(event, PreCallEvent):
            state.started = True
        elif isinstance(event, PostCallEvent):
            state.ended = True
        elif isinstance(event, PreActingEvent):
            state.open_calls.add(event.tool_call.id)
        elif isinstance(event, PostActingEvent):
            state.open_calls.discard(event.tool_call.id)


def _check_inside(
    event: BaseEvent,
    position: int,
    state: _RunState,
    states: dict[str, _RunState],
    hosts: dict[str, tuple[str, frozenset[str]]],
) -> None:
    host = hosts.get(event.run_id)
    if host is None:  # the nested run's first event: find its parent, open, one path up
        parent_path = state.path[:-1]
        open_parents = [
            run_id
            for run_id, other in states.items()
            if other.path == parent_path and other.started and not other.ended
        ]
        if not open_parents:
            _fail(f"no run at path {parent_path!r} is open around it", position, event)
        parent_id = open_parents[-1]
        parent = states[parent_id]
        if parent.agent and not parent.open_calls:
            _fail(
                f"it starts outside every tool call of its parent (path {parent_path!r})",
                position,
                event,
            )
        hosts[event.run_id] = host = (parent_id, frozenset(parent.open_calls))
    parent_id, calls = host
    parent = states[parent_id]
    if parent.ended:
        _fail(f"its parent run (path {parent.path!r}) has ended", position, event)
    if parent.agent and not (calls & parent.open_calls):
        _fail(
            f"the parent's tool call that runs it ({sorted(calls)}) has closed",
            position,
            event,
        )
