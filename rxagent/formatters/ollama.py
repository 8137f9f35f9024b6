"""Ollama's native chat API (`POST /api/chat`): request bodies, responses, NDJSON lines, errors.

The formatter is pure: the client (`rxagent.models.ollama`) does the HTTP and the NDJSON framing,
and hands `OllamaFormatter` each decoded line (a JSON value).

The conversion rules are listed on `OllamaFormatter` and in `docs/providers/ollama.md`.

Example:
    ```python
    from rxagent.formatters.ollama import OllamaFormatter
    from rxagent.messages import Msg
    from rxagent.models import ModelOptions

    fmt = OllamaFormatter()
    body = fmt.format([Msg.user("Hi")], [], ModelOptions(max_output_tokens=64), model="llama3.2",
                      stream=True)
    assert body["options"] == {"num_predict": 64} and body["messages"][0]["content"] == "Hi"
    deltas = fmt.parse_stream([
        {"message": {"role": "assistant", "content": "Hello"}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
         "prompt_eval_count": 9, "eval_count": 2},
    ])
    assert [d.type for d in deltas] == ["text_delta", "usage_delta", "finish_delta"]
    ```
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

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

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.messages import Block

__all__ = ["TOOL_ERROR_PREFIX", "OllamaFormatter", "OllamaStreamParser"]

PROVIDER: Final = "ollama"

TOOL_ERROR_PREFIX: Final = "Error: "
"""How the content of an `is_error` tool result starts (Ollama has no error flag)."""

_RESERVED_EXTRA: Final = frozenset(("model", "messages", "stream"))
_CONTEXT_MARKER: Final = "exceeds maximum context length"
_MODEL_NOT_FOUND: Final = re.compile(r"\bmodel\s+['\"]?[^'\"]*['\"]?\s+not found", re.IGNORECASE)


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
        supports_thinking=True,
        supports_vision=True,
        supports_parallel_tools=True,
        supports_tool_result_images=True,
        supports_json_schema=True,
        supports_tool_choice_required=False,
    )

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
        body: dict[str, Any] = {
            "model": model,
            "messages": [_message(m) for m in messages],
            "stream": stream,
        }
        choice = options.tool_choice
        if choice not in (None, "auto", "none"):
            raise unsupported(
                PROVIDER,
                f"tool_choice={choice!r}",
                "Ollama cannot force a tool call; use tool_choice='auto' (or 'none') and ask "
                "for the tool in the prompt",
            )
        if tools and choice != "none":
            if options.parallel_tool_calls is False:
                raise unsupported(
                    PROVIDER,
                    "parallel_tool_calls=False",
                    "Ollama cannot limit a reply to one tool call; leave parallel_tool_calls "
                    "unset (the agent runs every call it gets)",
                )
            body["tools"] = [_tool(t) for t in tools]
        if options.response_format is not None:
            body["format"] = _format_field(options.response_format)
        if self.think is not None:
            body["think"] = self.think
        if self.keep_alive is not None:
            body["keep_alive"] = self.keep_alive
        _add_options(body, options)
        return body

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
        return _parse_request(body)

    # -- responses ---------------------------------------------------------------------------------

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole (`"stream": false`) response.

        Raises:
            ProviderError: A body that is not a finished chat response (or has an unknown
                `done_reason`).
            AgentRunError: The body is an Ollama error (`{"error": "..."}`), typed by its text.
        """
        if not isinstance(body, dict):
            raise malformed(PROVIDER, "the response is not a JSON object", body)
        message = body.get("message")
        if not isinstance(message, dict):
            if isinstance(body.get("error"), str):
                raise _stream_error(body["error"], body)
            raise malformed(PROVIDER, "the response has no message object", body)
        if body.get("done") is not True:
            raise malformed(PROVIDER, "a whole response must have done: true", body)
        blocks: list[Block] = []
        thinking = message.get("thinking")
        if thinking:
            if not isinstance(thinking, str):
                raise malformed(PROVIDER, "message.thinking is not a string", body)
            blocks.append(ThinkingBlock(thinking=thinking))
        content = message.get("content")
        if content:
            if not isinstance(content, str):
                raise malformed(PROVIDER, "message.content is not a string", body)
            blocks.append(TextBlock(text=content))
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise malformed(PROVIDER, "message.tool_calls is not a list", body)
        for call in calls:
            call_id, name, args = _tool_call(call, body)
            if isinstance(args, dict):
                blocks.append(ToolUseBlock(id=call_id or "", name=name, input=args))
            else:
                blocks.append(_raw_call(call_id or "", name, args))
        return ModelResponse(
            message=Msg(role="assistant", content=tuple(blocks)),
            usage=_usage(body),
            finish_reason=_finish_reason(body.get("done_reason"), bool(calls), body),
        )

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
        message = _error_message(body)
        code = (
            ErrorCode.CONTEXT_TOO_LONG if message and _CONTEXT_MARKER in message.lower() else None
        )
        return status_error(PROVIDER, status, body, message=message, code=code, headers=headers)


class OllamaStreamParser:
    """Turns the decoded NDJSON lines of one streamed `/api/chat` response into deltas.

    Each line's `message` may carry `thinking` and `content` pieces and whole `tool_calls`; a
    block's index is its position in the response (in order of first appearance). The line with
    `"done": true` gives the usage and the finish reason; the stream is complete only after it.

    Example:
        ```python
        from rxagent.formatters.ollama import OllamaStreamParser

        parser = OllamaStreamParser()
        call = {"function": {"name": "add", "arguments": {"a": 1}}}
        [delta] = parser.feed({"message": {"role": "assistant", "content": "",
                                           "tool_calls": [call]}, "done": False})
        assert (delta.id, delta.name, delta.args) == (None, "add", '{"a": 1}')
        ```
    """

    __slots__ = ("_calls", "_done", "_next", "_text", "_thinking")

    def __init__(self) -> None:
        self._next = 0
        self._text = -1
        self._thinking = -1
        self._calls = False
        self._done = False

    def feed(self, event: Any) -> list[ModelDelta]:
        """Return the deltas of one decoded line (lines after the done line are ignored).

        Raises:
            AgentRunError: An `{"error": "..."}` line, typed by its text.
            ProviderError: A line that is not an Ollama chat chunk.
        """
        if self._done:
            return []
        try:
            message = event["message"]
        except (KeyError, TypeError, IndexError):
            return self._without_message(event)
        if type(message) is not dict:
            raise malformed(PROVIDER, "a stream line whose message is not an object", event)
        out: list[ModelDelta] = []
        thinking = message.get("thinking")
        if thinking:
            if type(thinking) is not str:
                raise malformed(PROVIDER, "message.thinking is not a string", event)
            if self._thinking < 0:
                self._thinking = self._next
                self._next += 1
            out.append(trusted(ThinkingDelta, index=self._thinking, text=thinking))
        content = message.get("content")
        if content:
            if type(content) is not str:
                raise malformed(PROVIDER, "message.content is not a string", event)
            if self._text < 0:
                self._text = self._next
                self._next += 1
            out.append(trusted(TextDelta, index=self._text, text=content))
        calls = message.get("tool_calls")
        if calls:
            if type(calls) is not list:
                raise malformed(PROVIDER, "message.tool_calls is not a list", event)
            for call in calls:
                call_id, name, args = _tool_call(call, event)
                text = args if isinstance(args, str) else json.dumps(args)
                out.append(
                    trusted(ToolCallDelta, index=self._next, id=call_id, name=name, args=text)
                )
                self._next += 1
            self._calls = True
        if event.get("done") is True:
            out.extend(self._finish(event))
        return out

    def close(self) -> list[ModelDelta]:
        """End the stream.

        Raises:
            ProviderError: (recoverable) The stream ended before its `"done": true` line.
        """
        if not self._done:
            raise provider_error(
                ErrorCode.PROVIDER_ERROR,
                'the stream ended early: no line with "done": true arrived',
                provider=PROVIDER,
                recoverable=True,
            )
        return []

    def _without_message(self, event: Any) -> list[ModelDelta]:
        if not isinstance(event, dict):
            raise malformed(PROVIDER, "a stream line that is not a JSON object", event)
        error = event.get("error")
        if error is not None:
            raise _stream_error(error if isinstance(error, str) else json.dumps(error), event)
        if event.get("done") is True:
            return self._finish(event)
        raise malformed(PROVIDER, "a stream line without a message", event)

    def _finish(self, event: dict[str, Any]) -> list[ModelDelta]:
        reason = _finish_reason(event.get("done_reason"), self._calls, event)
        self._done = True
        return [trusted(UsageDelta, usage=_usage(event)), trusted(FinishDelta, reason=reason)]


def _stream_error(message: str, data: Any) -> AgentRunError:
    """The typed error for an Ollama error that came without an HTTP status (in a stream).

    `"model '...' not found"` is `INVALID_REQUEST` (as its 404 would be), a message containing
    `"exceeds maximum context length"` is `CONTEXT_TOO_LONG`; anything else is a recoverable
    `PROVIDER_ERROR` (the model runner failed mid-answer).
    """
    lowered = message.lower()
    if _CONTEXT_MARKER in lowered:
        code, recoverable = ErrorCode.CONTEXT_TOO_LONG, False
    elif _MODEL_NOT_FOUND.search(message):
        code, recoverable = ErrorCode.INVALID_REQUEST, False
    else:
        code, recoverable = ErrorCode.PROVIDER_ERROR, True
    body = data if isinstance(data, str) else json.dumps(data, default=str)
    return provider_error(code, message, provider=PROVIDER, body=body, recoverable=recoverable)


# -- request pieces --------------------------------------------------------------------------------


def _message(msg: Msg) -> dict[str, Any]:
    if msg.name is not None:
        raise unsupported(
            PROVIDER,
            f"a message with name={msg.name!r}",
            "Ollama messages have no speaker name; put it into the text (for example "
            "'alice: ...') and leave Msg.name unset",
        )
    role = msg.role
    content = msg.content
    if role == "tool":
        return _tool_message(content)
    if isinstance(content, str):
        return {"role": role, "content": content}
    if role == "assistant":
        return _assistant_message(content)
    texts: list[str] = []
    images: list[str] = []
    for block in content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ImageBlock) and role == "user":
            images.append(_image_data(block))
        else:
            raise unsupported(
                PROVIDER,
                f"a {block.type} block in a {role} message",
                f"{role} messages carry text" + (" and images" if role == "user" else ""),
            )
    out: dict[str, Any] = {"role": role, "content": "\n".join(texts)}
    if images:
        out["images"] = images
    return out


def _assistant_message(content: Sequence[Block]) -> dict[str, Any]:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thoughts.append(block.thinking)
        elif isinstance(block, ToolUseBlock):
            call: dict[str, Any] = {
                "function": {"name": block.name, "arguments": thaw(block.input)}
            }
            if block.id:
                call["id"] = block.id
            calls.append(call)
        else:
            raise unsupported(
                PROVIDER,
                f"a {block.type} block in an assistant message",
                "assistant messages carry text, thinking and tool calls",
            )
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts)}
    if thoughts:
        out["thinking"] = "\n".join(thoughts)
    if calls:
        out["tool_calls"] = calls
    return out


def _tool_message(content: str | tuple[Block, ...]) -> dict[str, Any]:
    if isinstance(content, str) or len(content) != 1 or not isinstance(content[0], ToolResultBlock):
        raise unsupported(
            PROVIDER,
            "a tool message without exactly one tool result",
            "build it with Msg.tool(ToolResultBlock(...))",
        )
    result = content[0]
    images: list[str] = []
    if isinstance(result.output, str):
        text = result.output
    else:
        texts: list[str] = []
        for block in result.output:
            if isinstance(block, TextBlock):
                texts.append(block.text)
            elif isinstance(block, ImageBlock):
                images.append(_image_data(block))
            else:
                raise unsupported(
                    PROVIDER, f"a {block.type} block in a tool result", "return text and images"
                )
        text = "\n".join(texts)
    out: dict[str, Any] = {
        "role": "tool",
        "content": TOOL_ERROR_PREFIX + text if result.is_error else text,
        "tool_name": result.name,
    }
    if result.id:
        out["tool_call_id"] = result.id
    if images:
        out["images"] = images
    return out


def _image_data(block: ImageBlock) -> str:
    if block.data is not None:
        return block.data
    url = block.url or ""
    if url.startswith("data:"):
        header, comma, payload = url.partition(",")
        if comma and header.endswith(";base64"):
            return payload
    raise unsupported(
        PROVIDER,
        f"the image URL {url[:80]!r}",
        "Ollama takes image bytes only: download the image and pass "
        "ImageBlock(data=<base64>, media_type=...) (or a base64 data: URL)",
    )


def _add_options(body: dict[str, Any], options: ModelOptions) -> None:
    """Set `body["options"]` from the typed fields, then merge `extra` (see the class docs)."""
    sampling: dict[str, Any] = {}
    if options.temperature is not None:
        sampling["temperature"] = options.temperature
    if options.max_output_tokens is not None:
        sampling["num_predict"] = options.max_output_tokens
    if options.stop is not None:
        sampling["stop"] = list(options.stop)
    if options.seed is not None:
        sampling["seed"] = options.seed
    for key, value in options.extra.items():
        if key in _RESERVED_EXTRA:
            raise unsupported(
                PROVIDER,
                f"extra[{key!r}]",
                "the client sets it; pass the model name to the client and the messages to the "
                "call",
            )
        if key == "options":
            if not isinstance(value, Mapping):
                raise unsupported(
                    PROVIDER, "a non-object extra['options']", "pass a dict of Ollama options"
                )
            sampling.update(thaw(value))
        else:
            body[key] = thaw(value)
    if sampling:
        body["options"] = sampling


def _tool(schema: ToolSchema) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": schema.name,
            "description": schema.description,
            "parameters": thaw(schema.parameters),
        },
    }


def _format_field(response_format: Mapping[str, Any]) -> Any:
    kind = response_format.get("type")
    if kind == "json_object":
        return "json"
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        if isinstance(schema, Mapping):
            return thaw(schema)
    raise unsupported(
        PROVIDER,
        f"response_format={thaw(response_format)!r}",
        "use {'type': 'json_object'} or {'type': 'json_schema', 'json_schema': "
        "{'name': ..., 'schema': {...}}}",
    )


# -- response pieces -------------------------------------------------------------------------------


def _tool_call(call: Any, data: Any) -> tuple[str | None, str, Any]:
    """Return `(id or None, name, arguments)` of one wire tool call."""
    try:
        function = call["function"]
        name = function["name"]
        args = function.get("arguments", {})
    except (KeyError, TypeError, IndexError, AttributeError):
        raise malformed(PROVIDER, "a tool call without function.name", data) from None
    if not isinstance(name, str) or not isinstance(args, dict | str):
        raise malformed(PROVIDER, "a tool call whose name or arguments have the wrong type", data)
    call_id = call.get("id")
    return (call_id if isinstance(call_id, str) and call_id else None), name, args


def _raw_call(call_id: str, name: str, args: str) -> ToolUseBlock:
    try:
        parsed = json.loads(args) if args.strip() else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return ToolUseBlock(id=call_id, name=name, input=freeze(parsed))
    return ToolUseBlock(id=call_id, name=name, raw_input=args)


def _usage(event: dict[str, Any]) -> Usage:
    prompt = event.get("prompt_eval_count") or 0
    output = event.get("eval_count") or 0
    if type(prompt) is not int or type(output) is not int:
        raise malformed(PROVIDER, "token counts that are not integers", event)
    return trusted(Usage, input_tokens=prompt, output_tokens=output, requests=1)


def _finish_reason(raw: Any, calls: bool, data: Any) -> str:
    if raw is None or raw == "stop" or raw == "load" or raw == "unload":
        return "tool_calls" if calls else "stop"
    if raw == "length":
        return "length"
    raise malformed(PROVIDER, f"unknown done_reason {raw!r}", data)


def _error_message(body: bytes) -> str | None:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, str):
        return error
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])  # an OpenAI-style proxy in front of Ollama
    return None


# -- parse_request -------------------------------------------------------------------------------

_BODY_KEYS: Final = frozenset(("model", "messages", "stream", "tools", "options", "format"))
_IMAGE_MAGIC: Final = (
    ("iVBORw0KGgo", "image/png"),
    ("/9j/", "image/jpeg"),
    ("R0lGOD", "image/gif"),
    ("UklGR", "image/webp"),
)


def _parse_request(body: Any) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise malformed(PROVIDER, "a request body without a messages list", body)
    try:
        messages = _parse_messages(body["messages"])
        tools = [_parse_tool(t) for t in body.get("tools") or ()]
        options = _parse_options(body)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise malformed(
            PROVIDER, f"not an /api/chat request body ({type(exc).__name__}: {exc})", body
        ) from None
    return messages, tools, options


def _parse_messages(raw: list[Any]) -> list[Msg]:
    out: list[Msg] = []
    pending: list[ToolUseBlock] = []  # calls of the last assistant message not yet answered
    for item in raw:
        role = item["role"]
        content = item.get("content") or ""
        if not isinstance(content, str):
            raise TypeError(f"the content of a {role} message is not a string")
        if role == "tool":
            out.append(_parse_tool_message(item, content, pending))
        elif role == "assistant":
            msg = _parse_assistant(item, content)
            pending = list(msg.tool_calls)
            out.append(msg)
        elif role == "user" or role == "system":
            images = tuple(_parse_image(data) for data in item.get("images") or ())
            if images and role == "system":
                raise ValueError("a system message with images")
            if images:
                text: tuple[Block, ...] = (TextBlock(text=content),) if content else ()
                out.append(Msg(role=role, content=text + images))
            else:
                out.append(Msg(role=role, content=content))
        else:
            raise ValueError(f"unknown role {role!r}")
    return out


def _parse_assistant(item: dict[str, Any], content: str) -> Msg:
    blocks: list[Block] = []
    thinking = item.get("thinking")
    if thinking is not None:
        blocks.append(ThinkingBlock(thinking=thinking))
    if content:
        blocks.append(TextBlock(text=content))
    for call in item.get("tool_calls") or ():
        function = call["function"]
        call_id = call.get("id") or ""
        args = function.get("arguments", {})
        if isinstance(args, str):
            blocks.append(_raw_call(call_id, function["name"], args))
        else:
            blocks.append(ToolUseBlock(id=call_id, name=function["name"], input=args))
    if len(blocks) == (1 if content else 0):
        return Msg(role="assistant", content=content)
    return Msg(role="assistant", content=tuple(blocks))


def _parse_tool_message(item: dict[str, Any], content: str, pending: list[ToolUseBlock]) -> Msg:
    call_id = item.get("tool_call_id") or ""
    name = item.get("tool_name") or ""
    match = next(
        (
            call
            for call in pending
            if (call.id == call_id if call_id else not name or call.name == name)
        ),
        None,
    )
    if match is not None:
        pending.remove(match)
        call_id = call_id or match.id
        name = name or match.name
    is_error = content.startswith(TOOL_ERROR_PREFIX)
    if is_error:
        content = content[len(TOOL_ERROR_PREFIX) :]
    images = tuple(_parse_image(data) for data in item.get("images") or ())
    output: str | tuple[Block, ...] = content
    if images:
        output = ((TextBlock(text=content),) if content else ()) + images
    result = ToolResultBlock(id=call_id, name=name, output=output, is_error=is_error)
    return Msg(role="tool", content=(result,))


def _parse_image(data: Any) -> ImageBlock:
    if not isinstance(data, str):
        raise TypeError("an image that is not a base64 string")
    media_type = next(
        (kind for magic, kind in _IMAGE_MAGIC if data.startswith(magic)),
        "application/octet-stream",
    )
    return ImageBlock(data=data, media_type=media_type)


def _parse_tool(tool: Any) -> ToolSchema:
    function = tool["function"]
    fields: dict[str, Any] = {"name": function["name"]}
    if function.get("description"):
        fields["description"] = function["description"]
    if function.get("parameters") is not None:
        fields["parameters"] = function["parameters"]
    return ToolSchema(**fields)


def _parse_options(body: dict[str, Any]) -> ModelOptions:
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    sampling = body.get("options") or {}
    if not isinstance(sampling, dict):
        raise TypeError("options is not an object")
    rest: dict[str, Any] = {}
    for key, value in sampling.items():
        if key == "temperature":
            fields["temperature"] = value
        elif key == "num_predict":
            fields["max_output_tokens"] = value
        elif key == "stop" and isinstance(value, list):
            fields["stop"] = tuple(value)
        elif key == "seed":
            fields["seed"] = value
        else:
            rest[key] = value
    if rest:
        extra["options"] = rest
    fmt = body.get("format")
    if fmt == "json":
        fields["response_format"] = {"type": "json_object"}
    elif isinstance(fmt, dict):
        fields["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": fmt},
        }
    elif fmt is not None:
        extra["format"] = fmt
    extra.update((key, value) for key, value in body.items() if key not in _BODY_KEYS)
    if extra:
        fields["extra"] = extra
    return ModelOptions(**fields)
