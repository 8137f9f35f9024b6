"""DashScope responses: a whole (non-streamed) response, and incremental SSE streams.

A whole response is read through the stream parser's `message_deltas`, so both read a message
the same way. Finish reasons and usage are read here for both.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent._fast import trusted
from rxagent.errors import ErrorCode
from rxagent.formatters.base import malformed, provider_error
from rxagent.formatters.dashscope._errors import PROVIDER, classify, stream_error
from rxagent.models.base import (
    FinishDelta,
    ModelDelta,
    ModelResponse,
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageDelta,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rxagent.formatters.framing import SSEEvent

__all__ = ["DashScopeStreamParser", "parse_response", "response_deltas"]

_FINISH: Final = {"stop": "stop", "length": "length", "tool_calls": "tool_calls"}


def parse_response(body: Any) -> ModelResponse:
    """Read a whole response (see `DashScopeFormatter.parse`)."""
    message, reason = _whole(body)
    builder = ResponseBuilder()
    for delta in DashScopeStreamParser().message_deltas(message, body):
        builder.add(delta)
    return ModelResponse(
        message=builder.build(), usage=_usage(body.get("usage")), finish_reason=reason
    )


def response_deltas(body: Any) -> list[ModelDelta]:
    """Read a whole response straight into deltas (see `DashScopeFormatter.parse_deltas`).

    The deltas `response_to_deltas(parse_response(body))` gives, one per block, but a tool
    call's argument text is passed through as the response has it (not parsed and written
    again); a call without an id gets the one `parse_response` gives it (`call_<blocks>`).
    """
    message, reason = _whole(body)
    parser = DashScopeStreamParser()
    deltas = parser.message_deltas(message, body)
    if parser._calls:
        deltas = _one_per_block(deltas)
    deltas.append(trusted(UsageDelta, usage=_usage(body.get("usage"))))
    deltas.append(trusted(FinishDelta, reason=reason))
    return deltas


def _one_per_block(deltas: list[ModelDelta]) -> list[ModelDelta]:
    """Fold the tool-call fragments of a whole message into one delta per call.

    A call that came without an id is named `call_<its block's number>`, as `ResponseBuilder`
    names it.
    """
    out: list[Any] = []
    calls: dict[int, list[Any]] = {}  # block index -> [id, name, argument pieces]
    for delta in deltas:
        if type(delta) is not ToolCallDelta:
            out.append(delta)
            continue
        call = calls.get(delta.index)
        if call is None:
            call = calls[delta.index] = [None, None, []]
            out.append(delta.index)  # the call's place, filled below
        if delta.id:
            call[0] = delta.id
        if delta.name:
            call[1] = delta.name
        if delta.args:
            call[2].append(delta.args)
    for position, item in enumerate(out):
        if type(item) is int:
            call_id, name, args = calls[item]
            out[position] = trusted(
                ToolCallDelta,
                index=item,
                id=call_id or f"call_{item + 1}",
                name=name or "",
                args="".join(args),
            )
    return out


def _whole(body: Any) -> tuple[dict[str, Any], str]:
    """A whole response's message object and finish reason, checked."""
    if not isinstance(body, dict):
        raise malformed(PROVIDER, "the response is not a JSON object", body)
    output = body.get("output")
    if not isinstance(output, dict):
        if isinstance(body.get("code"), str) and body["code"]:
            status = body.get("status_code")
            raise classify(
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
    return message, reason


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
        from rxagent.formatters.framing import SSEDecoder

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
            raise stream_error(event)
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
                raise stream_error(event)
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
