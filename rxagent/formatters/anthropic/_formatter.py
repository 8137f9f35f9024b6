"""The `AnthropicFormatter` facade: its public methods and documented rules.

The work is done by one module per concern: `_request` (bodies, cache breakpoints), `_inverse`
(bodies read back), `_response` (responses and streams) and `_errors` (error classification).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, final

from rxagent.formatters.anthropic._constants import (
    DEFAULT_API_VERSION,
    DEFAULT_MAX_TOKENS,
    PROVIDER,
)
from rxagent.formatters.anthropic._errors import error_from_status
from rxagent.formatters.anthropic._inverse import parse_request
from rxagent.formatters.anthropic._request import format_request
from rxagent.formatters.anthropic._response import AnthropicStreamParser, parse_response
from rxagent.formatters.base import BaseFormatter
from rxagent.formatters.framing import SSEEvent
from rxagent.models.base import Capabilities

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.errors import AgentRunError
    from rxagent.messages import Msg
    from rxagent.models.base import ModelOptions, ModelResponse, ToolSchema

__all__ = ["AnthropicFormatter"]

THINKING_ON: Final = frozenset({"enabled", "adaptive"})
"""The `extra["thinking"]["type"]` values that turn extended thinking on."""


@final
class AnthropicFormatter(BaseFormatter[SSEEvent]):
    r"""Translates rxagent messages to Anthropic's Messages API and back. Pure: no I/O.

    Conversion rules (each is also on the docs page):

    - **System.** Each system message is one `{"type": "text"}` block of the top-level `system`
      array, in order. A system message later in the conversation is moved there too, since
      Anthropic has a single system prompt; `parse_request` returns them all first.
    - **Tool results.** Each role `"tool"` message (one `ToolResultBlock`) is a `tool_result`
      block (`tool_use_id`, `content` as a string or text/image blocks, `is_error` when true).
      Consecutive ones share one user message, and a user message right after them joins it
      (after the results), so `messages` alternates user/assistant. `parse_request` splits them
      again; the tool's name is taken from the matching `tool_use`.
    - **Thinking.** A signed `ThinkingBlock` is sent as `thinking` with its `signature`,
      unchanged. A `redacted_thinking` block is read as `ThinkingBlock(thinking="",
      signature=REDACTED_THINKING_PREFIX + data)` and sent back as `redacted_thinking`. An
      unsigned one (from another provider) cannot be verified by Anthropic, so it is sent as a
      text block `"<thinking>\n...\n</thinking>"` (read back as thinking); an unsigned empty
      one carries nothing and is not sent.
    - **Tool calls** are `tool_use` blocks (`id`, `name`, `input`). A call whose arguments were
      not a JSON object (kept in `ToolUseBlock.raw_input`) is sent with `input: {}`, since
      Anthropic requires an object; its tool result already says what went wrong.
    - **Images** are `base64` sources (`data` + `media_type`, or a base64 `data:` URL) or `url`
      sources. **Names**: Anthropic has no speaker field, so a named user message is sent with
      `"<name>: "` before its text; names on other roles are not sent.
    - **Options.** `max_tokens` is `max_output_tokens` or `max_tokens` (default 4096);
      `temperature` (refused from `anthropic-version` 2026-10-21 on, which has no sampling
      parameters); `stop` → `stop_sequences`; `tool_choice` `"auto"`/`"none"`/a name, and
      `"required"` → `{"type": "any"}`; `parallel_tool_calls` →
      `disable_parallel_tool_use` inside `tool_choice`. Both are sent only with tools. `seed`
      and `response_format` are refused (`InvalidRequestError`). `extra` is merged at the top
      level (it wins), except `cache_breakpoints`: `True` or a list of `"system"`, `"tools"`,
      `"history"` marks `cache_control: {"type": "ephemeral"}` on the last system block, the
      last tool and the last content block of the last message.
    - **Responses.** Stop reasons `end_turn`/`stop_sequence` → `"stop"`, `max_tokens` and
      `model_context_window_exceeded` → `"length"`, `tool_use` → `"tool_calls"`, `refusal` →
      `"content_filter"`, `pause_turn` → `"pause"`; any other raises. `Usage.input_tokens` is
      `input_tokens + cache_read_input_tokens + cache_creation_input_tokens` (every prompt
      token), and the two cache counts are `cache_read_tokens` and `cache_write_tokens`.

    Args:
        max_tokens: The `max_tokens` sent when `ModelOptions.max_output_tokens` is unset.
        api_version: The `anthropic-version` the requests are sent with. From
            `NO_SAMPLING_API_VERSION` on, Anthropic refuses `temperature`, so it is refused here
            rather than by a 400 from the API.

    Example:
        ```python
        from rxagent.formatters.anthropic import AnthropicFormatter
        from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock
        from rxagent.models.base import ModelOptions

        history = [
            Msg.user("2+2?"),
            Msg.assistant([ToolUseBlock(id="t1", name="add", input={"a": 2, "b": 2})]),
            Msg.tool(ToolResultBlock(id="t1", name="add", output="4")),
            Msg.user("Thanks"),
        ]
        body = AnthropicFormatter().format(
            history, [], ModelOptions(max_output_tokens=100), model="claude", stream=True
        )
        assert body["max_tokens"] == 100 and body["stream"] is True
        assert body["messages"][2] == {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "4"},
                {"type": "text", "text": "Thanks"},
            ],
        }
        ```
    """

    provider = PROVIDER
    capabilities = Capabilities(
        supports_tools=True,
        supports_vision=True,
        supports_json_schema=False,
        supports_tool_choice_required=True,
        supports_named_tool_choice=True,
        preferred_output="tool",
    )
    """`capabilities_for` turns the forced tool choices off while extended thinking is on
    (`extra["thinking"]` of type `"enabled"` or `"adaptive"`): Anthropic then accepts only
    `tool_choice` `"auto"` or `"none"`."""

    def __init__(
        self, *, max_tokens: int = DEFAULT_MAX_TOKENS, api_version: str = DEFAULT_API_VERSION
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise ValueError(f"max_tokens must be an int >= 0, got {max_tokens!r}")
        self.max_tokens = max_tokens
        self.api_version = api_version

    def capabilities_for(self, options: ModelOptions) -> Capabilities:
        """Return the capabilities for a request with `options` (see `capabilities`).

        Example:
            ```python
            from rxagent.formatters.anthropic import AnthropicFormatter
            from rxagent.models import ModelOptions

            fmt = AnthropicFormatter()
            on = ModelOptions(extra={"thinking": {"type": "enabled", "budget_tokens": 1024}})
            assert not fmt.capabilities_for(on).supports_named_tool_choice
            assert fmt.capabilities_for(ModelOptions()).supports_named_tool_choice
            ```
        """
        thinking = options.extra.get("thinking")
        if isinstance(thinking, Mapping) and thinking.get("type") in THINKING_ON:
            return replace(
                self.capabilities,
                supports_tool_choice_required=False,
                supports_named_tool_choice=False,
            )
        return self.capabilities

    def format(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSchema],
        options: ModelOptions,
        *,
        model: str,
        stream: bool,
    ) -> dict[str, Any]:
        """Build the request body for `POST /v1/messages`.

        Raises:
            InvalidRequestError: A block in a role that cannot carry it, `seed`,
                `response_format`, or a bad `extra["cache_breakpoints"]`.
        """
        return format_request(
            messages,
            tools,
            options,
            model=model,
            stream=stream,
            max_tokens=self.max_tokens,
            api_version=self.api_version,
        )

    def parse_request(self, body: Any) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
        """Read a request body back into messages, tools and options: the inverse of `format`.

        What `format` cannot carry comes back normalised: system messages first, a user message
        that joined tool results as blocks, names as text, `max_tokens` equal to this
        formatter's default as `max_output_tokens=None`, `tool_choice` `"auto"` where only
        `parallel_tool_calls` was set, and `cache_breakpoints` as the targets that were marked.

        Raises:
            InvalidRequestError: The body is not a Messages API request this formatter reads.

        Example:
            ```python
            from rxagent.formatters.anthropic import AnthropicFormatter

            msgs, tools, options = AnthropicFormatter().parse_request(
                {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "Hi"}]}
            )
            assert msgs[0].text == "Hi" and tools == [] and options.max_output_tokens == 50
            ```
        """
        return parse_request(body, max_tokens=self.max_tokens)

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole (non-streamed) response: a `Message` object.

        Empty text blocks and empty unsigned thinking blocks are left out, as a stream of the
        same response would.

        Raises:
            AgentRunError: The body is Anthropic's error object (typed by its `error.type`).
            ProviderError: The body is not a `Message`, or its `stop_reason` is unknown.
        """
        return parse_response(body)

    def stream_parser(self) -> AnthropicStreamParser:
        """Return a parser for one streamed response (its SSE events)."""
        return AnthropicStreamParser()

    def error_from_response(
        self, status: int, body: bytes, headers: Mapping[str, str]
    ) -> AgentRunError:
        """Classify a failed response by status and Anthropic's `error.type`.

        The body is `{"type": "error", "error": {"type": ..., "message": ...}}`; a body that is
        not (an HTML page from a proxy) is classified by status alone and kept as an excerpt.
        `retry-after` is read from the headers.

        Example:
            ```python
            from rxagent.formatters.anthropic import AnthropicFormatter

            body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
            err = AnthropicFormatter().error_from_response(529, body, {"retry-after": "3"})
            assert err.code == "PROVIDER_ERROR" and err.recoverable and err.retry_after == 3.0
            assert err.provider_code == "overloaded_error"
            ```
        """
        return error_from_status(status, body, headers)
