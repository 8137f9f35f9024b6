"""The agent: `ReActAgent`, its run context, stop conditions and results."""

from __future__ import annotations

import warnings
from typing import Any

from rxagent.agent._agent import AgentInput as AgentInput
from rxagent.agent._agent import ReActAgent as ReActAgent
from rxagent.agent._agent import SystemPrompt as SystemPrompt
from rxagent.agent.conditions import StopCondition as StopCondition
from rxagent.agent.conditions import StopDecision as StopDecision
from rxagent.agent.conditions import final_answer_marker as final_answer_marker
from rxagent.agent.conditions import max_steps as max_steps
from rxagent.context import RunContext as RunContext
from rxagent.context import current_run as current_run
from rxagent.result import AgentError as AgentError
from rxagent.result import AgentResult as AgentResult
from rxagent.result import StopReason as StopReason

__all__ = [
    "AgentError",
    "AgentInput",
    "AgentResult",
    "ReActAgent",
    "RunContext",
    "StopCondition",
    "StopDecision",
    "StopReason",
    "SystemPrompt",
    "current_run",
    "final_answer_marker",
    "max_steps",
]

_DEPRECATED = {
    "MaxSteps": ("rxagent.agent.conditions", "MaxSteps", "max_steps(n)"),
    "FinalAnswerMarker": (
        "rxagent.agent.conditions",
        "FinalAnswerMarker",
        "final_answer_marker(marker)",
    ),
}


def __getattr__(name: str) -> Any:
    found = _DEPRECATED.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute, instead = found
    warnings.warn(
        f"rxagent.agent.{name} is deprecated; make the condition with {instead}",
        DeprecationWarning,
        stacklevel=2,
    )
    import importlib

    return getattr(importlib.import_module(module), attribute)
