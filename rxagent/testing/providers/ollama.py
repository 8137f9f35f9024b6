"""A fake Ollama server (native `/api/chat`, NDJSON streams) for tests."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Final

from aiohttp import web

from rxagent.messages import TextBlock, ThinkingBlock, ToolUseBlock
from rxagent.testing.providers._base import (
    FakeProviderServer,
    Fault,
    RecordedRequest,
    ScriptedResponse,
    ScriptItem,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from rxagent.models.base import Usage

__all__ = ["FakeOllamaServer"]

_DONE_REASONS: Final[Mapping[str, str]] = {"stop": "stop", "tool_calls": "stop", "length": "length"}
_CREATED_AT: Final = "2025-01-01T00:00:00.000000Z"
_VERSION: Final = "0.12.0"
_NS_PER_TOKEN: Final = 1_000_000


class FakeOllamaServer(FakeProviderServer):
    """A local server speaking Ollama's native chat API, played from a script.

    Routes: `POST /api/chat` (give clients `server.base_url`), plus minimal `GET /api/tags` (no
    models) and `GET /api/version` answers. Like Ollama, `/api/chat` streams unless the request
    says `"stream": false`: NDJSON lines (`application/x-ndjson`), one object per line, each with
    `model`, `created_at`, `message` and `"done": false`: thinking pieces (`message.thinking`),
    content pieces (`message.content`), then each tool call whole in a line of its own
    (`message.tool_calls`, arguments as an object), then a last line with `"done": true`,
    `done_reason` and the token counts and durations. A whole response is that last line with the
    complete message.

    Finish reasons: rxagent's `"stop"` and `"tool_calls"` are Ollama's `"stop"`, `"length"` is
    `"length"`; any other `Reply(finish=...)` word is sent verbatim (`"load"`, or an unknown
    word to test a client). Usage is sent as `prompt_eval_count` and `eval_count`. Tool calls
    carry no id, as on Ollama's documented wire, unless `tool_call_ids=True`. Errors have
    Ollama's shape, `{"error": "<message>"}` (a `Fault`'s `error_type` is not used: Ollama has no
    error codes), and inside a stream are that object on a line of its own.

    Args:
        turns: The responses, in request order (see `FakeProviderServer`).
        chunk_size: Characters per streamed thinking or content piece.
        tool_call_ids: Send each tool call's `id` and `function.index`, as newer Ollama servers
            do (ids the script leaves empty are `call_<request>_<block>`).

    Example:
        ```python
        import asyncio

        from rxagent import Msg
        from rxagent.models import OllamaChatModel
        from rxagent.testing import tool_call
        from rxagent.testing.providers import FakeOllamaServer, Fault


        async def main() -> None:
            server = FakeOllamaServer([tool_call("add", a=1, b=2)])
            server.fail(1, Fault(status=503, message="server busy"))
            async with server, OllamaChatModel("llama3.2", base_url=server.base_url) as model:
                reply = await model.complete([Msg.user("1 + 2?")])
            call = reply.message.tool_calls[0]
            assert dict(call.input) == {"a": 1, "b": 2} and reply.finish_reason == "tool_calls"
            assert len(server.requests) == 2  # the 503, then the retry
            assert server.requests[1].body["stream"] is True


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "ollama"
    stream_content_type: ClassVar[str] = "application/x-ndjson"

    def __init__(
        self,
        turns: Sequence[ScriptItem] | Callable[[RecordedRequest], ScriptItem] = (),
        *,
        chunk_size: int = 8,
        tool_call_ids: bool = False,
    ) -> None:
        super().__init__(turns, chunk_size=chunk_size)
        self.tool_call_ids = tool_call_ids

    # -- routes ------------------------------------------------------------------------------------

    def routes(self) -> list[web.RouteDef]:
        """`POST /api/chat`, `GET /api/tags` and `GET /api/version`."""
        return [
            web.post("/api/chat", self._chat),
            web.get("/api/tags", self._tags),
            web.get("/api/version", self._version),
        ]

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = json.loads(await request.read())
        except ValueError:
            body = None
        # Ollama streams unless told not to
        stream = not (isinstance(body, dict) and body.get("stream") is False)
        return await self.handle(request, stream=stream)

    async def _tags(self, request: web.Request) -> web.Response:
        return web.json_response({"models": []})

    async def _version(self, request: web.Request) -> web.Response:
        return web.json_response({"version": _VERSION})

    # -- rendering ---------------------------------------------------------------------------------

    def render(self, response: ScriptedResponse, request: RecordedRequest) -> Any:
        """The whole response: the complete message and the closing fields."""
        texts, thoughts, calls = _split(response)
        message: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
        if thoughts:
            message["thinking"] = "".join(thoughts)
        if calls:
            message["tool_calls"] = [self._call(i, call) for i, call in enumerate(calls)]
        return self._last(response, request, message)

    def render_stream(
        self, response: ScriptedResponse, request: RecordedRequest
    ) -> Iterator[bytes]:
        """The NDJSON lines: thinking, content, one line per tool call, then the done line."""
        model = _model(request)
        size = self.chunk_size
        texts, thoughts, calls = _split(response)
        for piece in _pieces("".join(thoughts), size):
            yield _line(model, {"role": "assistant", "content": "", "thinking": piece})
        for piece in _pieces("".join(texts), size):
            yield _line(model, {"role": "assistant", "content": piece})
        for i, call in enumerate(calls):
            message = {"role": "assistant", "content": "", "tool_calls": [self._call(i, call)]}
            yield _line(model, message)
        last = self._last(response, request, {"role": "assistant", "content": ""})
        yield json.dumps(last).encode() + b"\n"

    def render_error(self, fault: Fault) -> tuple[int, Any]:
        """Ollama's error body, `{"error": "<message>"}`, with the fault's status (500 if none)."""
        return fault.status or 500, {"error": fault.message}

    def render_stream_error(self, fault: Fault) -> bytes:
        """The `{"error": "<message>"}` line Ollama sends when a stream fails."""
        return json.dumps({"error": fault.message}).encode() + b"\n"

    def _call(self, index: int, call: ToolUseBlock) -> dict[str, Any]:
        args: Any = call.raw_input if call.raw_input is not None else call.input
        if not self.tool_call_ids:
            return {"function": {"name": call.name, "arguments": args}}
        return {"id": call.id, "function": {"index": index, "name": call.name, "arguments": args}}

    def _last(
        self, response: ScriptedResponse, request: RecordedRequest, message: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "model": _model(request),
            "created_at": _CREATED_AT,
            "message": message,
            "done": True,
            "done_reason": _DONE_REASONS.get(response.finish, response.finish),
            **_metrics(response.usage),
        }


def _line(model: str, message: dict[str, Any]) -> bytes:
    line = {"model": model, "created_at": _CREATED_AT, "message": message, "done": False}
    return json.dumps(line).encode() + b"\n"


def _metrics(usage: Usage) -> dict[str, int]:
    prompt_ns = usage.input_tokens * _NS_PER_TOKEN
    eval_ns = usage.output_tokens * _NS_PER_TOKEN
    return {
        "total_duration": prompt_ns + eval_ns + _NS_PER_TOKEN,
        "load_duration": _NS_PER_TOKEN,
        "prompt_eval_count": usage.input_tokens,
        "prompt_eval_duration": prompt_ns,
        "eval_count": usage.output_tokens,
        "eval_duration": eval_ns,
    }


def _split(response: ScriptedResponse) -> tuple[list[str], list[str], list[ToolUseBlock]]:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolUseBlock] = []
    for block in response.message.blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thoughts.append(block.thinking)
        elif isinstance(block, ToolUseBlock):
            calls.append(block)
    return texts, thoughts, calls


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _model(request: RecordedRequest) -> str:
    body = request.body
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else "fake-model"
