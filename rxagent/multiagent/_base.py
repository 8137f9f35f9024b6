"""`Orchestrator`: what every team shares, the agent's interface over a composed run.

A team's run is an Rx composition: its own PreCall, then its members' nested streams composed
by the subclass (`concat` for a pipeline, `merge` for a fan-out), then its own PostCall, all at
`path == (*parent, name)` for the team's own events and `(*parent, name, member, ...)` for its
members'. Subscribing starts the run; disposing the subscription disposes every member's.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Final

import reactivex
from reactivex import operators as ops

from rxagent.agent._consume import bounded_events, final_result
from rxagent.agent._nesting import ToolOutput, agent_tool, child_session
from rxagent.agent._support import LoopThread, coerce_input
from rxagent.errors import ConfigurationError, SessionBusyError
from rxagent.events import BaseEvent, PostCallEvent, PreCallEvent
from rxagent.messages import Msg
from rxagent.multiagent._decisions import TeamDecisions
from rxagent.multiagent._team_run import TeamRun
from rxagent.state import AgentState, InMemoryStore, SessionStore, owned_state
from rxagent.tools import Toolkit

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from reactivex import Observable

    from rxagent.agent import AgentInput, AgentLike
    from rxagent.agent._approval import Decision
    from rxagent.context import Principal
    from rxagent.guards import GuardPipeline
    from rxagent.models.base import ModelOptions
    from rxagent.result import AgentResult
    from rxagent.tools import Tool

__all__ = ["Orchestrator"]

_DEFAULT_EVENT_BUFFER: Final = 256


class Orchestrator(TeamDecisions, ABC):
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
        self.lease_ttl_s = 30.0  # what a server sets on what it serves; a team holds no lease
        self.toolkit = Toolkit()  # a team's own tools: none (its members' are theirs)
        self.guards: GuardPipeline | None = None  # members guard their own input
        self._running: dict[str, TeamRun] = {}
        self._done: dict[str, asyncio.Future[None]] = {}  # resolved when the session's run ends

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
        gate: asyncio.Event | None = None,
    ) -> Observable[BaseEvent]:
        """The team's run nested in another run (its events at `(*parent_path, name, ...)`).

        With `gate`, the members' runs wait while it is clear (the outermost consumer is full).
        """

        def subscribe(_: object) -> Observable[BaseEvent]:
            return self._run(coerce_input(msg), session_id, parent_path, principal, gate, None)

        return reactivex.defer(subscribe)

    def _run(
        self,
        inputs: tuple[Msg, ...],
        session_id: str,
        parent_path: tuple[str, ...],
        principal: Principal | None,
        gate: asyncio.Event | None,
        resume: tuple[AgentLike, Decision] | None,
    ) -> Observable[BaseEvent]:
        """One team run: PreCall, the body (or the resumed member and the rest), PostCall."""
        if session_id in self._running:
            raise SessionBusyError(self.name, session_id)
        path = (*parent_path, self.name)
        run = TeamRun(self, inputs, session_id, path, principal, gate, resume)
        self._running[session_id] = run
        done = self._done[session_id] = asyncio.get_running_loop().create_future()

        def release() -> None:  # once: the run completed, failed or was disposed of
            del self._running[session_id]
            del self._done[session_id]
            done.set_result(None)

        return reactivex.concat(
            reactivex.from_future(asyncio.ensure_future(self._begin(run))),
            reactivex.defer(lambda _: self._body(run) if resume is None else self._resumed(run)),
            reactivex.defer(lambda _: reactivex.from_future(asyncio.ensure_future(self._end(run)))),
        ).pipe(ops.finally_action(release))

    async def _begin(self, run: TeamRun) -> BaseEvent:
        stored = await self.store.load(self.name, run.session_id)
        key = run.principal.key_id if run.principal is not None else None
        saved = stored.state if stored is not None else None
        state = owned_state(saved, key, agent=self.name, session_id=run.session_id)
        if state is not None:  # a new session of a key starts with its owner recorded
            run.extra.update(state.extra)
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
        options: ModelOptions | None = None,
        buffer: int = _DEFAULT_EVENT_BUFFER,
    ) -> AsyncIterator[BaseEvent]:
        """The team's run as an async iterator of its events (members' included).

        `options` is accepted for the server's sake and not used: each member calls its model
        with its own options.
        """
        del options
        coerce_input(msg)
        return bounded_events(
            lambda gate: self.nested_stream(
                msg, session_id=session_id, parent_path=(), principal=principal, gate=gate
            ),
            buffer,
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

    def interrupt_all(self, msg: str | Msg | None = None) -> int:
        """Interrupt every team run in progress; return how many there were."""
        return sum(self.interrupt(session, msg) for session in list(self._running))

    async def wait_idle(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 - a bool, not a raise
        *,
        session_id: str | None = None,
    ) -> bool:
        """Wait until no team run (of `session_id`, or any) is in progress.

        Returns:
            True when idle; False when `timeout` seconds passed first.
        """
        waiting = [f for s, f in self._done.items() if session_id is None or s == session_id]
        if not waiting:
            return True
        finished, _ = await asyncio.wait(waiting, timeout=timeout)
        return len(finished) == len(waiting)

    async def aclose(self) -> None:
        """Close the members' connections (models, toolsets); the team stays usable."""
        for member in self.members:
            await member.aclose()

    # -- state ---------------------------------------------------------------------------------

    async def state_dict(self, session_id: str = "default") -> dict[str, Any]:
        """The session's state: the team's own and each member's (nested sessions), JSON-ready."""
        stored = await self.store.load(self.name, session_id)
        own = stored.state if stored is not None else AgentState()
        members = {
            m.name: await m.state_dict(child_session(session_id, m.name)) for m in self.members
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
                await member.load_state_dict(
                    saved[member.name], child_session(session_id, member.name)
                )

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
