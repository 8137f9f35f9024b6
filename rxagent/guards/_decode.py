"""Embedded payloads: runs of base64, hex, binary, URL-encoding or rot13 that decode to text.

A run counts only if it decodes to mostly printable text with letters and spaces, so binary data
(an image, a hash, a key) that happens to be base64 or hex yields nothing. Each payload is scanned
like the text itself; the mere presence of an encoding is no evidence.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from typing import Final
from urllib.parse import unquote

MAX_RUNS: Final = 8
"""At most this many runs of each encoding are decoded per text."""

_BASE64: Final = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX: Final = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
_SPACED_HEX: Final = re.compile(r"\b(?:[0-9a-fA-F]{2}[ :,-]){7,}[0-9a-fA-F]{2}\b")
_SPACED_HEX_GATE: Final = re.compile(r"[2-7][0-9a-fA-F][ :,-][2-7][0-9a-fA-F][ :,-][2-7]")
"""Three printable ASCII bytes in a row: the cheap pre-check of `_SPACED_HEX`."""
_BINARY: Final = re.compile(r"(?:[01]{8}[ ]?){4,}")
_PERCENT: Final = re.compile(r"%[0-9a-fA-F]{2}")
_ROT13_HINT: Final = re.compile(r"\b(?:gur|lbh|lbhe|naq|vtaber|cerivbhf|vafgehpgvbaf|cebzcg)\b")


def _readable(raw: bytes) -> str | None:
    """The text `raw` spells, if it is UTF-8 made mostly of letters, digits and spaces."""
    text = raw.decode("utf-8", errors="replace")
    if len(text) < 8 or text.count("\ufffd") > 2:
        return None
    printable = sum((c.isprintable() and c != "\ufffd") or c in "\n\t" for c in text)
    wordlike = sum(c.isalpha() or c == " " for c in text)
    if printable < 0.95 * len(text) or wordlike < 0.6 * len(text) or " " not in text:
        return None
    return text


def _base64_runs(text: str) -> list[str]:
    found = []
    for run in _BASE64.findall(text)[:MAX_RUNS]:
        if run.isalpha() and (run.islower() or run.istitle()):
            continue  # a long word, not an encoding
        stripped = run.rstrip("=")
        usable = len(stripped) - len(stripped) % 4 if len(stripped) % 4 == 1 else len(stripped)
        padded = stripped[:usable] + "=" * (-usable % 4)
        try:
            raw = base64.b64decode(padded, altchars=b"-_" if "-" in run or "_" in run else None)
        except (binascii.Error, ValueError):
            continue
        decoded = _readable(raw)
        if decoded is not None:
            found.append(decoded)
    return found


def _hex_runs(text: str) -> list[str]:
    found = []
    for run in _HEX.findall(text)[:MAX_RUNS]:
        decoded = _readable(bytes.fromhex(run))
        if decoded is not None:
            found.append(decoded)
    return found


def _spaced_hex_runs(text: str) -> list[str]:
    """Hex bytes written apart ("49 67 6e ..."), as a hex dump or a puzzle shows them."""
    found = []
    for match in _SPACED_HEX.finditer(text):
        decoded = _readable(bytes.fromhex(re.sub(r"[ :,-]", "", match.group())))
        if decoded is not None:
            found.append(decoded)
        if len(found) >= MAX_RUNS:
            break
    return found


def _binary_runs(text: str) -> list[str]:
    found = []
    for match in _BINARY.finditer(text):
        bits = match.group().replace(" ", "")
        raw = int(bits, 2).to_bytes(len(bits) // 8, "big")
        decoded = _readable(raw)
        if decoded is not None:
            found.append(decoded)
        if len(found) >= MAX_RUNS:
            break
    return found


def embedded_payloads(text: str) -> list[tuple[str, str]]:
    """Find the readable payloads hidden in `text` by common encodings.

    Args:
        text: The text as received (before normalisation: case matters to base64).

    Returns:
        `(encoding, decoded text)` pairs; encoding is one of `"base64"`, `"hex"`, `"binary"`,
        `"url-encoded"`, `"rot13"`.

    Example:
        ```python
        from rxagent.guards._decode import embedded_payloads

        found = embedded_payloads("see aGVsbG8gdGhlcmUgd29ybGQ=")
        assert found == [("base64", "hello there world")]
        assert embedded_payloads("iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB") == []
        ```
    """
    # base64 and hex runs hold no whitespace: only tokens of 16 characters or more can hold one
    long_tokens = " ".join(token for token in text.split() if len(token) >= 16)
    payloads = [("base64", p) for p in _base64_runs(long_tokens)]
    payloads += [("hex", p) for p in _hex_runs(long_tokens)]
    if _SPACED_HEX_GATE.search(text):
        payloads += [("hex", p) for p in _spaced_hex_runs(text)]
    if "0" in text and "1" in text:
        payloads += [("binary", p) for p in _binary_runs(text)]
    if len(_PERCENT.findall(text)) >= 3:
        decoded = unquote(text)
        if decoded != text:
            payloads.append(("url-encoded", decoded))
    lowered = text.lower()
    if _ROT13_HINT.search(lowered):
        payloads.append(("rot13", codecs.encode(lowered, "rot13")))
    return payloads
