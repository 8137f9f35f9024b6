"""The agent: `ReActAgent`, its run context, stop conditions and results."""

from __future__ import annotations

import warnings
from typing import Any

from rxagent.agent import conditions
from rxagent.agent._agent import AgentInput as AgentInput
from rxagent.agent._agent import ReActAgent as ReActAgent
from rxagent.agent._agent import SystemPrompt as SystemPrompt
from rxagent.agent._nesting import AgentLike as AgentLike
from rxagent.agent._nesting import ToolOutput as ToolOutput
from rxagent.agent._nesting import child_session as child_session
from rxagent.agent._nesting import run_nested as run_nested
from rxagent.agent._routing import ROUTE_KEY as ROUTE_KEY
from rxagent.agent.conditions import StopCondition as StopCondition
from rxagent.agent.conditions import StopDecision as StopDecision
from rxagent.agent.conditions import final_answer_marker as final_answer_marker
from rxagent.agent.conditions import max_steps as max_steps
from rxagent.context import RunContext as RunContext
from rxagent.context import current_run as current_run
from rxagent.result import AgentResult as AgentResult
from rxagent.result import ErrorInfo as ErrorInfo
from rxagent.result import StopReason as StopReason

__all__ = [
    "ROUTE_KEY",
    "AgentInput",
    "AgentLike",
    "AgentResult",
    "ErrorInfo",
    "ReActAgent",
    "RunContext",
    "StopCondition",
    "StopDecision",
    "StopReason",
    "SystemPrompt",
    "ToolOutput",
    "child_session",
    "current_run",
    "final_answer_marker",
    "max_steps",
    "run_nested",
]

_DEPRECATED = {
    "AgentError": "use rxagent.agent.ErrorInfo",
    "MaxSteps": "make the condition with max_steps(n)",
    "FinalAnswerMarker": "make the condition with final_answer_marker(marker)",
}


def __getattr__(name: str) -> Any:
    instead = _DEPRECATED.get(name)
    if instead is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"rxagent.agent.{name} is deprecated; {instead}", DeprecationWarning, stacklevel=2
    )
    if name == "AgentError":
        return ErrorInfo
    return getattr(conditions, name)
