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

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final, final

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
    "CACHE_TARGETS",
    "DEFAULT_API_VERSION",
    "DEFAULT_MAX_TOKENS",
    "NO_SAMPLING_API_VERSION",
    "REDACTED_THINKING_PREFIX",
    "AnthropicFormatter",
    "AnthropicStreamParser",
]

PROVIDER: Final = "anthropic"
DEFAULT_MAX_TOKENS: Final = 4096
"""`max_tokens` when `ModelOptions.max_output_tokens` is unset (Anthropic requires one)."""
REDACTED_THINKING_PREFIX: Final = "redacted_thinking:"
"""A `ThinkingBlock` whose signature starts with this is a `redacted_thinking` block; the rest of
the signature is its `data`. A real signature is base64 and never contains the colon."""
DEFAULT_API_VERSION: Final = "2023-06-01"
"""The `anthropic-version` header sent by default."""
NO_SAMPLING_API_VERSION: Final = "2026-10-21"
"""The first `anthropic-version` whose Messages API refuses `temperature` (and `top_p`, `top_k`)."""
CACHE_TARGETS: Final = ("system", "tools", "history")
"""The prompt-cache breakpoints `extra["cache_breakpoints"]` may name."""

_THINKING_TEXT: Final = re.compile(r"\A<thinking>\n(.*)\n</thinking>\Z", re.DOTALL)
_DATA_URL: Final = re.compile(r"\Adata:([^;,]+);base64,(.*)\Z", re.DOTALL)
_FINISH: Final[dict[str, FinishDelta]] = {
    wire: trusted(FinishDelta, reason=ours)
    for wire, ours in (
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause"),
    )
}
# error.type -> (code, recoverable when it arrives inside a stream, where there is no status)
_ERROR_TYPES: Final[dict[str, tuple[ErrorCode, bool]]] = {
    "invalid_request_error": (ErrorCode.INVALID_REQUEST, False),
    "not_found_error": (ErrorCode.INVALID_REQUEST, False),
    "authentication_error": (ErrorCode.AUTH, False),
    "permission_error": (ErrorCode.AUTH, False),
    "billing_error": (ErrorCode.AUTH, False),
    "request_too_large": (ErrorCode.CONTEXT_TOO_LONG, False),
    "rate_limit_error": (ErrorCode.RATE_LIMITED, True),
    "api_error": (ErrorCode.PROVIDER_ERROR, True),
    "timeout_error": (ErrorCode.PROVIDER_ERROR, True),
    "overloaded_error": (ErrorCode.PROVIDER_ERROR, True),
}
_SHAPE_ERRORS: Final = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def _bad_request(what: str) -> AgentRunError:
    return provider_error(
        ErrorCode.INVALID_REQUEST,
        f"invalid request body: {what}",
        provider=PROVIDER,
        recoverable=False,
    )


def _cache_targets(extra: Mapping[str, Any]) -> frozenset[str]:
    value = extra.get("cache_breakpoints", False)
    if value is True:
        return frozenset(CACHE_TARGETS)
    if value is False or value is None:
        return frozenset()
    if isinstance(value, list | tuple) and all(v in CACHE_TARGETS for v in value):
        return frozenset(value)
    raise unsupported(
        PROVIDER,
        f"extra['cache_breakpoints']={value!r}",
        "use True (all) or a list of 'system', 'tools' and 'history'",
    )


def _image(block: ImageBlock) -> dict[str, Any]:
    if block.data is not None:
        source = {"type": "base64", "media_type": block.media_type, "data": block.data}
    elif block.url is not None and block.url.startswith("data:"):
        match = _DATA_URL.match(block.url)
        if match is None:
            raise unsupported(
                PROVIDER, "a data: URL image that is not base64", "pass data=... and media_type=..."
            )
        source = {"type": "base64", "media_type": match[1], "data": match[2]}
    else:
        source = {"type": "url", "url": block.url}
    return {"type": "image", "source": source}


def _user_block(block: Block, where: str) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        return _image(block)
    raise unsupported(
        PROVIDER,
        f"a {block.type} block in {where}",
        "user content and tool results hold text and images only (tool results go in "
        "Msg.tool(...), thinking and tool calls in assistant messages)",
    )


def _assistant_block(block: Block) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ThinkingBlock):
        signature = block.signature
        if signature:
            if signature.startswith(REDACTED_THINKING_PREFIX):
                return {
                    "type": "redacted_thinking",
                    "data": signature[len(REDACTED_THINKING_PREFIX) :],
                }
            return {"type": "thinking", "thinking": block.thinking, "signature": signature}
        if block.thinking:  # unsigned (another provider's): Anthropic would reject it as thinking
            return {"type": "text", "text": f"<thinking>\n{block.thinking}\n</thinking>"}
        return None  # unsigned and empty: it carries nothing
    raise unsupported(
        PROVIDER,
        f"a {block.type} block in an assistant message",
        "assistant messages hold text, thinking and tool calls; images go in user messages",
    )


def _tool_result(msg: Msg) -> dict[str, Any]:
    content = msg.content
    if isinstance(content, str) or len(content) != 1 or not isinstance(content[0], ToolResultBlock):
        raise unsupported(
            PROVIDER,
            "a tool message that is not one ToolResultBlock",
            "build it with Msg.tool(result)",
        )
    result = content[0]
    output = result.output
    wire: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": result.id,
        "content": output
        if isinstance(output, str)
        else [_user_block(b, "a tool result") for b in output],
    }
    if result.is_error:
        wire["is_error"] = True
    return wire


def _mark_last(blocks: list[dict[str, Any]]) -> None:
    for block in reversed(blocks):
        if block.get("type") not in ("thinking", "redacted_thinking"):
            block["cache_control"] = {"type": "ephemeral"}
            return


def _text_of(block: Any) -> str:
    if (
        not isinstance(block, dict)
        or block.get("type") != "text"
        or not isinstance(block["text"], str)
    ):
        raise TypeError(f"expected a text block, got {block!r}")
    text: str = block["text"]
    return text


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
        supports_thinking=True,
        supports_vision=True,
        supports_parallel_tools=True,
        supports_tool_result_images=True,
        supports_json_schema=False,
        supports_tool_choice_required=True,
    )

    def __init__(
        self, *, max_tokens: int = DEFAULT_MAX_TOKENS, api_version: str = DEFAULT_API_VERSION
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise ValueError(f"max_tokens must be an int >= 0, got {max_tokens!r}")
        self.max_tokens = max_tokens
        self.api_version = api_version
        self._sampling = api_version < NO_SAMPLING_API_VERSION

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
        """Build the request body for `POST /v1/messages`.

        Raises:
            InvalidRequestError: A block in a role that cannot carry it, `seed`,
                `response_format`, or a bad `extra["cache_breakpoints"]`.
        """
        if options.seed is not None:
            raise unsupported(PROVIDER, "seed", "Anthropic has no sampling seed; leave seed unset")
        if options.response_format is not None:
            raise unsupported(
                PROVIDER,
                "response_format",
                "this formatter has no native structured-output mode; ask for JSON in the "
                "prompt or use a tool whose input schema is the output",
            )
        extra = options.extra
        cache = _cache_targets(extra) if "cache_breakpoints" in extra else frozenset()
        system, wire = self._messages(messages)
        max_tokens = options.max_output_tokens
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
            "messages": wire,
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = tool_list = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                if t.description
                else {"name": t.name, "input_schema": t.parameters}
                for t in tools
            ]
            choice = self._tool_choice(options)
            if choice is not None:
                body["tool_choice"] = choice
            if "tools" in cache:
                tool_list[-1] = {**tool_list[-1], "cache_control": {"type": "ephemeral"}}
        if options.temperature is not None:
            if not self._sampling:
                raise unsupported(
                    PROVIDER,
                    f"temperature under anthropic-version {self.api_version}",
                    f"API versions from {NO_SAMPLING_API_VERSION} refuse sampling parameters; "
                    "leave temperature unset, or use anthropic-version 2023-06-01",
                )
            body["temperature"] = options.temperature
        if options.stop is not None:
            body["stop_sequences"] = list(options.stop)
        if stream:
            body["stream"] = True
        body.update({k: v for k, v in extra.items() if k != "cache_breakpoints"})
        if "system" in cache and system:
            system[-1]["cache_control"] = {"type": "ephemeral"}
        if "history" in cache and wire:
            last = wire[-1]
            if isinstance(last["content"], str):
                last["content"] = [{"type": "text", "text": last["content"]}]
            _mark_last(last["content"])
        return body

    @staticmethod
    def _tool_choice(options: ModelOptions) -> dict[str, Any] | None:
        choice, parallel = options.tool_choice, options.parallel_tool_calls
        if choice is None and parallel is None:
            return None
        if choice == "none":
            return {"type": "none"}
        if choice is None or choice == "auto":
            wire: dict[str, Any] = {"type": "auto"}
        elif choice == "required":
            wire = {"type": "any"}
        else:
            wire = {"type": "tool", "name": choice}
        if parallel is not None:
            wire["disable_parallel_tool_use"] = not parallel
        return wire

    def _messages(
        self, messages: Sequence[Msg]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        system: list[dict[str, Any]] = []
        wire: list[dict[str, Any]] = []
        results: list[dict[str, Any]] | None = None  # an open user message of tool results
        for msg in messages:
            role = msg.role
            if role == "tool":
                if results is None:
                    results = []
                    wire.append({"role": "user", "content": results})
                results.append(_tool_result(msg))
                continue
            if role == "user":
                content = self._user_content(msg)
                if results is not None:  # joins the tool results before it
                    if isinstance(content, str):
                        results.append({"type": "text", "text": content})
                    else:
                        results.extend(content)
                    results = None
                else:
                    wire.append({"role": "user", "content": content})
                continue
            if role == "assistant":
                results = None
                said = msg.content
                if isinstance(said, str):
                    wire.append({"role": "assistant", "content": said})
                else:
                    blocks = [b for b in map(_assistant_block, said) if b is not None]
                    if blocks or not said:
                        wire.append({"role": "assistant", "content": blocks})
            else:
                system.extend(self._system_blocks(msg))
        return system, wire

    @staticmethod
    def _user_content(msg: Msg) -> str | list[dict[str, Any]]:
        content, name = msg.content, msg.name
        if isinstance(content, str):
            return f"{name}: {content}" if name else content
        blocks = [_user_block(b, "a user message") for b in content]
        if name:
            blocks.insert(0, {"type": "text", "text": f"{name}:"})
        return blocks

    @staticmethod
    def _system_blocks(msg: Msg) -> list[dict[str, Any]]:
        if isinstance(msg.content, str):
            return [{"type": "text", "text": msg.content}]
        blocks = []
        for block in msg.content:
            if not isinstance(block, TextBlock):
                raise unsupported(
                    PROVIDER, f"a {block.type} block in a system message", "system prompts are text"
                )
            blocks.append({"type": "text", "text": block.text})
        return blocks

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
        if not isinstance(body, dict):
            raise _bad_request("not a JSON object")
        try:
            return self._parse_request(body)
        except AgentRunError:
            raise
        except _SHAPE_ERRORS as exc:
            raise _bad_request(f"{type(exc).__name__}: {exc}") from None

    def _parse_request(
        self, body: dict[str, Any]
    ) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                raise _bad_request(f"{key}: Field required")
        cache: list[str] = []
        messages = self._parse_system(body.get("system"), cache)
        names: dict[str, str] = {}
        wire = body["messages"]
        if not isinstance(wire, list):
            raise TypeError("messages must be a list")
        for i, item in enumerate(wire):
            role, content = item["role"], item["content"]
            if i == len(wire) - 1 and isinstance(content, list) and _marked(content):
                cache.append("history")
            if role == "assistant":
                messages.append(self._parse_assistant(content, names))
            elif role == "user":
                messages.extend(self._parse_user(content, names))
            elif role == "system":
                messages.append(
                    Msg(
                        role="system",
                        content=content
                        if isinstance(content, str)
                        else "".join(map(_text_of, content)),
                    )
                )
            else:
                raise ValueError(f"unknown role {role!r}")
        tools = [
            ToolSchema(
                name=tool["name"],
                description=tool.get("description", ""),
                parameters=tool["input_schema"],
            )
            for tool in body.get("tools") or ()
        ]
        if tools and "cache_control" in body["tools"][-1]:
            cache.append("tools")
        return messages, tools, self._parse_options(body, cache)

    def _parse_options(self, body: dict[str, Any], cache: list[str]) -> ModelOptions:
        fields: dict[str, Any] = {}
        if body["max_tokens"] != self.max_tokens:
            fields["max_output_tokens"] = body["max_tokens"]
        if "temperature" in body:
            fields["temperature"] = body["temperature"]
        if "stop_sequences" in body:
            fields["stop"] = tuple(body["stop_sequences"])
        choice = body.get("tool_choice")
        if choice is not None:
            kind = choice["type"]
            fields["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}.get(kind)
            if kind == "tool":
                fields["tool_choice"] = choice["name"]
            elif fields["tool_choice"] is None:
                raise ValueError(f"unknown tool_choice type {kind!r}")
            if "disable_parallel_tool_use" in choice:
                fields["parallel_tool_calls"] = not choice["disable_parallel_tool_use"]
        known = {"model", "max_tokens", "messages", "system", "tools", "tool_choice", "stream"}
        known.update(("temperature", "stop_sequences"))
        extra = {k: v for k, v in body.items() if k not in known}
        if cache:
            extra["cache_breakpoints"] = (
                True if len(cache) == len(CACHE_TARGETS) else sorted(cache, key=CACHE_TARGETS.index)
            )
        if extra:
            fields["extra"] = extra
        return ModelOptions(**fields)

    @staticmethod
    def _parse_system(system: Any, cache: list[str]) -> list[Msg]:
        if system is None:
            return []
        if isinstance(system, str):
            return [Msg(role="system", content=system)]
        if not isinstance(system, list):
            raise TypeError("system must be a string or a list of text blocks")
        if system and "cache_control" in system[-1]:
            cache.append("system")
        return [Msg(role="system", content=_text_of(b)) for b in system]

    @staticmethod
    def _parse_assistant(content: Any, names: dict[str, str]) -> Msg:
        if isinstance(content, str):
            return Msg(role="assistant", content=content)
        blocks: list[Block] = []
        for b in content:
            kind = b["type"]
            if kind == "text":
                match = _THINKING_TEXT.match(b["text"])
                blocks.append(
                    ThinkingBlock(thinking=match[1]) if match else TextBlock(text=b["text"])
                )
            elif kind == "thinking":
                blocks.append(
                    ThinkingBlock(thinking=b["thinking"], signature=b["signature"] or None)
                )
            elif kind == "redacted_thinking":
                blocks.append(
                    ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + b["data"])
                )
            elif kind == "tool_use":
                names[b["id"]] = b["name"]
                blocks.append(ToolUseBlock(id=b["id"], name=b["name"], input=b["input"]))
            else:
                raise ValueError(f"unsupported assistant block type {kind!r}")
        return Msg(role="assistant", content=blocks)

    @staticmethod
    def _parse_user(content: Any, names: dict[str, str]) -> list[Msg]:
        if isinstance(content, str):
            return [Msg(role="user", content=content)]
        out: list[Msg] = []
        run: list[Block] = []
        for b in content:
            if b["type"] != "tool_result":
                run.append(_parse_user_block(b))
                continue
            if run:
                out.append(Msg(role="user", content=run))
                run = []
            raw = b.get("content", "")
            output: str | list[Block] = (
                raw if isinstance(raw, str) else [_parse_user_block(x) for x in raw]
            )
            result = ToolResultBlock(
                id=b["tool_use_id"],
                name=names.get(b["tool_use_id"], ""),
                output=output,
                is_error=bool(b.get("is_error", False)),
            )
            out.append(Msg.tool(result))
        if run:
            out.append(Msg(role="user", content=run))
        return out

    # -- responses ---------------------------------------------------------------------------------

    def parse(self, body: Any) -> ModelResponse:
        """Read a whole (non-streamed) response: a `Message` object.

        Empty text blocks and empty unsigned thinking blocks are left out, as a stream of the
        same response would.

        Raises:
            AgentRunError: The body is Anthropic's error object (typed by its `error.type`).
            ProviderError: The body is not a `Message`, or its `stop_reason` is unknown.
        """
        if not isinstance(body, dict):
            raise malformed(PROVIDER, "the response is not a JSON object", body)
        if body.get("type") == "error":
            raise _error_event(body, json.dumps(body))
        try:
            blocks = [b for b in map(_response_block, body["content"]) if b is not None]
            stop = body.get("stop_reason")
            finish = None if stop is None else _FINISH.get(stop)
            if stop is not None and finish is None:
                raise malformed(PROVIDER, f"unknown stop_reason {stop!r}", body)
            usage = _usage(body["usage"])
        except _SHAPE_ERRORS as exc:
            raise malformed(
                PROVIDER, f"not a Message ({type(exc).__name__}: {exc})", body
            ) from None
        return ModelResponse(
            message=Msg(role="assistant", content=blocks),
            usage=usage,
            finish_reason=finish.reason if finish is not None else None,
        )

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
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            data = None
        error = data.get("error") if isinstance(data, dict) else None
        if not isinstance(error, dict):
            return status_error(PROVIDER, status, body, headers=headers)
        kind, message = error.get("type"), error.get("message")
        kind = kind if isinstance(kind, str) else None
        known = _ERROR_TYPES.get(kind) if kind else None
        return status_error(
            PROVIDER,
            status,
            body,
            message=message if isinstance(message, str) and message else None,
            provider_code=kind,
            code=known[0] if known else None,
            headers=headers,
        )


def _marked(content: list[Any]) -> bool:
    return any(isinstance(b, dict) and "cache_control" in b for b in content[-1:] or ())


def _parse_user_block(b: dict[str, Any]) -> Block:
    kind = b["type"]
    if kind == "text":
        return TextBlock(text=b["text"])
    if kind == "image":
        source = b["source"]
        if source["type"] == "base64":
            return ImageBlock(data=source["data"], media_type=source["media_type"])
        if source["type"] == "url":
            return ImageBlock(url=source["url"])
        raise ValueError(f"unsupported image source {source['type']!r}")
    raise ValueError(f"unsupported user block type {kind!r}")


def _response_block(b: dict[str, Any]) -> Block | None:
    kind = b["type"]
    if kind == "text":
        text = b["text"]
        return TextBlock(text=text) if text else None
    if kind == "tool_use":
        raw = b["input"]
        if isinstance(raw, dict):
            return ToolUseBlock(id=b["id"], name=b["name"], input=raw)
        return ToolUseBlock(id=b["id"], name=b["name"], raw_input=json.dumps(raw))
    if kind == "thinking":
        thought, signature = b["thinking"], b.get("signature") or None
        if not thought and signature is None:
            return None  # carries nothing (a stream of it gives no delta either)
        return ThinkingBlock(thinking=thought, signature=signature)
    if kind == "redacted_thinking":
        data = b["data"]
        if not isinstance(data, str):
            raise TypeError("redacted_thinking data must be a string")
        return ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + data)
    raise ValueError(f"content block type {kind!r} is not supported by rxagent")


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    if value is None:
        return 0
    if type(value) is not int:
        raise TypeError(f"usage.{key} must be an integer")
    return value


def _usage(usage: Mapping[str, Any]) -> Usage:
    read, write = (
        _count(usage, "cache_read_input_tokens"),
        _count(usage, "cache_creation_input_tokens"),
    )
    return trusted(
        Usage,
        input_tokens=_count(usage, "input_tokens") + read + write,
        output_tokens=_count(usage, "output_tokens"),
        cache_read_tokens=read,
        cache_write_tokens=write,
        requests=1,
    )


def _error_event(obj: Any, data: str) -> AgentRunError:
    error = obj.get("error") if isinstance(obj, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    kind = kind if isinstance(kind, str) else None
    code, recoverable = _ERROR_TYPES.get(kind or "", (ErrorCode.PROVIDER_ERROR, True))
    return provider_error(
        code,
        message if isinstance(message, str) and message else "error event in the stream",
        provider=PROVIDER,
        provider_code=kind,
        body=data,
        recoverable=recoverable,
    )


@final
class AnthropicStreamParser:
    """Turns the SSE events of one streamed Messages response into deltas, one event at a time.

    Block `index` from the wire is the delta index. `message_start` gives the prompt usage and
    `message_delta` the (cumulative) output usage, each as the increase since the last
    `UsageDelta`. `ping` and unknown event types are ignored (Anthropic may add event types);
    `citations_delta` is ignored (citations are not carried). An `error` event raises its typed
    error; `close()` without `message_stop` raises a recoverable `ProviderError`.

    Example:
        ```python
        from rxagent.formatters.anthropic import AnthropicStreamParser
        from rxagent.models.framing import SSEEvent

        parser = AnthropicStreamParser()
        delta = parser.feed(SSEEvent(
            event="content_block_delta",
            data='{"type":"content_block_delta","index":0,'
            '"delta":{"type":"text_delta","text":"Hi"}}',
        ))
        assert delta[0].text == "Hi" and delta[0].index == 0
        ```
    """

    __slots__ = ("_done", "_in", "_out", "_pending", "_read", "_write")

    def __init__(self) -> None:
        self._done = False
        self._in = self._out = self._read = self._write = 0
        self._pending: dict[int, Any] = {}  # tool inputs given whole at block start

    def feed(self, event: SSEEvent) -> list[ModelDelta]:
        """Return the deltas of one SSE event.

        Raises:
            AgentRunError: An `error` event, typed by its `error.type`.
            ProviderError: An event that is not JSON or does not have Anthropic's shape.
        """
        data = event.data
        if not data:
            return []  # a comment-only keep-alive
        try:
            obj = json.loads(data)
        except (ValueError, RecursionError):
            raise malformed(PROVIDER, "a stream event is not JSON", data) from None
        try:
            kind = obj["type"]
            if kind == "content_block_delta":
                return self._delta(obj["index"], obj["delta"])
            if kind == "content_block_start":
                return self._start(obj["index"], obj["content_block"])
            if kind == "content_block_stop":
                pending = self._pending.pop(obj["index"], None) if self._pending else None
                if pending is None:
                    return []
                args = json.dumps(pending)
                return [trusted(ToolCallDelta, index=obj["index"], args=args)]
            if kind == "message_start":
                return self._message_start(obj["message"])
            if kind == "message_delta":
                return self._message_delta(obj["delta"], obj["usage"])
            if kind == "message_stop":
                self._done = True
                return []
            if kind == "error":
                raise _error_event(obj, data)
            return []  # ping, and event types added after this was written
        except _SHAPE_ERRORS as exc:
            what = f"unexpected {event.event or 'stream'} event ({type(exc).__name__}: {exc})"
            raise malformed(PROVIDER, what, data) from None

    def close(self) -> list[ModelDelta]:
        """End the stream.

        Raises:
            ProviderError: `message_stop` never came (recoverable: the stream ended early).
        """
        if not self._done:
            raise provider_error(
                ErrorCode.PROVIDER_ERROR,
                "the stream ended early (no message_stop event)",
                provider=PROVIDER,
                recoverable=True,
            )
        return []

    def _delta(self, index: Any, delta: Any) -> list[ModelDelta]:
        if type(index) is not int:
            raise TypeError("index must be an integer")
        kind = delta["type"]
        if kind == "text_delta":
            text = delta["text"]
            if type(text) is not str:
                raise TypeError("text must be a string")
            return [trusted(TextDelta, index=index, text=text)]
        if kind == "input_json_delta":
            part = delta["partial_json"]
            if type(part) is not str:
                raise TypeError("partial_json must be a string")
            if self._pending:
                self._pending.pop(index, None)  # the fragments replace a start input
            return [trusted(ToolCallDelta, index=index, args=part)] if part else []
        if kind == "thinking_delta":
            text = delta["thinking"]
            if type(text) is not str:
                raise TypeError("thinking must be a string")
            return [trusted(ThinkingDelta, index=index, text=text)]
        if kind == "signature_delta":
            signature = delta["signature"]
            if type(signature) is not str:
                raise TypeError("signature must be a string")
            return [trusted(ThinkingDelta, index=index, text="", signature=signature)]
        if kind == "citations_delta":
            return []
        raise ValueError(f"unknown delta type {kind!r}")

    def _start(self, index: Any, block: Any) -> list[ModelDelta]:
        if type(index) is not int:
            raise TypeError("index must be an integer")
        kind = block["type"]
        if kind == "text":
            text = block.get("text") or ""
            if type(text) is not str:
                raise TypeError("text must be a string")
            return [trusted(TextDelta, index=index, text=text)] if text else []
        if kind == "tool_use":
            call_id, name, start = block["id"], block["name"], block.get("input")
            if type(call_id) is not str or type(name) is not str:
                raise TypeError("tool_use id and name must be strings")
            if start:
                self._pending[index] = start
            return [trusted(ToolCallDelta, index=index, id=call_id or None, name=name)]
        if kind == "thinking":
            text, signature = block.get("thinking") or "", block.get("signature") or None
            if type(text) is not str or (signature is not None and type(signature) is not str):
                raise TypeError("thinking and signature must be strings")
            if not text and signature is None:
                return []
            return [trusted(ThinkingDelta, index=index, text=text, signature=signature)]
        if kind == "redacted_thinking":
            data = block["data"]
            if type(data) is not str:
                raise TypeError("redacted_thinking data must be a string")
            signature = REDACTED_THINKING_PREFIX + data
            return [trusted(ThinkingDelta, index=index, text="", signature=signature)]
        raise ValueError(f"content block type {kind!r} is not supported by rxagent")

    def _message_start(self, message: Any) -> list[ModelDelta]:
        if message["content"]:
            raise ValueError("message_start carries content")
        return self._usage_delta(message["usage"], first=True)

    def _message_delta(self, delta: Any, usage: Any) -> list[ModelDelta]:
        deltas = self._usage_delta(usage, first=False)
        stop = delta.get("stop_reason")
        if stop is not None:
            finish = _FINISH.get(stop)
            if finish is None:
                raise ValueError(f"unknown stop_reason {stop!r}")
            deltas.append(finish)
        return deltas

    def _usage_delta(self, usage: Any, *, first: bool) -> list[ModelDelta]:
        # Counts are cumulative: a value given replaces the last one, a missing one keeps it.
        old = (self._in, self._out, self._read, self._write)
        for attr, key in (
            ("_in", "input_tokens"),
            ("_out", "output_tokens"),
            ("_read", "cache_read_input_tokens"),
            ("_write", "cache_creation_input_tokens"),
        ):
            value = usage.get(key)
            if value is not None:
                if type(value) is not int:
                    raise TypeError(f"usage.{key} must be an integer")
                setattr(self, attr, value)
        d_in, d_out = self._in - old[0], self._out - old[1]
        d_read, d_write = self._read - old[2], self._write - old[3]
        if not first and not (d_in or d_out or d_read or d_write):
            return []
        usage_delta = trusted(
            Usage,
            input_tokens=d_in + d_read + d_write,
            output_tokens=d_out,
            cache_read_tokens=d_read,
            cache_write_tokens=d_write,
            requests=1 if first else 0,
        )
        return [trusted(UsageDelta, usage=usage_delta)]
