"""Provider formatters: pure translation between rxagent messages and each provider's wire format.

One module per provider (`openai`, `dashscope`, `anthropic`, `gemini`, `ollama`); `base` holds the
`Formatter` protocol and the shared error helpers, and re-exports `Capabilities` from the ChatModel
seam (`rxagent.models.base`); `framing` decodes SSE and NDJSON bodies into the events and values
the formatters parse. Formatters do no I/O: the clients in `rxagent.models` do the HTTP.
"""

from typing import TYPE_CHECKING, Final

from rxagent._lazy import lazy_exports
from rxagent.formatters.base import Capabilities as Capabilities
from rxagent.formatters.base import Formatter as Formatter
from rxagent.formatters.base import StreamParser as StreamParser

if TYPE_CHECKING:
    from rxagent.formatters.anthropic import AnthropicFormatter as AnthropicFormatter
    from rxagent.formatters.dashscope import DashScopeFormatter as DashScopeFormatter
    from rxagent.formatters.gemini import GeminiFormatter as GeminiFormatter
    from rxagent.formatters.ollama import OllamaFormatter as OllamaFormatter
    from rxagent.formatters.openai import OpenAIFormatter as OpenAIFormatter

_EXPORTS: Final[dict[str, str]] = {
    "AnthropicFormatter": "rxagent.formatters.anthropic",
    "DashScopeFormatter": "rxagent.formatters.dashscope",
    "GeminiFormatter": "rxagent.formatters.gemini",
    "OllamaFormatter": "rxagent.formatters.ollama",
    "OpenAIFormatter": "rxagent.formatters.openai",
}

__all__ = [
    "AnthropicFormatter",
    "Capabilities",
    "DashScopeFormatter",
    "Formatter",
    "GeminiFormatter",
    "OllamaFormatter",
    "OpenAIFormatter",
    "StreamParser",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
