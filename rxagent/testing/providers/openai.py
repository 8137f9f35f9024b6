"""A fake OpenAI Chat Completions server (and Azure OpenAI deployment route) for tests."""

from __future__ import annotations

import json
import time
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
from rxagent.testing.providers._embeddings import embeddings_problem, render_embeddings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from rxagent.models.base import Usage

__all__ = ["FakeOpenAIServer"]

_FINISH_WORDS: Final[Mapping[str, str]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
}
# OpenAI's `error.type` for the codes a test may inject.
_ERROR_TYPES: Final[Mapping[str, str]] = {
    "rate_limit_exceeded": "requests",
    "insufficient_quota": "insufficient_quota",
    "context_length_exceeded": "invalid_request_error",
    "invalid_api_key": "invalid_request_error",
    "model_not_found": "invalid_request_error",
    "server_error": "server_error",
}
_DEFAULT_CODES: Final[Mapping[int, str]] = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
_DONE: Final = b"data: [DONE]\n\n"


class FakeOpenAIServer(FakeProviderServer):
    """A local server speaking OpenAI Chat Completions, played from a script.

    Routes: `POST /v1/chat/completions` (give clients `server.base_url`, which ends with `/v1`)
    and Azure's `POST /openai/deployments/{deployment}/chat/completions` (give Azure clients
    `server.endpoint`); the Azure route answers 401 without an `api-key` header and 404 without
    an `api-version` query, as Azure does.

    Responses are what OpenAI sends: a `chat.completion` object, or `chat.completion.chunk`
    events: a first chunk with `role: "assistant"`, reasoning (as DeepSeek's
    `reasoning_content`), content fragments, each tool call (a first fragment with id, type and
    name and empty arguments, then argument pieces), a finish chunk, a usage chunk with empty
    `choices` when the request asked for `stream_options.include_usage`, and `data: [DONE]`.
    A `Reply(finish=...)` word that is not rxagent's (`"function_call"`, ...) is sent verbatim.
    Errors have OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`; a `Fault`'s
    `error_type` is the `code`.

    It also serves embeddings, `POST /v1/embeddings` (and Azure's
    `/openai/deployments/{deployment}/embeddings`), without the script: each text gets
    `fake_embedding(text, dimensions)`, a deterministic hashed bag of words, as floats or as
    base64 (`encoding_format`), with OpenAI's `list` object, usage and 400 errors (an empty
    input, more than 2048 inputs, a bad `dimensions`). Faults apply to these requests too
    (`fail(n, ...)` counts every request); `drop_after` drops the connection.

    Args:
        turns: The responses, in request order (see `FakeProviderServer`).
        chunk_size: Characters per streamed fragment.
        interleave_tool_calls: Stream the argument fragments of parallel tool calls
            alternately (call 0, call 1, call 0, ...), as some compatible servers do.
        embedding_dimensions: The size of embeddings when a request does not ask for one.

    Example:
        ```python
        import asyncio

        from rxagent import Msg
        from rxagent.models import OpenAIChatModel
        from rxagent.testing import tool_call
        from rxagent.testing.providers import FakeOpenAIServer, Fault


        async def main() -> None:
            server = FakeOpenAIServer([tool_call("add", a=1, b=2)])
            server.fail(1, Fault(status=429, headers={"retry-after-ms": "1"}))
            async with server, OpenAIChatModel("m", base_url=server.base_url, api_key="k") as m:
                reply = await m.complete([Msg.user("1 + 2?")])
            assert dict(reply.message.tool_calls[0].input) == {"a": 1, "b": 2}
            assert len(server.requests) == 2  # the 429, then the retry
            assert server.requests[1].body["stream_options"] == {"include_usage": True}


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "openai"
    stream_content_type: ClassVar[str] = "text/event-stream; charset=utf-8"

    def __init__(
        self,
        turns: Sequence[ScriptItem] | Callable[[RecordedRequest], ScriptItem] = (),
        *,
        chunk_size: int = 8,
        interleave_tool_calls: bool = False,
        embedding_dimensions: int = 1536,
    ) -> None:
        super().__init__(turns, chunk_size=chunk_size)
        if embedding_dimensions < 1:
            raise ValueError(f"embedding_dimensions must be at least 1, got {embedding_dimensions}")
        self.interleave_tool_calls = interleave_tool_calls
        self.embedding_dimensions = embedding_dimensions

    @property
    def endpoint(self) -> str:
        """The server's root, the Azure resource endpoint to give `AzureOpenAIChatModel`."""
        return self.root

    def _base_url(self, root: str) -> str:
        return f"{root}/v1"

    # -- routes ------------------------------------------------------------------------------------

    def routes(self) -> list[web.RouteDef]:
        """Chat completions and embeddings, at OpenAI's paths and at Azure's deployment paths."""
        return [
            web.post("/v1/chat/completions", self._chat),
            web.post("/openai/deployments/{deployment}/chat/completions", self._azure),
            web.post("/v1/embeddings", self._embeddings),
            web.post("/openai/deployments/{deployment}/embeddings", self._azure_embeddings),
        ]

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self.handle(request, stream=await _wants_stream(request))

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        recorded, _, fault = await self.receive(request)
        if fault is not None and (fault.status is not None or fault.body is not None):
            return self._error_response(fault)
        if fault is not None and fault.drop_after is not None:
            if request.transport is not None:
                request.transport.abort()
            return web.Response()
        problem = embeddings_problem(recorded.body)
        if problem is not None:
            param, message = problem
            body = {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": param,
                    "code": None,
                }
            }
            return web.json_response(body, status=400)
        return web.json_response(render_embeddings(recorded.body, self.embedding_dimensions))

    async def _azure(self, request: web.Request) -> web.StreamResponse:
        problem = _azure_problem(request)
        if problem is None:
            return await self.handle(request, stream=await _wants_stream(request))
        return await self._refuse(request, problem)

    async def _azure_embeddings(self, request: web.Request) -> web.StreamResponse:
        problem = _azure_problem(request)
        if problem is None:
            return await self._embeddings(request)
        return await self._refuse(request, problem)

    async def _refuse(self, request: web.Request, problem: Fault) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
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

    # -- rendering ---------------------------------------------------------------------------------

    def render(self, response: ScriptedResponse, request: RecordedRequest) -> Any:
        """The `chat.completion` object."""
        texts, thoughts, calls = _split(response)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(texts) if texts or not calls else None,
            "refusal": None,
        }
        if thoughts:
            message["reasoning_content"] = "".join(thoughts)
        if calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": _arguments(call)},
                }
                for call in calls
            ]
        return {
            "id": f"chatcmpl-fake{response.index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": _model(request),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": _FINISH_WORDS.get(response.finish, response.finish),
                }
            ],
            "usage": _usage(response.usage),
        }

    def render_stream(
        self, response: ScriptedResponse, request: RecordedRequest
    ) -> Iterator[bytes]:
        """The `chat.completion.chunk` events, then `data: [DONE]`."""
        body = request.body if isinstance(request.body, dict) else {}
        options = body.get("stream_options")
        with_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        head: dict[str, Any] = {
            "id": f"chatcmpl-fake{response.index}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": _model(request),
            "system_fingerprint": "fp_fake",
        }

        def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
            chunk = {
                **head,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }
            if with_usage:
                chunk["usage"] = None
            return b"data: " + json.dumps(chunk).encode() + b"\n\n"

        size = self.chunk_size
        texts, thoughts, calls = _split(response)
        yield frame({"role": "assistant", "content": "", "refusal": None})
        for piece in _pieces("".join(thoughts), size):
            yield frame({"content": None, "reasoning_content": piece})
        for piece in _pieces("".join(texts), size):
            yield frame({"content": piece})
        yield from self._tool_frames(calls, frame)
        yield frame({}, _FINISH_WORDS.get(response.finish, response.finish))
        if with_usage:
            yield (
                b"data: "
                + json.dumps({**head, "choices": [], "usage": _usage(response.usage)}).encode()
                + b"\n\n"
            )
        yield _DONE

    def _tool_frames(
        self, calls: list[ToolUseBlock], frame: Callable[[dict[str, Any]], bytes]
    ) -> Iterator[bytes]:
        heads = [
            {
                "index": i,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            for i, call in enumerate(calls)
        ]
        pieces = [_pieces(_arguments(call), self.chunk_size) for call in calls]
        if not self.interleave_tool_calls:
            for i, head in enumerate(heads):
                yield frame({"tool_calls": [head]})
                for piece in pieces[i]:
                    yield frame({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
            return
        for head in heads:
            yield frame({"tool_calls": [head]})
        for step in range(max((len(p) for p in pieces), default=0)):
            for i, call_pieces in enumerate(pieces):
                if step < len(call_pieces):
                    fragment = {"index": i, "function": {"arguments": call_pieces[step]}}
                    yield frame({"tool_calls": [fragment]})

    def render_error(self, fault: Fault) -> tuple[int, Any]:
        """OpenAI's error body: `{"error": {"message", "type", "param", "code"}}`."""
        status = fault.status or 500
        return status, {"error": _error(fault, status)}

    def render_stream_error(self, fault: Fault) -> bytes:
        """An `{"error": {...}}` object sent as a data event, as OpenAI does mid-stream."""
        payload = {"error": _error(fault, fault.status or 500)}
        return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _azure_problem(request: web.Request) -> Fault | None:
    """Azure's answer to a request without its key or API version, or None when it has both."""
    if not request.headers.get("api-key"):
        return Fault(
            status=401,
            error_type="401",
            message="Access denied due to invalid subscription key or wrong API endpoint.",
        )
    if not request.query.get("api-version"):
        return Fault(status=404, error_type="404", message="Resource not found")
    return None


async def _wants_stream(request: web.Request) -> bool:
    try:
        body = json.loads(await request.read())
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("stream") is True


def _error(fault: Fault, status: int) -> dict[str, Any]:
    code = fault.error_type or _DEFAULT_CODES.get(status)
    kind = _ERROR_TYPES.get(code or "")
    if kind is None:
        kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"message": fault.message, "type": kind, "param": None, "code": code}


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


def _arguments(call: ToolUseBlock) -> str:
    return call.raw_input if call.raw_input is not None else json.dumps(call.input)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _model(request: RecordedRequest) -> str:
    body = request.body
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else "fake-model"


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
