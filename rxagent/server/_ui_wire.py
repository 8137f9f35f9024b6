r"""The wire format of the AI SDK UI message stream: SSE `data:` frames of JSON chunks.

Example:
    ```python
    from rxagent.server._ui_wire import DONE_FRAME, encode_ui_chunks

    body = encode_ui_chunks([{"type": "start"}, {"type": "finish"}]) + DONE_FRAME
    assert body.decode().split("\n\n")[:3] == [
        'data: {"type":"start"}', 'data: {"type":"finish"}', "data: [DONE]"
    ]
    ```
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import pydantic_core

from rxagent.messages import thaw

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from rxagent.messages import ToolUseBlock
    from rxagent.models.base import Usage
    from rxagent.result import AgentResult

__all__ = [
    "DONE_FRAME",
    "UI_STREAM_HEADERS",
    "UIChunk",
    "encode_ui_chunk",
    "encode_ui_chunks",
    "finish_chunks",
    "json_ready",
    "not_run_reason",
    "tool_input",
]

UIChunk: TypeAlias = dict[str, Any]
"""One UI message chunk, JSON-ready (`{"type": "text-delta", "id": ..., "delta": ...}`)."""

UI_STREAM_HEADERS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "X-Vercel-AI-UI-Message-Stream": "v1",
        "X-Accel-Buffering": "no",
    }
)
"""The response headers of a UI message stream (those the `ai` package's own servers send)."""

DONE_FRAME: Final = b"data: [DONE]\n\n"
"""The SSE frame that ends the stream."""


def encode_ui_chunk(chunk: UIChunk) -> bytes:
    """Return the SSE frame of one chunk: `data: <compact JSON>` and a blank line.

    Example:
        ```python
        from rxagent.server._ui_wire import encode_ui_chunk

        frame = encode_ui_chunk({"type": "text-delta", "id": "text-1", "delta": "Hi"})
        assert frame == b'data: {"type":"text-delta","id":"text-1","delta":"Hi"}' + bytes([10, 10])
        ```
    """
    return b"data: " + _json(chunk) + b"\n\n"


def encode_ui_chunks(chunks: Iterable[UIChunk]) -> bytes:
    """Return the SSE frames of several chunks, in order (one write for one event)."""
    return b"".join(b"data: " + _json(chunk) + b"\n\n" for chunk in chunks)


def _json(chunk: UIChunk) -> bytes:
    # JavaScript's JSON.parse takes no NaN or Infinity, and one odd value must not end the stream
    return pydantic_core.to_json(chunk, inf_nan_mode="null", fallback=str)


def json_ready(value: Any) -> Any:
    """`value` as plain JSON data: NaN and infinities become null, unknown objects their `str`.

    Example:
        ```python
        from rxagent.server._ui_wire import json_ready

        assert json_ready({"pct": float("nan"), "at": (1, 2)}) == {"pct": None, "at": [1, 2]}
        ```
    """
    return pydantic_core.to_jsonable_python(value, inf_nan_mode="null", fallback=str)


# -- chunk contents ----------------------------------------------------------------------------

_FINISH_REASONS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "no_tool_calls": "stop",
        "final_answer": "stop",
        "stop_condition": "stop",
        "hook_stop": "stop",
        "approval_pending": "tool-calls",
        "error": "error",
    }
)


def tool_input(call: ToolUseBlock) -> Any:
    """The call's input as JSON-ready data (its raw text when the arguments were not JSON)."""
    return thaw(call.input) if call.raw_input is None else call.raw_input


def not_run_reason(result: AgentResult[Any]) -> str:
    """What memory says for a call that never ran (`rxagent.state.pair_tool_calls`)."""
    if result.interrupted:
        return "interrupted"
    if result.stop_reason == "approval_pending":
        return "awaiting approval"
    return f"not executed: the run ended ({result.stop_reason})"


def _finish_reason(result: AgentResult[Any], model_finish: str | None) -> str:
    if result.interrupted:
        return "other"
    if not result.ok:
        return "error"
    if model_finish == "length":  # the model's token limit cut the reply
        return "length"
    if model_finish == "content_filter":
        return "content-filter"
    return _FINISH_REASONS.get(result.stop_reason, "other")


def _usage(usage: Usage) -> dict[str, int]:
    """Usage in the AI SDK's names (`LanguageModelUsage`), plus what rxagent adds."""
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
        "cachedInputTokens": usage.cache_read_tokens,
        "cacheWriteTokens": usage.cache_write_tokens,
        "requests": usage.requests,
    }


def finish_chunks(result: AgentResult[Any], model_finish: str | None = None) -> list[UIChunk]:
    """The last chunks of a run's message: `abort` when it was interrupted, then `finish`.

    `model_finish` is the last model call's finish reason: `"length"` (the reply was cut) and
    `"content_filter"` show in `finishReason`.
    """
    chunks: list[UIChunk] = []
    if result.interrupted:
        chunks.append({"type": "abort", "reason": result.error.message if result.error else ""})
    chunks.append(
        {"type": "finish", "finishReason": _finish_reason(result, model_finish),
         "messageMetadata": _final_metadata(result)}
    )  # fmt: skip
    return chunks


def _final_metadata(result: AgentResult[Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "ok": result.ok,
        "stopReason": result.stop_reason,
        "usage": _usage(result.usage),
    }
    if result.error is not None:
        metadata["error"] = {"code": str(result.error.code), "message": result.error.message}
    if result.pending_approvals:
        metadata["pendingApprovals"] = list(result.pending_approvals)
    return metadata
