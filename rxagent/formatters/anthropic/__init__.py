"""Anthropic Messages API (`POST /v1/messages`): request bodies, responses, SSE streams, errors.

The rules, in short (the class docstring and `docs/providers/anthropic.md` have them all):

- every system message becomes one text block of the top-level `system` array, wherever it
  stands in the conversation (Anthropic has one system prompt);
- role `"tool"` messages (one `ToolResultBlock` each) become `tool_result` blocks of one user
  message, and a user message right after tool results joins that same user message;
- thinking round-trips with its `signature`; `redacted_thinking` is a `ThinkingBlock` whose
  signature is `REDACTED_THINKING_PREFIX + data`; unsigned thinking is sent as tagged text;
- `ModelOptions.extra["cache_breakpoints"]` marks prompt-cache breakpoints (it is not sent);
- `Usage.input_tokens` counts every prompt token: `input_tokens` plus both cache counts.

Example:
    ```python
    from rxagent.formatters.anthropic import AnthropicFormatter
    from rxagent.messages import Msg
    from rxagent.models.base import ModelOptions

    f = AnthropicFormatter()
    body = f.format(
        [Msg.system("Be brief."), Msg.user("Hi")], [], ModelOptions(), model="claude", stream=False
    )
    assert body["system"] == [{"type": "text", "text": "Be brief."}]
    assert body["messages"] == [{"role": "user", "content": "Hi"}] and body["max_tokens"] == 4096
    ```
"""

from rxagent.formatters.anthropic._constants import CACHE_TARGETS as CACHE_TARGETS
from rxagent.formatters.anthropic._constants import DEFAULT_API_VERSION as DEFAULT_API_VERSION
from rxagent.formatters.anthropic._constants import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from rxagent.formatters.anthropic._constants import (
    NO_SAMPLING_API_VERSION as NO_SAMPLING_API_VERSION,
)
from rxagent.formatters.anthropic._constants import (
    REDACTED_THINKING_PREFIX as REDACTED_THINKING_PREFIX,
)
from rxagent.formatters.anthropic._formatter import AnthropicFormatter as AnthropicFormatter
from rxagent.formatters.anthropic._response import AnthropicStreamParser as AnthropicStreamParser

__all__ = [
    "CACHE_TARGETS",
    "DEFAULT_API_VERSION",
    "DEFAULT_MAX_TOKENS",
    "NO_SAMPLING_API_VERSION",
    "REDACTED_THINKING_PREFIX",
    "AnthropicFormatter",
    "AnthropicStreamParser",
]
