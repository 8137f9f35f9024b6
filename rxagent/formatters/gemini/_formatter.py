"""`GeminiFormatter`: its settings and the documented facade over the sibling modules.

The work is done by `_request` (`format`), `_inverse` (`parse_request`), `_response` (`parse`
and the stream parser) and `_errors` (`error_from_response`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rxagent.formatters.base import BaseFormatter
from rxagent.formatters.framing import SSEEvent
from rxagent.formatters.gemini._errors import error_from_status
from rxagent.formatters.gemini._inverse import read_request
from rxagent.formatters.gemini._request import build_body, model_parts
from rxagent.formatters.gemini._response import GeminiStreamParser, parse_response
from rxagent.models.base import Capabilities

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rxagent.errors import AgentRunError
    from rxagent.formatters.gemini._request import CallIds
    from rxagent.messages import Block, Msg
    from rxagent.models.base import ModelOptions, ModelResponse, ToolSchema

__all__ = ["GeminiFormatter"]


class GeminiFormatter(BaseFormatter[SSEEvent]):
    """Translates rxagent messages to and from Gemini `generateContent`.

    See the module documentation for every conversion rule.

    Args:
        call_ids: Which tool-call ids to send: `"model"` (ids the model gave, not the agent's
            own `call_<n>`), `"always"` or `"never"`.
        provider: The name errors carry (`"gemini"` by default).

    Raises:
        ValueError: An unknown `call_ids` mode.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.formatters.gemini import GeminiFormatter
        from rxagent.messages import ThinkingBlock, ToolUseBlock
        from rxagent.models import ModelOptions

        reply = Msg.assistant(
            [ThinkingBlock(thinking="", signature="c2lnLTE="),
             ToolUseBlock(id="call_1", name="add", input={"a": 1}),  # numbered by the agent
             ToolUseBlock(id="x7k2", name="add", input={"a": 2})]  # an id from Gemini
        )
        body = GeminiFormatter().format([reply], [], ModelOptions(), model="m", stream=False)
        assert body["contents"][0] == {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "add", "args": {"a": 1}}, "thoughtSignature": "c2lnLTE="},
                {"functionCall": {"id": "x7k2", "name": "add", "args": {"a": 2}}},
            ],
        }
        always = GeminiFormatter(call_ids="always")
        body = always.format([reply], [], ModelOptions(), model="m", stream=False)
        assert body["contents"][0]["parts"][0]["functionCall"]["id"] == "call_1"
        ```
    """

    capabilities = Capabilities(
        supports_tools=True,
        supports_vision=True,
        supports_json_schema=True,
        supports_tool_choice_required=True,
        supports_named_tool_choice=True,
        json_schema_dialect="gemini",
        preferred_output="native",
    )
    """Thought summaries and signatures round-trip, images go in user turns and in function
    responses, `responseJsonSchema` is native, `"required"` is mode `ANY` and a tool name is `ANY`
    with `allowedFunctionNames`. `supports_json_schema_with_tools` is off: Gemini 2.x refuses a
    JSON response MIME type together with function declarations (ask for
    `output_strategy="native"` on models that take both)."""

    __slots__ = ("call_ids", "provider")

    def __init__(self, *, call_ids: CallIds = "model", provider: str = "gemini") -> None:
        if call_ids not in ("model", "always", "never"):
            raise ValueError(f"call_ids must be 'model', 'always' or 'never', got {call_ids!r}")
        self.call_ids = call_ids
        self.provider = provider

    def format(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSchema],
        options: ModelOptions,
        *,
        model: str,
        stream: bool,
    ) -> dict[str, Any]:
        """Build the `generateContent` request body (the same for streaming; `model` is in the URL).

        Raises:
            InvalidRequestError: A block a message of its role cannot hold, a name on a tool
                message, `parallel_tool_calls=False`, an unknown `response_format`, or an
                `extra` key that would replace the messages.
        """
        return build_body(self, messages, tools, options)

    def _model_parts(self, content: tuple[Block, ...]) -> list[Any]:
        """The parts of an assistant message's blocks (the fake Gemini server renders with it)."""
        return model_parts(self, content)

    def parse_request(
        self, body: Mapping[str, Any]
    ) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
        """Read a request body back into messages, tools and options: the inverse of `format`.

        What `format` normalises comes back normalised: all system text as one system message
        first, a `"<name>: "` part as a text block, an image `data:` URL as `data` +
        `media_type`, a tool output of blocks as its joined text (then its images), a
        `json_schema` response format named `"response"`, an id that was not sent as `""`.

        Raises:
            ProviderError: The body is not a `generateContent` request.
        """
        return read_request(body, self.provider)

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole `GenerateContentResponse` (candidate 0).

        Raises:
            AgentRunError: The body is an error object (typed by its status), or its finish
                reason means the reply failed (see `FINISH_ERRORS`).
            ProviderError: The body is not a response, has no finish reason, or has an unknown
                one.
        """
        return parse_response(body, self.provider)

    def stream_parser(self) -> GeminiStreamParser:
        """Return a parser for one streamed response (`alt=sse` events)."""
        return GeminiStreamParser(provider=self.provider)

    def error_from_response(
        self, status: int, body: bytes, headers: Mapping[str, str]
    ) -> AgentRunError:
        """Classify a failed HTTP response by its gRPC `status`, details and HTTP status.

        Example:
            ```python
            from rxagent.formatters.gemini import GeminiFormatter

            body = (b'{"error": {"code": 429, "message": "Quota exceeded", '
                    b'"status": "RESOURCE_EXHAUSTED"}}')
            err = GeminiFormatter().error_from_response(429, body, {"retry-after": "3"})
            assert err.code == "RATE_LIMITED" and err.provider_code == "RESOURCE_EXHAUSTED"
            assert err.recoverable and err.retry_after == 3.0
            ```
        """
        return error_from_status(self.provider, status, body, headers)
