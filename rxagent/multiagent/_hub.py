"""`MsgHub`: a group conversation in which every reply reaches every other participant.

AgentScope's broadcast pattern, as a team run: the announcement (on a session's first run) and
the input reach every participant; then the participants speak in turn (`concat`), and each
reply is delivered to the others' memory before they speak next (as a user message named
after the speaker). Replies not yet delivered when the run ends wait in the hub's session
state and are delivered at the start of the next one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import reactivex

from rxagent.errors import ConfigurationError
from rxagent.messages import Msg
from rxagent.multiagent._base import Orchestrator
from rxagent.multiagent._team_run import TeamRun, check_members

if TYPE_CHECKING:
    from collections.abc import Sequence

    from reactivex import Observable

    from rxagent.agent import AgentLike
    from rxagent.events import BaseEvent
    from rxagent.state import SessionStore

__all__ = ["MsgHub"]

_PENDING = "rxagent.hub.pending"  # the hub's state: undelivered messages per participant
_ANNOUNCED = "rxagent.hub.announced"


class MsgHub(Orchestrator):
    """Participants that all hear each other: each reply goes to every other's memory.

    Args:
        participants: Agents or teams, in speaking order.
        announcement: Said to everyone at the start of a session's first run (a text is a
            user message).
        rounds: How often each participant speaks per run.
        name: The hub's name.
        store: Where the hub's own session state lives (undelivered replies).

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.multiagent import MsgHub
        from rxagent.testing import FunctionModel


        def heard(messages, tools, options):
            return f"I heard {len(messages)} message(s)"


        alice = ReActAgent("alice", "", FunctionModel(heard))
        bob = ReActAgent("bob", "", FunctionModel(heard))
        hub = MsgHub([alice, bob], announcement="Welcome, both of you.")
        result = hub.call_sync("Introduce yourselves.")
        # bob heard the announcement, the input and alice's reply
        assert result.text == "I heard 3 message(s)"
        ```
    """

    def __init__(
        self,
        participants: Sequence[AgentLike],
        *,
        announcement: str | Msg | None = None,
        rounds: int = 1,
        name: str = "hub",
        store: SessionStore | None = None,
    ) -> None:
        super().__init__(name, store=store)
        self._participants = check_members("MsgHub", participants, least=2)
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
            raise ConfigurationError(f"MsgHub(rounds=...) must be an int >= 1, got {rounds!r}")
        self.announcement = (
            Msg.user(announcement) if isinstance(announcement, str) else announcement
        )
        self.rounds = rounds

    @property
    def members(self) -> tuple[AgentLike, ...]:
        """The participants, in speaking order."""
        return self._participants

    def _body(self, run: TeamRun) -> Observable[BaseEvent]:
        inbox: dict[str, list[Msg]] = {
            p.name: [Msg.model_validate(m) for m in run.extra.get(_PENDING, {}).get(p.name, ())]
            for p in self._participants
        }
        opening = list(run.inputs)
        if self.announcement is not None and not run.extra.get(_ANNOUNCED):
            opening.insert(0, self.announcement)
            run.extra[_ANNOUNCED] = True
        for messages in inbox.values():
            messages.extend(opening)

        def turn(speaker: AgentLike) -> Observable[BaseEvent]:
            def subscribe(_: object) -> Observable[BaseEvent]:
                heard, inbox[speaker.name] = inbox[speaker.name], []
                before = len(run.results)

                def deliver() -> None:
                    if len(run.results) == before:
                        return  # interrupted before it spoke
                    said = run.results[-1][1]
                    if said.ok and said.text:
                        message = Msg(role="user", content=said.text, name=speaker.name)
                        for other, messages in inbox.items():
                            if other != speaker.name:
                                messages.append(message)
                    _save_inbox(run, inbox)

                return run.member(speaker, heard or None).pipe(_on_completed(deliver))

            return reactivex.defer(subscribe)

        turns = [turn(p) for _ in range(self.rounds) for p in self._participants]
        return reactivex.concat(*turns).pipe(_on_completed(lambda: _save_inbox(run, inbox)))

    def _resumed(self, run: TeamRun) -> Observable[BaseEvent]:
        """The parked participant resumes; its reply waits for the others' next turn."""
        assert run.resume is not None  # only runs started by a decision come here
        speaker = run.resume[0]

        def deliver() -> None:
            said = run.last
            if said is None or not said.ok or not said.text:
                return  # interrupted, failed, or waiting again: nothing to tell the others
            message = Msg(role="user", content=said.text, name=speaker.name).model_dump(mode="json")
            pending = run.extra.setdefault(_PENDING, {})
            for other in self._participants:
                if other.name != speaker.name:
                    pending.setdefault(other.name, []).append(message)

        return super()._resumed(run).pipe(_on_completed(deliver))


def _save_inbox(run: TeamRun, inbox: dict[str, list[Msg]]) -> None:
    run.extra[_PENDING] = {
        name: [m.model_dump(mode="json") for m in messages] for name, messages in inbox.items()
    }


def _on_completed(action: Any) -> Any:
    from reactivex import operators as ops

    return ops.do_action(on_completed=action)
