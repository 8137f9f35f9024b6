"""`TeamDecisions`: approvals inside a team resume the whole team.

A member that parks for approval parks its team: the team run ends with the member's pending
approvals, and the team notes in its session state where it stopped (`PARKED_KEY`: the team's
input, and for a fan-out the members' results). The decision that completes the member's batch
starts a new team run: its own PreCall and PostCall at `path == (*parent, team)`, the member's
resumed run nested in it, then the members after it, as if it had not parked (`_resumed`, which
the pipelines override). Earlier decisions of a batch are recorded without a run. So a team
called as a tool parks its caller too, and the caller's `approve()` resumes the team.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

import reactivex
from reactivex import operators as ops

from rxagent.agent._approval import Decision, streamed_decision
from rxagent.agent._consume import bounded_events, optional_result
from rxagent.agent._nesting import child_session
from rxagent.errors import ApprovalError
from rxagent.multiagent._team_run import TeamRun

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from reactivex import Observable

    from rxagent.agent import AgentLike
    from rxagent.context import Principal
    from rxagent.events import BaseEvent
    from rxagent.messages import Msg
    from rxagent.multiagent._base import Orchestrator
    from rxagent.result import AgentResult

__all__ = ["TeamDecisions"]


class TeamDecisions:
    """The approval methods of every team (a base of `Orchestrator`; see there)."""

    name: str

    @property
    def members(self) -> tuple[AgentLike, ...]:
        """The team's members (the orchestrator's)."""
        raise NotImplementedError  # pragma: no cover - Orchestrator declares it abstract

    def _run(
        self,
        inputs: tuple[Msg, ...],
        session_id: str,
        parent_path: tuple[str, ...],
        principal: Principal | None,
        gate: asyncio.Event | None,
        resume: tuple[AgentLike, Decision] | None,
    ) -> Observable[BaseEvent]:
        raise NotImplementedError  # pragma: no cover - Orchestrator's

    def nested_decision_stream(
        self,
        approval_id: str,
        approved: bool,
        reason: str | None,
        *,
        session_id: str,
        parent_path: tuple[str, ...],
        principal: Principal | None = None,
    ) -> Observable[BaseEvent]:
        """Decide a member's parked call, nested in another run (what `approve()` runs).

        The decision that completes the member's batch resumes the team: a new team run (at
        `path == (*parent_path, name)`) in which the member resumes and the members after it
        run as if it had not parked. Earlier decisions are recorded and complete without events.
        """
        return self._decision(
            Decision(approval_id, approved=approved, reason=None if approved else reason),
            session_id,
            parent_path,
            principal,
            None,
        )

    def decision_events(
        self,
        approval_id: str,
        approved: bool,
        reason: str | None = None,
        *,
        session_id: str = "default",
        principal: Principal | None = None,
        buffer: int = 256,
    ) -> AsyncIterator[BaseEvent]:
        """Decide a member's parked call and iterate the events of the team run it resumes.

        `approve()` / `reject()` as a stream (see `ReActAgent.decision_events`): nothing comes
        out while other approvals of the member's batch wait.

        Raises:
            ApprovalError: When iteration starts: no member of the session waits for the id.
            SessionBusyError: When iteration starts, while the session has a team run.
        """
        decision = streamed_decision(approval_id, approved, reason, buffer)
        return bounded_events(
            lambda gate: self._decision(decision, session_id, (), principal, gate), buffer
        )

    def _decision(
        self,
        decision: Decision,
        session_id: str,
        parent_path: tuple[str, ...],
        principal: Principal | None,
        gate: asyncio.Event | None,
    ) -> Observable[BaseEvent]:
        approval_id = decision.approval_id

        def start(found: tuple[AgentLike, bool]) -> Observable[BaseEvent]:
            member, last = found
            if last:
                return self._run((), session_id, parent_path, principal, gate, (member, decision))
            # the member's batch still waits: the decision is recorded, no team run starts
            team = cast("Orchestrator", self)
            outside = TeamRun(team, (), session_id, (*parent_path, self.name), principal)
            return outside.resumed_member(member, decision)

        def subscribe(_: object) -> Observable[BaseEvent]:
            finding = asyncio.ensure_future(self._deciding_member(approval_id, session_id))
            return reactivex.from_future(finding).pipe(ops.flat_map(start))

        return reactivex.defer(subscribe)

    def _resumed(self, run: TeamRun) -> Observable[BaseEvent]:
        """The body of a run that resumes a parked member: that member's resumed run.

        The pipelines override it to go on with the members after it.
        """
        assert run.resume is not None  # only runs started by a decision come here
        return run.resumed_member(*run.resume)

    async def approve(
        self,
        approval_id: str,
        *,
        session_id: str = "default",
        principal: Principal | None = None,
    ) -> AgentResult[Any] | None:
        """Approve a member's parked tool call: the team resumes, and with it the member.

        The decision that completes the member's batch starts a new team run in which the
        member resumes and the team goes on from there (a pipeline runs its later members).

        Returns:
            The team's result; None while other approvals of the member's batch wait.

        Raises:
            ApprovalError: No member of the session waits for `approval_id`.
            SessionBusyError: The session has a team run in progress.
        """
        return await optional_result(
            self.nested_decision_stream(
                approval_id, True, None, session_id=session_id, parent_path=(), principal=principal
            )
        )

    async def reject(
        self,
        approval_id: str,
        reason: str | None = None,
        *,
        session_id: str = "default",
        principal: Principal | None = None,
    ) -> AgentResult[Any] | None:
        """Reject a member's parked tool call: the member goes on with the rejection.

        See `approve`.

        Raises:
            ApprovalError: No member of the session waits for `approval_id`.
            SessionBusyError: The session has a team run in progress.
        """
        return await optional_result(
            self.nested_decision_stream(
                approval_id,
                False,
                reason,
                session_id=session_id,
                parent_path=(),
                principal=principal,
            )
        )

    async def _deciding_member(self, approval_id: str, session_id: str) -> tuple[AgentLike, bool]:
        """The member that waits for `approval_id` (a team, when the agent is in it).

        With it: whether deciding it completes that agent's batch (so its run resumes).
        """
        for member in self.members:
            member_session = child_session(session_id, member.name)
            if isinstance(member, TeamDecisions):
                try:
                    _, last = await member._deciding_member(approval_id, member_session)
                except ApprovalError:
                    continue
                return member, last
            state = await member.state_dict(member_session)
            pending = state["pending_approvals"]
            if any(p["approval_id"] == approval_id for p in pending):
                return member, len(pending) == 1
        raise ApprovalError(
            f"no member of team {self.name!r} waits for approval {approval_id!r} in session "
            f"{session_id!r}",
            approval_id=approval_id,
            session_id=session_id,
        )
