"""Properties of random teams (depth <= 3) with scripted models.

- Every run in a team's stream (the team's and each nested member's) is paired and closed,
  and sits inside its parent's span (`assert_event_protocol`).
- The events of one run keep their order (`seq` strictly increasing per run).
- Interrupting the team at any event ends every run cleanly, and leaves every member's state
  pair-consistent and loadable.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent import BaseEvent, PostCallEvent, PreCallEvent
from rxagent.messages import Msg
from rxagent.state import AgentState
from rxagent.testing import assert_event_protocol
from rxagent.testing.strategies import TeamSpec, build_team, team_sessions, team_specs


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
