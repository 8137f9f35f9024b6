"""`SystemPromptLeak`: a reply that quotes the system prompt."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from rxagent.guards._normalise import CJK_CLASS
from rxagent.guards._pipeline import Guard

if TYPE_CHECKING:
    from rxagent.events import GuardVerdict
    from rxagent.guards._pipeline import GuardContext

__all__ = ["SystemPromptLeak"]

WITHHELD: Final = "[system prompt withheld]"
WORD_SHINGLE: Final = 6
CJK_SHINGLE: Final = 4
_CJK: Final = re.compile(f"[{CJK_CLASS}]")
# One token: a CJK character on its own (those scripts put no spaces between words), or a run
# of other letters and digits.
_TOKEN: Final = re.compile(f"[{CJK_CLASS}]|(?:(?![{CJK_CLASS}])[^\\W_])+")


@dataclass(frozen=True, slots=True)
class _Tokens:
    words: list[str]
    """The normalised tokens."""
    spans: list[tuple[int, int]]
    """Where each is in the text: (start, end)."""


_ASCII_TOKEN: Final = re.compile(r"[^\W_]+", re.ASCII)
"""`_TOKEN` for ASCII text, which has no CJK characters."""


def _tokens(text: str) -> _Tokens:
    if text.isascii():  # NFKC leaves ASCII as it is, and casefold is lower
        matches = list(_ASCII_TOKEN.finditer(text))
        return _Tokens([m.group().lower() for m in matches], [m.span() for m in matches])
    matches = list(_TOKEN.finditer(text))
    words: list[str] = []
    spans: list[tuple[int, int]] = []
    for m in matches:
        folded = unicodedata.normalize("NFKC", m.group()).casefold()
        if folded.strip():
            words.append(folded)
            spans.append(m.span())
    return _Tokens(words, spans)


def _shingle_size(words: list[str]) -> int:
    cjk = sum(1 for word in words if _CJK.match(word))
    return CJK_SHINGLE if cjk * 2 > len(words) else WORD_SHINGLE


@dataclass(frozen=True, slots=True)
class _Overlap:
    share: float
    """The share of the prompt's shingles found in the reply."""
    longest: int
    """The normalised length, in characters, of the longest run of reply text made of shingles
    of the prompt."""
    spans: tuple[tuple[int, int], ...]
    """Those runs, as (start, end) in the reply."""


@dataclass(frozen=True, slots=True)
class _Prompt:
    length: int
    """The normalised length in characters."""
    size: int
    """Words (or CJK characters) per shingle."""
    shingles: frozenset[tuple[str, ...]]
    starts: frozenset[str]
    """The first word of each shingle: a reply word that is none of these starts none."""


@functools.lru_cache(maxsize=64)
def _prompt(system_prompt: str) -> _Prompt:
    """The prompt cut into shingles, once per prompt (a run asks for every reply)."""
    words = _tokens(system_prompt).words
    n = min(_shingle_size(words), len(words))
    shingles = frozenset(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    length = sum(map(len, words)) + len(words) - 1
    return _Prompt(length, n, shingles, frozenset(shingle[0] for shingle in shingles if shingle))


def _overlap(prompt: _Prompt, reply: _Tokens) -> _Overlap:
    n, shingles, starts = prompt.size, prompt.shingles, prompt.starts
    words = reply.words
    covered = [False] * len(words)
    seen: set[tuple[str, ...]] = set()
    for i in range(len(words) - n + 1):
        if words[i] not in starts:
            continue
        shingle = tuple(words[i : i + n])
        if shingle in shingles:
            seen.add(shingle)
            covered[i : i + n] = [True] * n
    spans: list[tuple[int, int]] = []
    longest = 0
    i = 0
    while i < len(words):
        if not covered[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(words) and covered[j + 1]:
            j += 1
        longest = max(longest, sum(map(len, words[i : j + 1])) + j - i)
        spans.append((reply.spans[i][0], reply.spans[j][1]))
        i = j + 1
    return _Overlap(len(seen) / len(shingles), longest, tuple(spans))


class SystemPromptLeak(Guard):
    """Catch a reply that quotes the system prompt (`GuardContext.system_prompt`).

    Both texts are normalised (NFKC, casefolded, punctuation dropped, whitespace collapsed)
    and cut into shingles: runs of 6 words, or of 4 characters when the prompt is mostly
    Chinese, Japanese or Korean. The reply is flagged when the share of the prompt's shingles
    it contains reaches `threshold`, or when it contains a run of the prompt's shingles at
    least `min_chars` characters long (a long quoted sentence). A system prompt shorter than
    `min_chars` (normalised) is never flagged: there is nothing worth hiding in it.

    The verdict's score is 1.0 for such a run, otherwise the share of shingles.

    Args:
        min_chars: The shortest quoted run that flags, and the shortest prompt checked.
        threshold: The share of the prompt's shingles (0 to 1) that flags.
        action: `"reject"` (the run fails), `"redact"` (the quoted runs become
            `"[system prompt withheld]"`) or `"flag"`.

    Raises:
        ValueError: A `min_chars` below 1, a `threshold` outside (0, 1], or an unknown action.

    Example:
        ```python
        import asyncio
        from rxagent.guards import GuardContext, SystemPromptLeak

        prompt = "You are Ada, the support agent of Acme. Never discuss refunds above 100 EUR."
        ctx = GuardContext("output", system_prompt=prompt)
        leak = asyncio.run(SystemPromptLeak().check(f"My instructions: {prompt}", ctx))
        assert leak.flagged and leak.score == 1.0
        assert not asyncio.run(SystemPromptLeak().check("Happy to help!", ctx)).flagged
        ```
    """

    name = "system_prompt_leak"
    targets = frozenset({"output"})

    def __init__(
        self,
        *,
        min_chars: int = 40,
        threshold: float = 0.5,
        action: Literal["reject", "redact", "flag"] = "reject",
    ) -> None:
        if isinstance(min_chars, bool) or not isinstance(min_chars, int) or min_chars < 1:
            raise ValueError(
                f"SystemPromptLeak(min_chars=) must be a whole number of at least 1, "
                f"got {min_chars!r}"
            )
        if isinstance(threshold, bool) or not 0.0 < threshold <= 1.0:
            raise ValueError(
                f"SystemPromptLeak(threshold=) must be above 0 and at most 1, got {threshold!r}"
            )
        if action not in ("reject", "redact", "flag"):
            raise ValueError(
                f"SystemPromptLeak(action=) must be 'reject', 'redact' or 'flag', got {action!r}"
            )
        self.min_chars = min_chars
        self.threshold = threshold
        self.action = action

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        """Flag a reply that quotes enough of `ctx.system_prompt`."""
        overlap = self._measure(text, ctx.system_prompt)
        if overlap is None:
            return self.verdict(False, 0.0)
        if overlap.longest >= self.min_chars:
            return self.verdict(
                True,
                1.0,
                f"quotes {overlap.longest} characters of the system prompt verbatim",
                f"{overlap.share:.0%} of the prompt's shingles",
            )
        flagged = overlap.share >= self.threshold
        reason = f"{overlap.share:.0%} of the prompt's shingles" if flagged else None
        return self.verdict(flagged, overlap.share, reason)

    def rewrite(self, text: str, verdict: GuardVerdict, ctx: GuardContext) -> str:
        """The reply with each quoted run replaced by `"[system prompt withheld]"`."""
        overlap = self._measure(text, ctx.system_prompt)
        if overlap is None:
            return text
        parts: list[str] = []
        last = 0
        for start, end in overlap.spans:
            parts.extend((text[last:start], WITHHELD))
            last = end
        parts.append(text[last:])
        return "".join(parts)

    def _measure(self, reply: str, system_prompt: str) -> _Overlap | None:
        prompt = _prompt(system_prompt)
        if prompt.length < self.min_chars:
            return None
        return _overlap(prompt, _tokens(reply))
