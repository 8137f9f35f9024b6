"""Chat models: the `ChatModel` protocol, its typed deltas and options, and the provider clients.

The provider clients (`OpenAIChatModel`, `AnthropicChatModel`, ...) are imported on first use, so
`import rxagent.models` stays cheap. `resolve("provider:model")` builds one from a string. The test
models live in `rxagent.testing`.
"""

from typing import TYPE_CHECKING, Final

from rxagent._lazy import lazy_exports
from rxagent.models.base import Capabilities as Capabilities
from rxagent.models.base import ChatModel as ChatModel
from rxagent.models.base import FinishDelta as FinishDelta
from rxagent.models.base import ModelDelta as ModelDelta
from rxagent.models.base import ModelOptions as ModelOptions
from rxagent.models.base import ModelResponse as ModelResponse
from rxagent.models.base import ResponseBuilder as ResponseBuilder
from rxagent.models.base import TextDelta as TextDelta
from rxagent.models.base import ThinkingDelta as ThinkingDelta
from rxagent.models.base import ToolCallDelta as ToolCallDelta
from rxagent.models.base import ToolChoice as ToolChoice
from rxagent.models.base import ToolSchema as ToolSchema
from rxagent.models.base import Usage as Usage
from rxagent.models.base import UsageDelta as UsageDelta
from rxagent.models.registry import providers as providers
from rxagent.models.registry import register as register
from rxagent.models.registry import resolve as resolve

if TYPE_CHECKING:
    from rxagent.models._http import HTTPChatModel as HTTPChatModel
    from rxagent.models.anthropic import AnthropicChatModel as AnthropicChatModel
    from rxagent.models.dashscope import DashScopeChatModel as DashScopeChatModel
    from rxagent.models.gemini import GeminiChatModel as GeminiChatModel
    from rxagent.models.ollama import OllamaChatModel as OllamaChatModel
    from rxagent.models.openai import AzureOpenAIChatModel as AzureOpenAIChatModel
    from rxagent.models.openai import OpenAIChatModel as OpenAIChatModel
    from rxagent.models.retry import RetryPolicy as RetryPolicy

_EXPORTS: Final[dict[str, str]] = {
    "HTTPChatModel": "rxagent.models._http",
    "AnthropicChatModel": "rxagent.models.anthropic",
    "AzureOpenAIChatModel": "rxagent.models.openai",
    "DashScopeChatModel": "rxagent.models.dashscope",
    "GeminiChatModel": "rxagent.models.gemini",
    "OllamaChatModel": "rxagent.models.ollama",
    "OpenAIChatModel": "rxagent.models.openai",
    "RetryPolicy": "rxagent.models.retry",
}

__all__ = [
    "AnthropicChatModel",
    "AzureOpenAIChatModel",
    "Capabilities",
    "ChatModel",
    "DashScopeChatModel",
    "FinishDelta",
    "GeminiChatModel",
    "HTTPChatModel",
    "ModelDelta",
    "ModelOptions",
    "ModelResponse",
    "OllamaChatModel",
    "OpenAIChatModel",
    "ResponseBuilder",
    "RetryPolicy",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolSchema",
    "Usage",
    "UsageDelta",
    "providers",
    "register",
    "resolve",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
