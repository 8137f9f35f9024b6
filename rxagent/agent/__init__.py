"""The agent: `ReActAgent`, its run context, stop conditions and results."""

from rxagent.agent._agent import AgentInput as AgentInput
from rxagent.agent._agent import ReActAgent as ReActAgent
from rxagent.agent._agent import SystemPrompt as SystemPrompt
from rxagent.agent._support import coerce_input as coerce_input
from rxagent.agent.conditions import FinalAnswerMarker as FinalAnswerMarker
from rxagent.agent.conditions import MaxSteps as MaxSteps
from rxagent.agent.conditions import StopCondition as StopCondition
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
    "FinalAnswerMarker",
    "MaxSteps",
    "ReActAgent",
    "RunContext",
    "StopCondition",
    "StopReason",
    "SystemPrompt",
    "coerce_input",
    "current_run",
    "final_answer_marker",
    "max_steps",
]
