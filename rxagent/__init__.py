"""rxagent: tool-using LLM agents whose runs are typed, observable, hookable event streams.

Example:
    ```python
    from rxagent import ReActAgent
    from rxagent.testing import ScriptedModel

    agent = ReActAgent("hello", "Be friendly.", ScriptedModel(["Hi there!"]))
    assert agent.call_sync("hello").text == "Hi there!"
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rxagent._lazy import export_order, lazy_exports, read_exports
from rxagent._version import __version__ as __version__

# The exports, written once: type checkers and docs read the imports below; at runtime
# `read_exports` reads the same block from this file, and each name is imported on first use,
# so `import rxagent` (and the pytest plugin, which lives in rxagent.testing) stays cheap.
if TYPE_CHECKING:
    from rxagent.agent import AgentInput as AgentInput
    from rxagent.agent import ReActAgent as ReActAgent
    from rxagent.agent import StopCondition as StopCondition
    from rxagent.agent import StopDecision as StopDecision
    from rxagent.agent import final_answer_marker as final_answer_marker
    from rxagent.agent import max_steps as max_steps
    from rxagent.context import Principal as Principal
    from rxagent.context import RunContext as RunContext
    from rxagent.context import current_run as current_run
    from rxagent.error_messages import ErrorMessages as ErrorMessages
    from rxagent.errors import ErrorCode as ErrorCode
    from rxagent.errors import HookContractError as HookContractError
    from rxagent.errors import Reject as Reject
    from rxagent.errors import RxAgentError as RxAgentError
    from rxagent.errors import SessionBusyError as SessionBusyError
    from rxagent.events import EVENT_ADAPTER as EVENT_ADAPTER
    from rxagent.events import ActingChunkEvent as ActingChunkEvent
    from rxagent.events import AgentEvent as AgentEvent
    from rxagent.events import ApprovalRequestedEvent as ApprovalRequestedEvent
    from rxagent.events import BaseEvent as BaseEvent
    from rxagent.events import ContextTrimmedEvent as ContextTrimmedEvent
    from rxagent.events import CustomEvent as CustomEvent
    from rxagent.events import ErrorEvent as ErrorEvent
    from rxagent.events import FallbackEvent as FallbackEvent
    from rxagent.events import FieldChange as FieldChange
    from rxagent.events import GuardEvent as GuardEvent
    from rxagent.events import HandoffEvent as HandoffEvent
    from rxagent.events import InterruptedEvent as InterruptedEvent
    from rxagent.events import OutputChunkEvent as OutputChunkEvent
    from rxagent.events import PostActingEvent as PostActingEvent
    from rxagent.events import PostCallEvent as PostCallEvent
    from rxagent.events import PostReasoningEvent as PostReasoningEvent
    from rxagent.events import PreActingEvent as PreActingEvent
    from rxagent.events import PreCallEvent as PreCallEvent
    from rxagent.events import PreReasoningEvent as PreReasoningEvent
    from rxagent.events import ReasoningChunkEvent as ReasoningChunkEvent
    from rxagent.events import RetrievalEvent as RetrievalEvent
    from rxagent.events import RetryEvent as RetryEvent
    from rxagent.hooks import BaseHook as BaseHook
    from rxagent.hooks import Hook as Hook
    from rxagent.hooks import HookChain as HookChain
    from rxagent.hooks import hook as hook
    from rxagent.hooks.builtin import ContextWindow as ContextWindow
    from rxagent.interceptors import around_model_call as around_model_call
    from rxagent.interceptors import around_tool_call as around_tool_call
    from rxagent.messages import Block as Block
    from rxagent.messages import ImageBlock as ImageBlock
    from rxagent.messages import Msg as Msg
    from rxagent.messages import TextBlock as TextBlock
    from rxagent.messages import ThinkingBlock as ThinkingBlock
    from rxagent.messages import ToolResultBlock as ToolResultBlock
    from rxagent.messages import ToolUseBlock as ToolUseBlock
    from rxagent.models import ChatModel as ChatModel
    from rxagent.models import ModelDelta as ModelDelta
    from rxagent.models import ModelOptions as ModelOptions
    from rxagent.models import ToolSchema as ToolSchema
    from rxagent.models import Usage as Usage
    from rxagent.result import AgentResult as AgentResult
    from rxagent.result import ErrorInfo as ErrorInfo
    from rxagent.result import StopReason as StopReason
    from rxagent.state import AgentState as AgentState
    from rxagent.state import InMemoryStore as InMemoryStore
    from rxagent.state import SessionStore as SessionStore
    from rxagent.tools import Injected as Injected
    from rxagent.tools import Tool as Tool
    from rxagent.tools import Toolkit as Toolkit
    from rxagent.tools import ToolOutcome as ToolOutcome
    from rxagent.tools import tool as tool

    AgentError = ErrorInfo
    """Deprecated: the earlier name of `ErrorInfo`."""

_EXPORTS, _DEPRECATED = read_exports(__file__)
"""Exported name → the module it is imported from; deprecated alias → its replacement."""

__all__ = export_order([*_EXPORTS, "__version__"])

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS, _DEPRECATED)
