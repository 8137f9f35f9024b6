"""Random teams of agents with scripted models, to property-test multi-agent runs.

`team_specs()` draws a team as data (`TeamSpec`): a tree of agents, supervisors (whose workers
are their tools, called in one parallel batch), sequential and parallel pipelines, up to a
depth; with `approvals=True` some agents first call a tool that needs approval. `build_team(spec)`
makes it, with `ScriptedModel`s that play exactly one run of the team (resumed as often as it
parks); `team_sessions(team, session_id)` lists every agent of it with its (nested) session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from hypothesis import strategies as st

from rxagent.agent import ReActAgent, child_session
from rxagent.multiagent import Orchestrator, ParallelPipeline, SequentialPipeline, Supervisor
from rxagent.testing._builders import tool_call
from rxagent.testing._models import ScriptedModel
from rxagent.tools import tool

if TYPE_CHECKING:
    from rxagent.agent import AgentLike
    from rxagent.testing._strategies_messages import Draw, SearchStrategy

__all__ = ["TeamKind", "TeamSpec", "build_team", "team_sessions", "team_specs"]

TeamKind = Literal["agent", "supervisor", "sequential", "parallel"]
"""What a node of a drawn team is."""


@dataclass(frozen=True, slots=True)
class TeamSpec:
    """A team as data: what each node is, its name, its members, and what it says.

    Attributes:
        kind: A plain agent, a supervisor, or a pipeline.
        name: Unique in the whole team (members' sessions are keyed by name).
        members: The members (a supervisor's workers); empty for a plain agent.
        reply: What an agent or a supervisor answers last.
        calls: Which workers a supervisor calls (indexes into `members`), in one batch.
        needs_approval: An agent that first calls `sign_off`, a tool that needs approval.

    Example:
        ```python
        from rxagent.testing.strategies import TeamSpec

        pair = TeamSpec("parallel", "t", (TeamSpec("agent", "a"), TeamSpec("agent", "b")))
        assert pair.depth() == 2 and [m.name for m in pair.members] == ["a", "b"]
        ```
    """

    kind: TeamKind
    name: str
    members: tuple[TeamSpec, ...] = ()
    reply: str = "ok"
    calls: tuple[int, ...] = ()
    needs_approval: bool = False

    def depth(self) -> int:
        """How deep the team nests (a plain agent is 1)."""
        return 1 + max((m.depth() for m in self.members), default=0)


@tool(name="sign_off", needs_approval=True)
def _sign_off(agent: str) -> str:
    """Sign the work off (a human approves it first).

    Args:
        agent: Who asks.
    """
    return f"signed for {agent}"


def team_specs(
    max_depth: int = 3, max_members: int = 3, *, approvals: bool = False
) -> SearchStrategy[TeamSpec]:
    """Draw a team of depth at most `max_depth`, each node with at most `max_members`.

    With `approvals`, some agents need a human's approval (`TeamSpec.needs_approval`).

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent.testing import assert_event_protocol
        from rxagent.testing.strategies import build_team, team_specs


        @settings(max_examples=5, deadline=None)
        @given(team_specs(max_depth=2))
        def test_teams_keep_the_protocol(spec) -> None:
            import asyncio

            async def main() -> None:
                team = build_team(spec)
                assert_event_protocol([e async for e in team.events("go")])

            asyncio.run(main())


        test_teams_keep_the_protocol()
        ```
    """
    return st.composite(lambda draw: _draw_team(draw, max_depth, max_members, approvals, [0]))()


def _draw_team(draw: Draw, depth: int, width: int, approvals: bool, counter: list[int]) -> TeamSpec:
    counter[0] += 1
    name = f"m{counter[0]}"
    reply = draw(st.sampled_from(("ok", "done", "fine", "yes")))
    kinds: list[TeamKind] = ["agent"] if depth <= 1 else ["agent", "supervisor", "sequential",
                                                          "parallel"]  # fmt: skip
    kind = draw(st.sampled_from(kinds))
    if kind == "agent":
        waits = approvals and draw(st.booleans())
        return TeamSpec("agent", name, reply=reply, needs_approval=waits)
    count = draw(st.integers(min_value=1, max_value=width))
    members = tuple(_draw_team(draw, depth - 1, width, approvals, counter) for _ in range(count))
    calls: tuple[int, ...] = ()
    if kind == "supervisor":
        chosen = draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=count, unique=True))
        calls = tuple(sorted(chosen))
    return TeamSpec(kind, name, members, reply, calls)


def build_team(spec: TeamSpec) -> ReActAgent | Orchestrator:
    """Make the team `spec` describes, with scripted models for one run of it.

    Example:
        ```python
        from rxagent.testing.strategies import TeamSpec, build_team

        spec = TeamSpec("sequential", "t", (TeamSpec("agent", "a", reply="x"),))
        assert build_team(spec).call_sync("go").text == "x"
        ```
    """
    members = [build_team(m) for m in spec.members]
    if spec.kind == "agent" and spec.needs_approval:
        script = ScriptedModel([tool_call("sign_off", agent=spec.name), spec.reply])
        return ReActAgent(spec.name, "", script, tools=[_sign_off])
    if spec.kind == "agent":
        return ReActAgent(spec.name, "", ScriptedModel([spec.reply]))
    if spec.kind == "supervisor":
        batch = [tool_call(members[i].name, input=f"task {i}") for i in spec.calls]
        return Supervisor(spec.name, model=ScriptedModel([batch, spec.reply]), workers=members)
    if spec.kind == "sequential":
        return SequentialPipeline(members, name=spec.name)
    return ParallelPipeline(members, name=spec.name)


def team_sessions(team: AgentLike, session_id: str = "default") -> list[tuple[ReActAgent, str]]:
    """Every agent of `team` (itself included, if it is one) with its session in a run.

    Example:
        ```python
        from rxagent.testing.strategies import TeamSpec, build_team, team_sessions

        spec = TeamSpec("parallel", "t", (TeamSpec("agent", "a"), TeamSpec("agent", "b")))
        found = [(a.name, s) for a, s in team_sessions(build_team(spec), "s")]
        assert found == [("a", "s/a"), ("b", "s/b")]
        ```
    """
    found: list[tuple[ReActAgent, str]] = []
    if isinstance(team, ReActAgent):
        found.append((team, session_id))
    members: tuple[AgentLike, ...] = ()
    if isinstance(team, Orchestrator):
        members = team.members
    elif isinstance(team, Supervisor):
        members = team.workers
    for member in members:
        found.extend(team_sessions(member, child_session(session_id, member.name)))
    return found
