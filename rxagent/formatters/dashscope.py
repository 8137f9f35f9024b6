"""DashScope (Alibaba Cloud Model Studio, Qwen) native API: request bodies, responses and streams.

The native protocol wraps OpenAI-like chat messages in `{"model", "input": {"messages"},
"parameters"}` and streams Server-Sent Events whose `data:` carries the whole response shape
(`output.choices[0].message`, `finish_reason` as the string `"null"` until the last frame,
cumulative `usage`). Text models use the text-generation endpoint with string contents; Qwen-VL
models use the multimodal endpoint, where every content is a list of `{"text": ...}` /
`{"image": ...}` items. `DashScopeFormatter(multimodal=True)` speaks the second form.

Conversion rules (also in `docs/providers/dashscope.md`):

- several text blocks of one message are joined without a separator (as `Msg.text` does);
- thinking blocks are sent as the assistant message's `reasoning_content` (joined); a thinking
  block's `signature` is not sent, since DashScope has none;
- a tool result is sent as a `tool` message with `tool_call_id` and `name` (the tool's name, so
  the speaker name of a tool message is not sent); block outputs are joined with newlines; an
  error result is prefixed with `TOOL_ERROR_PREFIX`;
- images are sent only in multimodal mode, as `{"image": url}` (base64 data as a data URL); in
  text mode, and inside tool results, they raise `InvalidRequestError`;
- `tool_choice="required"` raises `InvalidRequestError` (DashScope takes `"auto"`, `"none"` or a
  named function);
- `options.extra` is merged into `parameters` (`enable_thinking`, `thinking_budget`, `top_p`,
  ...), except the keys in `TOP_LEVEL_EXTRA`, which go to the top of the body.

Example:
    ```python
    from rxagent.formatters.dashscope import DashScopeFormatter
    from rxagent.messages import Msg
    from rxagent.models import ModelOptions

    body = DashScopeFormatter().format(
        [Msg.user("Hi")], [], ModelOptions(max_output_tokens=50), model="qwen-plus", stream=True
    )
    assert body["input"] == {"messages": [{"role": "user", "content": "Hi"}]}
    assert body["parameters"] == {
        "result_format": "message", "incremental_output": True, "max_tokens": 50
    }
    ```
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent._fast import trusted
from rxagent.errors import AgentRunError, ErrorCode
from rxagent.formatters.base import (
    BaseFormatter,
    Capabilities,
    excerpt,
    malformed,
    parse_retry_after,
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
from rxagent.models.framing import SSEEvent

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "CONTEXT_LENGTH_MARKERS",
    "TOOL_ERROR_PREFIX",
    "TOP_LEVEL_EXTRA",
    "DashScopeFormatter",
    "DashScopeStreamParser",
    "is_multimodal_model",
]

PROVIDER: Final = "dashscope"

TOOL_ERROR_PREFIX: Final = "[tool error] "
"""Prepended to the content of a failed tool result (DashScope has no error flag)."""

TOP_LEVEL_EXTRA: Final = frozenset({"resources"})
"""`options.extra` keys placed at the top of the body instead of in `parameters`."""

CONTEXT_LENGTH_MARKERS: Final = ("range of input length",)
"""Lower-case message fragments that make an `InvalidParameter` error `CONTEXT_TOO_LONG`
(DashScope says "Range of input length should be [1, 30720]")."""

_FINISH: Final = {"stop": "stop", "length": "length", "tool_calls": "tool_calls"}
_OWN_PARAMS: Final = frozenset({"result_format", "incremental_output"})
_OPTION_PARAMS: Final = frozenset(
    {
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "temperature",
        "max_tokens",
        "stop",
        "seed",
        "response_format",
    }
)
_RESPONSE_FORMATS: Final = frozenset({"text", "json_object", "json_schema"})
_RETRYABLE_HEADS: Final = frozenset(
    {"InternalError", "ServiceUnavailable", "SystemError", "RequestTimeOut"}
)

_TEXT_CAPABILITIES: Final = Capabilities(
    supports_tools=True,
    supports_thinking=True,
    supports_vision=False,
    supports_parallel_tools=True,
    supports_tool_result_images=False,
    supports_json_schema=True,
    supports_tool_choice_required=False,
)
_MULTIMODAL_CAPABILITIES: Final = Capabilities(
    supports_tools=True,
    supports_thinking=True,
    supports_vision=True,
    supports_parallel_tools=True,
    supports_tool_result_images=False,
    supports_json_schema=True,
    supports_tool_choice_required=False,
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


# -- requests --------------------------------------------------------------------------------------


def _image_url(block: ImageBlock) -> str:
    if block.url is not None:
        return block.url
    return f"data:{block.media_type};base64,{block.data}"


def _image_block(url: str) -> ImageBlock:
    if url.startswith("data:") and ";base64," in url:
        media_type, _, data = url[5:].partition(";base64,")
        return ImageBlock(data=data, media_type=media_type)
    return ImageBlock(url=url)


def _tool_schema(tool: ToolSchema) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def _arguments(call: ToolUseBlock) -> str:
    if call.raw_input is not None:
        return call.raw_input
    return json.dumps(call.input, ensure_ascii=False)


def _tool_choice(choice: str) -> str | dict[str, Any]:
    if choice in ("auto", "none"):
        return choice
    if choice == "required":
        raise unsupported(
            PROVIDER,
            'tool_choice="required"',
            'DashScope takes "auto", "none" or a tool name; name the tool (tool_choice="add")',
        )
    return {"type": "function", "function": {"name": choice}}


def _response_format(value: Mapping[str, Any]) -> dict[str, Any]:
    kind = value.get("type")
    if kind not in _RESPONSE_FORMATS:
        raise unsupported(
            PROVIDER,
            f"response_format of type {kind!r}",
            'use {"type": "json_object"} or {"type": "json_schema", "json_schema": {...}}',
        )
    formatted: dict[str, Any] = thaw(value)
    return formatted


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

    # -- format ------------------------------------------------------------------------------------

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
        wire = [self._message(m) for m in messages]
        params: dict[str, Any] = {"result_format": "message"}
        if stream:
            params["incremental_output"] = True
        if tools:
            params["tools"] = [_tool_schema(t) for t in tools]
        if options.tool_choice is not None:
            params["tool_choice"] = _tool_choice(options.tool_choice)
        if options.parallel_tool_calls is not None:
            params["parallel_tool_calls"] = options.parallel_tool_calls
        if options.temperature is not None:
            params["temperature"] = options.temperature
        if options.max_output_tokens is not None:
            params["max_tokens"] = options.max_output_tokens
        if options.stop is not None:
            params["stop"] = list(options.stop)
        if options.seed is not None:
            params["seed"] = options.seed
        if options.response_format is not None:
            params["response_format"] = _response_format(options.response_format)
        body: dict[str, Any] = {"model": model, "input": {"messages": wire}, "parameters": params}
        if options.extra:
            self._merge_extra(body, params, options.extra, stream=stream)
        return body

    @staticmethod
    def _merge_extra(
        body: dict[str, Any], params: dict[str, Any], extra: Mapping[str, Any], *, stream: bool
    ) -> None:
        for key, value in extra.items():
            if key == "result_format" and value != "message":
                raise unsupported(
                    PROVIDER,
                    f"extra result_format={value!r}",
                    'rxagent reads result_format="message" only; remove it from extra',
                )
            if key == "incremental_output" and stream and value is not True:
                raise unsupported(
                    PROVIDER,
                    f"extra incremental_output={value!r} while streaming",
                    "rxagent parses incremental streams only; remove it from extra",
                )
            (body if key in TOP_LEVEL_EXTRA else params)[key] = thaw(value)

    def _message(self, msg: Msg) -> dict[str, Any]:
        role = msg.role
        if role == "assistant":
            return self._assistant(msg)
        if role == "tool":
            return self._tool_message(msg)
        content = msg.content
        wire: dict[str, Any]
        if isinstance(content, str):
            wire = {"role": role, "content": [{"text": content}] if self.multimodal else content}
        else:
            parts: list[dict[str, str]] = []
            for block in content:
                if type(block) is TextBlock:
                    parts.append({"text": block.text})
                elif type(block) is ImageBlock and role == "user":
                    if not self.multimodal:
                        raise unsupported(
                            PROVIDER,
                            "an image with a text model",
                            "use a Qwen-VL model (its name has '-vl') or "
                            "DashScopeChatModel(..., multimodal=True)",
                        )
                    parts.append({"image": _image_url(block)})
                else:
                    raise unsupported(
                        PROVIDER,
                        f"a {block.type} block in a {role} message",
                        "send tool results as Msg.tool(...) and images in user messages",
                    )
            text = parts if self.multimodal else "".join(p["text"] for p in parts)
            wire = {"role": role, "content": text}
        if msg.name is not None:
            wire["name"] = msg.name
        return wire

    def _assistant(self, msg: Msg) -> dict[str, Any]:
        content = msg.content
        thinking: list[str] | None = None
        calls: list[dict[str, Any]] = []
        if isinstance(content, str):
            text = content
        else:
            texts: list[str] = []
            for block in content:
                if type(block) is TextBlock:
                    texts.append(block.text)
                elif type(block) is ToolUseBlock:
                    calls.append(
                        {
                            "id": block.id,
                            "type": "function",
                            "function": {"name": block.name, "arguments": _arguments(block)},
                        }
                    )
                elif type(block) is ThinkingBlock:
                    if thinking is None:
                        thinking = []
                    thinking.append(block.thinking)
                else:
                    raise unsupported(
                        PROVIDER,
                        f"a {block.type} block in an assistant message",
                        "assistant messages carry text, thinking and tool calls",
                    )
            text = "".join(texts)
        wire: dict[str, Any] = {
            "role": "assistant",
            "content": ([{"text": text}] if text else []) if self.multimodal else text,
        }
        if thinking is not None:
            wire["reasoning_content"] = "".join(thinking)
        if calls:
            wire["tool_calls"] = calls
        if msg.name is not None:
            wire["name"] = msg.name
        return wire

    def _tool_message(self, msg: Msg) -> dict[str, Any]:
        content = msg.content
        if isinstance(content, str) or len(content) != 1 or type(content[0]) is not ToolResultBlock:
            raise unsupported(
                PROVIDER,
                "a tool message that is not exactly one tool result",
                "build it with Msg.tool(ToolResultBlock(...))",
            )
        result: ToolResultBlock = content[0]
        output = result.output
        if isinstance(output, str):
            text = output
        else:
            texts: list[str] = []
            for block in output:
                if type(block) is not TextBlock:
                    raise unsupported(
                        PROVIDER,
                        f"a {block.type} block inside a tool result",
                        "DashScope tool messages carry text only; return text, or send the "
                        "image in a user message to a Qwen-VL model",
                    )
                texts.append(block.text)
            text = "\n".join(texts)
        if result.is_error:
            text = TOOL_ERROR_PREFIX + text
        return {
            "role": "tool",
            "content": [{"text": text}] if self.multimodal else text,
            "tool_call_id": result.id,
            "name": result.name,
        }

    # -- parse_request -----------------------------------------------------------------------------

    def parse_request(self, body: Any) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
        """Read a request body back into messages, tools and options: the inverse of `format`.

        Normalisation: message ids and metadata are new; joined texts come back as one text;
        thinking comes back as one block without signature, first in its message; block outputs
        of tool results come back as one string; a data-URL image comes back as `data`.

        Raises:
            ProviderError: A body that is not a DashScope generation request.
        """
        try:
            raw_messages = body["input"]["messages"]
            params = body.get("parameters") or {}
            messages = [self._read_message(m) for m in raw_messages]
            tools = [
                ToolSchema(
                    name=t["function"]["name"],
                    description=t["function"].get("description", ""),
                    parameters=t["function"].get("parameters") or {},
                )
                for t in params.get("tools") or ()
            ]
            options = self._read_options(body, params)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise malformed(PROVIDER, f"not a generation request ({exc!r})", body) from None
        return messages, tools, options

    @staticmethod
    def _read_options(body: Mapping[str, Any], params: Mapping[str, Any]) -> ModelOptions:
        fields: dict[str, Any] = {}
        choice = params.get("tool_choice")
        if isinstance(choice, dict):
            fields["tool_choice"] = choice["function"]["name"]
        elif choice is not None:
            fields["tool_choice"] = choice
        for wire, name in (
            ("parallel_tool_calls", "parallel_tool_calls"),
            ("temperature", "temperature"),
            ("max_tokens", "max_output_tokens"),
            ("seed", "seed"),
            ("response_format", "response_format"),
        ):
            if wire in params:
                fields[name] = params[wire]
        stop = params.get("stop")
        if stop is not None:
            fields["stop"] = (stop,) if isinstance(stop, str) else tuple(stop)
        extra = {
            k: v for k, v in params.items() if k not in _OPTION_PARAMS and k not in _OWN_PARAMS
        }
        extra.update((k, v) for k, v in body.items() if k not in ("model", "input", "parameters"))
        if extra:
            fields["extra"] = extra
        return ModelOptions(**fields)

    def _read_message(self, raw: Mapping[str, Any]) -> Msg:
        role = raw["role"]
        content: Any = raw.get("content")
        name = raw.get("name")
        if role == "tool":
            text = _text_of(content)
            is_error = text.startswith(TOOL_ERROR_PREFIX)
            if is_error:
                text = text[len(TOOL_ERROR_PREFIX) :]
            result = ToolResultBlock(
                id=raw["tool_call_id"], name=name or "", output=text, is_error=is_error
            )
            return Msg(role="tool", content=(result,))
        if role == "assistant":
            blocks: list[Block] = []
            if "reasoning_content" in raw:
                blocks.append(ThinkingBlock(thinking=raw["reasoning_content"] or ""))
            text = _text_of(content)
            if text:
                blocks.append(TextBlock(text=text))
            blocks.extend(_tool_use(c["id"], c["function"]) for c in raw.get("tool_calls") or ())
            if len(blocks) == 1 and type(blocks[0]) is TextBlock and isinstance(content, str):
                return Msg(role="assistant", content=text, name=name)
            return Msg(role="assistant", content=blocks if blocks else "", name=name)
        if isinstance(content, str):
            return Msg(role=role, content=content, name=name)
        if role == "system":
            return Msg(role=role, content=_text_of(content), name=name)
        parts: list[Block] = [
            _image_block(part["image"]) if "image" in part else TextBlock(text=part["text"])
            for part in content
        ]
        return Msg(role=role, content=parts, name=name)

    # -- responses ---------------------------------------------------------------------------------

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole (non-streamed) response.

        Raises:
            AgentRunError: The typed error, for a body that carries a DashScope error code.
            ProviderError: A body that is not a DashScope response, or an unknown finish reason.
        """
        if not isinstance(body, dict):
            raise malformed(PROVIDER, "the response is not a JSON object", body)
        output = body.get("output")
        if not isinstance(output, dict):
            if isinstance(body.get("code"), str) and body["code"]:
                status = body.get("status_code")
                raise _classify(
                    status if isinstance(status, int) else 500,
                    body["code"],
                    body.get("message"),
                    json.dumps(body, ensure_ascii=False),
                    None,
                )
            raise malformed(PROVIDER, "no output object", body)
        choices = output.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            choice = choices[0]
            message = choice.get("message")
            finish = choice.get("finish_reason")
        elif isinstance(output.get("text"), str):  # result_format="text"
            message = {"content": output["text"]}
            finish = output.get("finish_reason")
        else:
            raise malformed(PROVIDER, "no output.choices[0]", body)
        if not isinstance(message, dict):
            raise malformed(PROVIDER, "no output.choices[0].message", body)
        reason = _FINISH.get(finish) if isinstance(finish, str) else None
        if reason is None:
            raise malformed(PROVIDER, f"unknown finish_reason {finish!r}", body)
        builder = ResponseBuilder()
        for delta in DashScopeStreamParser().message_deltas(message, body):
            builder.add(delta)
        return ModelResponse(
            message=builder.build(), usage=_usage(body.get("usage")), finish_reason=reason
        )

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
        code = message = None
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if isinstance(data, dict):
            inner = data.get("error")
            source = inner if isinstance(inner, dict) else data
            code, message = source.get("code"), source.get("message")
        return _classify(status, code, message, body, headers)


# -- shared readers -------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    """The text of a wire content: a string, or the `text` items of a list joined."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    return "".join(part["text"] for part in content if "text" in part)


def _tool_use(call_id: str, function: Mapping[str, Any]) -> ToolUseBlock:
    args = function.get("arguments") or ""
    try:
        parsed = json.loads(args) if args.strip() else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return ToolUseBlock(id=call_id, name=function["name"], input=parsed)
    return ToolUseBlock(id=call_id, name=function["name"], raw_input=args)


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def _usage(raw: Any) -> Usage:
    """DashScope usage → `Usage`; cached tokens from `prompt_tokens_details` where present."""
    if not isinstance(raw, dict):
        return trusted(Usage, requests=1)
    details = raw.get("prompt_tokens_details")
    read = write = 0
    if isinstance(details, dict):
        read = _int(details.get("cached_tokens"))
        write = _int(details.get("cache_creation_input_tokens"))
    return trusted(
        Usage,
        input_tokens=_int(raw.get("input_tokens", raw.get("prompt_tokens"))),
        output_tokens=_int(raw.get("output_tokens", raw.get("completion_tokens"))),
        cache_read_tokens=read,
        cache_write_tokens=write,
        requests=1,
    )


def _code_kind(code: str, message: str) -> tuple[ErrorCode, bool] | None:
    """`(ErrorCode, recoverable)` for a DashScope error code, or None to classify by status.

    Codes are dotted (`Throttling.RateQuota`, `InternalError.Algo.InvalidParameter`); a
    specific segment (`InvalidParameter`, `DataInspectionFailed`) wins over a generic head.
    """
    parts = code.split(".")
    head = parts[0]
    if head == "Throttling":
        return ErrorCode.RATE_LIMITED, True
    if "InvalidApiKey" in parts or "AccessDenied" in parts:
        return ErrorCode.AUTH, False
    if "Arrearage" in parts:
        return ErrorCode.RATE_LIMITED, False  # the account is overdue: waiting will not help
    if "DataInspectionFailed" in parts:
        return ErrorCode.INVALID_REQUEST, False  # the content filter refused the input or output
    if "InvalidParameter" in parts:
        lowered = message.lower()
        if any(marker in lowered for marker in CONTEXT_LENGTH_MARKERS):
            return ErrorCode.CONTEXT_TOO_LONG, False
        return ErrorCode.INVALID_REQUEST, False
    if head in _RETRYABLE_HEADS:
        return ErrorCode.PROVIDER_ERROR, True
    return None


def _classify(
    status: int,
    code: Any,
    message: Any,
    body: bytes | str,
    headers: Mapping[str, str] | None,
) -> AgentRunError:
    """The typed error for a DashScope failure: by `code` when known, else by HTTP status."""
    code = code if isinstance(code, str) and code else None
    text = message if isinstance(message, str) and message else None
    kind = _code_kind(code, text or "") if code is not None else None
    if kind is None:
        return status_error(
            PROVIDER, status, body, message=text, provider_code=code, headers=headers
        )
    return provider_error(
        kind[0],
        text or excerpt(body) or f"HTTP {status}",
        provider=PROVIDER,
        status=status,
        provider_code=code,
        body=body,
        recoverable=kind[1],
        retry_after=parse_retry_after(headers) if headers else None,
    )


def _status_of(comments: tuple[str, ...]) -> int | None:
    for comment in comments:
        if comment.startswith("HTTP_STATUS/"):
            try:
                return int(comment[12:])
            except ValueError:
                return None
    return None


# -- streams --------------------------------------------------------------------------------------


def _first_choice(output: dict[str, Any], data: str) -> dict[str, Any] | None:
    choices = output.get("choices")
    if type(choices) is not list:
        if isinstance(output.get("text"), str):  # result_format="text"
            return {"message": {"content": output["text"]}, **output}
        raise malformed(PROVIDER, "a stream frame has no output.choices", data)
    if not choices:
        return None
    choice = choices[0]
    if type(choice) is not dict:
        raise malformed(PROVIDER, "output.choices[0] is not an object", data)
    return choice


class DashScopeStreamParser:
    r"""Turns the SSE frames of one incremental DashScope stream into deltas.

    Blocks get indexes by first appearance (thinking, text, each tool call by its wire `index`).
    Usage is cumulative on every frame, so only the last one is reported, once, by `close()`,
    with the finish reason. The stream is complete when a frame's `finish_reason` is not
    `"null"`.

    Example:
        ```python
        from rxagent.formatters.dashscope import DashScopeStreamParser
        from rxagent.models.framing import SSEDecoder

        raw = (
            b'id:1\nevent:result\n:HTTP_STATUS/200\ndata:{"output":{"choices":[{"message":'
            b'{"content":"Hi","role":"assistant"},"finish_reason":"stop"}]},'
            b'"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}\n\n'
        )
        parser = DashScopeStreamParser()
        deltas = [d for e in SSEDecoder().feed(raw) for d in parser.feed(e)] + parser.close()
        assert deltas[0].text == "Hi" and deltas[1].usage.input_tokens == 3
        assert deltas[-1].reason == "stop"
        ```
    """

    __slots__ = ("_calls", "_finish", "_next", "_text", "_thinking", "_usage")

    def __init__(self) -> None:
        self._next = 0
        self._thinking = -1
        self._text = -1
        self._calls: dict[int, int] = {}  # wire index -> block index
        self._usage: Any = None
        self._finish: str | None = None

    def feed(self, event: SSEEvent) -> list[ModelDelta]:
        """Return the deltas of one SSE frame.

        Raises:
            AgentRunError: An `event:error` frame, typed by its `code`.
            ProviderError: A frame that is not JSON or not a DashScope response.
        """
        data = event.data
        if event.event == "error":
            raise self._error(event)
        if not data:
            return []  # a comment-only keep-alive
        try:
            frame = json.loads(data)
        except ValueError:
            raise malformed(PROVIDER, "a stream frame is not JSON", data) from None
        if type(frame) is not dict:
            raise malformed(PROVIDER, "a stream frame is not an object", data)
        output = frame.get("output")
        if type(output) is not dict:
            if frame.get("code"):
                raise self._error(event)
            raise malformed(PROVIDER, "a stream frame has no output object", data)
        usage = frame.get("usage")
        if usage is not None:
            self._usage = usage
        choice = _first_choice(output, data)
        if choice is None:
            return []
        finish = choice.get("finish_reason")
        if finish is not None and finish != "null":
            reason = _FINISH.get(finish) if type(finish) is str else None
            if reason is None:
                raise malformed(PROVIDER, f"unknown finish_reason {finish!r}", data)
            self._finish = reason
        message = choice.get("message")
        if message is None:
            return []
        if type(message) is not dict:
            raise malformed(PROVIDER, "output.choices[0].message is not an object", data)
        return self.message_deltas(message, data)

    def message_deltas(self, message: Mapping[str, Any], data: Any = None) -> list[ModelDelta]:
        """The content deltas of one `message` object (a frame's, or a whole response's).

        Raises:
            ProviderError: A field of the wrong type.
        """
        deltas: list[ModelDelta] = []
        reasoning = message.get("reasoning_content")
        if reasoning:
            if type(reasoning) is not str:
                raise malformed(PROVIDER, "reasoning_content is not a string", data or message)
            if self._thinking < 0:
                self._thinking = self._next
                self._next += 1
            deltas.append(trusted(ThinkingDelta, index=self._thinking, text=reasoning))
        content = message.get("content")
        if content:
            if type(content) is not str:
                try:
                    content = "".join(part["text"] for part in content if "text" in part)
                except (TypeError, KeyError):
                    raise malformed(PROVIDER, "content is not text", data or message) from None
            if content:
                if self._text < 0:
                    self._text = self._next
                    self._next += 1
                deltas.append(trusted(TextDelta, index=self._text, text=content))
        calls = message.get("tool_calls")
        if calls:
            if type(calls) is not list:
                raise malformed(PROVIDER, "tool_calls is not a list", data or message)
            for call in calls:
                self._call_deltas(call, deltas, data or message)
        return deltas

    def _call_deltas(self, call: Any, deltas: list[ModelDelta], data: Any) -> None:
        function = call.get("function") if type(call) is dict else None
        if type(function) is not dict:
            raise malformed(PROVIDER, "a tool call without a function object", data)
        call_id = call.get("id") or None
        name = function.get("name") or None
        args = function.get("arguments") or ""
        if type(args) is not str or not isinstance(call_id, str | None):
            raise malformed(PROVIDER, "a tool call with non-string fields", data)
        if not isinstance(name, str | None):
            raise malformed(PROVIDER, "a tool call with a non-string name", data)
        wire = call.get("index")
        if type(wire) is not int:  # no index: a new call has an id, a fragment continues the last
            wire = len(self._calls) if call_id or not self._calls else max(self._calls)
        position = self._calls.get(wire)
        if position is None:
            position = self._calls[wire] = self._next
            self._next += 1
            deltas.append(trusted(ToolCallDelta, index=position, id=call_id, name=name, args=""))
        elif call_id is not None or name is not None:
            deltas.append(trusted(ToolCallDelta, index=position, id=call_id, name=name, args=""))
        if args:
            deltas.append(trusted(ToolCallDelta, index=position, args=args))

    def close(self) -> list[ModelDelta]:
        """End the stream: the usage of the last frame, then the finish reason.

        Raises:
            ProviderError: (recoverable) No frame had a finish reason: the stream ended early.
        """
        if self._finish is None:
            raise provider_error(
                ErrorCode.PROVIDER_ERROR,
                "the stream ended early (no frame with a finish_reason)",
                provider=PROVIDER,
                recoverable=True,
            )
        return [
            trusted(UsageDelta, usage=_usage(self._usage)),
            trusted(FinishDelta, reason=self._finish),
        ]

    @staticmethod
    def _error(event: SSEEvent) -> AgentRunError:
        status = _status_of(event.comments) or 500
        if status < 400:
            status = 500
        try:
            data = json.loads(event.data)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return status_error(PROVIDER, status, event.data or f"HTTP {status}")
        return _classify(status, data.get("code"), data.get("message"), event.data, None)
