"""Properties of random teams (depth <= 3) with scripted models.

- Every run in a team's stream (the team's and each nested member's) is paired and closed,
  and sits inside its parent's span (`assert_event_protocol`).
- The events of one run keep their order (`seq` strictly increasing per run).
- Interrupting the team at any event ends every run cleanly, and leaves every member's state
  pair-consistent and loadable.
- A team whose agents wait for approvals, wherever they sit, parks as a whole and resumes as a
  whole: decided one approval at a time on the outermost team, it ends with the reply it
  gives without approvals, every resumed stream keeps the protocol, each waiting agent's tool
  ran once when approved and never when rejected, and nothing waits any more.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent import BaseEvent, PostCallEvent, PreCallEvent
from rxagent.messages import Msg
from rxagent.state import AgentState
from rxagent.testing import assert_event_protocol
from rxagent.testing.strategies import TeamSpec, build_team, team_sessions, team_specs

if TYPE_CHECKING:
    from reactivex import Observable


def _runs(events: list[BaseEvent]) -> dict[str, list[BaseEvent]]:
    runs: dict[str, list[BaseEvent]] = defaultdict(list)
    for event in events:
        runs[event.run_id].append(event)
    return runs


def _expected_runs(spec: TeamSpec) -> int:
    """One run per node, except supervisors' workers that are not called."""
    called = [spec.members[i] for i in spec.calls] if spec.kind == "supervisor" else spec.members
    return 1 + sum(_expected_runs(m) for m in called)


def _agents(spec: TeamSpec) -> int:
    own = spec.kind in ("agent", "supervisor")
    return own + sum(_agents(m) for m in spec.members)


def _paired(memory: Sequence[Msg]) -> bool:
    uses = {b.id for m in memory for b in m.tool_calls}
    results = {r.id for m in memory for r in m.tool_results}
    return uses == results


async def _play(spec: TeamSpec, stop_at: int | None) -> tuple[list[BaseEvent], Any]:
    team = build_team(spec)
    events: list[BaseEvent] = []
    async for event in team.events("go", session_id="s"):
        events.append(event)
        if stop_at is not None and len(events) == stop_at:
            team.interrupt("s", "stop")
    return events, team


@settings(max_examples=30, deadline=None)
@given(team_specs(max_depth=3))
def test_every_run_is_paired_closed_and_ordered(spec: TeamSpec) -> None:
    assert spec.depth() <= 3
    events, team = asyncio.run(_play(spec, None))
    assert_event_protocol(events)
    runs = _runs(events)
    for run in runs.values():
        assert isinstance(run[0], PreCallEvent)
        assert isinstance(run[-1], PostCallEvent)
        assert [e.seq for e in run] == sorted({e.seq for e in run})
        assert len({e.path for e in run}) == 1
    assert events[-1].path == (spec.name,)
    assert events[-1].result.ok  # type: ignore[attr-defined]
    assert len(runs) == _expected_runs(spec)
    assert len(team_sessions(team, "s")) == _agents(spec)


@settings(max_examples=30, deadline=None)
@given(team_specs(max_depth=3), st.integers(min_value=1, max_value=60))
def test_an_interrupt_at_any_event_leaves_paired_loadable_state(
    spec: TeamSpec, stop_at: int
) -> None:
    async def main() -> None:
        events, team = await _play(spec, stop_at)
        assert_event_protocol(events)
        for agent, session in team_sessions(team, "s"):
            assert await agent.wait_idle(timeout=5)
            saved = await agent.state_dict(session)
            state = AgentState.model_validate(saved)
            assert _paired(state.memory), (agent.name, session)
            await agent.load_state_dict(saved, session)
            assert await agent.state_dict(session) == saved

    asyncio.run(main())


def _without_approvals(spec: TeamSpec) -> TeamSpec:
    members = tuple(_without_approvals(m) for m in spec.members)
    return replace(spec, members=members, needs_approval=False)


async def _decide(stream: Observable[BaseEvent]) -> list[BaseEvent]:
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    events: list[BaseEvent] = []
    stream.subscribe(events.append, done.set_exception, lambda: done.set_result(None))
    await done
    return events


@settings(max_examples=40, deadline=None)
@given(team_specs(max_depth=3, approvals=True), st.booleans())
def test_approvals_anywhere_park_and_resume_the_whole_team(spec: TeamSpec, approve: bool) -> None:
    async def main() -> None:
        expected = await build_team(_without_approvals(spec)).call("go", session_id="s")
        team = build_team(spec)
        result = await team.call("go", session_id="s")
        waiting = list(result.pending_approvals)
        decided: set[str] = set()
        while waiting:  # one decision at a time, as a human would
            decided.add(waiting[0])
            events = await _decide(team.nested_decision_stream(
                waiting.pop(0), approve, "no", session_id="s", parent_path=()
            ))  # fmt: skip
            if not events:
                continue  # recorded: the batch waits for the rest of `waiting`
            assert_event_protocol(events)
            assert events[0].path == (spec.name,)
            result = events[-1].result  # type: ignore[attr-defined]
            # what is not decided yet still waits (a fan-out's other members); later members
            # may wait anew, but nothing decided waits again
            assert set(waiting) <= set(result.pending_approvals)
            assert not decided & set(result.pending_approvals)
            waiting = list(result.pending_approvals)
        assert result.ok
        assert result.text == expected.text
        for agent, session in team_sessions(team, "s"):
            state = AgentState.model_validate(await agent.state_dict(session))
            assert _paired(state.memory), (agent.name, session)
            assert not state.pending_approvals
            signed = [r for m in state.memory for r in m.tool_results if r.name == "sign_off"]
            if signed:
                assert len(signed) == 1
                assert signed[0].is_error is not approve

    asyncio.run(main())
