r"""Text normalisation before scanning: one canonical, lower-case view of what a reader would see.

`normalise` applies, in order: NFKC (full-width and compatibility forms), removal of zero-width and
bidirectional control characters, folding of Cyrillic and Greek look-alikes in words that mix them
with Latin letters, escaped newlines (`\n` inside JSON) made real, lower-casing, and folding of
leetspeak in tokens that mix letters and digits, and words spelled letter by letter joined again.
Unicode tag characters (U+E0020..U+E007E, invisible "ASCII smuggling") are removed from the text
and returned separately as the ASCII they spell, to be scanned as an embedded payload.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final, NamedTuple

CJK_CLASS: Final = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
)
"""Han, Hiragana, Katakana and Hangul, as the inside of a character class: scripts written
without spaces between words."""

_INVISIBLE: Final = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]"
)
_INVISIBLE_IN_WORD: Final = re.compile(
    "[^\\W\\d_][\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]+[^\\W\\d_]"
)
_TAG_CHARS: Final = re.compile("[\U000e0000-\U000e007f]+")
_CYRILLIC_GREEK: Final = re.compile("[\u0370-\u03ff\u0400-\u04ff]")
_MIXED_SCRIPT: Final = re.compile(
    "[a-zA-Z][\u0370-\u03ff\u0400-\u04ff]|[\u0370-\u03ff\u0400-\u04ff][a-zA-Z]"
)
_MIXED_WORD: Final = re.compile(
    "(?<!\\w)[^\\W\\d_]*(?:[a-zA-Z][^\\W\\d_a-zA-Z]|[^\\W\\d_a-zA-Z][a-zA-Z])\\w*"
)

# Cyrillic and Greek letters that look like Latin ones (Unicode confusables, the common subset).
_HOMOGLYPHS: Final = str.maketrans(
    "аеорсухіјѕԁɡһӏԛԝвкмнтАВЕЗІЈКМНОРСТУХЅԌαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdghlqwbkmhtABE3IJKMHOPCTYXSGabeikvoptyxABEZHIKMNOPTYX",
)
_LEET: Final = str.maketrans("013457@$", "oieastas")
_LEET_TOKEN: Final = re.compile(
    r"(?<![a-z0-9@$])[a-z0-9@$]*(?:[a-z][013457@$]|[013457@$][a-z])[a-z0-9@$]*"
)


_SPACED: Final = re.compile(r"(?<!\S)(?:[^\W_] ){4,}[^\W_](?!\S)")
"""A word spelled with a space between its letters ("i g n o r e"): five letters or more."""


_DOTTED: Final = re.compile(r"(?<![\w.])(?:[^\W\d_]\.){2,}[^\W\d_](?![\w.])")
_DOTTED_GATE: Final = re.compile(r"\.[^\W\d_]\.[^\W\d_]")
"""A word spelled with a dot between its letters ("r.e.v.e.a.l"): three letters or more."""


_HYPHENATED: Final = re.compile(r"\b[^\W\d_]{1,5}(?:-[^\W\d_]{1,5}){2,}\b")
"""A word cut into syllables by hyphens ("ig-no-re", "in-struc-tions"): three pieces or more."""


def _join_spaced(match: re.Match[str]) -> str:
    return match.group().replace(" ", "").replace(".", "")


class Normalised(NamedTuple):
    """A text's scanning view and what normalisation found hidden in it."""

    text: str
    """The normalised, lower-case text."""
    visible: str
    """The text after NFKC and removal of invisible characters, case kept (for decoding)."""
    tag_payload: str
    """The ASCII spelled by Unicode tag characters, or `""`."""
    obfuscated: bool
    """Whether invisible characters split a word or scripts were mixed inside a word."""


def _fold_mixed_word(match: re.Match[str]) -> str:
    return match.group().translate(_HOMOGLYPHS)


def _fold_leet_token(match: re.Match[str]) -> str:
    token = match.group()
    if not any(c.isalpha() for c in token):
        return token
    if "@" in token and match.string[match.end() : match.end() + 1] in (".", "-"):
        return token  # an e-mail address, not leetspeak
    if token.startswith("@") and token[1:].isalpha():
        return token  # a handle or a tag such as @ai-instruction
    if token.startswith("$"):
        return "$" + token[1:].translate(_LEET)  # a variable such as $API_KEY
    return token.translate(_LEET)


def _tag_to_ascii(chars: str) -> str:
    return "".join(chr(ord(c) - 0xE0000) for c in chars if 0xE0020 <= ord(c) <= 0xE007E)


def normalise(text: str) -> Normalised:
    r"""Return the scanning view of `text` (see the module docstring for the steps).

    Args:
        text: Any text.

    Returns:
        The normalised text, the visible text, the tag-character payload and whether
        obfuscation was seen.

    Example:
        ```python
        from rxagent.guards._normalise import normalise

        hidden = "Ig\u200bn\u043ere ALL pr3v10us"  # a zero-width space, a Cyrillic o, leetspeak
        assert normalise(hidden).text == "ignore all previous"
        ```
    """
    tag_payload = ""
    obfuscated = False
    if not text.isascii():  # the steps below only ever change non-ASCII text
        if text and max(text) >= "\U000e0000" and _TAG_CHARS.search(text):
            tag_payload = "".join(_tag_to_ascii(m) for m in _TAG_CHARS.findall(text))
            text = _TAG_CHARS.sub("", text)
        text = unicodedata.normalize("NFKC", text)
        if _INVISIBLE.search(text):
            obfuscated = bool(_INVISIBLE_IN_WORD.search(text))
            text = _INVISIBLE.sub("", text)
        obfuscated = obfuscated or bool(tag_payload)
    visible = text
    if not text.isascii() and _CYRILLIC_GREEK.search(text) and _MIXED_SCRIPT.search(text):
        obfuscated = True
        text = _MIXED_WORD.sub(_fold_mixed_word, text)
    if "\\n" in text:  # newlines escaped inside JSON or a string literal
        text = text.replace("\\r\\n", "\n").replace("\\n", "\n")
    text = text.lower()
    text = _LEET_TOKEN.sub(_fold_leet_token, text)
    if "  " in text and _SPACED.search(text):  # words apart by two spaces, letters by one
        text = _SPACED.sub(_join_spaced, text)
        obfuscated = True
    if text.count("-") >= 4 and len(_HYPHENATED.findall(text)) >= 2:
        text = _HYPHENATED.sub(lambda match: match.group().replace("-", ""), text)
        obfuscated = True
    if _DOTTED_GATE.search(text) and _DOTTED.search(text):
        text = _DOTTED.sub(_join_spaced, text)
        obfuscated = True
    return Normalised(text, visible, tag_payload, obfuscated)
