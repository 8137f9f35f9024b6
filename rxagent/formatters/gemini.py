"""Google Gemini `generateContent`: the wire format of the Gemini Developer API (`v1beta`).

`GeminiFormatter` builds `models/{model}:generateContent` and `:streamGenerateContent` bodies,
reads whole `GenerateContentResponse`s and their streamed chunks (decoded SSE events, each a full
response object), and classifies Google API error bodies. It is pure: no I/O, no globals. The
model name goes in the URL, not in the body.

Conversion rules (what cannot be carried one to one):

- **Roles.** User messages are `"user"` contents, assistant messages `"model"` contents. A run of
  consecutive tool messages becomes one `"user"` content with one `functionResponse` part per
  result (Gemini's turn structure); `parse_request` splits it back into one tool message each.
- **System messages** all go into `systemInstruction`, one text part per text block, in order,
  wherever they stand in the conversation (Gemini has one system instruction per request).
  `parse_request` returns them as one system message at the front.
- **`Msg.name`** has no field in Gemini. A named user, assistant or system message starts with
  the text part `"<name>: "` (the multi-agent convention); `parse_request` cannot tell it from
  text, so it comes back as a text block. A name on a tool message is refused (the
  `functionResponse` already carries the tool's name).
- **Empty messages** (an empty string or no blocks) are not sent: Gemini rejects a content
  without parts.
- **Thinking.** A thinking block with text is a `{"text": ..., "thought": true}` part (a thought
  summary) carrying its `thoughtSignature`, if any. Gemini also attaches a `thoughtSignature` to
  a part that is not a thought (a `functionCall`, often the first text part), and it must come
  back unchanged on that same part. rxagent keeps it as a signature-only
  `ThinkingBlock(thinking="", signature=sig)` placed right before the block of that part, and
  `format` attaches such a block's signature to the next text, function-call or image part. With
  no such part after it (the end of the message, or a thought next), it is sent as
  `{"text": "", "thoughtSignature": sig}`, which Gemini itself sends at the end of some streams.
- **Tool calls** are `functionCall {id?, name, args}` parts. By default (`call_ids="model"`) an
  `id` is sent only when it came from the model: Gemini 2.5 sends calls without ids, the agent
  then numbers them `call_<n>` (`AGENT_CALL_ID`), and those are not sent back, so the history
  reads as Gemini wrote it (calls and results pair by order and name); some Gemini endpoints
  (Vertex AI, proxies) reject an `id` they did not issue. `call_ids="always"` sends every id,
  `"never"` none. `args` must be an object: a call whose arguments were not a JSON object
  (`raw_input`) is sent with its parsed `input` (`{}`).
- **Tool results** are `functionResponse {id?, name, response}` parts (the same `id` rule). A
  text output becomes `response: {"result": output}`, or `{"error": output}` when `is_error`.
  An output of blocks
  sends its text blocks joined with newlines the same way and its images as
  `functionResponse.parts` (`inlineData` / `fileData`; multimodal function responses need a
  Gemini 3 model). `parse_request` reads a `response` of another shape as its JSON text.
- **Images** with `data` are `inlineData {mimeType, data}` parts (a `data:` URL is sent the same
  way); with an http(s) or `gs://` URL they are `fileData {mimeType?, fileUri}` parts (set
  `media_type` when Gemini cannot infer it from the URL). An image with both `url` and `data`
  is sent by its `data`.
- **Tools** are one `{"functionDeclarations": [...]}` tool; each schema goes as
  `parametersJsonSchema` (plain JSON Schema, accepted by `v1beta` and by the google-genai types)
  rather than the OpenAPI-subset `parameters`.
- **Options.** `tool_choice` becomes `toolConfig.functionCallingConfig`: `"auto"` → `AUTO`,
  `"none"` → `NONE`, `"required"` → `ANY`, a tool name → `ANY` with `allowedFunctionNames`; it is
  sent only with tools (without tools no call is possible anyway). `parallel_tool_calls=True` is
  Gemini's behaviour and needs no field; `False` is refused (Gemini has no switch).
  `temperature`, `max_output_tokens` (`maxOutputTokens`), `stop` (`stopSequences`) and `seed` go
  into `generationConfig`. `response_format` `{"type": "json_object"}` sets `responseMimeType`
  `"application/json"`; `{"type": "json_schema", ...}` also sets `responseJsonSchema` to the schema
  (its `name` and `strict` are not sent: Gemini always constrains output to the schema and has no
  schema name; `parse_request` names it `"response"`).
- **`extra`** is merged into the body: `generationConfig` and `toolConfig` key by key over what
  the options built (so `{"generationConfig": {"thinkingConfig": {"includeThoughts": True}}}`
  adds thinking and keeps `temperature`), `tools` is appended after the function declarations
  (`[{"googleSearch": {}}]`), and any other key is set at the top level (`safetySettings`,
  `cachedContent`, ...). `contents` and `systemInstruction` are refused: they come from messages.
- **Responses.** Only candidate 0 is read. Consecutive text parts (across stream chunks too)
  extend one text block, unless a part of another kind or a signature comes between them.
  `functionCall.id` may be absent: the call then gets `id=None` in its delta, so the agent
  assigns its deterministic `call_<n>`. Image, code-execution and other non-text output parts
  are refused with a `ProviderError` rather than dropped.
- **Usage** is cumulative in each chunk, so only the last one is reported: input =
  `promptTokenCount` + `toolUsePromptTokenCount`, output = `candidatesTokenCount` +
  `thoughtsTokenCount`, cached read = `cachedContentTokenCount` (Gemini reports no cache writes).
- **Finish reasons** (`FINISH_REASON_MAP`): `STOP` is `"stop"`, or `"tool_calls"` when the reply
  has function calls (also for `FINISH_REASON_UNSPECIFIED`); `MAX_TOKENS` and `CONTINUATION` are
  `"length"`; the safety, recitation, blocklist, language, `OTHER` and image outcomes are
  `"content_filter"`; a prompt blocked by `promptFeedback.blockReason` (no candidates) is
  `"content_filter"` with no content. `MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`,
  `TOO_MANY_TOOL_CALLS` and `MALFORMED_RESPONSE` raise a recoverable `ProviderError` (the step is
  tried again); `MISSING_THOUGHT_SIGNATURE` raises `InvalidRequestError`. Any other value is a
  malformed response. A stream is complete once a chunk with a `finishReason` (or a
  `blockReason`) arrived; there is no `[DONE]`.
- **Errors** (`{"error": {"code", "message", "status"}}`, also inside a stream) are classified by
  the gRPC `status` (`STATUS_CODES`), then the HTTP status: `INVALID_ARGUMENT` whose message says
  `"input token count ... exceeds the maximum number of tokens allowed"` is `CONTEXT_TOO_LONG`;
  an `ErrorInfo` reason `API_KEY_INVALID` is `AUTH` (Gemini sends it with status 400). A
  `google.rpc.RetryInfo` `retryDelay` is read as `retry_after` when no header says.

Example:
    ```python
    from rxagent import Msg
    from rxagent.formatters.gemini import GeminiFormatter
    from rxagent.models import ModelOptions, ToolSchema

    fmt = GeminiFormatter()
    body = fmt.format(
        [Msg.system("Be brief."), Msg.user("1 + 2?")],
        [ToolSchema(name="add", description="Add two numbers.")],
        ModelOptions(tool_choice="add", max_output_tokens=50),
        model="gemini-2.5-flash",
        stream=True,
    )
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "1 + 2?"}]}]
    assert body["toolConfig"]["functionCallingConfig"] == {
        "mode": "ANY", "allowedFunctionNames": ["add"]
    }
    assert body["generationConfig"] == {"maxOutputTokens": 50}
    messages, tools, options = fmt.parse_request(body)
    assert messages[1].text == "1 + 2?" and tools[0].name == "add"
    assert options.tool_choice == "add"
    ```
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from rxagent._fast import trusted
from rxagent.errors import AgentRunError, ErrorCode
from rxagent.formatters.base import (
    BaseFormatter,
    Capabilities,
    malformed,
    provider_error,
    status_error,
    unsupported,
)
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    thaw,
)
from rxagent.models.base import (
    FinishDelta,
    ModelDelta,
    ModelOptions,
    ModelResponse,
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSchema,
    Usage,
    UsageDelta,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.models.framing import SSEEvent

__all__ = [
    "AGENT_CALL_ID",
    "FINISH_ERRORS",
    "FINISH_REASON_MAP",
    "GRPC_HTTP_STATUS",
    "STATUS_CODES",
    "CallIds",
    "GeminiFormatter",
    "GeminiStreamParser",
]

CallIds: TypeAlias = Literal["model", "always", "never"]
"""Which tool-call ids `format` sends (see `GeminiFormatter`)."""

AGENT_CALL_ID: Final = re.compile(r"call_\d+")
"""The ids rxagent's agent assigns to calls that came without one (`call_<n>`)."""

FINISH_REASON_MAP: Final[Mapping[str, str]] = {
    "STOP": "stop",
    "FINISH_REASON_UNSPECIFIED": "stop",
    "MAX_TOKENS": "length",
    "CONTINUATION": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "LANGUAGE": "content_filter",
    "OTHER": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_OTHER": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "NO_IMAGE": "content_filter",
    "ESCALATION": "content_filter",
    "PUP_LIMITED_DISABLED": "content_filter",
    "MODEL_ARMOR": "content_filter",
}
"""Gemini's finish reasons → rxagent's vocabulary (`"stop"` becomes `"tool_calls"` when the reply
has function calls). `FINISH_ERRORS` lists the ones that raise; any other value is malformed."""

FINISH_ERRORS: Final[Mapping[str, ErrorCode]] = {
    "MALFORMED_FUNCTION_CALL": ErrorCode.PROVIDER_ERROR,
    "UNEXPECTED_TOOL_CALL": ErrorCode.PROVIDER_ERROR,
    "TOO_MANY_TOOL_CALLS": ErrorCode.PROVIDER_ERROR,
    "MALFORMED_RESPONSE": ErrorCode.PROVIDER_ERROR,
    "MISSING_THOUGHT_SIGNATURE": ErrorCode.INVALID_REQUEST,
}
"""Finish reasons that mean the reply failed: `PROVIDER_ERROR` ones are recoverable (the model
produced a broken reply; trying the step again usually works), `INVALID_REQUEST` is not."""

STATUS_CODES: Final[Mapping[str, ErrorCode]] = {
    "RESOURCE_EXHAUSTED": ErrorCode.RATE_LIMITED,
    "UNAUTHENTICATED": ErrorCode.AUTH,
    "PERMISSION_DENIED": ErrorCode.AUTH,
    "INVALID_ARGUMENT": ErrorCode.INVALID_REQUEST,
    "FAILED_PRECONDITION": ErrorCode.INVALID_REQUEST,
    "NOT_FOUND": ErrorCode.INVALID_REQUEST,
    "OUT_OF_RANGE": ErrorCode.INVALID_REQUEST,
    "ALREADY_EXISTS": ErrorCode.INVALID_REQUEST,
    "UNIMPLEMENTED": ErrorCode.INVALID_REQUEST,
    "UNAVAILABLE": ErrorCode.PROVIDER_ERROR,
    "INTERNAL": ErrorCode.PROVIDER_ERROR,
    "DEADLINE_EXCEEDED": ErrorCode.PROVIDER_ERROR,
    "ABORTED": ErrorCode.PROVIDER_ERROR,
    "UNKNOWN": ErrorCode.PROVIDER_ERROR,
    "CANCELLED": ErrorCode.PROVIDER_ERROR,
    "DATA_LOSS": ErrorCode.PROVIDER_ERROR,
}
"""The gRPC `status` of a Google API error → `ErrorCode` (the HTTP status decides otherwise)."""

GRPC_HTTP_STATUS: Final[Mapping[str, int]] = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INTERNAL": 500,
    "DATA_LOSS": 500,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
"""The HTTP status Google sends with each gRPC status (used when an error has no `code`)."""

_CONTEXT_MARKER: Final = re.compile(
    r"input token count.*exceeds the maximum number of tokens allowed", re.IGNORECASE | re.DOTALL
)
_AUTH_REASONS: Final = frozenset(("API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED"))
_DATA_URL: Final = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)
_DURATION: Final = re.compile(r"\s*(\d+(?:\.\d*)?)s\s*")
_JSON_MIME: Final = "application/json"
_RESERVED_EXTRA: Final = frozenset(("contents", "systemInstruction"))
_OPTION_GEN_KEYS: Final = frozenset(
    ("temperature", "maxOutputTokens", "stopSequences", "seed", "responseMimeType")
)
_MODES: Final[Mapping[str, str]] = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
_CHOICES: Final[Mapping[str, str]] = {"AUTO": "auto", "NONE": "none"}
_UNREADABLE_PARTS: Final = (
    "inlineData",
    "fileData",
    "executableCode",
    "codeExecutionResult",
    "functionResponse",
    "toolCall",
    "toolResponse",
)

_TEXT: Final = 1
_THOUGHT: Final = 2


class GeminiFormatter(BaseFormatter["SSEEvent"]):
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
        supports_thinking=True,
        supports_vision=True,
        supports_parallel_tools=True,
        supports_tool_result_images=True,
        supports_json_schema=True,
        supports_tool_choice_required=True,
    )
    """Every flag is set: thought summaries and signatures round-trip, images go in user turns and
    in function responses, `responseJsonSchema` is native, `"required"` is mode `ANY`."""

    __slots__ = ("call_ids", "provider")

    def __init__(self, *, call_ids: CallIds = "model", provider: str = "gemini") -> None:
        if call_ids not in ("model", "always", "never"):
            raise ValueError(f"call_ids must be 'model', 'always' or 'never', got {call_ids!r}")
        self.call_ids = call_ids
        self.provider = provider

    def _sends_id(self, call_id: str) -> bool:
        """Whether a call or result id goes on the wire (see `call_ids`)."""
        if not call_id or self.call_ids == "never":
            return False
        return self.call_ids == "always" or AGENT_CALL_ID.fullmatch(call_id) is None

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
        """Build the `generateContent` request body (the same for streaming; `model` is in the URL).

        Raises:
            InvalidRequestError: A block a message of its role cannot hold, a name on a tool
                message, `parallel_tool_calls=False`, an unknown `response_format`, or an
                `extra` key that would replace the messages.
        """
        system, contents = self._contents(messages)
        body: dict[str, Any] = {"contents": contents}
        if system:
            body["systemInstruction"] = {"parts": system}
        if tools:
            body["tools"] = [{"functionDeclarations": [_declaration(t) for t in tools]}]
            choice = options.tool_choice
            if choice is not None:
                body["toolConfig"] = {"functionCallingConfig": _calling_config(choice)}
        if options.parallel_tool_calls is False:
            raise unsupported(
                self.provider,
                "parallel_tool_calls=False",
                "Gemini has no switch to turn parallel function calls off; leave it unset "
                "(ReActAgent(parallel_tool_calls=False) runs the calls one by one instead)",
            )
        generation = self._generation_config(options)
        if generation:
            body["generationConfig"] = generation
        if options.extra:
            self._merge_extra(body, options.extra)
        return body

    def _generation_config(self, options: ModelOptions) -> dict[str, Any]:
        config: dict[str, Any] = {}
        if options.temperature is not None:
            config["temperature"] = options.temperature
        if options.max_output_tokens is not None:
            config["maxOutputTokens"] = options.max_output_tokens
        if options.stop:
            config["stopSequences"] = list(options.stop)
        if options.seed is not None:
            config["seed"] = options.seed
        fmt = options.response_format
        if fmt is not None:
            kind = fmt.get("type")
            spec = fmt.get("json_schema")
            if kind == "json_object":
                config["responseMimeType"] = _JSON_MIME
            elif kind == "json_schema" and isinstance(spec, Mapping) and "schema" in spec:
                config["responseMimeType"] = _JSON_MIME
                config["responseJsonSchema"] = thaw(spec["schema"])
            elif kind != "text":
                raise unsupported(
                    self.provider,
                    f"response_format {thaw(fmt)!r}",
                    'use {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}} '
                    'or {"type": "json_object"}',
                )
        return config

    def _merge_extra(self, body: dict[str, Any], extra: Mapping[str, Any]) -> None:
        for key, value in extra.items():
            if key in _RESERVED_EXTRA:
                raise unsupported(
                    self.provider,
                    f"ModelOptions.extra[{key!r}]",
                    f"{key} is built from the messages; pass messages instead",
                )
            if key in ("generationConfig", "toolConfig"):
                if not isinstance(value, Mapping):
                    raise unsupported(
                        self.provider, f"ModelOptions.extra[{key!r}]={value!r}", "give an object"
                    )
                body[key] = {**body.get(key, {}), **thaw(value)}
            elif key == "tools":
                if not isinstance(value, list | tuple):
                    raise unsupported(
                        self.provider,
                        f"ModelOptions.extra['tools']={value!r}",
                        'give a list of Gemini tools, e.g. [{"googleSearch": {}}]',
                    )
                body["tools"] = [*body.get("tools", ()), *thaw(value)]
            else:
                body[key] = thaw(value)

    def _contents(self, messages: Sequence[Msg]) -> tuple[list[Any], list[dict[str, Any]]]:
        system: list[Any] = []
        contents: list[dict[str, Any]] = []
        results: list[Any] | None = None  # the parts of the current run of tool messages
        for msg in messages:
            role = msg.role
            if role == "tool":
                parts = self._tool_parts(msg)
                if results is None:
                    results = parts
                    contents.append({"role": "user", "parts": parts})
                else:
                    results.extend(parts)
                continue
            results = None
            if role == "assistant":
                parts = self._model_parts(msg.content)
            elif role == "user":
                parts = self._user_parts(msg.content)
            else:
                parts = self._system_parts(msg.content)
            if msg.name is not None:
                parts.insert(0, {"text": f"{msg.name}: "})
            if role == "system":
                system.extend(parts)
            elif parts:
                contents.append(
                    {"role": "model" if role == "assistant" else "user", "parts": parts}
                )
        return system, contents

    def _system_parts(self, content: str | tuple[Block, ...]) -> list[Any]:
        if isinstance(content, str):
            return [{"text": content}] if content else []
        parts: list[Any] = []
        for block in content:
            if type(block) is not TextBlock:
                raise unsupported(
                    self.provider,
                    f"a {block.type} block in a system message",
                    "system messages hold text only",
                )
            parts.append({"text": block.text})
        return parts

    def _user_parts(self, content: str | tuple[Block, ...]) -> list[Any]:
        if isinstance(content, str):
            return [{"text": content}] if content else []
        parts: list[Any] = []
        for block in content:
            kind = type(block)
            if kind is TextBlock:
                parts.append({"text": block.text})  # type: ignore[union-attr]
            elif kind is ImageBlock:
                parts.append(self._media_part(block))  # type: ignore[arg-type]
            else:
                raise unsupported(
                    self.provider,
                    f"a {block.type} block in a user message",
                    "user messages hold text and images; put tool results in role='tool' "
                    "messages (Msg.tool(...))",
                )
        return parts

    def _model_parts(self, content: str | tuple[Block, ...]) -> list[Any]:
        if isinstance(content, str):
            return [{"text": content}] if content else []
        parts: list[Any] = []
        carried: str | None = None  # a signature waiting for the part it belongs to
        for block in content:
            kind = type(block)
            part: dict[str, Any]
            if kind is TextBlock:
                part = {"text": block.text}  # type: ignore[union-attr]
            elif kind is ToolUseBlock:
                part = {"functionCall": self._function_call(block)}  # type: ignore[arg-type]
            elif kind is ThinkingBlock:
                thinking: str = block.thinking  # type: ignore[union-attr]
                signature: str | None = block.signature  # type: ignore[union-attr]
                if carried is not None:
                    parts.append({"text": "", "thoughtSignature": carried})
                    carried = None
                if not thinking and signature is not None:
                    carried = signature
                    continue
                part = {"text": thinking, "thought": True}
                if signature is not None:
                    part["thoughtSignature"] = signature
                parts.append(part)
                continue
            elif kind is ImageBlock:
                part = self._media_part(block)  # type: ignore[arg-type]
            else:
                raise unsupported(
                    self.provider,
                    f"a {block.type} block in an assistant message",
                    "assistant messages hold text, thinking, tool calls and images",
                )
            if carried is not None:
                part["thoughtSignature"] = carried
                carried = None
            parts.append(part)
        if carried is not None:
            parts.append({"text": "", "thoughtSignature": carried})
        return parts

    def _tool_parts(self, msg: Msg) -> list[Any]:
        content = msg.content
        if isinstance(content, str) or not content:
            raise unsupported(
                self.provider,
                "a tool message without a ToolResultBlock",
                "build tool messages with Msg.tool(ToolResultBlock(id=..., name=..., output=...))",
            )
        if msg.name is not None:
            raise unsupported(
                self.provider,
                f"a tool message with name={msg.name!r}",
                "leave Msg.name unset on tool messages; the functionResponse carries the tool name",
            )
        parts: list[Any] = []
        for block in content:
            if type(block) is not ToolResultBlock:
                raise unsupported(
                    self.provider,
                    f"a {block.type} block in a tool message",
                    "tool messages hold ToolResultBlocks only",
                )
            parts.append({"functionResponse": self._function_response(block)})
        return parts

    def _function_call(self, block: ToolUseBlock) -> dict[str, Any]:
        wire: dict[str, Any] = {"id": block.id} if self._sends_id(block.id) else {}
        wire["name"] = block.name
        wire["args"] = thaw(block.input)
        return wire

    def _function_response(self, block: ToolResultBlock) -> dict[str, Any]:
        key = "error" if block.is_error else "result"
        wire: dict[str, Any] = {"id": block.id} if self._sends_id(block.id) else {}
        wire["name"] = block.name
        output = block.output
        if isinstance(output, str):
            wire["response"] = {key: output}
            return wire
        texts: list[str] = []
        media: list[Any] = []
        for item in output:
            if type(item) is TextBlock:
                texts.append(item.text)
            elif type(item) is ImageBlock:
                media.append(self._media_part(item))
            else:
                raise unsupported(
                    self.provider,
                    f"a {item.type} block in a tool result",
                    "tool results hold text and images",
                )
        wire["response"] = {key: "\n".join(texts)}
        if media:
            wire["parts"] = media
        return wire

    def _media_part(self, block: ImageBlock) -> dict[str, Any]:
        if block.data is not None:
            return {"inlineData": {"mimeType": block.media_type, "data": block.data}}
        url = block.url or ""
        if url.startswith("data:"):
            match = _DATA_URL.fullmatch(url)
            if match is None:
                raise unsupported(
                    self.provider,
                    "an image data: URL that is not base64",
                    "use data:<mime type>;base64,<data> or ImageBlock(data=..., media_type=...)",
                )
            return {"inlineData": {"mimeType": match.group(1), "data": match.group(2)}}
        file_data = {"fileUri": url}
        if block.media_type is not None:
            file_data["mimeType"] = block.media_type
        return {"fileData": file_data}

    # -- the inverse of format ---------------------------------------------------------------------

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
        try:
            messages = self._read_contents(body)
            tools, extra_tools = _read_tools(body.get("tools"))
            options = self._read_options(body, extra_tools)
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
            raise malformed(
                self.provider, f"not a generateContent request ({exc!r})", body
            ) from exc
        return messages, tools, options

    def _read_contents(self, body: Mapping[str, Any]) -> list[Msg]:
        messages: list[Msg] = []
        system = body.get("systemInstruction")
        if system:
            blocks = tuple(TextBlock(text=part["text"]) for part in system.get("parts") or ())
            if blocks:
                messages.append(Msg(role="system", content=blocks))
        for content in body.get("contents") or ():
            parts = content.get("parts") or ()
            if content.get("role") == "model":
                messages.append(Msg(role="assistant", content=_model_blocks(parts)))
                continue
            pending: list[Block] = []
            for part in parts:
                response = part.get("functionResponse")
                if response is None:
                    pending.append(_user_block(part))
                    continue
                if pending:
                    messages.append(Msg(role="user", content=tuple(pending)))
                    pending = []
                messages.append(Msg.tool(_read_function_response(response)))
            if pending:
                messages.append(Msg(role="user", content=tuple(pending)))
        return messages

    def _read_options(self, body: Mapping[str, Any], extra_tools: list[Any]) -> ModelOptions:
        fields: dict[str, Any] = {}
        extra: dict[str, Any] = {
            k: v
            for k, v in body.items()
            if k not in ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig")
        }
        if extra_tools:
            extra["tools"] = extra_tools
        tool_config = dict(body.get("toolConfig") or {})
        calling = tool_config.pop("functionCallingConfig", None)
        if calling is not None:
            choice = _read_calling_config(calling)
            if choice is None:
                tool_config["functionCallingConfig"] = calling
            else:
                fields["tool_choice"] = choice
        if tool_config:
            extra["toolConfig"] = tool_config
        config = dict(body.get("generationConfig") or {})
        for wire, name in (
            ("temperature", "temperature"),
            ("maxOutputTokens", "max_output_tokens"),
            ("seed", "seed"),
        ):
            if config.get(wire) is not None:
                fields[name] = config.pop(wire)
        if config.get("stopSequences") is not None:
            fields["stop"] = tuple(config.pop("stopSequences"))
        if config.get("responseMimeType") == _JSON_MIME:
            del config["responseMimeType"]
            schema = config.pop("responseJsonSchema", None)
            fields["response_format"] = (
                {"type": "json_object"}
                if schema is None
                else {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
            )
        if config:
            extra["generationConfig"] = config
        if extra:
            fields["extra"] = extra
        return ModelOptions(**fields)

    # -- responses ---------------------------------------------------------------------------------

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole `GenerateContentResponse` (candidate 0).

        Raises:
            AgentRunError: The body is an error object (typed by its status), or its finish
                reason means the reply failed (see `FINISH_ERRORS`).
            ProviderError: The body is not a response, has no finish reason, or has an unknown
                one.
        """
        if not isinstance(body, dict):
            raise malformed(self.provider, "the response is not a JSON object", body)
        parser = GeminiStreamParser(provider=self.provider)
        builder = ResponseBuilder(id_factory=str)  # no id: "" (the agent assigns call_<n>)
        for delta in parser.read(body):
            builder.add(delta)
        if not parser.finished:
            raise malformed(self.provider, "the response has no finishReason", body)
        for delta in parser.close():
            builder.add(delta)
        return builder.response()

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
        try:
            data = json.loads(body)
        except ValueError:
            return status_error(self.provider, status, body, headers=headers)
        if isinstance(data, list) and data:  # the non-SSE stream endpoint wraps it in an array
            data = data[0]
        error = data.get("error") if isinstance(data, dict) else None
        if not isinstance(error, dict):
            return status_error(self.provider, status, body, headers=headers)
        return _api_error(self.provider, error, body, status=status, headers=headers)


def _api_error(
    provider: str,
    error: Mapping[str, Any],
    body: bytes | str,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> AgentRunError:
    """Classify one Google API error object (`{"code", "message", "status", "details"}`)."""
    grpc = error.get("status")
    grpc = grpc if isinstance(grpc, str) else None
    message = error.get("message")
    message = message if isinstance(message, str) and message else None
    if status is None:
        code_field = error.get("code")
        status = (
            code_field
            if isinstance(code_field, int) and not isinstance(code_field, bool)
            else GRPC_HTTP_STATUS.get(grpc or "", 500)
        )
    code = STATUS_CODES.get(grpc or "")
    reason, delay = _details(error.get("details"))
    if grpc == "INVALID_ARGUMENT" and message and _CONTEXT_MARKER.search(message):
        code = ErrorCode.CONTEXT_TOO_LONG
    elif reason in _AUTH_REASONS:
        code = ErrorCode.AUTH
    err = status_error(
        provider,
        status,
        body,
        message=message,
        provider_code=grpc or reason,
        code=code,
        headers=headers,
    )
    if err.retry_after is None and delay is not None:
        err.retry_after = delay
    return err


def _details(details: Any) -> tuple[str | None, float | None]:
    """The `ErrorInfo` reason and the `RetryInfo` delay (seconds) of an error's details."""
    reason: str | None = None
    delay: float | None = None
    if not isinstance(details, list):
        return reason, delay
    for item in details:
        if not isinstance(item, dict):
            continue
        kind = item.get("@type")
        if not isinstance(kind, str):
            continue
        if kind.endswith("google.rpc.ErrorInfo") and isinstance(item.get("reason"), str):
            reason = item["reason"]
        elif kind.endswith("google.rpc.RetryInfo") and isinstance(item.get("retryDelay"), str):
            match = _DURATION.fullmatch(item["retryDelay"])
            if match is not None:
                delay = float(match.group(1))
    return reason, delay


class GeminiStreamParser:
    r"""Turns the chunks of one `streamGenerateContent?alt=sse` response into deltas.

    Each SSE event's data is a whole `GenerateContentResponse` holding the next parts. Usage is
    cumulative, so the last chunk's is reported once, with the finish reason, at `close()`.

    Args:
        provider: The name errors carry.

    Example:
        ```python
        from rxagent.formatters.gemini import GeminiStreamParser
        from rxagent.models.framing import SSEDecoder

        raw = (
            b'data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]}'
            b'\r\n\r\n'
            b'data: {"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}, '
            b'"finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 3, '
            b'"candidatesTokenCount": 1}}\r\n\r\n'
        )
        parser = GeminiStreamParser()
        deltas = [d for event in SSEDecoder().feed(raw) for d in parser.feed(event)]
        deltas += parser.close()
        assert [d.text for d in deltas[:2]] == ["Hel", "lo"] and deltas[1].index == 0
        assert deltas[2].usage.input_tokens == 3 and deltas[3].reason == "stop"
        ```
    """

    __slots__ = ("_calls", "_finish", "_next", "_open", "_open_index", "_usage", "provider")

    def __init__(self, *, provider: str = "gemini") -> None:
        self.provider = provider
        self._next = 0  # the index of the next block
        self._open = 0  # the kind of block the next text part may extend (_TEXT, _THOUGHT, 0)
        self._open_index = -1
        self._usage: Any = None
        self._finish: str | None = None
        self._calls = False

    @property
    def finished(self) -> bool:
        """True once a chunk with a finish reason (or a blocked prompt) arrived."""
        return self._finish is not None

    def feed(self, event: SSEEvent) -> list[ModelDelta]:
        """Parse one SSE event (one response chunk).

        Raises:
            AgentRunError: The event is an error object, typed by its status, or the finish
                reason means the reply failed.
            ProviderError: The event is not a response chunk.
        """
        data = event.data
        if not data:  # a comment or keep-alive
            return []
        try:
            chunk = json.loads(data)
        except ValueError:
            raise malformed(self.provider, "a stream event is not JSON", data) from None
        if type(chunk) is not dict:
            raise malformed(self.provider, "a stream event is not a JSON object", data)
        return self.read(chunk)

    def read(self, chunk: dict[str, Any]) -> list[ModelDelta]:
        """Parse one decoded `GenerateContentResponse` chunk."""
        error = chunk.get("error")
        if error is not None:
            if not isinstance(error, dict):
                raise malformed(self.provider, "an error event without an error object", chunk)
            raise _api_error(self.provider, error, json.dumps(chunk))
        deltas: list[ModelDelta] = []
        try:
            usage = chunk.get("usageMetadata")
            if usage is not None:
                self._usage = usage
            candidates = chunk.get("candidates")
            if candidates:
                candidate = candidates[0]
                content = candidate.get("content")
                if content:
                    for part in content.get("parts") or ():
                        self._part(part, deltas)
                reason = candidate.get("finishReason")
                if reason is not None:
                    self._finish_with(reason, chunk)
            else:
                feedback = chunk.get("promptFeedback")
                if feedback and feedback.get("blockReason"):
                    self._finish = "content_filter"
        except (AttributeError, TypeError, KeyError, IndexError) as exc:
            raise malformed(self.provider, f"not a response chunk ({exc!r})", chunk) from None
        return deltas

    def close(self) -> list[ModelDelta]:
        """End the stream: report the usage and the finish reason.

        Raises:
            ProviderError: No chunk with a finish reason arrived (recoverable).
        """
        finish = self._finish
        if finish is None:
            raise provider_error(
                ErrorCode.PROVIDER_ERROR,
                "the stream ended early: no chunk with a finishReason arrived",
                provider=self.provider,
                recoverable=True,
            )
        if finish == "stop" and self._calls:
            finish = "tool_calls"
        return [
            trusted(UsageDelta, usage=_usage(self.provider, self._usage)),
            trusted(FinishDelta, reason=finish),
        ]

    def _new(self, kind: int) -> int:
        index = self._next
        self._next = index + 1
        self._open = kind
        self._open_index = index
        return index

    def _part(self, part: dict[str, Any], deltas: list[ModelDelta]) -> None:
        signature = part.get("thoughtSignature")
        text = part.get("text")
        if text is not None:
            if type(text) is not str:
                raise TypeError("a text part whose text is not a string")
            if part.get("thought"):
                index = self._open_index if self._open == _THOUGHT else self._new(_THOUGHT)
                deltas.append(trusted(ThinkingDelta, index=index, text=text, signature=signature))
                if signature is not None:
                    self._open = 0  # a signed thought is complete
                return
            if signature is not None:
                deltas.append(
                    trusted(ThinkingDelta, index=self._new(0), text="", signature=signature)
                )
            elif self._open == _TEXT:
                if text:
                    deltas.append(trusted(TextDelta, index=self._open_index, text=text))
                return
            if text:
                deltas.append(trusted(TextDelta, index=self._new(_TEXT), text=text))
            return
        call = part.get("functionCall")
        if call is not None:
            if signature is not None:
                deltas.append(
                    trusted(ThinkingDelta, index=self._new(0), text="", signature=signature)
                )
            name = call["name"]
            if type(name) is not str:
                raise TypeError("a functionCall whose name is not a string")
            args = call.get("args")
            deltas.append(
                trusted(
                    ToolCallDelta,
                    index=self._new(0),
                    id=call.get("id") or None,
                    name=name,
                    args=json.dumps({} if args is None else args),
                )
            )
            self._calls = True
            return
        kind = next((k for k in _UNREADABLE_PARTS if k in part), None)
        if kind is None and signature is not None:  # a part that is only a signature
            deltas.append(trusted(ThinkingDelta, index=self._new(0), text="", signature=signature))
            return
        raise provider_error(
            ErrorCode.PROVIDER_ERROR,
            f"the response has a {kind or 'unknown'} part, which rxagent cannot read "
            "(it reads text, thoughts and function calls)",
            provider=self.provider,
            body=json.dumps(part),
            recoverable=False,
        )

    def _finish_with(self, reason: Any, chunk: Mapping[str, Any]) -> None:
        mapped = FINISH_REASON_MAP.get(reason) if isinstance(reason, str) else None
        if mapped is not None:
            self._finish = mapped
            return
        code = FINISH_ERRORS.get(reason) if isinstance(reason, str) else None
        if code is None:
            raise malformed(self.provider, f"unknown finishReason {reason!r}", dict(chunk))
        raise provider_error(
            code,
            f"the model's reply failed with finishReason {reason}",
            provider=self.provider,
            provider_code=reason,
            body=json.dumps(chunk),
            recoverable=code is ErrorCode.PROVIDER_ERROR,
        )


# -- helpers ---------------------------------------------------------------------------------------


def _declaration(tool: ToolSchema) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": tool.name}
    if tool.description:
        wire["description"] = tool.description
    wire["parametersJsonSchema"] = thaw(tool.parameters)
    return wire


def _calling_config(choice: str) -> dict[str, Any]:
    mode = _MODES.get(choice)
    if mode is not None:
        return {"mode": mode}
    return {"mode": "ANY", "allowedFunctionNames": [choice]}


def _read_calling_config(config: Mapping[str, Any]) -> str | None:
    """The `tool_choice` a `functionCallingConfig` says, or None when it says something else."""
    mode = config.get("mode")
    names = config.get("allowedFunctionNames")
    if set(config) - {"mode", "allowedFunctionNames"}:
        return None
    if mode == "ANY":
        if not names:
            return "required"
        return names[0] if len(names) == 1 and names[0] not in _MODES else None
    return _CHOICES.get(mode) if isinstance(mode, str) and not names else None


def _read_tools(tools: Any) -> tuple[list[ToolSchema], list[Any]]:
    schemas: list[ToolSchema] = []
    others: list[Any] = []
    for i, tool in enumerate(tools or ()):
        if i == 0 and set(tool) == {"functionDeclarations"}:
            schemas.extend(
                ToolSchema(
                    name=d["name"],
                    description=d.get("description") or "",
                    parameters=d.get("parametersJsonSchema")
                    or d.get("parameters_json_schema")  # proto JSON also takes field names
                    or d.get("parameters")
                    or {"type": "object", "properties": {}},
                )
                for d in tool["functionDeclarations"]
            )
        else:
            others.append(tool)
    return schemas, others


def _read_media(part: Mapping[str, Any]) -> ImageBlock | None:
    inline = part.get("inlineData")
    if inline is not None:
        return ImageBlock(data=inline["data"], media_type=inline["mimeType"])
    file_data = part.get("fileData")
    if file_data is not None:
        return ImageBlock(url=file_data["fileUri"], media_type=file_data.get("mimeType"))
    return None


def _user_block(part: Mapping[str, Any]) -> Block:
    if "text" in part:
        return TextBlock(text=part["text"])
    image = _read_media(part)
    if image is None:
        raise ValueError(f"a user part rxagent cannot read: {sorted(part)}")
    return image


def _model_blocks(parts: Sequence[Mapping[str, Any]]) -> tuple[Block, ...]:
    blocks: list[Block] = []
    for part in parts:
        signature = part.get("thoughtSignature")
        if part.get("thought"):
            blocks.append(ThinkingBlock(thinking=part.get("text", ""), signature=signature))
            continue
        if signature is not None:
            blocks.append(ThinkingBlock(thinking="", signature=signature))
        if "text" in part:
            if part["text"] or signature is None:
                blocks.append(TextBlock(text=part["text"]))
            continue
        call = part.get("functionCall")
        if call is not None:
            blocks.append(
                ToolUseBlock(
                    id=call.get("id") or "", name=call["name"], input=call.get("args") or {}
                )
            )
            continue
        image = _read_media(part)
        if image is not None:
            blocks.append(image)
        elif signature is None:
            raise ValueError(f"a model part rxagent cannot read: {sorted(part)}")
    return tuple(blocks)


def _read_function_response(wire: Mapping[str, Any]) -> ToolResultBlock:
    response = wire.get("response") or {}
    is_error = False
    if set(response) == {"result"} and isinstance(response["result"], str):
        text = response["result"]
    elif set(response) == {"error"} and isinstance(response["error"], str):
        text, is_error = response["error"], True
    else:
        text = json.dumps(response)
    images = [_read_media(part) for part in wire.get("parts") or ()]
    output: str | tuple[Block, ...] = text
    if images:
        lead: list[Block] = [TextBlock(text=text)] if text else []
        output = (*lead, *(image for image in images if image is not None))
    return ToolResultBlock(
        id=wire.get("id") or "", name=wire.get("name") or "", output=output, is_error=is_error
    )


def _count(meta: Mapping[str, Any], key: str) -> int:
    value = meta.get(key)
    if value is None:
        return 0
    if type(value) is not int:
        raise TypeError(f"usageMetadata.{key} is not an integer")
    return value


def _usage(provider: str, meta: Any) -> Usage:
    if meta is None:
        return trusted(Usage, requests=1)
    try:
        return trusted(
            Usage,
            input_tokens=_count(meta, "promptTokenCount") + _count(meta, "toolUsePromptTokenCount"),
            output_tokens=_count(meta, "candidatesTokenCount") + _count(meta, "thoughtsTokenCount"),
            cache_read_tokens=_count(meta, "cachedContentTokenCount"),
            requests=1,
        )
    except (AttributeError, TypeError) as exc:
        raise malformed(provider, f"bad usageMetadata ({exc})", meta) from None
