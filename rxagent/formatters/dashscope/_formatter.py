"""`DashScopeFormatter`: its capabilities and the documented facade over the sibling modules.

The work is done by `_request` (`format`), `_inverse` (`parse_request`), `_response` (`parse`
and the stream parser) and `_errors` (`error_from_response`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from rxagent.formatters.base import BaseFormatter
from rxagent.formatters.dashscope._errors import PROVIDER, error_from_status
from rxagent.formatters.dashscope._inverse import read_request
from rxagent.formatters.dashscope._request import build_body
from rxagent.formatters.dashscope._response import (
    DashScopeStreamParser,
    parse_response,
    response_deltas,
)
from rxagent.formatters.framing import SSEEvent
from rxagent.models.base import Capabilities

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rxagent.errors import AgentRunError
    from rxagent.messages import Msg
    from rxagent.models.base import ModelDelta, ModelOptions, ModelResponse, ToolSchema

__all__ = ["DashScopeFormatter", "is_multimodal_model"]

_TEXT_CAPABILITIES: Final = Capabilities(
    supports_tools=True,
    supports_vision=False,
    supports_json_schema=True,
    supports_tool_choice_required=False,
    supports_named_tool_choice=True,
    json_schema_dialect="openai_strict",
    preferred_output="tool",
)
_MULTIMODAL_CAPABILITIES: Final = Capabilities(
    supports_tools=True,
    supports_vision=True,
    supports_json_schema=True,
    supports_tool_choice_required=False,
    supports_named_tool_choice=True,
    json_schema_dialect="openai_strict",
    preferred_output="tool",
)


def is_multimodal_model(model: str) -> bool:
    """Whether `model` is served by the multimodal endpoint: a name with `-vl` or `qvq`.

    Example:
        ```python
        from rxagent.formatters.dashscope import is_multimodal_model

        assert is_multimodal_model("qwen-vl-max") and is_multimodal_model("qwen3-vl-plus")
        assert not is_multimodal_model("qwen-plus")
        ```
    """
    name = model.lower()
    return "-vl" in name or name.startswith("qvq")


class DashScopeFormatter(BaseFormatter[SSEEvent]):
    """Translates rxagent messages to and from DashScope's native generation API.

    Args:
        multimodal: Speak the multimodal endpoint's form (Qwen-VL): every content is a list of
            `{"text": ...}` and `{"image": ...}` items, and user messages may carry images.

    Conversion rules (see the module docs): text blocks are joined; thinking becomes
    `reasoning_content` without its signature; tool results become `tool` messages (blocks joined
    with newlines, errors prefixed with `TOOL_ERROR_PREFIX`); images need `multimodal=True` and
    are refused inside tool results; `tool_choice="required"` is refused; `extra` goes into
    `parameters` except `TOP_LEVEL_EXTRA`; `result_format` must stay `"message"` and, when
    streaming, `incremental_output` must stay `true`.

    Example:
        ```python
        from rxagent.formatters.dashscope import DashScopeFormatter
        from rxagent.messages import ImageBlock, Msg, TextBlock
        from rxagent.models import ModelOptions

        vl = DashScopeFormatter(multimodal=True)
        user = Msg.user([ImageBlock(url="https://x/cat.png"), TextBlock(text="What is it?")])
        body = vl.format([user], [], ModelOptions(), model="qwen-vl-max", stream=False)
        assert body["input"]["messages"][0]["content"] == [
            {"image": "https://x/cat.png"}, {"text": "What is it?"}
        ]
        assert vl.capabilities.supports_vision
        ```
    """

    provider = PROVIDER

    def __init__(self, *, multimodal: bool = False) -> None:
        self.multimodal = multimodal
        self.capabilities = _MULTIMODAL_CAPABILITIES if multimodal else _TEXT_CAPABILITIES

    def capabilities_for(self, options: ModelOptions) -> Capabilities:
        """Return the capabilities for a request with `options`.

        In thinking mode (`extra["enable_thinking"]` true) Qwen models take neither a JSON
        schema `response_format` nor a forced tool choice, so both flags are off.

        Example:
            ```python
            from rxagent.formatters.dashscope import DashScopeFormatter
            from rxagent.models import ModelOptions

            fmt = DashScopeFormatter()
            assert fmt.capabilities_for(ModelOptions()).supports_named_tool_choice
            thinking = fmt.capabilities_for(ModelOptions(extra={"enable_thinking": True}))
            assert not thinking.supports_named_tool_choice and not thinking.supports_json_schema
            ```
        """
        if options.extra.get("enable_thinking") is True:
            return replace(
                self.capabilities, supports_json_schema=False, supports_named_tool_choice=False
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
        """Build the request body (see the class docs for the conversion rules).

        Raises:
            InvalidRequestError: A block or option DashScope cannot carry.
        """
        return build_body(
            messages, tools, options, model=model, stream=stream, multimodal=self.multimodal
        )

    def parse_request(self, body: Any) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
        """Read a request body back into messages, tools and options: the inverse of `format`.

        Normalisation: message ids and metadata are new; joined texts come back as one text;
        thinking comes back as one block without signature, first in its message; block outputs
        of tool results come back as one string; a data-URL image comes back as `data`.

        Raises:
            ProviderError: A body that is not a DashScope generation request.
        """
        return read_request(body)

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole (non-streamed) response.

        Raises:
            AgentRunError: The typed error, for a body that carries a DashScope error code.
            ProviderError: A body that is not a DashScope response, or an unknown finish reason.
        """
        return parse_response(body)

    def parse_deltas(self, body: Any) -> list[ModelDelta]:
        """Read a whole response straight into deltas (the fast path).

        `ResponseBuilder` over these deltas gives what `parse` reads, and a body `parse` refuses
        raises the same error here. A tool call's argument text is passed through unparsed.

        Raises:
            AgentRunError: The typed error, for a body that carries a DashScope error code.
            ProviderError: A body that is not a DashScope response, or an unknown finish reason.
        """
        return response_deltas(body)

    def stream_parser(self) -> DashScopeStreamParser:
        """Return a parser for one streamed response (`incremental_output=true`)."""
        return DashScopeStreamParser()

    def error_from_response(
        self, status: int, body: bytes, headers: Mapping[str, str]
    ) -> AgentRunError:
        """Classify a failed response by its DashScope `code`, else by its HTTP status.

        `Throttling*` is `RATE_LIMITED` (retried); `InvalidApiKey` and `AccessDenied*` are `AUTH`;
        an `InvalidParameter` whose message has a `CONTEXT_LENGTH_MARKERS` fragment is
        `CONTEXT_TOO_LONG`, other ones and `DataInspectionFailed` are `INVALID_REQUEST`;
        `Arrearage` is `RATE_LIMITED` but not retried; `InternalError*`, `ServiceUnavailable`,
        `SystemError` and `RequestTimeOut` are retried `PROVIDER_ERROR`s. A body that is not
        JSON (a proxy's HTML page) is classified by status, with an excerpt.
        """
        return error_from_status(status, body, headers)
