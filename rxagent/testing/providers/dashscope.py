"""A fake DashScope server: the native generation API's exact wire format, played from a script.

Example:
    ```python
    import asyncio

    from rxagent.messages import Msg
    from rxagent.models import DashScopeChatModel
    from rxagent.testing import tool_call
    from rxagent.testing.providers import FakeDashScopeServer


    async def main() -> None:
        async with FakeDashScopeServer([tool_call("add", a=1, b=2), "3"]) as server:
            async with DashScopeChatModel("qwen-plus", base_url=server.base_url, api_key="k") as m:
                first = await m.complete([Msg.user("1 + 2?")])
                assert dict(first.message.tool_calls[0].input) == {"a": 1, "b": 2}
                assert (await m.complete([Msg.user("again")])).message.text == "3"
        sent = server.requests[0]
        assert sent.path == "/api/v1/services/aigc/text-generation/generation"
        assert sent.headers["X-DashScope-SSE"] == "enable"
        assert sent.body["parameters"]["incremental_output"] is True


    asyncio.run(main())
    ```
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from rxagent.messages import TextBlock, ThinkingBlock, ToolUseBlock
from rxagent.testing.providers._base import FakeProviderServer, Reply

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rxagent.messages import Msg
    from rxagent.models.base import Usage
    from rxagent.testing.providers._base import (
        Fault,
        RecordedRequest,
        ScriptedResponse,
        ScriptItem,
    )

__all__ = ["MULTIMODAL_PATH", "TEXT_PATH", "FakeDashScopeServer"]

TEXT_PATH: Final = "/api/v1/services/aigc/text-generation/generation"
"""The text-generation endpoint (qwen-plus, qwen-max, qwen3-...)."""
MULTIMODAL_PATH: Final = "/api/v1/services/aigc/multimodal-generation/generation"
"""The multimodal-generation endpoint (qwen-vl-...)."""

_FINISH_WORDS: Final = {"stop": "stop", "length": "length", "tool_calls": "tool_calls"}
_CODE_FOR_STATUS: Final = {
    400: "InvalidParameter",
    401: "InvalidApiKey",
    403: "AccessDenied",
    404: "ModelNotFound",
    429: "Throttling.RateQuota",
}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _usage(usage: Usage, output_tokens: int) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": usage.input_tokens + output_tokens,
    }
    if usage.cache_read_tokens or usage.cache_write_tokens:
        details: dict[str, Any] = {"cached_tokens": usage.cache_read_tokens}
        if usage.cache_write_tokens:
            details["cache_creation_input_tokens"] = usage.cache_write_tokens
        wire["prompt_tokens_details"] = details
    return wire


def _parts(message: Msg) -> tuple[str, str | None, list[ToolUseBlock]]:
    """The text, the reasoning (None without thinking blocks) and the calls of a reply."""
    texts: list[str] = []
    thinking: list[str] | None = None
    calls: list[ToolUseBlock] = []
    for block in message.blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thinking = [*(thinking or []), block.thinking]
        elif isinstance(block, ToolUseBlock):
            calls.append(block)
    return "".join(texts), None if thinking is None else "".join(thinking), calls


def _arguments(call: ToolUseBlock) -> str:
    if call.raw_input is not None:
        return call.raw_input
    return json.dumps(call.input, ensure_ascii=False)


class FakeDashScopeServer(FakeProviderServer):
    """A local DashScope server for tests: both generation endpoints, SSE and whole responses.

    It streams when the request has the header `X-DashScope-SSE: enable` (as DashScope does),
    in DashScope's exact frames: `id:<n>`, `event:result`, the comment `:HTTP_STATUS/200`, then
    `data:<json>` with no space after the colon; `finish_reason` is `"null"` until the last frame
    and `usage` is cumulative. With `parameters.incremental_output` true each frame carries only
    new text; otherwise (DashScope's default) each carries everything so far. Thinking is sent
    as `reasoning_content`; a tool call's first fragment has its `id` and `name`, later fragments
    have `""` for both. The multimodal endpoint sends contents as `[{"text": ...}]` lists.

    Errors are DashScope's `{"code", "message", "request_id"}` bodies; `Fault.error_type` sets
    the code (by default one that fits the status, e.g. `Throttling.RateQuota` for 429). An
    error inside a stream is an `event:error` frame with `:HTTP_STATUS/<status>` (500, or 429
    for a `Throttling...` code). DashScope has no finish reason for `"content_filter"` or
    `"pause"` (scripting one raises `ValueError`): script a
    `Fault(status=400, error_type="DataInspectionFailed")` instead.

    Give a client `server.base_url` (the host root; the client adds `/api/v1/...`), or set
    `dashscope.base_http_api_url = server.base_url + "/api/v1"` for the official SDK.

    Example:
        ```python
        from rxagent.testing.providers import FakeDashScopeServer, Fault

        server = FakeDashScopeServer(["Hello!"], chunk_size=2)
        server.fail(1, Fault(status=429, error_type="Throttling.RateQuota"))
        assert server.remaining == 1
        ```
    """

    provider = "dashscope"
    stream_content_type = "text/event-stream;charset=UTF-8"

    def __init__(
        self,
        turns: Sequence[ScriptItem] | Callable[[RecordedRequest], ScriptItem] = (),
        *,
        chunk_size: int = 8,
    ) -> None:
        if not callable(turns) and isinstance(turns, Sequence):
            self._check_finishes(turns)
        super().__init__(turns, chunk_size=chunk_size)

    def add(self, *turns: ScriptItem) -> None:
        """Append turns to the script (a finish reason DashScope lacks fails here)."""
        self._check_finishes(turns)
        super().add(*turns)

    def _check_finishes(self, turns: Sequence[object]) -> None:
        for item in turns:
            if isinstance(item, Reply) and item.finish is not None:
                self._finish_word(item.finish)

    def routes(self) -> list[web.RouteDef]:
        """The text-generation and multimodal-generation endpoints."""

        async def generation(request: web.Request) -> web.StreamResponse:
            stream = request.headers.get("X-DashScope-SSE", "").lower() == "enable"
            return await self.handle(request, stream=stream)

        return [web.post(TEXT_PATH, generation), web.post(MULTIMODAL_PATH, generation)]

    # -- rendering ---------------------------------------------------------------------------------

    @staticmethod
    def _finish_word(finish: str) -> str:
        word = _FINISH_WORDS.get(finish)
        if word is None:
            raise ValueError(
                f"DashScope has no finish reason for {finish!r}; script a "
                "Fault(status=400, error_type='DataInspectionFailed') for a content filter"
            )
        return word

    @staticmethod
    def _content(text: str, multimodal: bool) -> Any:
        if multimodal:
            return [{"text": text}] if text else []
        return text

    def render(self, response: ScriptedResponse, request: RecordedRequest) -> Any:
        """The whole response: `output.choices[0]`, `usage` and `request_id`."""
        multimodal = request.path == MULTIMODAL_PATH
        text, reasoning, calls = _parts(response.message)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": self._content(text, multimodal),
        }
        if reasoning is not None:
            message["reasoning_content"] = reasoning
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
            "output": {
                "choices": [
                    {"finish_reason": self._finish_word(response.finish), "message": message}
                ]
            },
            "usage": _usage(response.usage, response.usage.output_tokens),
            "request_id": f"fake-request-{response.index}",
        }

    def _fragments(self, response: ScriptedResponse) -> list[dict[str, Any]]:
        """The incremental message of each content frame."""
        size = self.chunk_size
        text, reasoning, calls = _parts(response.message)
        thought = reasoning or ""
        frames: list[dict[str, Any]] = [
            {"content": "", "reasoning_content": thought[i : i + size]}
            for i in range(0, len(thought), size)
        ]
        frames.extend({"content": text[i : i + size]} for i in range(0, len(text), size))
        for index, call in enumerate(calls):
            head = {"index": index, "id": call.id, "type": "function"}
            first = {**head, "function": {"name": call.name, "arguments": ""}}
            frames.append({"content": "", "tool_calls": [first]})
            args = _arguments(call)
            frames.extend(
                {
                    "content": "",
                    "tool_calls": [
                        {
                            **head,
                            "id": "",
                            "function": {"name": "", "arguments": args[i : i + size]},
                        }
                    ],
                }
                for i in range(0, len(args), size)
            )
        return frames

    @staticmethod
    def _accumulate(state: dict[str, Any], fragment: dict[str, Any]) -> dict[str, Any]:
        """The cumulative message after `fragment` (DashScope's `incremental_output=false`)."""
        state["content"] = state.get("content", "") + fragment.get("content", "")
        if "reasoning_content" in fragment or "reasoning_content" in state:
            state["reasoning_content"] = state.get("reasoning_content", "") + fragment.get(
                "reasoning_content", ""
            )
        for call in fragment.get("tool_calls", ()):
            calls: list[dict[str, Any]] = state.setdefault("tool_calls", [])
            if call["id"]:
                calls.append({**call, "function": dict(call["function"])})
            else:
                calls[call["index"]]["function"]["arguments"] += call["function"]["arguments"]
        return json.loads(_dumps(state))  # type: ignore[no-any-return]

    def render_stream(
        self, response: ScriptedResponse, request: RecordedRequest
    ) -> Iterator[bytes]:
        """The SSE frames: content fragments, then a last frame with the finish reason."""
        multimodal = request.path == MULTIMODAL_PATH
        body = request.body if isinstance(request.body, dict) else {}
        params = body.get("parameters")
        incremental = isinstance(params, dict) and params.get("incremental_output") is True
        word = self._finish_word(response.finish)
        fragments = self._fragments(response)
        total = len(fragments) + 1
        final_tokens = response.usage.output_tokens
        state: dict[str, Any] = {}
        request_id = f"fake-request-{response.index}"
        for number, fragment in enumerate([*fragments, {"content": ""}], start=1):
            message = fragment if incremental else self._accumulate(state, fragment)
            message = {**message, "role": "assistant"}
            message["content"] = self._content(message.get("content", ""), multimodal)
            finish = word if number == total else "null"
            tokens = final_tokens if number == total else final_tokens * number // total
            data = {
                "output": {"choices": [{"message": message, "finish_reason": finish}]},
                "usage": _usage(response.usage, tokens),
                "request_id": request_id,
            }
            yield self._frame(number, "result", 200, data)

    @staticmethod
    def _frame(number: int, event: str, status: int, data: Any) -> bytes:
        return (
            f"id:{number}\nevent:{event}\n:HTTP_STATUS/{status}\ndata:{_dumps(data)}\n\n".encode()
        )

    @staticmethod
    def _error_body(fault: Fault, status: int) -> dict[str, Any]:
        code = fault.error_type or _CODE_FOR_STATUS.get(status, "InternalError")
        return {"code": code, "message": fault.message, "request_id": "fake-request-error"}

    def render_error(self, fault: Fault) -> tuple[int, Any]:
        """DashScope's error body `{"code", "message", "request_id"}` with the fault's status."""
        status = fault.status or 500
        return status, self._error_body(fault, status)

    def render_stream_error(self, fault: Fault) -> bytes:
        """An `event:error` frame; its status comes from the fault, or from its code."""
        code = fault.error_type or ""
        status = fault.status or (429 if code.startswith("Throttling") else 500)
        number = (fault.mid_stream_error or 0) + 1
        return self._frame(number, "error", status, self._error_body(fault, status))
