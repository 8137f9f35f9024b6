"""What the server serves: a `ReActAgent`, or a team of `rxagent.multiagent`."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from rxagent.agent import ReActAgent
    from rxagent.multiagent import Orchestrator

__all__ = ["ServedAgent", "served_kinds"]

ServedAgent: TypeAlias = "ReActAgent | Orchestrator"
"""An agent or a team: both have the run, interrupt, approval and session members the server
uses."""


def served_kinds() -> tuple[type[ReActAgent], type[Orchestrator]]:
    """The classes `create_app` serves (imported when an app is made)."""
    from rxagent.agent import ReActAgent
    from rxagent.multiagent import Orchestrator

    return ReActAgent, Orchestrator
