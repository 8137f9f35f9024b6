"""`OpenAIFormatter`: its settings and the documented facade over the sibling modules.

The work is done by `_request` (`format`), `_inverse` (`parse_request`), `_response` (`parse`
and the stream parser) and `_errors` (`error_from_response`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from rxagent.formatters.base import BaseFormatter
from rxagent.formatters.framing import SSEEvent
from rxagent.formatters.openai._errors import error_from_status
from rxagent.formatters.openai._inverse import read_request
from rxagent.formatters.openai._request import build_body
from rxagent.formatters.openai._response import (
    OpenAIStreamParser,
    completion_deltas,
    parse_completion,
)
from rxagent.models.base import Capabilities, OutputMode, SchemaDialect

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.errors import AgentRunError
    from rxagent.messages import Msg
    from rxagent.models.base import ModelDelta, ModelOptions, ModelResponse, ToolSchema

__all__ = ["OpenAIFormatter"]

_CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "json_schema_dialect": get_args(SchemaDialect),
    "preferred_output": get_args(OutputMode),
}
"""The capabilities that are not flags, and their values."""


class OpenAIFormatter(BaseFormatter[SSEEvent]):
    """Translates rxagent messages to and from OpenAI Chat Completions.

    See the module documentation for every conversion rule.

    Args:
        system_role: The role system messages are sent with: `"system"`, or `"developer"` for
            o-series reasoning models.
        reasoning_content: Send thinking blocks back as the assistant message's
            `reasoning_content` (DeepSeek and compatible servers). Off by default: OpenAI has no
            such request field, so thinking is left out of requests.
        max_tokens_field: The body field for `ModelOptions.max_output_tokens`:
            `"max_completion_tokens"` (OpenAI's current name, required by o-series models) or
            `"max_tokens"` (older OpenAI-compatible servers).
        provider: The name errors carry (`"openai"`, `"azure"`, `"deepseek"`, ...).
        capabilities: What the server supports, when it is not OpenAI: a `Capabilities`, or a
            mapping of the fields that differ from OpenAI's (`{"supports_json_schema": False}`
            for a server without the `json_schema` response format). They decide the
            structured-output strategy `"auto"` picks; the request body is built the same way.

    Raises:
        ValueError: An unknown `system_role` or `max_tokens_field`, or an unknown capability
            or a bad value for one.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.formatters.openai import OpenAIFormatter
        from rxagent.models import ModelOptions
        from rxagent.testing import text, thinking

        reply = Msg.assistant([thinking("2 + 2 is 4"), text("4")])
        plain = OpenAIFormatter().format([reply], [], ModelOptions(), model="m", stream=False)
        assert plain["messages"] == [{"role": "assistant", "content": "4"}]
        deepseek = OpenAIFormatter(reasoning_content=True)
        body = deepseek.format([reply], [], ModelOptions(), model="m", stream=False)
        assert body["messages"][0]["reasoning_content"] == "2 + 2 is 4"
        no_schema = OpenAIFormatter(capabilities={"supports_json_schema": False})
        assert not no_schema.capabilities.supports_json_schema
        assert OpenAIFormatter.capabilities.supports_json_schema  # OpenAI's own are unchanged
        ```
    """

    capabilities = Capabilities(
        supports_tools=True,
        supports_vision=True,
        supports_json_schema=True,
        supports_tool_choice_required=True,
        supports_named_tool_choice=True,
        supports_strict_tools=True,
        supports_json_schema_with_tools=True,
        json_schema_dialect="openai_strict",
        preferred_output="native",
    )
    """OpenAI's. `capabilities_for` turns `supports_strict_tools` off unless
    `parallel_tool_calls=False`: OpenAI holds tool calls to a strict schema only without parallel
    calls. An instance built with `capabilities=` has its own."""

    __slots__ = ("max_tokens_field", "provider", "reasoning_content", "system_role")

    def __init__(
        self,
        *,
        system_role: Literal["system", "developer"] = "system",
        reasoning_content: bool = False,
        max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens",
        provider: str = "openai",
        capabilities: Capabilities | Mapping[str, object] | None = None,
    ) -> None:
        if system_role not in ("system", "developer"):
            raise ValueError(f"system_role must be 'system' or 'developer', got {system_role!r}")
        if max_tokens_field not in ("max_completion_tokens", "max_tokens"):
            raise ValueError(
                "max_tokens_field must be 'max_completion_tokens' or 'max_tokens', "
                f"got {max_tokens_field!r}"
            )
        self.system_role = system_role
        self.reasoning_content = reasoning_content
        self.max_tokens_field = max_tokens_field
        self.provider = provider
        if capabilities is not None:
            self.capabilities = _overridden(type(self).capabilities, capabilities)

    def capabilities_for(self, options: ModelOptions) -> Capabilities:
        """Return the capabilities for a request with `options` (see `capabilities`).

        Strict tools are off unless `options.parallel_tool_calls` is False, also for
        capabilities given to the constructor.

        Example:
            ```python
            from rxagent.formatters.openai import OpenAIFormatter
            from rxagent.models import ModelOptions

            fmt = OpenAIFormatter()
            assert not fmt.capabilities_for(ModelOptions()).supports_strict_tools
            serial = ModelOptions(parallel_tool_calls=False)
            assert fmt.capabilities_for(serial).supports_strict_tools
            ```
        """
        if options.parallel_tool_calls is False:
            return self.capabilities
        return replace(self.capabilities, supports_strict_tools=False)

    def format(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSchema],
        options: ModelOptions,
        *,
        model: str,
        stream: bool,
    ) -> dict[str, Any]:
        """Build the `/chat/completions` request body.

        Raises:
            InvalidRequestError: A block a message of its role cannot hold (an image in an
                assistant message, ...), or an unknown `response_format` type.
        """
        return build_body(self, messages, tools, options, model=model, stream=stream)

    def parse_request(
        self, body: Mapping[str, Any]
    ) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
        """Read a request body back into messages, tools and options: the inverse of `format`.

        What `format` normalises comes back normalised: assistant text as one block, thinking
        only when it was sent as `reasoning_content`, tool-result text joined, a `data:` image URL
        as `data` + `media_type`, a `"developer"` message as a system message.

        Raises:
            ProviderError: The body is not a Chat Completions request.
        """
        return read_request(body, self.provider)

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole `chat.completion` response (choice 0).

        Raises:
            AgentRunError: The body is an error object (typed by its code).
            ProviderError: The body is not a chat completion, or its finish reason is unknown.
        """
        return parse_completion(body, self.provider)

    def parse_deltas(self, body: Any) -> list[ModelDelta]:
        """Read a whole `chat.completion` response straight into deltas (the fast path).

        `ResponseBuilder` over these deltas gives what `parse` reads, and a body `parse` refuses
        raises the same error here. A tool call's `arguments` text is passed through unparsed
        (`ToolCallDelta.args`), as in a stream.

        Raises:
            AgentRunError: The body is an error object (typed by its code).
            ProviderError: The body is not a chat completion, or its finish reason is unknown.
        """
        return completion_deltas(body, self.provider)

    def stream_parser(self) -> OpenAIStreamParser:
        """Return a parser for one streamed response (see `OpenAIStreamParser`)."""
        return OpenAIStreamParser(self)

    def error_from_response(
        self, status: int, body: bytes, headers: Mapping[str, str]
    ) -> AgentRunError:
        """Classify an HTTP error by status and OpenAI's `error.code` / `error.type`.

        `context_length_exceeded` → `CONTEXT_TOO_LONG`; `insufficient_quota` → `RATE_LIMITED`
        that is *not* recoverable (never retried); `rate_limit_exceeded` → `RATE_LIMITED`;
        `invalid_api_key` → `AUTH`; otherwise the status decides (see `status_error`). The
        `retry-after-ms` and `retry-after` headers set `retry_after`.
        """
        return error_from_status(self.provider, status, body, headers)


def _overridden(base: Capabilities, given: Capabilities | Mapping[str, object]) -> Capabilities:
    """`given` itself, or `base` with the fields `given` maps changed (each checked)."""
    if isinstance(given, Capabilities):
        return given
    if not isinstance(given, Mapping):
        raise ValueError(
            "capabilities must be a Capabilities or a mapping of the fields to change, like "
            f"{{'supports_json_schema': False}}, got {type(given).__name__}"
        )
    known = [f.name for f in fields(Capabilities)]
    for name, value in given.items():
        if name not in known:
            raise ValueError(
                f"capabilities: unknown field {name!r}; the fields are {', '.join(known)}"
            )
        allowed = _CHOICES.get(name)
        if allowed is not None and value not in allowed:
            raise ValueError(
                f"capabilities: {name} must be one of {', '.join(map(repr, allowed))}, "
                f"got {value!r}"
            )
        if allowed is None and not isinstance(value, bool):
            raise ValueError(f"capabilities: {name} must be True or False, got {value!r}")
    changes: dict[str, Any] = dict(given)
    return replace(base, **changes)
