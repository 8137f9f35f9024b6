"""The pipelines: `SequentialPipeline` (`concat`) and `ParallelPipeline` (`merge`).

A sequential pipeline runs its members one after another, each on the previous reply; a
parallel one runs them at once on the same input, then a merger builds the reply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import reactivex

from rxagent.agent import AgentLike
from rxagent.errors import ConfigurationError
from rxagent.messages import Msg
from rxagent.models.base import Usage
from rxagent.multiagent._base import Orchestrator
from rxagent.multiagent._team_run import PARKED_KEY, TeamRun, check_members
from rxagent.result import AgentResult

if TYPE_CHECKING:
    from reactivex import Observable

    from rxagent.agent import AgentInput
    from rxagent.events import BaseEvent
    from rxagent.state import SessionStore

__all__ = ["InputBuilder", "Merger", "ParallelPipeline", "SequentialPipeline"]

InputBuilder: TypeAlias = Callable[[AgentResult[Any], tuple[Msg, ...]], "AgentInput"]
"""Builds the next member's input from the previous member's result and the team's input."""

Merger: TypeAlias = Callable[[Sequence[AgentResult[Any]]], str] | AgentLike
"""Merges a fan-out: a function of the members' results returning the reply text, or an agent
that is given their replies."""


class SequentialPipeline(Orchestrator):
    """Members one after another: each gets the previous member's reply (`concat`).

    The first member gets the team's input. A member that fails or is interrupted ends the
    pipeline with its result; one that parks for approval parks the team, and the team's
    `approve()` resumes it and goes on with the members after it. The team's reply is the
    last member's.

    Args:
        members: Agents or teams, in order.
        name: The team's name.
        input_builder: Builds each later member's input from the previous result and the
            team's input (default: the previous reply's text).
        store: Where the team's own session state lives.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.multiagent import SequentialPipeline
        from rxagent.testing import ScriptedModel

        writer = ReActAgent("writer", "Write.", ScriptedModel(["a draft"]))
        editor = ReActAgent("editor", "Edit.", ScriptedModel(["A polished draft."]))
        team = SequentialPipeline([writer, editor], name="desk")
        assert team.call_sync("Write about frogs").text == "A polished draft."
        ```
    """

    def __init__(
        self,
        members: Sequence[AgentLike],
        *,
        name: str = "sequential",
        input_builder: InputBuilder | None = None,
        store: SessionStore | None = None,
    ) -> None:
        super().__init__(name, store=store)
        self._members = check_members("SequentialPipeline", members)
        self.input_builder = input_builder

    @property
    def members(self) -> tuple[AgentLike, ...]:
        """The members, in order."""
        return self._members

    def _body(self, run: TeamRun) -> Observable[BaseEvent]:
        return self._turns(run, 0, run.inputs)

    def _resumed(self, run: TeamRun) -> Observable[BaseEvent]:
        assert run.resume is not None  # only runs started by a decision come here
        member, decision = run.resume
        parked = run.extra.pop(PARKED_KEY, None) or {}
        inputs = _load_inputs(parked, run.inputs)
        index = next(i for i, m in enumerate(self._members) if m is member)
        return reactivex.concat(
            run.resumed_member(member, decision), self._turns(run, index + 1, inputs)
        )

    def _turns(self, run: TeamRun, start: int, inputs: tuple[Msg, ...]) -> Observable[BaseEvent]:
        """The members from `start` on, each on the previous reply; a parked one is noted."""

        def turn(index: int, member: AgentLike) -> Observable[BaseEvent]:
            def subscribe(_: object) -> Observable[BaseEvent]:
                if index == 0:
                    return run.member(member, list(inputs))
                last = run.last
                if last is None or not last.ok or last.pending_approvals:
                    return reactivex.empty()  # the previous member did not answer: stop here
                if self.input_builder is None:
                    return run.member(member, last.text)
                return run.member(member, self.input_builder(last, inputs))

            return reactivex.defer(subscribe)

        def note_parked(_: object) -> Observable[BaseEvent]:
            last = run.last
            if last is not None and last.pending_approvals:  # the team waits with its member
                run.extra[PARKED_KEY] = {"inputs": _dump_inputs(inputs)}
            return reactivex.empty()

        turns = (turn(i, m) for i, m in enumerate(self._members) if i >= start)
        return reactivex.concat(*turns, reactivex.defer(note_parked))


class ParallelPipeline(Orchestrator):
    """Members at once on the same input (`merge`), then a merger builds the reply.

    A member that parks for approval parks the team; the merger runs once no member waits.

    Args:
        members: Agents or teams; each runs in its own nested session, concurrently.
        merger: A function of the members' results (in member order) returning the reply
            text, or an agent (or team) given the replies, one `name: reply` section each.
            Default: the replies, one `name: reply` section each.
        name: The team's name.
        store: Where the team's own session state lives.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.multiagent import ParallelPipeline
        from rxagent.testing import ScriptedModel

        pro = ReActAgent("pro", "Argue for.", ScriptedModel(["Cheap."]))
        con = ReActAgent("con", "Argue against.", ScriptedModel(["Slow."]))
        team = ParallelPipeline(
            [pro, con], merger=lambda results: " / ".join(r.text for r in results)
        )
        assert team.call_sync("Trains?").text == "Cheap. / Slow."
        ```
    """

    def __init__(
        self,
        members: Sequence[AgentLike],
        *,
        merger: Merger | None = None,
        name: str = "parallel",
        store: SessionStore | None = None,
    ) -> None:
        super().__init__(name, store=store)
        self._members = check_members("ParallelPipeline", members)
        if merger is not None and not (isinstance(merger, AgentLike) or callable(merger)):
            raise ConfigurationError(
                "ParallelPipeline(merger=...) must be a function of the members' results or "
                f"an agent, got {merger!r}"
            )
        if isinstance(merger, AgentLike) and merger.name in {m.name for m in self._members}:
            raise ConfigurationError(
                f"the merger agent {merger.name!r} has a member's name; give it its own"
            )
        self.merger = merger

    @property
    def members(self) -> tuple[AgentLike, ...]:
        """The members, and the merger when it is an agent."""
        if isinstance(self.merger, AgentLike):
            return (*self._members, self.merger)
        return self._members

    def _body(self, run: TeamRun) -> Observable[BaseEvent]:
        fan_out = reactivex.merge(*(run.member(m, list(run.inputs)) for m in self._members))
        return reactivex.concat(fan_out, self._merge(run, run.inputs))

    def _resumed(self, run: TeamRun) -> Observable[BaseEvent]:
        assert run.resume is not None  # only runs started by a decision come here
        member, decision = run.resume
        parked = run.extra.pop(PARKED_KEY, None) or {}
        inputs = _load_inputs(parked, run.inputs)
        resumed = run.resumed_member(member, decision)
        if member is self.merger:  # the merger parked: the fan-out was done
            return resumed
        for name, saved in parked.get("results", {}).items():
            if name != member.name:  # the others' replies, as they were (their usage was counted)
                earlier = AgentResult[Any].model_validate(saved)
                run.results.append((name, earlier.model_copy(update={"usage": Usage()})))
        return reactivex.concat(resumed, self._merge(run, inputs))

    def _merge(self, run: TeamRun, inputs: tuple[Msg, ...]) -> Observable[BaseEvent]:
        """The merger agent's run once no member waits; while one does, the team parks."""
        merger = self.merger

        def merge_replies(_: object) -> Observable[BaseEvent]:
            results = self._member_results(run)
            if any(r.pending_approvals for _, r in results):
                run.extra[PARKED_KEY] = {
                    "inputs": _dump_inputs(inputs),
                    "results": {name: r.model_dump(mode="json") for name, r in results},
                }
                return reactivex.empty()
            if not isinstance(merger, AgentLike):
                return reactivex.empty()  # a function merges in `_reply`
            return run.member(merger, _sections(results))

        return reactivex.defer(merge_replies)

    def _member_results(self, run: TeamRun) -> list[tuple[str, AgentResult[Any]]]:
        """The members' results in member order (they end in any order)."""
        order = {m.name: i for i, m in enumerate(self._members)}
        found = [(name, r) for name, r in run.results if name in order]
        return sorted(found, key=lambda pair: order[pair[0]])

    def _reply(self, run: TeamRun) -> tuple[Msg, object]:
        merger = self.merger
        results = self._member_results(run)
        if any(r.pending_approvals for _, r in results):  # parked: the replies so far
            return Msg.assistant(_sections(results)), None
        if isinstance(merger, AgentLike):
            return super()._reply(run)
        if merger is None:
            return Msg.assistant(_sections(results)), None
        return Msg.assistant(str(merger([r for _, r in results]))), None


def _sections(results: Sequence[tuple[str, AgentResult[Any]]]) -> str:
    return "\n\n".join(f"{name}: {result.text}" for name, result in results)


def _dump_inputs(inputs: Sequence[Msg]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in inputs]


def _load_inputs(parked: dict[str, Any], default: tuple[Msg, ...]) -> tuple[Msg, ...]:
    """The team input saved when the run parked (the resumed run itself has none)."""
    saved = parked.get("inputs")
    return tuple(Msg.model_validate(m) for m in saved) if saved is not None else default
