"""A run as OpenAI answers: a `chat.completion`, or its events as `chat.completion.chunk`s.

- Text comes from the top-level agent's `ReasoningChunkEvent`s (a nested agent's text is its
  own); thinking goes out as `reasoning_content` (DeepSeek's field). Tool-call fragments never go
  out: the server runs the tools.
- Tool progress (`pre_acting`, `acting_chunk`, `post_acting`, of any agent in the run) rides in
  an extra field, `"rxagent": {"event": <the event as EVENT_ADAPTER JSON>}`, of a chunk whose one
  choice has an empty delta, so clients that ignore the field see an ordinary empty chunk.
- `finish_reason` is `"length"` when the run stopped at its step limit, `"stop"` otherwise.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final, Literal

from rxagent.events import (
    PostCallEvent,
    PostReasoningEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
)
from rxagent.messages import ThinkingBlock, new_id
from rxagent.models.base import TextDelta, ThinkingDelta

if TYPE_CHECKING:
    from rxagent.events import BaseEvent
    from rxagent.models.base import Usage
    from rxagent.result import AgentResult

__all__ = [
    "PROGRESS_EVENTS",
    "ChunkStream",
    "closing_event",
    "completion_body",
    "finish_reason",
    "run_extension",
    "usage_body",
]

PROGRESS_EVENTS: Final = frozenset(("pre_acting", "acting_chunk", "post_acting"))
"""The event types sent to OpenAI clients as tool progress."""


def usage_body(usage: Usage) -> dict[str, Any]:
    """OpenAI's `usage` object for a run's usage (every step of the run added up)."""
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }


def finish_reason(
    result: AgentResult[Any], model_finish: str | None = None
) -> Literal["stop", "length", "content_filter"]:
    """OpenAI's `finish_reason` of a run's answer.

    `"length"` when the model's output-token limit cut the last reply (`model_finish`, the
    last top-level `PostReasoningEvent.finish_reason`) or the run stopped at its step limit
    (`max_iters`); `"content_filter"` when the provider withheld the reply; `"stop"` otherwise.

    Example:
        ```python
        from rxagent import AgentResult, Msg
        from rxagent.server._openai_response import finish_reason

        result = AgentResult(reply=Msg.assistant("The answer is"))
        assert finish_reason(result) == "stop"
        assert finish_reason(result, "length") == "length"
        ```
    """
    if model_finish == "length" or result.stop_reason == "max_iters":
        return "length"
    return "content_filter" if model_finish == "content_filter" else "stop"


def run_extension(result: AgentResult[Any], session_id: str | None) -> dict[str, Any]:
    """The `rxagent` field of a completion (and of a stream's last choice chunk)."""
    return {
        "session_id": session_id,
        "run_id": result.run_id,
        "stop_reason": result.stop_reason,
        "tools_used": list(result.tools_used),
        "pending_approvals": list(result.pending_approvals),
    }


def _thinking(result: AgentResult[Any]) -> str:
    content = result.reply.content
    if isinstance(content, str):
        return ""
    return "".join(b.thinking for b in content if isinstance(b, ThinkingBlock))


def completion_body(
    result: AgentResult[Any],
    *,
    model: str,
    created: int,
    session_id: str | None,
    progress: list[dict[str, Any]],
    model_finish: str | None = None,
) -> dict[str, Any]:
    """A `chat.completion` for a finished run: its reply, finish reason, usage and extension.

    `progress` holds the run's tool-progress events (as JSON); they go in `rxagent.events`.
    `model_finish` is the last top-level model call's finish reason (see `finish_reason`).

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.server._openai_response import completion_body
        from rxagent.testing import ScriptedModel

        result = ReActAgent("bot", "", ScriptedModel(["Hi!"])).call_sync("hello")
        body = completion_body(result, model="bot", created=0, session_id=None, progress=[])
        assert body["object"] == "chat.completion"
        assert body["choices"][0]["message"] == {"role": "assistant", "content": "Hi!"}
        assert body["choices"][0]["finish_reason"] == "stop"
        ```
    """
    message: dict[str, Any] = {"role": "assistant", "content": result.reply.text}
    thinking = _thinking(result)
    if thinking:
        message["reasoning_content"] = thinking
    return {
        "id": f"chatcmpl-{result.run_id or new_id()}",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason(result, model_finish),
            }
        ],
        "usage": usage_body(result.usage),
        "rxagent": {**run_extension(result, session_id), "events": progress},
    }


class ChunkStream:
    """Turns a run's events into `chat.completion.chunk` bodies, in order.

    The first chunk (on the first event) carries `delta.role`. Each top-level step's text is
    streamed as it comes, a blank line apart from the previous step's; when the final reply
    differs from what the last step streamed (a hook rewrote it, the run was interrupted), the
    difference follows. `close(result)` gives the last chunks: the finish reason, then the usage
    when `include_usage` is set.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.server._openai_response import ChunkStream
        from rxagent.testing import ScriptedModel
        import asyncio

        async def chunks() -> list[dict]:
            agent = ReActAgent("helper", "", ScriptedModel(["Hello!"], chunk_size=3))
            stream = ChunkStream("helper", include_usage=True)
            out = []
            async for event in agent.events("hi"):
                out += stream.feed(event)
                if event.type == "post_call":
                    out += stream.close(event.result, session_id=None)
            return out

        out = asyncio.run(chunks())
        assert out[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in out if c["choices"])
        assert text == "Hello!" and out[-2]["choices"][0]["finish_reason"] == "stop"
        assert out[-1]["choices"] == [] and out[-1]["usage"]["total_tokens"] > 0
        ```
    """

    def __init__(
        self, model: str, *, include_usage: bool = False, created: int | None = None
    ) -> None:
        self.model = model
        self.include_usage = include_usage
        self.created = int(time.time()) if created is None else created
        self.id = ""
        self._step_text: list[str] = []  # the text the current top-level step streamed, in parts
        self._streamed_text = False
        self.model_finish: str | None = None  # the last top-level model call's finish reason

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if self.include_usage:
            body["usage"] = None
        return body

    def _text(self, text: str, *, new_block: bool) -> dict[str, Any]:
        """A content chunk; a new block of text is set a blank line apart from earlier text."""
        if new_block and self._streamed_text:
            text = "\n\n" + text
        self._streamed_text = True
        return self._chunk({"content": text})

    def feed(self, event: BaseEvent) -> list[dict[str, Any]]:
        """The chunks one event gives (often none)."""
        out: list[dict[str, Any]] = []
        if not self.id:
            self.id = f"chatcmpl-{event.run_id or new_id()}"
            out.append(self._chunk({"role": "assistant", "content": ""}))
        top_level = len(event.path) <= 1
        if isinstance(event, ReasoningChunkEvent) and top_level:
            delta = event.delta
            if isinstance(delta, TextDelta) and delta.text:
                out.append(self._text(delta.text, new_block=not self._step_text))
                self._step_text.append(delta.text)  # joined once, at the end
            elif isinstance(delta, ThinkingDelta) and delta.text:
                out.append(self._chunk({"reasoning_content": delta.text}))
        elif isinstance(event, PreReasoningEvent) and top_level:
            self._step_text = []
        elif isinstance(event, PostReasoningEvent) and top_level:
            self.model_finish = event.finish_reason
        elif event.type in PROGRESS_EVENTS:
            chunk = self._chunk({})
            chunk["rxagent"] = {"event": event.model_dump(mode="json")}
            out.append(chunk)
        return out

    def close(self, result: AgentResult[Any], *, session_id: str | None) -> list[dict[str, Any]]:
        """The last chunks: the rest of the reply (if any), the finish reason, the usage."""
        out: list[dict[str, Any]] = []
        if not self.id:
            self.id = f"chatcmpl-{result.run_id or new_id()}"
            out.append(self._chunk({"role": "assistant", "content": ""}))
        reply = result.reply.text
        streamed = "".join(self._step_text)
        if reply != streamed:
            if streamed and reply.startswith(streamed):
                out.append(self._text(reply[len(streamed) :], new_block=False))
            elif reply:
                out.append(self._text(reply, new_block=True))
        last = self._chunk({}, finish_reason(result, self.model_finish))
        last["rxagent"] = run_extension(result, session_id)
        out.append(last)
        if self.include_usage:
            out.append(
                {
                    "id": self.id,
                    "object": "chat.completion.chunk",
                    "created": self.created,
                    "model": self.model,
                    "choices": [],
                    "usage": usage_body(result.usage),
                }
            )
        return out


def closing_event(event: BaseEvent) -> PostCallEvent | None:
    """The run's top-level PostCall (its last event), or None."""
    if isinstance(event, PostCallEvent) and len(event.path) <= 1:
        return event
    return None
