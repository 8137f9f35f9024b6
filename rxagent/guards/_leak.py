"""`SystemPromptLeak`: a reply that quotes the system prompt."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from rxagent.guards._pipeline import Guard

if TYPE_CHECKING:
    from rxagent.events import GuardVerdict
    from rxagent.guards._pipeline import GuardContext

__all__ = ["SystemPromptLeak"]

WITHHELD: Final = "[system prompt withheld]"
WORD_SHINGLE: Final = 6
CJK_SHINGLE: Final = 4
_CJK_CLASS: Final = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
)
_CJK: Final = re.compile(f"[{_CJK_CLASS}]")
# One token: a CJK character on its own (those scripts put no spaces between words), or a run
# of other letters and digits.
_TOKEN: Final = re.compile(f"[{_CJK_CLASS}]|(?:(?![{_CJK_CLASS}])[^\\W_])+")


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    start: int
    end: int


def _tokens(text: str) -> list[_Token]:
    tokens = []
    for m in _TOKEN.finditer(text):
        folded = unicodedata.normalize("NFKC", m.group()).casefold()
        if folded.strip():
            tokens.append(_Token(folded, m.start(), m.end()))
    return tokens


def _shingle_size(tokens: list[_Token]) -> int:
    cjk = sum(1 for t in tokens if _CJK.match(t.text))
    return CJK_SHINGLE if cjk * 2 > len(tokens) else WORD_SHINGLE


@dataclass(frozen=True, slots=True)
class _Overlap:
    share: float
    """The share of the prompt's shingles found in the reply."""
    longest: int
    """The normalised length, in characters, of the longest run of reply text made of shingles
    of the prompt."""
    spans: tuple[tuple[int, int], ...]
    """Those runs, as (start, end) in the reply."""


def _overlap(prompt: list[_Token], reply: list[_Token]) -> _Overlap:
    n = min(_shingle_size(prompt), len(prompt))
    shingles = {tuple(t.text for t in prompt[i : i + n]) for i in range(len(prompt) - n + 1)}
    covered = [False] * len(reply)
    seen: set[tuple[str, ...]] = set()
    for i in range(len(reply) - n + 1):
        shingle = tuple(t.text for t in reply[i : i + n])
        if shingle in shingles:
            seen.add(shingle)
            covered[i : i + n] = [True] * n
    spans: list[tuple[int, int]] = []
    longest = 0
    i = 0
    while i < len(reply):
        if not covered[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(reply) and covered[j + 1]:
            j += 1
        run = reply[i : j + 1]
        longest = max(longest, sum(len(t.text) for t in run) + len(run) - 1)
        spans.append((reply[i].start, reply[j].end))
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
        prompt = _tokens(system_prompt)
        if sum(len(t.text) for t in prompt) + len(prompt) - 1 < self.min_chars:
            return None
        return _overlap(prompt, _tokens(reply))
