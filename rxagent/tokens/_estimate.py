"""A script-aware token estimate, for when no tokenizer can load."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["estimate_tokens", "truncate_estimate"]

# Weights in twelfths of a token: Latin 4 characters per token, other scripts 1.5, emoji 1.
_LATIN_UNITS: Final = 3
_SCRIPT_UNITS: Final = 8
_EMOJI_UNITS: Final = 12
_UNITS_PER_TOKEN: Final = 12
# Latin: ASCII, Latin-1 and Latin Extended, IPA, combining accents, Latin Extended Additional,
# general punctuation (with the zero-width joiner), currency, variation selectors.
_LATIN: Final = re.compile("[\u0000-\u036f\u1e00-\u1eff\u2000-\u20cf\ufe00-\ufe0f]")
# Emoji: miscellaneous technical, symbols and dingbats, arrows and stars, and the pictographic
# planes U+1F000 to U+1FAFF (emoticons, transport, flags' regional indicators, skin tones, ...).
_EMOJI: Final = re.compile("[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]")


def estimate_tokens(text: str) -> int:
    """Estimate the tokens of `text` without a tokenizer, script-aware.

    Latin text (ASCII, accented letters, punctuation) counts ~4 characters per token, an emoji 1
    token, and any other character (CJK, Cyrillic, Arabic, ...) ~1.5 characters per token; the
    sum is rounded up. Each character adds its own weight, so appending text never lowers the
    estimate. It is `TokenCounter`'s last resort, used only when no encoding can load.

    Compared with `cl100k_base` it is close for English prose (which runs nearer 5 characters
    per token), and low for CJK (~1 character per token) and emoji (2 to 3 tokens each).

    Example:
        ```python
        from rxagent.tokens import estimate_tokens

        assert estimate_tokens("") == 0
        assert estimate_tokens("abcdefgh") == 2  # 4 Latin characters per token
        assert estimate_tokens("你好世界吗") == 4  # 1.5 CJK characters per token, rounded up
        assert estimate_tokens("🚀🚀") == 2  # 1 token per emoji
        ```
    """
    if text.isascii():
        return (len(text) + 3) // 4
    latin = _LATIN.subn("", text)[1]
    emoji = _EMOJI.subn("", text)[1]
    other = len(text) - latin - emoji
    units = latin * _LATIN_UNITS + emoji * _EMOJI_UNITS + other * _SCRIPT_UNITS
    return -(-units // _UNITS_PER_TOKEN)


def truncate_estimate(text: str, max_tokens: int) -> str:
    """Return the longest prefix of `text` that `estimate_tokens` puts at most `max_tokens`."""
    if max_tokens <= 0:
        return ""
    if text.isascii():
        return text[: max_tokens * 4]
    budget = max_tokens * _UNITS_PER_TOKEN
    units = 0
    latin, emoji = _LATIN.match, _EMOJI.match
    for i, char in enumerate(text):
        if latin(char):
            units += _LATIN_UNITS
        elif emoji(char):
            units += _EMOJI_UNITS
        else:
            units += _SCRIPT_UNITS
        if units > budget:
            return text[:i]
    return text
