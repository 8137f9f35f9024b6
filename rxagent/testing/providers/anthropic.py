"""A fake Anthropic Messages API server: `POST /v1/messages`, whole and streamed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Final

from rxagent.errors import AgentRunError
from rxagent.formatters.anthropic import REDACTED_THINKING_PREFIX, AnthropicFormatter
from rxagent.messages import Msg, TextBlock, ThinkingBlock, ToolUseBlock
from rxagent.testing._builders import _args_json
from rxagent.testing.providers._base import FakeProviderServer, Fault, RecordedRequest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from aiohttp import web

    from rxagent.messages import Block
    from rxagent.models.base import ModelOptions, ToolSchema, Usage
    from rxagent.testing.providers._base import ScriptedResponse

__all__ = ["FakeAnthropicServer"]

_STOP_REASONS: Final[dict[str, str]] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
    "pause": "pause_turn",
}
_ERROR_TYPES: Final[dict[int, str]] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def _frame(kind: str, payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return f"event: {kind}\ndata: {data}\n\n".encode()


def _wire_usage(usage: Usage, *, output_tokens: int) -> dict[str, int]:
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    return {
        "input_tokens": max(usage.input_tokens - read - write, 0),
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": output_tokens,
    }


def _wire_block(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input)}
    assert isinstance(block, ThinkingBlock)  # turn_to_blocks lets nothing else through
    signature = block.signature or ""
    if signature.startswith(REDACTED_THINKING_PREFIX):
        return {"type": "redacted_thinking", "data": signature[len(REDACTED_THINKING_PREFIX) :]}
    return {"type": "thinking", "thinking": block.thinking, "signature": signature}


class FakeAnthropicServer(FakeProviderServer):
    """A local Anthropic Messages API, played from a script (see `FakeProviderServer`).

    It answers `POST /v1/messages` with a `Message` object, or with Anthropic's SSE stream when
    the body has `"stream": true`: `message_start` (with usage), `ping`, then per block
    `content_block_start` / `content_block_delta`s (text, thinking and tool-input JSON in
    `chunk_size`-character fragments; a thinking block's `signature_delta` before its stop) /
    `content_block_stop`, then `message_delta` (stop reason, output usage) and `message_stop`.

    Like Anthropic, it refuses a request without a key (`x-api-key`, or `Authorization: Bearer`
    as newer SDKs send it: 401) or without `anthropic-version` (400),
    or whose body is not a Messages request (400, `invalid_request_error`). Errors use
    Anthropic's body, `{"type": "error", "error": {"type": ..., "message": ...}}`, with the type
    following the status (429 `rate_limit_error`, 529 `overloaded_error`, ...) unless
    `Fault(error_type=...)` names one; an error inside a stream is an `event: error` frame
    (`overloaded_error` by default). rxagent finish reasons are sent as Anthropic's stop reasons
    (`"tool_calls"` → `tool_use`, ...); any other is sent as it is. A `ThinkingBlock` whose
    signature starts with `REDACTED_THINKING_PREFIX` is sent as `redacted_thinking`.

    Example:
        ```python
        import asyncio

        from rxagent.messages import Msg
        from rxagent.models import AnthropicChatModel
        from rxagent.testing import thinking, tool_call
        from rxagent.testing.providers import FakeAnthropicServer


        async def main() -> None:
            turns = [[thinking("Add them.", signature="sig"), tool_call("add", a=1, b=2)], "3"]
            async with FakeAnthropicServer(turns, chunk_size=4) as server:
                async with AnthropicChatModel("claude", base_url=server.base_url, api_key="k") as m:
                    first = await m.complete([Msg.user("1 + 2?")])
                    assert first.finish_reason == "tool_calls"
                    assert first.message.content[0].signature == "sig"
                    assert dict(first.message.tool_calls[0].input) == {"a": 1, "b": 2}
                    assert (await m.complete([Msg.user("again")])).message.text == "3"
                messages, tools, options = server.decode(server.requests[0])
                assert messages[0].text == "1 + 2?"


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "anthropic"
    formatter: ClassVar[AnthropicFormatter] = AnthropicFormatter()

    def routes(self) -> list[web.RouteDef]:
        """`POST /v1/messages`."""
        from aiohttp import web

        return [web.post("/v1/messages", self._messages)]

    def decode(self, request: RecordedRequest) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
        """Read a recorded request back into messages, tools and options.

        Raises:
            InvalidRequestError: The body is not a Messages API request.
        """
        return self.formatter.parse_request(request.body)

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return await self.handle(request, stream=False)  # the base answers 400
        problem = self._refusal(request, body)
        if problem is None:
            stream = isinstance(body, dict) and body.get("stream") is True
            return await self.handle(request, stream=stream)
        self.requests.append(
            RecordedRequest(
                method=request.method,
                path=request.path,
                query=dict(request.query),
                headers=dict(request.headers),
                body=body,
            )
        )
        return self._error_response(problem)

    def _refusal(self, request: web.Request, body: Any) -> Fault | None:
        headers = request.headers
        if not headers.get("x-api-key") and not headers.get("Authorization", "").startswith(
            "Bearer "
        ):
            return Fault(status=401, message="x-api-key header is required")
        if not headers.get("anthropic-version"):
            return Fault(status=400, message="anthropic-version: header is required")
        try:
            self.formatter.parse_request(body)
        except AgentRunError as exc:
            return Fault(status=400, message=exc.message)
        return None

    def render(self, response: ScriptedResponse, request: RecordedRequest) -> Any:
        """The `Message` object."""
        return {
            "id": f"msg_fake{response.index:08d}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model", "claude"),
            "content": [_wire_block(b) for b in response.message.blocks],
            "stop_reason": _STOP_REASONS.get(response.finish, response.finish),
            "stop_sequence": None,
            "usage": _wire_usage(response.usage, output_tokens=response.usage.output_tokens),
        }

    def render_stream(
        self, response: ScriptedResponse, request: RecordedRequest
    ) -> Iterator[bytes]:
        """The SSE frames, one event each."""
        usage = response.usage
        yield _frame(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_fake{response.index:08d}",
                    "type": "message",
                    "role": "assistant",
                    "model": request.body.get("model", "claude"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _wire_usage(usage, output_tokens=min(usage.output_tokens, 1)),
                },
            },
        )
        yield _frame("ping", {"type": "ping"})
        for index, block in enumerate(response.message.blocks):
            yield from self._block_frames(index, block)
        yield _frame(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": _STOP_REASONS.get(response.finish, response.finish),
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": usage.output_tokens},
            },
        )
        yield _frame("message_stop", {"type": "message_stop"})

    def _block_frames(self, index: int, block: Block) -> Iterator[bytes]:
        start = _wire_block(block)
        deltas: list[dict[str, Any]] = []
        if start["type"] == "text":
            deltas = [{"type": "text_delta", "text": p} for p in self._pieces(start["text"])]
            start["text"] = ""
        elif start["type"] == "thinking":
            deltas = [
                {"type": "thinking_delta", "thinking": p} for p in self._pieces(start["thinking"])
            ]
            if start["signature"]:
                deltas.append({"type": "signature_delta", "signature": start["signature"]})
            start["thinking"] = start["signature"] = ""
        elif start["type"] == "tool_use":
            assert isinstance(block, ToolUseBlock)
            args = self._pieces(_args_json(block))
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in args]
            start["input"] = {}
        yield _frame(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        for delta in deltas:
            yield _frame(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _frame("content_block_stop", {"type": "content_block_stop", "index": index})

    def _pieces(self, text: str) -> list[str]:
        size = self.chunk_size
        return [text[i : i + size] for i in range(0, len(text), size)]

    def render_error(self, fault: Fault) -> tuple[int, Any]:
        """Anthropic's error body for the fault's status."""
        status = fault.status or 500
        kind = fault.error_type or _ERROR_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        body = {
            "type": "error",
            "error": {"type": kind, "message": fault.message},
            "request_id": "req_fake",
        }
        return status, body

    def render_stream_error(self, fault: Fault) -> bytes:
        """An `event: error` frame (`overloaded_error` unless the fault names a type)."""
        kind = fault.error_type or "overloaded_error"
        return _frame("error", {"type": "error", "error": {"type": kind, "message": fault.message}})
