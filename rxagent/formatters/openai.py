"""OpenAI Chat Completions: the wire format of OpenAI, Azure OpenAI and OpenAI-compatible servers.

`OpenAIFormatter` builds `POST /chat/completions` bodies, reads whole responses and
`chat.completion.chunk` streams (decoded SSE events), and classifies OpenAI error bodies. It is
pure: no I/O, no globals. The same wire format serves DeepSeek (`reasoning_content`), vLLM and
Ollama's `/v1` API.

Conversion rules (what cannot be carried one to one):

- **System messages** go out with role `"system"`, or `"developer"` when the formatter is built
  with `system_role="developer"` (o-series models). Block content is sent as its joined text.
- **Thinking blocks** have no request field in Chat Completions. By default they are left out of
  the request (the one documented exception to "never drop"); with `reasoning_content=True`
  (DeepSeek-style servers) an assistant message's thinking is sent as its `reasoning_content`.
  Signatures are never sent (no server of this format has them).
- **Assistant text blocks** are joined (no separator) into one `content` string, then the tool
  calls follow as `tool_calls`; content is `null` when there are tool calls and no text.
- **Tool results** become one `role: "tool"` message each (`tool_call_id`), with the output as
  text (text blocks joined with newlines). A failed result (`is_error`) is prefixed `"Error: "`.
  The tool's name and `Msg.name` are not sent: the message is tied to its call by the id.
- **Images in tool results** cannot go in a tool message. Their text stays in the tool message
  (or a short note when there is none), and after the run of consecutive tool messages one
  user message carries the images, each group introduced by the text part
  `"Images returned by tool call <id>:"`. `parse_request` folds such a message back.
- **User images** are `image_url` parts; base64 data is sent as a `data:` URL.
- **Options**: `max_output_tokens` is sent as `max_completion_tokens` (or `max_tokens` with
  `max_tokens_field="max_tokens"`, for older compatible servers); `tool_choice` and
  `parallel_tool_calls` are sent only with tools (OpenAI rejects them without); a tool name as
  `tool_choice` becomes `{"type": "function", "function": {"name": ...}}`; `extra` is merged
  at the top level last, so it can override any field.
- **Responses**: `reasoning_content` (or `reasoning`) is read as a thinking block; a `refusal`
  is read as text; only choice 0 is read.

Example:
    ```python
    from rxagent import Msg
    from rxagent.formatters.openai import OpenAIFormatter
    from rxagent.models import ModelOptions, ToolSchema

    fmt = OpenAIFormatter()
    body = fmt.format(
        [Msg.system("Be brief."), Msg.user("1 + 2?")],
        [ToolSchema(name="add", description="Add two numbers.")],
        ModelOptions(tool_choice="add", max_output_tokens=50),
        model="gpt-4o-mini",
        stream=True,
    )
    assert body["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert body["max_completion_tokens"] == 50
    assert body["stream_options"] == {"include_usage": True}
    messages, tools, options = fmt.parse_request(body)
    assert messages[1].text == "1 + 2?" and tools[0].name == "add"
    assert options.tool_choice == "add"
    ```
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final, Literal

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
    freeze,
    thaw,
)
from rxagent.models.base import (
    FinishDelta,
    ModelDelta,
    ModelOptions,
    ModelResponse,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSchema,
    Usage,
    UsageDelta,
)
from rxagent.models.framing import SSEEvent

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "ERROR_PREFIX",
    "FINISH_REASON_MAP",
    "IMAGES_ONLY_NOTE",
    "OpenAIFormatter",
    "OpenAIStreamParser",
]

FINISH_REASON_MAP: Final[Mapping[str, str]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
    "function_call": "tool_calls",
}
"""OpenAI's finish reasons → rxagent's vocabulary; any other value is a malformed response."""

ERROR_PREFIX: Final = "Error: "
"""What starts the tool message of a failed tool result (`is_error=True`)."""

IMAGES_ONLY_NOTE: Final = "(the tool returned images; they follow in the next message)"
"""The tool message text of a result that has images and no text."""

_IMAGES_MARK: Final = "Images returned by tool call "
_IMAGES_MARK_RE: Final = re.compile(r"Images returned by tool call (.*):", re.DOTALL)
_DATA_URL_RE: Final = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)
_KNOWN_KEYS: Final = frozenset(
    (
        "model",
        "messages",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "temperature",
        "max_completion_tokens",
        "max_tokens",
        "response_format",
        "stop",
        "seed",
        "stream",
        "stream_options",
    )
)

# The provider's error code (or type) → ErrorCode, whatever the HTTP status.
_CODES: Final[Mapping[str, ErrorCode]] = {
    "context_length_exceeded": ErrorCode.CONTEXT_TOO_LONG,
    "string_above_max_length": ErrorCode.CONTEXT_TOO_LONG,
    "insufficient_quota": ErrorCode.RATE_LIMITED,
    "rate_limit_exceeded": ErrorCode.RATE_LIMITED,
    "invalid_api_key": ErrorCode.AUTH,
    "authentication_error": ErrorCode.AUTH,
    "permission_error": ErrorCode.AUTH,
    "account_deactivated": ErrorCode.AUTH,
    "model_not_found": ErrorCode.INVALID_REQUEST,
}
# Error types that say enough on their own when there is no status (an error inside a stream).
_STREAM_TYPES: Final[Mapping[str, ErrorCode]] = {
    "invalid_request_error": ErrorCode.INVALID_REQUEST,
    "BadRequestError": ErrorCode.INVALID_REQUEST,
    "server_error": ErrorCode.PROVIDER_ERROR,
    "requests": ErrorCode.RATE_LIMITED,
    "tokens": ErrorCode.RATE_LIMITED,
}
_RECOVERABLE_IN_STREAM: Final = frozenset((ErrorCode.PROVIDER_ERROR, ErrorCode.RATE_LIMITED))
_CONTEXT_PHRASES: Final = ("maximum context length", "context length exceeded")


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
        ```
    """

    capabilities = Capabilities(
        supports_tools=True,
        supports_thinking=False,
        supports_vision=True,
        supports_parallel_tools=True,
        supports_tool_result_images=False,
        supports_json_schema=True,
        supports_tool_choice_required=True,
    )
    """`supports_thinking` is False (thinking is not sent back unless `reasoning_content=True`);
    `supports_tool_result_images` is False (such images are moved to a user message)."""

    __slots__ = ("max_tokens_field", "provider", "reasoning_content", "system_role")

    def __init__(
        self,
        *,
        system_role: Literal["system", "developer"] = "system",
        reasoning_content: bool = False,
        max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens",
        provider: str = "openai",
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
        """Build the `/chat/completions` request body.

        Raises:
            InvalidRequestError: A block a message of its role cannot hold (an image in an
                assistant message, ...), or an unknown `response_format` type.
        """
        body: dict[str, Any] = {"model": model, "messages": self._messages(messages)}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": thaw(t.parameters),
                    }
                    if t.description
                    else {"name": t.name, "parameters": thaw(t.parameters)},
                }
                for t in tools
            ]
            choice = options.tool_choice
            if choice is not None:
                body["tool_choice"] = (
                    choice
                    if choice in ("auto", "none", "required")
                    else {"type": "function", "function": {"name": choice}}
                )
            if options.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = options.parallel_tool_calls
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_output_tokens is not None:
            body[self.max_tokens_field] = options.max_output_tokens
        if options.response_format is not None:
            body["response_format"] = self._response_format(options.response_format)
        if options.stop is not None:
            body["stop"] = list(options.stop)
        if options.seed is not None:
            body["seed"] = options.seed
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        if options.extra:
            body.update(thaw(options.extra))
        return body

    def _response_format(self, fmt: Mapping[str, Any]) -> dict[str, Any]:
        kind = fmt.get("type")
        if kind == "json_schema" and isinstance(fmt.get("json_schema"), dict):
            return {"type": "json_schema", "json_schema": thaw(fmt["json_schema"])}
        if kind in ("json_object", "text"):
            return {"type": kind}
        raise unsupported(
            self.provider,
            f"response_format {dict(fmt)!r}",
            'use {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}} or '
            '{"type": "json_object"}',
        )

    def _messages(self, messages: Sequence[Msg]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        carried: list[dict[str, Any]] = []  # image parts of tool results, sent after the tools
        for msg in messages:
            role = msg.role
            if role == "tool":
                self._tool_messages(msg, out, carried)
                continue
            if carried:
                out.append({"role": "user", "content": carried})
                carried = []
            if role == "user":
                out.append(self._user(msg))
            elif role == "assistant":
                out.append(self._assistant(msg))
            else:
                out.append(self._system(msg))
        if carried:
            out.append({"role": "user", "content": carried})
        return out

    def _system(self, msg: Msg) -> dict[str, Any]:
        content = msg.content
        if not isinstance(content, str):
            for block in content:
                if type(block) is not TextBlock:
                    raise unsupported(
                        self.provider,
                        f"a {block.type} block in a system message",
                        "system messages hold text only",
                    )
            content = msg.text
        wire: dict[str, Any] = {"role": self.system_role, "content": content}
        if msg.name is not None:
            wire["name"] = msg.name
        return wire

    def _user(self, msg: Msg) -> dict[str, Any]:
        content = msg.content
        wire: dict[str, Any]
        if isinstance(content, str):
            wire = {"role": "user", "content": content}
        else:
            parts: list[dict[str, Any]] = []
            for block in content:
                if type(block) is TextBlock:
                    parts.append({"type": "text", "text": block.text})
                elif type(block) is ImageBlock:
                    parts.append(_image_part(block))
                else:
                    raise unsupported(
                        self.provider,
                        f"a {block.type} block in a user message",
                        "user messages hold text and images; put tool results in role='tool' "
                        "messages (Msg.tool(...))",
                    )
            wire = {"role": "user", "content": parts}
        if msg.name is not None:
            wire["name"] = msg.name
        return wire

    def _assistant(self, msg: Msg) -> dict[str, Any]:
        content = msg.content
        wire: dict[str, Any]
        if isinstance(content, str):
            wire = {"role": "assistant", "content": content}
        else:
            texts: list[str] = []
            calls: list[dict[str, Any]] = []
            thoughts: list[str] = []
            for block in content:
                if type(block) is TextBlock:
                    texts.append(block.text)
                elif type(block) is ToolUseBlock:
                    calls.append(_tool_call(block))
                elif type(block) is ThinkingBlock:
                    thoughts.append(block.thinking)
                else:
                    raise unsupported(
                        self.provider,
                        f"a {block.type} block in an assistant message",
                        "assistant messages hold text, thinking and tool calls",
                    )
            wire = {"role": "assistant", "content": "".join(texts) if texts or not calls else None}
            if calls:
                wire["tool_calls"] = calls
            if thoughts and self.reasoning_content:
                wire["reasoning_content"] = "".join(thoughts)
        if msg.name is not None:
            wire["name"] = msg.name
        return wire

    def _tool_messages(
        self, msg: Msg, out: list[dict[str, Any]], carried: list[dict[str, Any]]
    ) -> None:
        content = msg.content
        if isinstance(content, str) or not content:
            raise unsupported(
                self.provider,
                "a tool message without a ToolResultBlock",
                "build tool messages with Msg.tool(ToolResultBlock(id=..., name=..., output=...))",
            )
        for block in content:
            if type(block) is not ToolResultBlock:
                raise unsupported(
                    self.provider,
                    f"a {block.type} block in a tool message",
                    "tool messages hold ToolResultBlocks only",
                )
            output = block.output
            if isinstance(output, str):
                text = output
            else:
                texts: list[str] = []
                images: list[dict[str, Any]] = []
                for part in output:
                    if type(part) is TextBlock:
                        texts.append(part.text)
                    elif type(part) is ImageBlock:
                        images.append(_image_part(part))
                    else:
                        raise unsupported(
                            self.provider,
                            f"a {part.type} block in a tool result",
                            "tool results hold text and images",
                        )
                text = "\n".join(texts)
                if images:
                    carried.append({"type": "text", "text": f"{_IMAGES_MARK}{block.id}:"})
                    carried.extend(images)
                    if not text:
                        text = IMAGES_ONLY_NOTE
            if block.is_error:
                text = ERROR_PREFIX + text
            out.append({"role": "tool", "tool_call_id": block.id, "content": text})

    # -- the inverse of format ---------------------------------------------------------------------

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
        try:
            messages = self._read_messages(body["messages"])
            tools = [
                ToolSchema(
                    name=t["function"]["name"],
                    description=t["function"].get("description") or "",
                    parameters=t["function"].get("parameters")
                    or {"type": "object", "properties": {}},
                )
                for t in body.get("tools") or ()
            ]
            options = self._read_options(body)
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
            raise malformed(
                self.provider, f"not a chat completions request ({exc!r})", body
            ) from exc
        return messages, tools, options

    def _read_options(self, body: Mapping[str, Any]) -> ModelOptions:
        fields: dict[str, Any] = {}
        choice = body.get("tool_choice")
        if choice is not None:
            fields["tool_choice"] = (
                choice if isinstance(choice, str) else choice["function"]["name"]
            )
        for key in ("parallel_tool_calls", "temperature", "seed", "response_format"):
            if body.get(key) is not None:
                fields[key] = body[key]
        for key in ("max_completion_tokens", "max_tokens"):
            if body.get(key) is not None:
                fields["max_output_tokens"] = body[key]
        stop = body.get("stop")
        if stop is not None:
            fields["stop"] = (stop,) if isinstance(stop, str) else tuple(stop)
        extra = {k: v for k, v in body.items() if k not in _KNOWN_KEYS}
        if extra:
            fields["extra"] = extra
        return ModelOptions(**fields)

    def _read_messages(self, wire: Sequence[Mapping[str, Any]]) -> list[Msg]:
        messages: list[Msg] = []
        names: dict[str, str] = {}  # tool call id → tool name
        tool_run: list[int] = []  # positions of the latest consecutive tool messages
        for item in wire:
            role = item["role"]
            if role != "tool":
                if role == "user" and tool_run and _fold_images(item, messages, tool_run):
                    tool_run = []
                    continue
                tool_run = []
            if role in ("system", "developer"):
                content = item["content"]
                if not isinstance(content, str):
                    content = "".join(part["text"] for part in content)
                messages.append(Msg(role="system", content=content, name=item.get("name")))
            elif role == "user":
                messages.append(_read_user(item))
            elif role == "assistant":
                msg = _read_assistant(item)
                names.update((c.id, c.name) for c in msg.tool_calls)
                messages.append(msg)
            elif role == "tool":
                call_id = item["tool_call_id"]
                text = item["content"]
                if not isinstance(text, str):
                    text = "\n".join(part["text"] for part in text)
                is_error = text.startswith(ERROR_PREFIX)
                if is_error:
                    text = text[len(ERROR_PREFIX) :]
                result = ToolResultBlock(
                    id=call_id, name=names.get(call_id, ""), output=text, is_error=is_error
                )
                tool_run.append(len(messages))
                messages.append(Msg.tool(result))
            else:
                raise ValueError(f"unknown role {role!r}")
        return messages

    # -- responses ---------------------------------------------------------------------------------

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole `chat.completion` response (choice 0).

        Raises:
            AgentRunError: The body is an error object (typed by its code).
            ProviderError: The body is not a chat completion, or its finish reason is unknown.
        """
        if isinstance(body, dict) and body.get("error") is not None:
            raise self._stream_error(body, json.dumps(body))
        try:
            choice = body["choices"][0]
            wire = choice["message"]
            blocks: list[Block] = []
            reasoning = wire.get("reasoning_content") or wire.get("reasoning")
            if reasoning:
                blocks.append(trusted(ThinkingBlock, thinking=str(reasoning), signature=None))
            for key in ("content", "refusal"):
                text = wire.get(key)
                if text:
                    blocks.append(trusted(TextBlock, text=str(text)))
            blocks.extend(_read_call(call) for call in wire.get("tool_calls") or ())
            finish = _finish(choice.get("finish_reason"))
            usage = _usage(body.get("usage"))
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise malformed(self.provider, f"not a chat completion ({exc!r})", body) from exc
        except _UnknownFinish as exc:
            raise malformed(self.provider, f"unknown finish_reason {exc.args[0]!r}", body) from None
        message = trusted(Msg, role="assistant", content=tuple(blocks))
        return trusted(ModelResponse, message=message, usage=usage, finish_reason=finish)

    def stream_parser(self) -> OpenAIStreamParser:
        """Return a parser for one streamed response (see `OpenAIStreamParser`)."""
        return OpenAIStreamParser(self)

    # -- errors ------------------------------------------------------------------------------------

    def error_from_response(
        self, status: int, body: bytes, headers: Mapping[str, str]
    ) -> AgentRunError:
        """Classify an HTTP error by status and OpenAI's `error.code` / `error.type`.

        `context_length_exceeded` → `CONTEXT_TOO_LONG`; `insufficient_quota` → `RATE_LIMITED`
        that is *not* recoverable (never retried); `rate_limit_exceeded` → `RATE_LIMITED`;
        `invalid_api_key` → `AUTH`; otherwise the status decides (see `status_error`). The
        `retry-after-ms` and `retry-after` headers set `retry_after`.
        """
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = None
        code, provider_code, message = _classify(decoded, status)
        err = status_error(
            self.provider,
            status,
            body,
            message=message,
            provider_code=provider_code,
            code=code,
            headers=headers,
        )
        if provider_code == "insufficient_quota":
            err.recoverable = False  # waiting does not refill a quota
        return err

    def _stream_error(self, payload: Any, data: str) -> AgentRunError:
        code, provider_code, message = _classify(payload, None)
        code = code or ErrorCode.PROVIDER_ERROR
        recoverable = code in _RECOVERABLE_IN_STREAM and provider_code != "insufficient_quota"
        return provider_error(
            code,
            message or "an error event in the stream",
            provider=self.provider,
            provider_code=provider_code,
            body=data,
            recoverable=recoverable,
        )


class _UnknownFinish(Exception):
    pass


def _finish(reason: Any) -> str | None:
    if reason is None:
        return None
    mapped = FINISH_REASON_MAP.get(reason) if isinstance(reason, str) else None
    if mapped is None:
        raise _UnknownFinish(reason)
    return mapped


def _usage(wire: Any) -> Usage:
    if not wire:
        return trusted(Usage, requests=1)
    details = wire.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if details else None
    return trusted(
        Usage,
        input_tokens=wire.get("prompt_tokens") or 0,
        output_tokens=wire.get("completion_tokens") or 0,
        cache_read_tokens=cached or 0,
        requests=1,
    )


def _classify(payload: Any, status: int | None) -> tuple[ErrorCode | None, str | None, str | None]:
    """Return (code or None for "by status", the provider's code, the message) of an error body."""
    err = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(payload, dict) and payload.get("object") == "error":  # vLLM
        err = payload
    if isinstance(err, str):
        return None, None, err
    if not isinstance(err, dict):
        return None, None, None
    message = err.get("message")
    message = message if isinstance(message, str) else None
    raw_code, raw_type = err.get("code"), err.get("type")
    code_text = raw_code if isinstance(raw_code, str) and raw_code else None
    type_text = raw_type if isinstance(raw_type, str) and raw_type else None
    code = _CODES.get(code_text or "") or _CODES.get(type_text or "")
    if code is None and status in (None, 400) and message:
        lowered = message.lower()
        if any(phrase in lowered for phrase in _CONTEXT_PHRASES):
            code = ErrorCode.CONTEXT_TOO_LONG
    if code is None and status is None:
        code = _STREAM_TYPES.get(type_text or "")
    return code, code_text or type_text, message


def _image_part(block: ImageBlock) -> dict[str, Any]:
    url = block.url if block.url is not None else f"data:{block.media_type};base64,{block.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _tool_call(block: ToolUseBlock) -> dict[str, Any]:
    args = block.raw_input
    if args is None:
        args = json.dumps(block.input, ensure_ascii=False)
    return {
        "id": block.id,
        "type": "function",
        "function": {"name": block.name, "arguments": args},
    }


def _read_image(part: Mapping[str, Any]) -> ImageBlock:
    url = part["image_url"]["url"]
    match = _DATA_URL_RE.fullmatch(url)
    if match is not None:
        return ImageBlock(data=match.group(2), media_type=match.group(1))
    return ImageBlock(url=url)


def _read_user(item: Mapping[str, Any]) -> Msg:
    content = item["content"]
    if not isinstance(content, str):
        content = tuple(
            TextBlock(text=part["text"]) if part["type"] == "text" else _read_image(part)
            for part in content
        )
    return Msg(role="user", content=content, name=item.get("name"))


def _read_call(call: Mapping[str, Any]) -> ToolUseBlock:
    function = call["function"]
    args = function.get("arguments") or ""
    try:
        parsed = json.loads(args) if args.strip() else {}
    except ValueError:
        parsed = None
    raw = None
    if not isinstance(parsed, dict):
        parsed, raw = {}, args
    return trusted(
        ToolUseBlock,
        id=str(call.get("id") or ""),
        name=str(function["name"]),
        input=freeze(parsed),
        raw_input=raw,
    )


def _read_assistant(item: Mapping[str, Any]) -> Msg:
    blocks: list[Block] = []
    reasoning = item.get("reasoning_content")
    if reasoning:
        blocks.append(ThinkingBlock(thinking=reasoning))
    content = item.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text") or part.get("refusal") or "" for part in content)
    calls = item.get("tool_calls") or ()
    if not blocks and not calls:
        return Msg(role="assistant", content=content or "", name=item.get("name"))
    if content:
        blocks.append(TextBlock(text=content))
    blocks.extend(_read_call(call) for call in calls)
    return Msg(role="assistant", content=tuple(blocks), name=item.get("name"))


def _fold_images(item: Mapping[str, Any], messages: list[Msg], tool_run: list[int]) -> bool:
    """Fold a user message that carries tool-result images back into those results."""
    content = item.get("content")
    if isinstance(content, str) or not content or content[0].get("type") != "text":
        return False
    groups: dict[str, list[ImageBlock]] = {}
    current: list[ImageBlock] | None = None
    for part in content:
        if part.get("type") == "text":
            match = _IMAGES_MARK_RE.fullmatch(part.get("text", ""))
            if match is None:
                return False
            current = groups.setdefault(match.group(1), [])
        elif part.get("type") == "image_url" and current is not None:
            current.append(_read_image(part))
        else:
            return False
    by_id = {messages[i].tool_results[0].id: i for i in tool_run}
    if not set(groups) <= set(by_id):
        return False
    for call_id, images in groups.items():
        pos = by_id[call_id]
        result = messages[pos].tool_results[0]
        text = result.output if isinstance(result.output, str) else ""
        head: tuple[Block, ...] = (
            (TextBlock(text=text),) if text and text != IMAGES_ONLY_NOTE else ()
        )
        messages[pos] = Msg.tool(result.model_copy(update={"output": (*head, *images)}))
    return True


class OpenAIStreamParser:
    r"""Turns `chat.completion.chunk` SSE events into deltas, incrementally.

    Block indexes follow first appearance: reasoning, text and each tool call (by the wire's
    `tool_calls[].index`, so interleaved fragments of parallel calls keep their own index).
    Usage and the finish reason are held until `data: [DONE]`, then sent as a `UsageDelta`
    (the last usage seen; `requests=1`) and a `FinishDelta`. A stream that ends without
    `[DONE]` raises a recoverable `ProviderError` from `close()`.

    Example:
        ```python
        from rxagent.formatters.openai import OpenAIFormatter
        from rxagent.models.framing import SSEDecoder

        parser = OpenAIFormatter().stream_parser()
        raw = (
            b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
            b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
            b"data: [DONE]\n\n"
        )
        deltas = [d for event in SSEDecoder().feed(raw) for d in parser.feed(event)]
        assert [d.type for d in deltas] == ["text_delta", "usage_delta", "finish_delta"]
        assert parser.close() == []
        ```
    """

    __slots__ = ("_calls", "_done", "_finish", "_fmt", "_next", "_text", "_thinking", "_usage")

    def __init__(self, formatter: OpenAIFormatter) -> None:
        self._fmt = formatter
        self._next = 0  # the next block index
        self._text = -1  # the text block's index, once it started
        self._thinking = -1
        self._calls: dict[int, int] = {}  # the wire's tool-call index → block index
        self._usage: Any = None
        self._finish: str | None = None
        self._done = False

    def feed(self, event: SSEEvent) -> list[ModelDelta]:
        """Return the deltas of one SSE event.

        Raises:
            AgentRunError: An `{"error": ...}` event, typed by its code.
            ProviderError: An event that is not a chunk (non-JSON data, wrong shape, an unknown
                finish reason).
        """
        data = event.data
        if not data or self._done:
            return []  # a keep-alive comment, or something after [DONE]
        try:
            chunk = json.loads(data)
        except ValueError:
            if data.strip() == "[DONE]":
                return self._end()
            raise malformed(self._fmt.provider, "a stream event is not JSON", data) from None
        try:
            get = chunk.get  # AttributeError for anything but an object
            if get("error") is not None or get("object") == "error":
                raise self._fmt._stream_error(chunk, data)
            usage = get("usage")
            if usage:
                if type(usage) is not dict:
                    raise TypeError("usage is not an object")
                self._usage = usage
            choices = get("choices")
            if not choices:
                return []
            choice = choices[0]
            if choice.get("index"):
                return []  # another choice of an n > 1 request: only choice 0 is read
            out: list[ModelDelta] = []
            delta = choice["delta"] if "delta" in choice else None
            if delta:
                self._delta(delta, out)
            reason = choice.get("finish_reason")
            if reason is not None:
                self._finish = _finish(reason)
            return out
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise malformed(
                self._fmt.provider, f"a stream chunk has the wrong shape ({exc!r})", data
            ) from None
        except _UnknownFinish as exc:
            raise malformed(
                self._fmt.provider, f"unknown finish_reason {exc.args[0]!r}", data
            ) from None

    def _delta(self, delta: dict[str, Any], out: list[ModelDelta]) -> None:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            if self._thinking < 0:
                self._thinking = self._next
                self._next += 1
            out.append(trusted(ThinkingDelta, index=self._thinking, text=_text(reasoning)))
        content = delta.get("content") or delta.get("refusal")
        if content:
            if self._text < 0:
                self._text = self._next
                self._next += 1
            out.append(trusted(TextDelta, index=self._text, text=_text(content)))
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                self._call(call, out)

    def _call(self, call: dict[str, Any], out: list[ModelDelta]) -> None:
        wire_index = call.get("index")
        if type(wire_index) is not int:  # a server that leaves the index out: id starts a call
            wire_index = len(self._calls) - (0 if call.get("id") or not self._calls else 1)
        function = call.get("function") or {}
        args = function.get("arguments") or ""
        index = self._calls.get(wire_index)
        if index is None:
            index = self._calls[wire_index] = self._next
            self._next += 1
            name = function.get("name")
            out.append(
                trusted(
                    ToolCallDelta,
                    index=index,
                    id=call.get("id") or None,
                    name=name if isinstance(name, str) else None,
                    args=_text(args),
                )
            )
        elif args:
            out.append(trusted(ToolCallDelta, index=index, args=_text(args)))

    def _end(self) -> list[ModelDelta]:
        self._done = True
        usage = trusted(UsageDelta, usage=_usage(self._usage))
        if self._finish is None:
            return [usage]
        return [usage, trusted(FinishDelta, reason=self._finish)]

    def close(self) -> list[ModelDelta]:
        """End the stream.

        Raises:
            ProviderError: `data: [DONE]` never came (recoverable: the stream ended early).
        """
        if self._done:
            return []
        raise provider_error(
            ErrorCode.PROVIDER_ERROR,
            "the stream ended early (no data: [DONE])",
            provider=self._fmt.provider,
            recoverable=True,
        )


def _text(value: Any) -> str:
    if type(value) is str:
        return value
    raise TypeError(f"expected a string, got {type(value).__name__}")
