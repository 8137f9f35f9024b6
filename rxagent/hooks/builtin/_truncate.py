"""Shortening tool results to a token limit, with a visible marker.

A shortened result keeps the start of its text and ends with `TRUNCATION_MARKER`. Images in a
result are left out, and the marker says so. The shortened message gets an id derived from the
original, so the same cut of the same message always has the same id (token counts are cached
per message).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from rxagent.messages import Block, ImageBlock, Msg, ToolResultBlock

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.tokens import TokenCounter

__all__ = ["MIN_TOOL_RESULT_TOKENS", "TRUNCATION_MARKER", "share_out", "truncate_tool_message"]

TRUNCATION_MARKER: Final = "\n[… truncated: {before:,} → {after:,} tokens by rxagent ContextWindow]"
"""Appended to a shortened tool result: `before` is its text's tokens, `after` the limit.

When images were left out the marker says so, for example
`[… truncated: 900 → 200 tokens, 1 image left out by rxagent ContextWindow]`."""

MIN_TOOL_RESULT_TOKENS: Final = 64
"""The smallest `max_tool_result_tokens`: a shortened result needs room for the marker."""


def _marker(before: int, after: int, images: int = 0) -> str:
    if not images:
        return TRUNCATION_MARKER.format(before=before, after=after)
    left_out = f"{images} image{'s' if images > 1 else ''} left out"
    if before <= after:  # the text is whole; only the images went
        return f"\n[… {left_out} by rxagent ContextWindow]"
    return f"\n[… truncated: {before:,} → {after:,} tokens, {left_out} by rxagent ContextWindow]"


def share_out(sizes: Sequence[int], total: int) -> list[int]:
    """Share `total` among items of `sizes`: small items keep their size, large ones split the rest.

    Water-filling: each item gets `min(size, fair share of what is left)`.
    """
    shares = [0] * len(sizes)
    left = total
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    for rank, i in enumerate(order):
        share = min(sizes[i], left // (len(order) - rank))
        shares[i] = share
        left -= share
    return shares


def _shorten(result: ToolResultBlock, text_tokens: int, limit: int, counter: TokenCounter) -> Block:
    """`result` with its output cut to at most `limit` tokens of text, marker included."""
    output = result.output
    images = 0 if isinstance(output, str) else sum(isinstance(b, ImageBlock) for b in output)
    text = result.text
    marker = _marker(text_tokens, text_tokens, images)
    if text_tokens + counter.count_text(marker) > limit:  # the text must be cut too
        marker = _marker(text_tokens, limit, images)
        text = counter.truncate_text(text, max(limit - counter.count_text(marker), 0))
    return result.model_copy(update={"output": text + marker})


def truncate_tool_message(msg: Msg, max_tokens: int, counter: TokenCounter) -> Msg | None:
    """Return `msg` with its tool result(s) cut so the message counts at most `max_tokens`.

    The cut text ends with the visible marker (`TRUNCATION_MARKER`); images in a result are left
    out, and the marker says so. The copy gets a new id derived from the original (counts are
    cached per message), so the same cut of the same message always has the same id.

    Returns:
        `msg` itself when it fits, the shortened copy, or None when even the marker does not fit.

    Example:
        ```python
        from rxagent import Msg, ToolResultBlock
        from rxagent.hooks.builtin._truncate import truncate_tool_message
        from rxagent.tokens import counter_for

        counter = counter_for("gpt-4o")
        big = Msg.tool(ToolResultBlock(id="c1", name="read", output="lorem ipsum " * 2000))
        cut = truncate_tool_message(big, 200, counter)
        assert cut is not None and counter.count_message(cut) <= 200
        assert "truncated" in cut.tool_results[0].text and cut.tool_results[0].id == "c1"
        ```
    """
    tokens = counter.count_message(msg)
    if tokens <= max_tokens:
        return msg
    blocks = list(msg.blocks)
    results = [(i, b) for i, b in enumerate(blocks) if isinstance(b, ToolResultBlock)]
    if not results:
        return None
    sizes = [counter.count_text(result.text) for _, result in results]
    if any(not isinstance(result.output, str) for _, result in results):
        flat = list(blocks)  # results as text only: what is left once images are left out
        for i, result in results:
            flat[i] = result.model_copy(update={"output": result.text})
        tokens = counter.count_message(
            msg.model_copy(update={"content": tuple(flat), "id": f"{msg.id}~text"})
        )
    room = max_tokens - (tokens - sum(sizes))  # less the role, ids, names, other blocks
    wants = [  # a result with images needs room for the note that they were left out
        size if isinstance(result.output, str) else size + counter.count_text(_marker(0, 0, 1))
        for (_, result), size in zip(results, sizes, strict=True)
    ]
    for attempt in range(4):  # tokenizers do not add up exactly across joins: check and retry
        if room <= 0:
            return None
        cut = list(blocks)
        for (i, result), size, limit in zip(results, sizes, share_out(wants, room), strict=True):
            if size > limit or not isinstance(result.output, str):
                cut[i] = _shorten(result, size, limit, counter)
        candidate = msg.model_copy(update={"content": tuple(cut), "id": f"{msg.id}~{room}"})
        excess = counter.count_message(candidate) - max_tokens
        if excess <= 0:
            return candidate
        room -= max(excess, attempt + 1)
    return None
