"""`PIIRedaction`: e-mail addresses, phone numbers, card numbers, IBANs and API keys.

The detector (`find_pii`) is pure: regular expressions for candidates, then checks that cut
false positives (Luhn for cards, mod 97 for IBANs, digit counts and date shapes for phones).
Where candidates overlap, the more specific kind wins: API key, e-mail, IBAN, international
phone, card, national phone.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, get_args

from rxagent.guards._pipeline import Guard

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

    from rxagent.events import GuardAction, GuardTarget, GuardVerdict
    from rxagent.guards._pipeline import GuardContext

__all__ = ["PII_KINDS", "PIIMatch", "PIIRedaction", "find_pii", "redact_pii"]

PIIKind: TypeAlias = Literal["email", "phone", "card", "iban", "api_key"]
PIITarget: TypeAlias = Literal["output", "tool_result"]
PII_KINDS: Final[tuple[PIIKind, ...]] = get_args(PIIKind)
"""Every kind `PIIRedaction` can find."""

_EMAIL: Final = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])"
)
_API_KEY: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-ant-[A-Za-z0-9_-]{20,}"  # Anthropic
    r"|sk-(?:proj-)?[A-Za-z0-9_-]{20,}"  # OpenAI
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}"  # GitHub
    r"|xox[abpr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AIza[0-9A-Za-z_-]{35}"  # Google
    r"|[sr]k_live_[0-9A-Za-z]{16,}"  # Stripe
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWT
    r")(?![A-Za-z0-9_-])"
)
# One character at a time (a space allowed before each), so the pattern cannot backtrack badly.
_IBAN: Final = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
# A run of digit groups separated by single spaces or dashes: where card numbers hide.
_DIGIT_RUN: Final = re.compile(r"(?<![\w.])\d+(?:[ -]\d+)*(?!\w|\.\d)")
# Every group after the first follows a separator or a parenthesised area code, so a long
# digit run has one way to match and cannot backtrack badly.
_PHONE_INTL: Final = re.compile(
    r"(?<![\w+])\+\d+(?:(?:[ .-]?\(\d+\)[ .-]?|[ .-])\d+)*(?!\w|[.-]\d|:)"
)
_PHONE_NATIONAL: Final = re.compile(
    r"(?<![\w+])(?<!\d[.-])(?:\(\d{1,5}\) ?|\d{1,5}[ .-])(?:\d{1,5}[ .-]){0,4}\d{2,8}"
    r"(?!\w|[.-]\d|:)"
)
_DATE: Final = re.compile(r"\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}|\d{1,2}[-./ ]\d{1,2}[-./ ]\d{2,4}")
_IPV4: Final = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_MAX_PASSES: Final = 8
_DOUBLED: Final = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)  # a digit doubled, its digits summed
_OUTPUT: Final[tuple[PIITarget, ...]] = ("output",)


@dataclass(frozen=True, slots=True)
class PIIMatch:
    """One piece of personal data or secret found in a text.

    Attributes:
        kind: What it is (`"email"`, `"phone"`, `"card"`, `"iban"`, `"api_key"`).
        start: Its first index in the text.
        end: The index just past it.
    """

    kind: PIIKind
    start: int
    end: int


def _luhn(digits: str) -> bool:
    odd = sum(int(ch) for ch in digits[-1::-2])
    even = sum(_DOUBLED[int(ch)] for ch in digits[-2::-2])
    return (odd + even) % 10 == 0


def _iban_valid(compact: str) -> bool:
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def _cards(text: str) -> Iterator[tuple[int, int]]:
    """Luhn-valid windows of whole digit groups, 13 to 19 digits: from each group, the longest."""
    for run in _DIGIT_RUN.finditer(text):
        groups = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\d+", run.group())]
        offset = run.start()
        first = 0
        while first < len(groups):
            end = _card_end(groups, first)
            if end is None:
                first += 1
                continue
            yield offset + groups[first][0], offset + groups[end - 1][1]
            first = end


def _card_end(groups: list[tuple[int, int, str]], first: int) -> int | None:
    """The end of the longest Luhn-valid window starting at group `first`, or None."""
    digits = ""
    found = None
    for last in range(first, len(groups)):
        digits += groups[last][2]
        if len(digits) > 19:
            break
        if len(digits) >= 13 and _luhn(digits):
            found = last + 1
    return found


def _ibans(text: str) -> Iterator[tuple[int, int]]:
    for m in _IBAN.finditer(text):
        candidate = m.group()
        # Trailing groups may be a neighbouring word: try shorter prefixes at group ends.
        ends = [g.end() for g in re.finditer(r"[A-Z0-9]+", candidate)]
        for end in sorted((e for e in ends if e >= 15), reverse=True):
            if _iban_valid(candidate[:end].replace(" ", "")):
                yield m.start(), m.start() + end
                break


def _phones(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    for m in pattern.finditer(text):
        candidate = m.group()
        digits = sum(ch.isdigit() for ch in candidate)
        if not 8 <= digits <= 15:
            continue
        if _DATE.fullmatch(candidate) or _IPV4.fullmatch(candidate):
            continue
        yield m.span()


def _api_keys(text: str) -> Iterator[tuple[int, int]]:
    # Real keys are random and carry digits; hyphenated words that look like a prefix do not.
    return (m.span() for m in _API_KEY.finditer(text) if any(ch.isdigit() for ch in m.group()))


def _candidates(text: str, kinds: Collection[str]) -> Iterator[tuple[PIIKind, int, int]]:
    # In priority order: the first candidate to claim a character keeps it.
    finders: list[tuple[PIIKind, Iterator[tuple[int, int]]]] = []
    if "api_key" in kinds:
        finders.append(("api_key", _api_keys(text)))
    if "email" in kinds:
        finders.append(("email", (m.span() for m in _EMAIL.finditer(text))))
    if "iban" in kinds:
        finders.append(("iban", _ibans(text)))
    if "phone" in kinds:
        finders.append(("phone", _phones(_PHONE_INTL, text)))
    if "card" in kinds:
        finders.append(("card", _cards(text)))
    if "phone" in kinds:
        finders.append(("phone", _phones(_PHONE_NATIONAL, text)))
    for kind, spans in finders:
        for start, end in spans:
            yield kind, start, end


def find_pii(text: str, kinds: Collection[str] = PII_KINDS) -> list[PIIMatch]:
    """The personal data and secrets in `text`, in text order, not overlapping.

    Args:
        text: The text to search.
        kinds: The kinds to look for (see `PII_KINDS`).

    Returns:
        One `PIIMatch` per finding.

    Example:
        ```python
        from rxagent.guards import find_pii

        found = find_pii("Mail ann@example.com, card 4111 1111 1111 1111.")
        assert [m.kind for m in found] == ["email", "card"]
        assert find_pii("Order 123456789012 shipped on 2024-01-15 at 10:30.") == []
        ```
    """
    taken: list[PIIMatch] = []
    claimed = bytearray(len(text))
    for kind, start, end in _candidates(text, kinds):
        if not any(claimed[start:end]):
            claimed[start:end] = b"\x01" * (end - start)
            taken.append(PIIMatch(kind, start, end))
    return sorted(taken, key=lambda m: m.start)


def redact_pii(
    text: str, kinds: Collection[str] = PII_KINDS, replacement: str = "[{kind} redacted]"
) -> str:
    """`text` with each finding of `find_pii` replaced, until none is left.

    Args:
        text: The text to redact.
        kinds: The kinds to redact.
        replacement: What replaces a finding; `{kind}` is its kind.

    Returns:
        The redacted text.

    Example:
        ```python
        from rxagent.guards import redact_pii

        assert redact_pii("call +44 20 7946 0958") == "call [phone redacted]"
        ```
    """
    for _ in range(_MAX_PASSES):
        found = find_pii(text, kinds)
        if not found:
            break
        parts: list[str] = []
        last = 0
        for m in found:
            parts.extend((text[last : m.start], replacement.format(kind=m.kind)))
            last = m.end
        parts.append(text[last:])
        text = "".join(parts)
    return text


class PIIRedaction(Guard):
    """Find personal data and secrets in the reply (or tool results) and redact them.

    Kinds: `"email"`; `"phone"` (international `+CC` numbers and national formats with phone
    punctuation and 8 to 15 digits; not dates, times, versions, IP addresses or bare long
    numbers); `"card"` (13 to 19 digits, spaces or dashes allowed, Luhn-valid only); `"iban"`
    (country code and check digits, mod-97 valid only, spaced or not); `"api_key"` (OpenAI
    `sk-`, Anthropic `sk-ant-`, AWS `AKIA`, GitHub `ghp_`/`gho_`/`ghs_`/`github_pat_`, Slack
    `xox?-`, Google `AIza`, Stripe `sk_live_`/`rk_live_`, JWTs `eyJ...`; with a digit in them).
    Reasons give the kinds and counts, never the values.

    Args:
        kinds: The kinds to look for.
        action: `"redact"` (replace each finding: the reply with `redact`, a tool result with
            `replace`), `"reject"` or `"flag"`.
        targets: Where to look: `"output"` (the final reply), `"tool_result"`, or both.
        replacement: What replaces a finding; `{kind}` is its kind. It must not itself look
            like personal data.

    Raises:
        ValueError: An unknown kind, action or target, no kinds or targets, or a replacement
            that the detector would find again.

    Example:
        ```python
        import asyncio
        from rxagent.guards import GuardContext, GuardPipeline, PIIRedaction

        pipeline = GuardPipeline([PIIRedaction()])
        screened = asyncio.run(
            pipeline.screen("Your card 4111-1111-1111-1111 is on file.", GuardContext("output"))
        )
        assert screened.text == "Your card [card redacted] is on file."
        assert screened.reports[0].verdict.reasons == ("card (1)",)
        ```
    """

    name = "pii"

    def __init__(
        self,
        kinds: Collection[PIIKind] = PII_KINDS,
        *,
        action: Literal["redact", "reject", "flag"] = "redact",
        targets: Collection[PIITarget] = _OUTPUT,
        replacement: str = "[{kind} redacted]",
    ) -> None:
        if isinstance(kinds, str):
            raise ValueError(f"PIIRedaction(kinds=) takes a collection of kinds; write [{kinds!r}]")
        unknown = [k for k in kinds if k not in PII_KINDS]
        if unknown or not kinds:
            raise ValueError(
                f"PIIRedaction(kinds=) must be some of {', '.join(PII_KINDS)}; got {list(kinds)}"
            )
        if action not in ("redact", "reject", "flag"):
            raise ValueError(
                f"PIIRedaction(action=) must be 'redact', 'reject' or 'flag', got {action!r}"
            )
        if isinstance(targets, str):
            raise ValueError(
                f"PIIRedaction(targets=) takes a collection of targets; write [{targets!r}]"
            )
        if not targets or any(t not in ("output", "tool_result") for t in targets):
            raise ValueError(
                "PIIRedaction(targets=) must be 'output', 'tool_result' or both, "
                f"got {list(targets)}"
            )
        try:
            samples = {kind: replacement.format(kind=kind) for kind in PII_KINDS}
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"PIIRedaction(replacement=) may use only the field {{kind}}, got {replacement!r}"
            ) from exc
        if any(find_pii(sample, kinds) for sample in samples.values()):
            raise ValueError(
                f"PIIRedaction(replacement=) {replacement!r} looks like personal data itself; "
                "use text without numbers or addresses"
            )
        self.kinds: tuple[PIIKind, ...] = tuple(k for k in PII_KINDS if k in kinds)
        self.action = action
        self.targets = frozenset(targets)
        self.replacement = replacement

    def action_for(self, target: GuardTarget) -> GuardAction:
        """`redact` on the reply is `replace` on a tool result; other actions are the same."""
        if self.action == "redact" and target == "tool_result":
            return "replace"
        return self.action

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        """Flag a text with any finding; reasons are kinds with counts, like `"email (2)"`."""
        counts = Counter(m.kind for m in find_pii(text, self.kinds))
        reasons = [f"{kind} ({counts[kind]})" for kind in self.kinds if counts[kind]]
        return self.verdict(bool(reasons), None, *reasons)

    def rewrite(self, text: str, verdict: GuardVerdict, ctx: GuardContext) -> str:
        """`text` with every finding replaced by `replacement`."""
        return redact_pii(text, self.kinds, self.replacement)
