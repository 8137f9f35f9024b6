"""`FakeGeminiServer`: a local server that speaks Gemini's `generateContent` wire format."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Final

from aiohttp import web

from rxagent.formatters.gemini import (
    FINISH_ERRORS,
    FINISH_REASON_MAP,
    GRPC_HTTP_STATUS,
    GeminiFormatter,
)
from rxagent.messages import Block, TextBlock, ThinkingBlock, ToolUseBlock, thaw
from rxagent.testing.providers._base import (
    FakeProviderServer,
    Fault,
    RecordedRequest,
    Reply,
    ScriptedResponse,
    ScriptItem,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

__all__ = ["FINISH_WORDS", "FakeGeminiServer"]

FINISH_WORDS: Final[Mapping[str, str]] = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}
"""rxagent's finish reasons → the `finishReason` the server sends (Gemini has no `"pause"`)."""

_DEFAULT_STATUS: Final[Mapping[int, str]] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_ACTIONS: Final = {"generateContent": False, "streamGenerateContent": True}
_FORMATTER: Final = GeminiFormatter(call_ids="always")  # the script decides the ids


def _finish_word(finish: str) -> str:
    word = FINISH_WORDS.get(finish)
    if word is not None:
        return word
    if finish in FINISH_REASON_MAP or finish in FINISH_ERRORS:
        return finish  # already Gemini's own word
    raise ValueError(
        f"FakeGeminiServer cannot send finish={finish!r}: use one of "
        f"{sorted(FINISH_WORDS)} or a Gemini finishReason such as 'RECITATION'"
    )


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class FakeGeminiServer(FakeProviderServer):
    """A fake Gemini Developer API, played from a script.

    It answers `POST /{version}/models/{model}:generateContent` and
    `:streamGenerateContent?alt=sse`.

    Streams send one `GenerateContentResponse` per SSE event (`data: {...}` ending in CRLF CRLF,
    as Google does): text and thought summaries in `chunk_size`-character parts, each function
    call whole in its own chunk, a signature on the part it belongs to (see
    `rxagent.formatters.gemini`), and the `finishReason` with the full `usageMetadata` on the last
    chunk (earlier chunks carry the prompt count only, as usage is cumulative). Errors are Google
    API error bodies; `Fault(error_type=...)` sets the gRPC `status` (`"RESOURCE_EXHAUSTED"`,
    ...) or, for any other word, an `ErrorInfo` reason (`"API_KEY_INVALID"`). A stream request
    without `alt=sse` is answered 400. Scripted signatures are sent as they are: use base64
    strings, as Gemini does, if the google-genai SDK reads the responses.

    Args:
        turns: The responses, in request order (see `FakeProviderServer`). A `Reply`'s
            `finish` may also be a Gemini `finishReason` (`"MALFORMED_FUNCTION_CALL"`).
        chunk_size: Characters per streamed text or thought part.
        call_ids: Send `functionCall.id` (the scripted id, or `call_<request>_<n>`); `False`
            sends none, like models that leave ids out (the agent then assigns `call_<n>`).

    Example:
        ```python
        import asyncio

        from rxagent.messages import Msg
        from rxagent.models import GeminiChatModel
        from rxagent.testing import tool_call
        from rxagent.testing.providers import FakeGeminiServer


        async def main() -> None:
            turns = [tool_call("add", a=1, b=2), "3"]
            async with FakeGeminiServer(turns, call_ids=False) as server:
                async with GeminiChatModel("gemini-2.5-flash", base_url=server.base_url,
                                           api_key="k") as model:
                    first = await model.complete([Msg.user("1 + 2?")])
                    assert first.message.tool_calls[0].name == "add"
                    assert first.finish_reason == "tool_calls"
                    assert (await model.complete([Msg.user("again")])).message.text == "3"
            assert server.requests[0].query == {"alt": "sse"}


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "gemini"

    def __init__(
        self,
        turns: Sequence[ScriptItem] | Callable[[RecordedRequest], ScriptItem] = (),
        *,
        chunk_size: int = 8,
        call_ids: bool = True,
    ) -> None:
        super().__init__(turns, chunk_size=chunk_size)
        self.call_ids = call_ids
        for item in self._turns:
            if isinstance(item, Reply) and item.finish is not None:
                _finish_word(item.finish)  # a finish Gemini cannot say fails here, not mid-test

    # -- routes ------------------------------------------------------------------------------------

    def routes(self) -> list[web.RouteDef]:
        """`POST /{version}/models/{model}:{action}` (the colon is split off in the handler)."""
        return [web.post("/{version}/models/{model_action}", self._serve)]

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        _, colon, action = request.match_info["model_action"].rpartition(":")
        stream = _ACTIONS.get(action) if colon else None
        if stream is None:
            return self._google_error(404, "NOT_FOUND", f"unknown method {action!r}")
        if stream and request.query.get("alt") != "sse":
            return self._google_error(
                400, "INVALID_ARGUMENT", "FakeGeminiServer streams only with ?alt=sse"
            )
        return await self.handle(request, stream=stream)

    @staticmethod
    def _google_error(status: int, grpc: str, message: str) -> web.Response:
        payload = {"error": {"code": status, "message": message, "status": grpc}}
        return web.json_response(payload, status=status)

    # -- rendering ---------------------------------------------------------------------------------

    def _call(self, block: ToolUseBlock) -> dict[str, Any]:
        call: dict[str, Any] = {"id": block.id} if self.call_ids and block.id else {}
        call["name"] = block.name
        call["args"] = thaw(block.input)  # Gemini sends arguments as an object, never as text
        return call

    def _usage(self, response: ScriptedResponse) -> dict[str, Any]:
        usage = response.usage
        meta: dict[str, Any] = {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": usage.output_tokens,
            "totalTokenCount": usage.input_tokens + usage.output_tokens,
        }
        if usage.cache_read_tokens:
            meta["cachedContentTokenCount"] = usage.cache_read_tokens
        return meta

    @staticmethod
    def _model(request: RecordedRequest) -> str:
        return request.path.rpartition("/")[2].rpartition(":")[0]

    def _candidate(self, parts: list[Any], finish: str | None) -> dict[str, Any]:
        candidate: dict[str, Any] = {}
        if parts:
            candidate["content"] = {"role": "model", "parts": parts}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        return candidate

    def render(self, response: ScriptedResponse, request: RecordedRequest) -> Any:
        """The whole `GenerateContentResponse`."""
        parts = _FORMATTER._model_parts(response.message.blocks)
        for part in parts:
            call = part.get("functionCall")
            if call is not None and not self.call_ids:
                call.pop("id", None)
        return {
            "candidates": [self._candidate(parts, _finish_word(response.finish))],
            "usageMetadata": self._usage(response),
            "modelVersion": self._model(request),
            "responseId": f"resp-{response.index}",
        }

    def _stream_parts(self, blocks: Sequence[Block]) -> list[dict[str, Any]]:
        """One part per chunk, with signatures on the parts they belong to."""
        parts: list[dict[str, Any]] = []
        carried: str | None = None
        size = self.chunk_size
        for block in blocks:
            if isinstance(block, ThinkingBlock):
                if carried is not None:
                    parts.append({"text": "", "thoughtSignature": carried})
                    carried = None
                if not block.thinking and block.signature is not None:
                    carried = block.signature
                    continue
                pieces = _pieces(block.thinking, size)
                for i, piece in enumerate(pieces):
                    part: dict[str, Any] = {"text": piece, "thought": True}
                    if i == len(pieces) - 1 and block.signature is not None:
                        part["thoughtSignature"] = block.signature
                    parts.append(part)
                continue
            first = len(parts)
            if isinstance(block, TextBlock):
                parts.extend({"text": piece} for piece in _pieces(block.text, size))
            elif isinstance(block, ToolUseBlock):
                parts.append({"functionCall": self._call(block)})
            if carried is not None and len(parts) > first:
                parts[first]["thoughtSignature"] = carried
                carried = None
        if carried is not None:
            parts.append({"text": "", "thoughtSignature": carried})
        return parts

    def render_stream(
        self, response: ScriptedResponse, request: RecordedRequest
    ) -> Iterator[bytes]:
        """One SSE event per part; the last carries the finish reason and the whole usage."""
        finish = _finish_word(response.finish)
        parts = self._stream_parts(response.message.blocks)
        head = {"modelVersion": self._model(request), "responseId": f"resp-{response.index}"}
        prompt = response.usage.input_tokens
        partial = {"promptTokenCount": prompt, "totalTokenCount": prompt}
        last = len(parts) - 1
        for i, part in enumerate(parts):
            if i < last:
                chunk = {"candidates": [self._candidate([part], None)], "usageMetadata": partial}
            else:
                chunk = {
                    "candidates": [self._candidate([part], finish)],
                    "usageMetadata": self._usage(response),
                }
            yield _frame({**chunk, **head})
        if not parts:
            yield _frame(
                {
                    "candidates": [self._candidate([], finish)],
                    "usageMetadata": self._usage(response),
                    **head,
                }
            )

    def render_error(self, fault: Fault) -> tuple[int, Any]:
        """A Google API error body: `{"error": {"code", "message", "status"[, "details"]}}`."""
        status = fault.status or 500
        return status, {"error": self._error(fault, status)}

    def render_stream_error(self, fault: Fault) -> bytes:
        """The error object as an SSE data event (gRPC status `INTERNAL` unless `error_type`)."""
        grpc = fault.error_type or "INTERNAL"
        return _frame({"error": self._error(fault, GRPC_HTTP_STATUS.get(grpc, 500))})

    @staticmethod
    def _error(fault: Fault, status: int) -> dict[str, Any]:
        kind = fault.error_type
        if kind is not None and kind in GRPC_HTTP_STATUS:
            return {"code": status, "message": fault.message, "status": kind}
        error: dict[str, Any] = {
            "code": status,
            "message": fault.message,
            "status": _DEFAULT_STATUS.get(status, "UNKNOWN"),
        }
        if kind is not None:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": kind,
                    "domain": "googleapis.com",
                }
            ]
        return error


def _frame(chunk: Mapping[str, Any]) -> bytes:
    return (
        b"data: "
        + json.dumps(chunk, ensure_ascii=False, separators=(",", ":")).encode()
        + (b"\r\n\r\n")
    )
