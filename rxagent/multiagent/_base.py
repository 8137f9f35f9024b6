"""`Orchestrator`: what every team shares; `TeamRun`: the bookkeeping of one team run.

A team's run is an Rx composition: its own PreCall, then its members' nested streams composed
by the subclass (`concat` for a pipeline, `merge` for a fan-out), then its own PostCall, all at
`path == (*parent, name)` for the team's own events and `(*parent, name, member, ...)` for its
members'. Subscribing starts the run; disposing the subscription disposes every member's.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Final

import reactivex
from reactivex import operators as ops

from rxagent.agent._consume import bounded_events, final_result
from rxagent.agent._nesting import ToolOutput, agent_tool, child_session
from rxagent.agent._support import LoopThread, coerce_input
from rxagent.errors import ConfigurationError, ErrorCode, SessionBusyError
from rxagent.events import BaseEvent, PostCallEvent, PreCallEvent
from rxagent.messages import Msg, new_id
from rxagent.models.base import Usage
from rxagent.result import AgentResult, ErrorInfo
from rxagent.state import AgentState, InMemoryStore, SessionStore

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence

    from reactivex import Observable

    from rxagent.agent import AgentInput, AgentLike
    from rxagent.context import Principal
    from rxagent.result import StopReason
    from rxagent.tools import Tool

__all__ = ["Orchestrator", "TeamRun"]

_DEFAULT_EVENT_BUFFER: Final = 256


class TeamRun:
    """One run of a team: its id, path and `seq`, its members' results, whether it must stop.

    Args:
        team: The team.
        inputs: The run's input messages.
        session_id: The team's session.
        path: The team run's path (`(*parent, team.name)`).
        principal: Who is calling (passed on to the members).
    """

    def __init__(
        self,
        team: Orchestrator,
        inputs: tuple[Msg, ...],
        session_id: str,
        path: tuple[str, ...],
        principal: Principal | None,
    ) -> None:
        self.team = team
        self.inputs = inputs
        self.session_id = session_id
        self.path = path
        self.principal = principal
        self.run_id = new_id()
        self.started_at = time.perf_counter()
        self.results: list[tuple[str, AgentResult[Any]]] = []  # member name, result, in order
        self.active: dict[str, AgentLike] = {}  # member session -> member, while it runs
        self.stop_message: Msg | None = None  # set by an interrupt
        self.interrupted = False
        self.extra: dict[str, Any] = {}  # the team's own state, saved with its session
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
        session = child_session(self.session_id, member.name)
        path = (*self.path, member.name)

        def subscribe(_: object) -> Observable[BaseEvent]:
            if self.interrupted:  # interrupted before this member's turn: it does not run
                return reactivex.empty()
            self.active[session] = member

            def record(event: BaseEvent) -> None:
                if type(event) is PostCallEvent and event.path == path:
                    self.results.append((member.name, event.result))

            return member.nested_stream(
                msg, session_id=session, parent_path=self.path, principal=self.principal
            ).pipe(
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

    def result(
        self,
        reply: Msg,
        *,
        output: object = None,
        error: ErrorInfo | None = None,
        stop_reason: StopReason | None = None,
    ) -> AgentResult[Any]:
        """The team's result: its reply, and what its members used."""
        usage = Usage()
        tools: list[str] = []
        pending: list[str] = []
        for _, result in self.results:
            usage = usage + result.usage
            tools.extend(result.tools_used)
            pending.extend(result.pending_approvals)
        if self.interrupted:
            message = self.stop_message.text if self.stop_message is not None else ""
            error = ErrorInfo(
                code=ErrorCode.INTERRUPTED, message=message or "the run was interrupted"
            )
            stop_reason = "interrupted"
        elif error is None:
            error = next((r.error for _, r in self.results if r.error is not None), None)
        if stop_reason is None:
            last = self.last
            stop_reason = (
                "error" if error is not None else (last.stop_reason if last else "no_tool_calls")
            )
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


class Orchestrator(ABC):
    """The agent interface of every team: `call`, `stream`, `events`, `interrupt`, state.

    A subclass says who its members are and how their runs compose (`_body`), and which reply
    ends the run (`_reply`).

    Args:
        name: The team's name (its events' `agent`, the key of its sessions).
        store: Where the team's own session state lives (in memory by default).
    """

    def __init__(self, name: str, *, store: SessionStore | None = None) -> None:
        if not isinstance(name, str) or not name.strip() or "/" in name:
            raise ConfigurationError(
                f"a team's name must be a non-empty str without '/', got {name!r}"
            )
        self.name = name
        self.store: SessionStore = store if store is not None else InMemoryStore()
        self._running: dict[str, TeamRun] = {}

    # -- what a team is ----------------------------------------------------------------------------

    @property
    @abstractmethod
    def members(self) -> tuple[AgentLike, ...]:
        """The team's members, in order."""

    @abstractmethod
    def _body(self, run: TeamRun) -> Observable[BaseEvent]:
        """The members' runs, composed (the events between the team's PreCall and PostCall)."""

    def _reply(self, run: TeamRun) -> tuple[Msg, object]:
        """The team's reply and structured output once the body ended: the last member's."""
        last = run.last
        if last is None:
            return Msg.assistant(""), None
        return last.reply, last.output

    # -- runs ----------------------------------------------------------------------------------

    def stream(
        self,
        msg: AgentInput = None,
        *,
        session_id: str = "default",
        principal: Principal | None = None,
    ) -> Observable[BaseEvent]:
        """The team's run as a cold Observable: each subscription is one run.

        A busy session or a bad input arrive as `on_error` at subscribe; disposing the
        subscription cancels every member's run.
        """
        return self.nested_stream(msg, session_id=session_id, parent_path=(), principal=principal)

    def nested_stream(
        self,
        msg: AgentInput,
        *,
        session_id: str,
        parent_path: tuple[str, ...],
        principal: Principal | None = None,
    ) -> Observable[BaseEvent]:
        """The team's run nested in another run (its events at `(*parent_path, name, ...)`)."""

        def subscribe(_: object) -> Observable[BaseEvent]:
            inputs = coerce_input(msg)
            if session_id in self._running:
                raise SessionBusyError(self.name, session_id)
            run = TeamRun(self, inputs, session_id, (*parent_path, self.name), principal)
            self._running[session_id] = run

            def release() -> None:
                if self._running.get(session_id) is run:
                    del self._running[session_id]

            return reactivex.concat(
                reactivex.from_future(asyncio.ensure_future(self._begin(run))),
                reactivex.defer(lambda _: self._body(run)),
                reactivex.defer(
                    lambda _: reactivex.from_future(asyncio.ensure_future(self._end(run)))
                ),
            ).pipe(ops.finally_action(release))

        return reactivex.defer(subscribe)

    async def _begin(self, run: TeamRun) -> BaseEvent:
        stored = await self.store.load(self.name, run.session_id)
        if stored is not None:
            run.extra.update(stored.state.extra)
        return run.make(PreCallEvent, input=run.inputs)

    async def _end(self, run: TeamRun) -> BaseEvent:
        reply, output = self._reply(run)
        if run.interrupted and run.stop_message is not None:
            reply = run.stop_message
        result = run.result(reply, output=output)
        stored = await self.store.load(self.name, run.session_id)
        state = stored.state if stored is not None else AgentState()
        await self.store.save(
            self.name, run.session_id, state.model_copy(update={"extra": dict(run.extra)})
        )
        return run.make(PostCallEvent, reply=result.reply, result=result)

    def events(
        self,
        msg: AgentInput = None,
        *,
        session_id: str = "default",
        principal: Principal | None = None,
        buffer: int = _DEFAULT_EVENT_BUFFER,
    ) -> AsyncIterator[BaseEvent]:
        """The team's run as an async iterator of its events (members' included)."""
        coerce_input(msg)
        return bounded_events(
            lambda _gate: self.stream(msg, session_id=session_id, principal=principal), buffer
        )

    async def call(
        self,
        msg: AgentInput = None,
        *,
        session_id: str = "default",
        principal: Principal | None = None,
    ) -> AgentResult[Any]:
        """Run the team to its end and return its `AgentResult`.

        Raises:
            InvalidInputError: For an input that is not str / Msg / list of Msg.
            SessionBusyError: When the session already has a run of this team.
        """
        return await final_result(self.stream(msg, session_id=session_id, principal=principal))

    def call_sync(self, msg: AgentInput = None, **kwargs: Any) -> AgentResult[Any]:
        """Blocking `call()` for scripts (inside a running loop it runs on a private one)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.call(msg, **kwargs))
        future = asyncio.run_coroutine_threadsafe(self.call(msg, **kwargs), LoopThread.get())
        return future.result()

    def interrupt(self, session_id: str = "default", msg: str | Msg | None = None) -> bool:
        """Stop the session's team run: running members stop at their next checkpoint.

        Returns:
            False when the session has no team run in progress.
        """
        run = self._running.get(session_id)
        if run is None:
            return False
        run.interrupt(Msg.assistant(msg) if isinstance(msg, str) else msg)
        return True

    def is_running(self, session_id: str = "default") -> bool:
        """True while the session has a team run in progress."""
        return session_id in self._running

    # -- state ---------------------------------------------------------------------------------

    async def state_dict(self, session_id: str = "default") -> dict[str, Any]:
        """The session's state: the team's own and each member's (nested sessions), JSON-ready."""
        stored = await self.store.load(self.name, session_id)
        own = stored.state if stored is not None else AgentState()
        members = {
            m.name: await _member_state(m, child_session(session_id, m.name)) for m in self.members
        }
        return {"team": own.model_dump(mode="json"), "members": members}

    async def load_state_dict(self, state: Mapping[str, Any], session_id: str = "default") -> None:
        """Load what `state_dict` returned: the team's state and its members'.

        Raises:
            SessionBusyError: The session has a run in progress.
        """
        if session_id in self._running:
            raise SessionBusyError(self.name, session_id)
        await self.store.save(self.name, session_id, AgentState.model_validate(state["team"]))
        saved = state.get("members", {})
        for member in self.members:
            if member.name in saved:
                load = getattr(member, "load_state_dict", None)
                if load is not None:
                    await load(saved[member.name], child_session(session_id, member.name))

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        input_type: object = str,
        output: ToolOutput = "text",
    ) -> Tool[[dict[str, Any]], Any]:
        """This team as a tool of an agent (see `ReActAgent.as_tool`); no side effects."""
        return agent_tool(self, name, description, input_type=input_type, output=output)

    def __repr__(self) -> str:
        names = ", ".join(m.name for m in self.members)
        return f"<{type(self).__name__} {self.name!r} members=[{names}]>"


async def _member_state(member: AgentLike, session_id: str) -> Any:
    state_dict = getattr(member, "state_dict", None)
    return None if state_dict is None else await state_dict(session_id)


def check_members(kind: str, members: Sequence[object], *, least: int = 1) -> tuple[AgentLike, ...]:
    """Check a team's members: agents or teams, at least `least`, with unique names.

    Raises:
        ConfigurationError: Naming the problem and the fix.
    """
    from rxagent.agent import AgentLike  # the runtime-checkable protocol

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
