"""`OllamaFormatter`: the documented facade over the request, response and inverse modules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rxagent.formatters.base import BaseFormatter
from rxagent.formatters.ollama._inverse import parse_request
from rxagent.formatters.ollama._request import format_request
from rxagent.formatters.ollama._response import (
    OllamaStreamParser,
    error_from_response,
    parse_response,
)
from rxagent.formatters.ollama._shared import PROVIDER
from rxagent.models.base import Capabilities

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rxagent.errors import AgentRunError
    from rxagent.messages import Msg
    from rxagent.models.base import ModelOptions, ModelResponse, ToolSchema

__all__ = ["OllamaFormatter"]


class OllamaFormatter(BaseFormatter[Any]):
    r"""Translates rxagent messages to and from Ollama's `/api/chat`.

    What does not map one to one, and the rule used (also in `docs/providers/ollama.md`):

    - **Text.** A message's text blocks are joined with `"\n"` into its one `content` string.
    - **Images** (user messages and tool results) go to the message's `images` list as base64.
      A base64 `data:` URL is unpacked; any other URL is refused (Ollama takes image bytes
      only). Ollama reads the format from the bytes, so `media_type` is not sent. Images on
      system or assistant messages are refused.
    - **Thinking** blocks are joined into the assistant message's `thinking` field. Ollama has
      no signatures: a signature (from another provider) is not sent; parsed thinking has none.
    - **Tool calls** carry their arguments as a JSON *object*, and their id as `id`; a tool
      result is sent with `tool_name` and `tool_call_id` (newer Ollama servers read the ids;
      older ones and the official SDK's types ignore them). Arguments that were not a JSON
      object (`raw_input`) cannot be sent: the call goes with its parsed `input` (`{}`).
    - **Stable ids.** A response's tool call without an `id` (Ollama's documented wire has
      none) streams with `id=None` and parses with `id=""`, so the agent assigns its
      deterministic `call_<n>`; an `id` the server does send is kept.
    - **Tool errors.** Ollama has no error flag: the content of an `is_error` result starts
      with `"Error: "`, which `parse_request` reads back as `is_error=True`.
    - **Options.** `temperature`, `seed`, `stop` and `max_output_tokens` (as `num_predict`) go
      into `options`; `response_format` becomes `format` (`"json"`, or the JSON schema itself:
      its name and `strict` are not sent, as Ollama always enforces the schema). `extra` is
      merged at the top level (`think`, `keep_alive`, ...), except `extra["options"]`, whose
      keys are merged into `options` (over the typed fields). `extra` may not set `model`,
      `messages` or `stream`.
    - **Tool choice.** `"auto"` is Ollama's behaviour; `"none"` leaves the tools out;
      `"required"`, a tool name, and `parallel_tool_calls=False` with tools are refused
      (Ollama can neither force nor limit tool calls).
    - **Speaker names.** Ollama messages have none, so a `Msg.name` is refused.
    - **Finish reasons.** `done_reason` `"stop"` (or none, from old servers) is `"stop"`, or
      `"tool_calls"` when the reply calls tools; `"length"` is `"length"`; `"load"` and
      `"unload"` (a request without messages only loaded or unloaded the model) are `"stop"`;
      any other word is a `ProviderError`.

    Args:
        think: Sent as `think` (True/False, or a level such as `"high"` for models that take
            one); None leaves it out.
        keep_alive: Sent as `keep_alive` (seconds, or a duration such as `"10m"`); None leaves
            it out.

    Example:
        ```python
        from rxagent.formatters.ollama import OllamaFormatter
        from rxagent.messages import Msg
        from rxagent.models import ModelOptions

        fmt = OllamaFormatter(think=True)
        body = fmt.format([Msg.user("Why?")], [], ModelOptions(), model="qwen3", stream=False)
        assert body["think"] is True and body["stream"] is False
        messages, tools, options = fmt.parse_request(body)
        assert messages[0].content == "Why?" and options.extra == {"think": True}
        ```
    """

    provider: str = PROVIDER
    capabilities = Capabilities(
        supports_tools=True,
        supports_vision=True,
        supports_json_schema=True,
        supports_tool_choice_required=False,
        preferred_output="native",
    )
    """`format` takes a JSON schema (`supports_json_schema`), but it constrains the whole reply,
    so it is not combined with tools; Ollama has no `tool_choice`."""

    def __init__(
        self, *, think: bool | str | None = None, keep_alive: float | str | None = None
    ) -> None:
        self.think = think
        self.keep_alive = keep_alive

    # -- requests ----------------------------------------------------------------------------------

    def format(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSchema],
        options: ModelOptions,
        *,
        model: str,
        stream: bool,
    ) -> dict[str, Any]:
        """Build the `/api/chat` request body.

        Raises:
            InvalidRequestError: A message, block or option Ollama cannot carry (see the class
                docs for each rule).
        """
        return format_request(
            messages,
            tools,
            options,
            model=model,
            stream=stream,
            think=self.think,
            keep_alive=self.keep_alive,
        )

    def parse_request(self, body: Any) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
        """Read a request body back into messages, tools and options: the inverse of `format`.

        Normalisation: message ids and metadata are new; text-only content is a string; images
        follow the text and carry a `media_type` guessed from their bytes; thinking has no
        signature; a tool result whose content starts with `"Error: "` is an error result;
        a json_schema `response_format` is named `"response"`; `think`, `keep_alive` and unknown
        keys are in `extra`, unknown `options` keys in `extra["options"]`.

        Raises:
            ProviderError: A body that is not an `/api/chat` request.
        """
        return parse_request(body)

    # -- responses ---------------------------------------------------------------------------------

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole (`"stream": false`) response.

        Raises:
            ProviderError: A body that is not a finished chat response (or has an unknown
                `done_reason`).
            AgentRunError: The body is an Ollama error (`{"error": "..."}`), typed by its text.
        """
        return parse_response(body)

    def stream_parser(self) -> OllamaStreamParser:
        """Return a parser for one streamed response (its decoded NDJSON lines)."""
        return OllamaStreamParser()

    def error_from_response(
        self, status: int, body: bytes, headers: Mapping[str, str]
    ) -> AgentRunError:
        """Classify a failed response by its HTTP status (Ollama has no error codes).

        404 (model not found) and 400 are `INVALID_REQUEST`; 401/403 `AUTH`; 429 `RATE_LIMITED`;
        500 and other 5xx a recoverable `PROVIDER_ERROR`. A message containing
        `"exceeds maximum context length"` is `CONTEXT_TOO_LONG` whatever the status.
        """
        return error_from_response(status, body, headers)
