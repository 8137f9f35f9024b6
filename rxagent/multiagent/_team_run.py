"""`TeamRun`: the bookkeeping of one team run; `check_members`: a team's members, checked."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final

import reactivex
from reactivex import operators as ops

from rxagent.agent import AgentLike, child_session
from rxagent.agent._nesting import Resumable
from rxagent.errors import ApprovalError, ConfigurationError, ErrorCode
from rxagent.events import BaseEvent, PostCallEvent
from rxagent.messages import Msg, new_id
from rxagent.models.base import Usage
from rxagent.result import AgentResult, ErrorInfo

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Sequence

    from reactivex import Observable

    from rxagent.agent import AgentInput
    from rxagent.agent._approval import Decision
    from rxagent.context import Principal
    from rxagent.multiagent._base import Orchestrator
    from rxagent.result import StopReason

__all__ = ["PARKED_KEY", "TeamRun", "check_members"]

PARKED_KEY: Final = "rxagent.team.parked"
"""The key in a team session's `extra` state holding where its run parked: the member that
waits and what the team needs to go on once it resumes (the input, the members' results)."""


class TeamRun:
    """One run of a team: its id, path and `seq`, its members' results, whether it must stop.

    Args:
        team: The team.
        inputs: The run's input messages.
        session_id: The team's session.
        path: The team run's path (`(*parent, team.name)`).
        principal: Who is calling (passed on to the members).
        gate: Cleared while the outermost consumer is full (`events()`); members wait on it.
        resume: For a run that resumes a parked member: the member and the decision on it.
    """

    def __init__(
        self,
        team: Orchestrator,
        inputs: tuple[Msg, ...],
        session_id: str,
        path: tuple[str, ...],
        principal: Principal | None,
        gate: asyncio.Event | None = None,
        resume: tuple[AgentLike, Decision] | None = None,
    ) -> None:
        self.team = team
        self.inputs = inputs
        self.session_id = session_id
        self.path = path
        self.principal = principal
        self.gate = gate  # the outermost consumer's: the members wait on it while it is full
        self.run_id = new_id()
        self.started_at = time.perf_counter()
        self.results: list[tuple[str, AgentResult[Any]]] = []  # member name, result, in order
        self.active: dict[str, AgentLike] = {}  # member session -> member, while it runs
        self.stop_message: Msg | None = None  # set by an interrupt
        self.interrupted = False
        self.extra: dict[str, Any] = {}  # the team's own state, saved with its session
        self.resume = resume
        self._seq = 0

    def make(self, event_type: type[BaseEvent], **payload: Any) -> BaseEvent:
        """An event of the team run itself (`path == self.path`)."""
        seq, self._seq = self._seq, self._seq + 1
        return event_type(
            run_id=self.run_id,
            session_id=self.session_id,
            agent=self.team.name,
            path=self.path,
            seq=seq,
            **payload,
        )

    def member(self, member: AgentLike, msg: AgentInput) -> Observable[BaseEvent]:
        """`member`'s nested run in this team run; its result is recorded when it ends."""
        return self._nested(
            member,
            lambda session: member.nested_stream(
                msg,
                session_id=session,
                parent_path=self.path,
                principal=self.principal,
                gate=self.gate,
            ),
        )

    def resumed_member(self, member: AgentLike, decision: Decision) -> Observable[BaseEvent]:
        """`member`'s parked run, resumed by `decision`, nested in this team run.

        Raises:
            ApprovalError: (at subscribe) The member cannot be resumed inside another run.
        """
        if not isinstance(member, Resumable):
            raise ApprovalError(
                f"member {member.name!r} of team {self.team.name!r} cannot resume inside a "
                "team run: give it a nested_decision_stream (as ReActAgent has)",
                approval_id=decision.approval_id,
                session_id=self.session_id,
            )
        return self._nested(
            member,
            lambda session: member.nested_decision_stream(
                decision.approval_id,
                decision.approved,
                decision.reason,
                session_id=session,
                parent_path=self.path,
                principal=self.principal,
            ),
        )

    def _nested(
        self, member: AgentLike, start: Callable[[str], Observable[BaseEvent]]
    ) -> Observable[BaseEvent]:
        session = child_session(self.session_id, member.name)
        path = (*self.path, member.name)

        def subscribe(_: object) -> Observable[BaseEvent]:
            if self.interrupted:  # interrupted before this member's turn: it does not run
                return reactivex.empty()
            self.active[session] = member

            def record(event: BaseEvent) -> None:
                if type(event) is PostCallEvent and event.path == path:
                    self.results.append((member.name, event.result))

            return start(session).pipe(
                ops.do_action(on_next=record),
                ops.finally_action(lambda: self._forget(session)),
            )

        return reactivex.defer(subscribe)

    def _forget(self, session: str) -> None:
        self.active.pop(session, None)

    def interrupt(self, msg: Msg | None) -> None:
        """Stop the team: running members stop at their checkpoints, the rest do not start."""
        self.interrupted = True
        self.stop_message = msg
        for session, member in list(self.active.items()):
            member.interrupt(session, msg)

    @property
    def last(self) -> AgentResult[Any] | None:
        """The result of the member that ended last."""
        return self.results[-1][1] if self.results else None

    def result(self, reply: Msg, *, output: object = None) -> AgentResult[Any]:
        """The team's result: its reply, how it ended, and what its members used."""
        usage = Usage()
        tools: list[str] = []
        pending: list[str] = []
        for _, result in self.results:
            usage = usage + result.usage
            tools.extend(result.tools_used)
            pending.extend(result.pending_approvals)
        error: ErrorInfo | None
        stop_reason: StopReason
        if self.interrupted:
            message = self.stop_message.text if self.stop_message is not None else ""
            error = ErrorInfo(
                code=ErrorCode.INTERRUPTED, message=message or "the run was interrupted"
            )
            stop_reason = "interrupted"
        else:  # a member's failure is the team's; otherwise it ended as its last member did
            error = next((r.error for _, r in self.results if r.error is not None), None)
            last = self.last
            if error is not None:
                stop_reason = "error"
            elif pending:  # a member waits for a human: so does the team
                stop_reason = "approval_pending"
            else:
                stop_reason = last.stop_reason if last is not None else "no_tool_calls"
        return AgentResult[Any](
            reply=reply,
            ok=error is None,
            output=output,
            error=error,
            usage=usage,
            tools_used=tuple(tools),
            stop_reason=stop_reason,
            pending_approvals=tuple(pending),
            interrupted=self.interrupted,
            steps=len(self.results),
            duration_ms=(time.perf_counter() - self.started_at) * 1000,
            run_id=self.run_id,
            session_id=self.session_id,
        )


def check_members(kind: str, members: Sequence[object], *, least: int = 1) -> tuple[AgentLike, ...]:
    """Check a team's members: agents or teams, at least `least`, with unique names.

    Raises:
        ConfigurationError: Naming the problem and the fix.
    """
    found = tuple(members)
    if len(found) < least:
        raise ConfigurationError(f"{kind} needs at least {least} member(s), got {len(found)}")
    for member in found:
        if not isinstance(member, AgentLike):
            raise ConfigurationError(
                f"{kind} members must be agents or teams (a ReActAgent, a SequentialPipeline, "
                f"...), got {member!r}"
            )
    names = [m.name for m in found if isinstance(m, AgentLike)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigurationError(
            f"{kind} members need unique names (they key the members' sessions); "
            f"{twice} appear more than once"
        )
    return found  # type: ignore[return-value]  # checked against the protocol above
