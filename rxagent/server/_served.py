"""What the server serves: a `ReActAgent`, or a team of `rxagent.multiagent`."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rxagent.agent import ReActAgent
    from rxagent.multiagent import Orchestrator

__all__ = ["ServedAgent", "leaves", "served_kinds"]

ServedAgent: TypeAlias = "ReActAgent | Orchestrator"
"""An agent or a team: both have the run, interrupt, approval and session members the server
uses."""


def served_kinds() -> tuple[type[ReActAgent], type[Orchestrator]]:
    """The classes `create_app` serves (imported when an app is made)."""
    from rxagent.agent import ReActAgent
    from rxagent.multiagent import Orchestrator

    return ReActAgent, Orchestrator


def leaves(served: object) -> Iterator[object]:
    """`served` itself, or for a team its members' leaves at any depth (teams left out)."""
    _, team_kind = served_kinds()
    if isinstance(served, team_kind):
        for member in served.members:
            yield from leaves(member)
    else:
        yield served
