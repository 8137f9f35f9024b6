"""Token-aware chunking: sections under their headings, cut into overlapping pieces.

A text is split first into sections, each starting at a heading (Markdown `#` headings,
Markdown setext and reStructuredText underlined titles; never inside a fenced code block), then
each section into chunks of at most `max_tokens` tokens, cut at a paragraph, sentence or word
boundary where one is near. Consecutive chunks of one section share at most `overlap` tokens;
chunks never cross a section boundary, so a heading stays with its section, and every chunk
knows the heading of the section it comes from (the knowledge base indexes it with the chunk).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from rxagent.tokens import TokenCounter

__all__ = ["DEFAULT_CHUNK_OVERLAP", "DEFAULT_CHUNK_TOKENS", "Chunk", "chunk_text"]

DEFAULT_CHUNK_TOKENS: Final = 256
"""Tokens per chunk by default: all-MiniLM-L6-v2 reads 256 word pieces at most."""
DEFAULT_CHUNK_OVERLAP: Final = 32
"""Tokens shared by consecutive chunks of a section by default."""

_ATX: Final = re.compile(r" {0,3}#{1,6}[ \t]+\S")
_UNDERLINE: Final = re.compile(r"([=\-~^*#+`])\1{2,}[ \t]*")
_FENCE: Final = re.compile(r"[ \t]{0,3}(```|~~~)")
_WORD_START: Final = re.compile(r"(?<=\s)\S")
# Characters per token are about 4 in English prose; 12 leaves room for dense text, and the
# windows below only bound how much text one tokenizer call sees.
_CHARS_PER_TOKEN_BOUND: Final = 12


@dataclass(frozen=True, slots=True)
class Chunk:
    r"""One piece of a text: `text == source[start:end]`.

    Example:
        ```python
        from rxagent.rag import chunk_text
        from rxagent.tokens import counter_for

        text = "# Install\n\nRun pip install rxagent.\n\n# Use\n\nCall the agent."
        chunks = chunk_text(text, counter_for(None), max_tokens=64)
        assert [c.heading for c in chunks] == ["Install", "Use"]
        assert chunks[1].text == text[chunks[1].start : chunks[1].end]
        ```
    """

    text: str
    """The chunk's text, exactly as it is in the source."""
    start: int
    """Where it starts in the source (a character offset)."""
    end: int
    """Where it ends in the source (exclusive)."""
    heading: str
    """The title of the section it belongs to ("" before the first heading)."""
    section: int
    """The position of that section in the source (0 for the text before any heading)."""


def _sections(text: str) -> list[tuple[int, str]]:
    """Where each section starts, with its title; the first starts at 0 (maybe untitled)."""
    starts: list[tuple[int, str]] = [(0, "")]
    lines = text.splitlines(keepends=True)
    offset = 0
    fenced = False
    previous: tuple[int, str] | None = None  # the last non-blank line: (offset, text)
    for line in lines:
        bare = line.rstrip("\r\n")
        if _FENCE.match(bare):
            fenced = not fenced
        elif not fenced:
            if _ATX.match(bare):
                starts.append((offset, bare.strip().lstrip("#").strip()))
            elif (
                previous is not None
                and _UNDERLINE.fullmatch(bare)
                and previous[0] + len(previous[1]) + 2 >= offset  # right under it
                and len(bare.rstrip()) >= len(previous[1].strip()) - 1
                and previous[1].strip()
                and not _UNDERLINE.fullmatch(previous[1])
            ):
                starts.append((previous[0], previous[1].strip()))
        previous = (offset, bare) if bare.strip() else previous
        offset += len(line)
    cleaned: list[tuple[int, str]] = []
    for start, title in sorted(starts):
        if cleaned and cleaned[-1][0] == start:
            cleaned[-1] = (start, title or cleaned[-1][1])
        else:
            cleaned.append((start, title))
    return cleaned


def _cut_back(text: str, start: int, end: int, after: int) -> int:
    """A boundary in `(after, end]` where a chunk ending near `end` reads well; `end` if none.

    A paragraph break in the second half of the chunk wins, then a sentence end, then a space.
    """
    if end >= len(text) or text[end].isspace() or text[end - 1].isspace():
        return end
    half = start + (end - start) // 2
    for pattern, least in (("\n\n", half), (". ", half), (" ", after), ("\n", after)):
        at = text.rfind(pattern, max(least, after), end)
        if at > after:
            return at + len(pattern.rstrip()) if pattern == ". " else at
    return end


def _overlap_start(text: str, start: int, end: int, overlap: int, counter: TokenCounter) -> int:
    """The earliest word start in `(start, end)` whose text up to `end` counts <= `overlap`."""
    if overlap <= 0:
        return end
    low = max(start + 1, end - overlap * _CHARS_PER_TOKEN_BOUND)
    candidates = [m.start() for m in _WORD_START.finditer(text, low - 1, end) if m.start() > start]
    # Fewer tokens the later the start: binary search the earliest start that fits.
    lo, hi = 0, len(candidates)
    while lo < hi:
        mid = (lo + hi) // 2
        if counter.count_text(text[candidates[mid] : end]) <= overlap:
            hi = mid
        else:
            lo = mid + 1
    return candidates[lo] if lo < len(candidates) else end


def _skip_space(text: str, at: int, stop: int) -> int:
    while at < stop and text[at].isspace():
        at += 1
    return at


def _strip_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _section_chunks(
    text: str,
    bounds: tuple[int, int],
    heading: tuple[int, str],
    counter: TokenCounter,
    limits: tuple[int, int],
) -> list[Chunk]:
    max_tokens, overlap = limits
    section, title = heading
    chunks: list[Chunk] = []
    start = _skip_space(text, bounds[0], bounds[1])
    stop = _strip_end(text, start, bounds[1])
    floor = start  # a chunk ends past this: the first character the last chunk did not have
    while start < stop:
        window = text[start : min(stop, start + max_tokens * _CHARS_PER_TOKEN_BOUND)]
        end = max(start + len(counter.truncate_text(window, max_tokens)), floor + 1)
        if end < stop:
            end = _cut_back(text, start, end, floor)
        end = _strip_end(text, floor + 1, end)
        while end > floor + 1 and counter.count_text(text[start:end]) > max_tokens:
            end -= 1  # a cut-back prefix that tokenizes longer than the prefix it came from
        chunks.append(Chunk(text[start:end], start, end, title, section))
        floor = _skip_space(text, end, stop)
        if floor >= stop:
            break
        shared = _overlap_start(text, start, end, overlap, counter)
        start = shared if shared < end else floor
    return chunks


def chunk_text(
    text: str,
    counter: TokenCounter,
    *,
    max_tokens: int = DEFAULT_CHUNK_TOKENS,
    overlap: int = DEFAULT_CHUNK_OVERLAP,
    headings: bool = True,
) -> list[Chunk]:
    """Split `text` into chunks of at most `max_tokens` tokens, in order.

    Args:
        text: The text.
        counter: Counts tokens (`rxagent.tokens.counter_for(model)`).
        max_tokens: The most tokens a chunk may count.
        overlap: The most tokens consecutive chunks of one section share (0 for none).
        headings: Split at headings first (off for source code, whose `#` lines are comments).

    Returns:
        The chunks, in the order of the text; none for a text that is only whitespace.

    Raises:
        ConfigurationError: When `max_tokens` is not positive, or `overlap` is negative or not
            below half of `max_tokens`.

    Example:
        ```python
        from rxagent.rag import chunk_text
        from rxagent.tokens import counter_for

        counter = counter_for(None)
        chunks = chunk_text("word " * 300, counter, max_tokens=100, overlap=10)
        assert all(counter.count_text(c.text) <= 100 for c in chunks)
        assert chunks[0].end > chunks[1].start  # they overlap
        ```
    """
    if max_tokens < 1:
        raise ConfigurationError(f"max_tokens must be at least 1, got {max_tokens}")
    if overlap < 0 or overlap * 2 > max_tokens:
        raise ConfigurationError(
            f"overlap must be between 0 and half of max_tokens ({max_tokens // 2}), got {overlap}"
        )
    starts = _sections(text) if headings else [(0, "")]
    chunks: list[Chunk] = []
    for index, (start, title) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(text)
        chunks.extend(
            _section_chunks(text, (start, end), (index, title), counter, (max_tokens, overlap))
        )
    return chunks
