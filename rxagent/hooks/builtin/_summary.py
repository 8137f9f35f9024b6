"""The `summarize` strategy of `ContextWindow`: summaries of dropped history, cached per span.

Summaries live in `RunContext.extra` (saved with the session as `AgentState.extra`) under
`SUMMARIES_KEY`, as `{"<first id>..<last id>": "<summary>"}`. A span whose summary is cached is
never summarised again; a span that extends a cached one is summarised from that summary plus
the new messages only. The summary request goes straight to the run's model: its chunks are
never published as events.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any, Final

from rxagent.context import current_run
from rxagent.errors import NoActiveRunError
from rxagent.messages import ImageBlock, Msg, TextBlock, ToolResultBlock, ToolUseBlock
from rxagent.models.base import ModelOptions, drain

if TYPE_CHECKING:
    from collections.abc import Iterator, MutableMapping, Sequence

    from rxagent.models.base import ChatModel
    from rxagent.tokens import TokenCounter

__all__ = [
    "MAX_CACHED_SUMMARIES",
    "SUMMARIES_KEY",
    "SUMMARY_HEADER",
    "SUMMARY_INSTRUCTIONS",
    "SUMMARY_MESSAGE_TOKENS",
    "render_transcript",
    "span_key",
    "summarize_span",
    "summary_message",
]

logger: Final = logging.getLogger("rxagent.hooks.context_window")

SUMMARIES_KEY: Final = "context_window.summaries"
"""The key of the summary cache in `RunContext.extra` / `AgentState.extra`."""

MAX_CACHED_SUMMARIES: Final = 16
"""The most summaries kept per session (the oldest go first)."""

SUMMARY_INSTRUCTIONS: Final = (
    "Summarize the conversation below for the assistant that continues it. Keep the facts, "
    "names, numbers, decisions, tool results that still matter and open questions. Write plain "
    "text in the conversation's language, at most {limit} tokens, with no preamble."
)
"""The system message of a summary request (`{limit}` is the summary's token limit)."""

SUMMARY_HEADER: Final = (
    "Summary of the earlier conversation (left out to fit the context window):\n"
)
"""The start of the system message that replaces the dropped history."""

SUMMARY_MESSAGE_TOKENS: Final = 2_000
"""The most tokens of one message that a summary request shows (long tool outputs are cut)."""

_MIN_CHUNK_TOKENS: Final = 256


def span_key(span: Sequence[Msg]) -> str:
    """The cache key of a span of messages: `"<first id>..<last id>"`.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.hooks.builtin._summary import span_key

        assert span_key([Msg.user("a", id="m1"), Msg.assistant("b", id="m2")]) == "m1..m2"
        ```
    """
    return f"{span[0].id}..{span[-1].id}"


def _render(message: Msg) -> str:
    parts: list[str] = []
    speaker = message.role.capitalize()
    if isinstance(message.content, str):
        return f"{speaker}: {message.content}"
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            args = json.dumps(block.input, ensure_ascii=False, default=str)
            parts.append(f"{speaker} called {block.name}({args})")
        elif isinstance(block, ToolResultBlock):
            outcome = "failed" if block.is_error else "returned"
            parts.append(f"Tool {block.name} {outcome}: {block.text}")
        elif isinstance(block, ImageBlock):
            parts.append(f"{speaker}: [image]")
        elif isinstance(block, TextBlock):
            parts.append(f"{speaker}: {block.text}")
    return "\n".join(parts)


def render_transcript(messages: Sequence[Msg]) -> list[str]:
    """Render messages as plain transcript lines, one entry per message (thinking left out).

    Example:
        ```python
        from rxagent import Msg, ToolResultBlock, ToolUseBlock
        from rxagent.hooks.builtin._summary import render_transcript

        lines = render_transcript([
            Msg.user("2 + 3?"),
            Msg.assistant([ToolUseBlock(id="c1", name="add", input={"a": 2, "b": 3})]),
            Msg.tool(ToolResultBlock(id="c1", name="add", output="5")),
        ])
        assert lines == ["User: 2 + 3?", 'Assistant called add({"a": 2, "b": 3})',
                         "Tool add returned: 5"]
        ```
    """
    return [_render(m) for m in messages]


def _chunks(
    span: Sequence[Msg], limit: int, per_message: int, counter: TokenCounter
) -> Iterator[tuple[Msg, str]]:
    """Group the span's transcript into pieces of at most `limit` tokens.

    Yields `(last message of the piece, piece text)`. A message longer than `per_message` tokens
    is cut to that, and ends with `" …"`.
    """
    lines: list[str] = []
    used = 0
    cap = min(limit, per_message)
    for i, message in enumerate(span):
        line = _render(message)
        size = counter.count_text(line) + 1
        if size > cap:
            line = counter.truncate_text(line, cap - 3) + " …"
            size = cap
        if lines and used + size > limit:
            yield span[i - 1], "\n".join(lines)
            lines, used = [], 0
        lines.append(line)
        used += size
    if lines:
        yield span[-1], "\n".join(lines)


async def _ask(model: ChatModel, previous: str | None, piece: str, limit: int) -> str:
    prompt = f"Summary so far:\n{previous}\n\nConversation since:\n" if previous else ""
    request = [
        Msg.system(SUMMARY_INSTRUCTIONS.format(limit=limit)),
        Msg.user(f"{prompt}{piece}" if prompt else f"Conversation:\n{piece}"),
    ]
    response = await drain(model, request, options=ModelOptions(max_output_tokens=limit))
    try:
        current_run().record_usage(response.usage)  # a summary is a model call the run pays for
    except NoActiveRunError:
        pass
    text = response.message.text.strip()
    if not text:
        raise ValueError("the model returned an empty summary")
    return text


def _store(extra: MutableMapping[str, Any], key: str, summary: str) -> None:
    """Record a summary copy-on-write (the old dict may be shared with saved state)."""
    cache = extra.get(SUMMARIES_KEY)
    updated = dict(cache) if isinstance(cache, dict) else {}
    updated.pop(key, None)
    updated[key] = summary
    while len(updated) > MAX_CACHED_SUMMARIES:
        del updated[next(iter(updated))]
    extra[SUMMARIES_KEY] = updated


async def summarize_span(
    span: Sequence[Msg],
    *,
    model: ChatModel,
    counter: TokenCounter,
    extra: MutableMapping[str, Any],
    limit: int,
    window: int,
    per_message: int = SUMMARY_MESSAGE_TOKENS,
) -> str:
    """Return the summary of `span`, from the cache in `extra` or from `model`.

    A span is sent in pieces that fit `window`; each piece is summarised together with the
    summary so far, and every intermediate summary is cached under its own span.

    Args:
        span: The messages to summarise (non-empty).
        model: The model that writes the summary.
        counter: Counts tokens for the pieces.
        extra: The run's `extra` (the cache lives under `SUMMARIES_KEY`).
        limit: The summary's token limit.
        window: The model's context window.
        per_message: Each message is cut to this many tokens in the summary request.

    Raises:
        Exception: Whatever the model raised (the caller falls back to dropping).

    Example:
        ```python
        import asyncio
        from rxagent import Msg
        from rxagent.hooks.builtin._summary import summarize_span
        from rxagent.testing import FunctionModel
        from rxagent.tokens import counter_for

        model = FunctionModel(lambda messages, tools, options: "They said hello.")
        span = [Msg.user("hello"), Msg.assistant("hi!")]
        extra: dict[str, object] = {}
        kwargs = dict(model=model, counter=counter_for("gpt-4o"), extra=extra, limit=200,
                      window=8_000)
        assert asyncio.run(summarize_span(span, **kwargs)) == "They said hello."
        assert asyncio.run(summarize_span(span, **kwargs)) == "They said hello."
        assert model.calls == 1 and len(extra["context_window.summaries"]) == 1
        ```
    """
    cache = extra.get(SUMMARIES_KEY)
    cache = cache if isinstance(cache, dict) else {}
    key = span_key(span)
    found = cache.get(key)
    if isinstance(found, str):
        return found
    first = span[0].id
    positions = {m.id: i for i, m in enumerate(span)}
    done, summary = -1, None
    for cached_key, text in cache.items():
        head, _, tail = str(cached_key).partition("..")
        if head == first and isinstance(text, str) and positions.get(tail, -1) > done:
            done, summary = positions[tail], text
    piece_limit = max(_MIN_CHUNK_TOKENS, (window - 3 * limit) * 3 // 4)
    for end, piece in _chunks(span[done + 1 :], piece_limit, per_message, counter):
        summary = await _ask(model, summary, piece, limit)
        _store(extra, f"{first}..{end.id}", summary)
    assert summary is not None
    return summary


def summary_message(summary: str, limit: int, counter: TokenCounter) -> Msg | None:
    """The system message that stands for dropped history, cut to count at most `limit` tokens.

    Its id is derived from its text, so the same summary always has the same id.

    Returns:
        The message, or None when not even the header fits `limit`.

    Example:
        ```python
        from rxagent.hooks.builtin._summary import summary_message
        from rxagent.tokens import counter_for

        counter = counter_for("gpt-4o")
        msg = summary_message("They talked about tides. " * 100, 64, counter)
        assert msg is not None and msg.role == "system" and counter.count_message(msg) <= 64
        assert msg.text.startswith("Summary of the earlier conversation")
        ```
    """
    text = SUMMARY_HEADER + summary
    for _ in range(4):
        msg = Msg.system(text, id="summary_" + hashlib.sha256(text.encode()).hexdigest()[:32])
        excess = counter.count_message(msg) - limit
        if excess <= 0:
            return msg
        keep = counter.count_text(text) - excess - 1
        if keep <= counter.count_text(SUMMARY_HEADER):
            return None
        text = counter.truncate_text(text, keep)
    return None
