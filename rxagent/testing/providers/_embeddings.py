"""The `/v1/embeddings` answers of the fake OpenAI server: validation, vectors and rendering.

Vectors are a hashed bag of words: each lowercased word adds ±1 to one coordinate picked by
its hash, and the sum is scaled to unit length. So the same text always gets the same vector,
texts that share words are close (their cosine is the share of words in common), and texts
without a word in common are nearly orthogonal, as real embeddings of unrelated texts are.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import struct
from typing import Any, Final

from rxagent.testing._builders import estimate_tokens

__all__ = ["MAX_INPUTS", "embeddings_problem", "fake_embedding", "render_embeddings"]

MAX_INPUTS: Final = 2048
"""The most inputs one request may carry, as OpenAI allows."""

_WORD: Final = re.compile(r"\w+")


def fake_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector of `dimensions` numbers for `text` (a hashed bag of words).

    Example:
        ```python
        from rxagent.testing.providers import fake_embedding

        cats, kittens = fake_embedding("cats purr", 64), fake_embedding("cats meow", 64)
        assert cats == fake_embedding("Cats, purr!", 64)  # case and punctuation do not count
        assert 0.4 < sum(a * b for a, b in zip(cats, kittens, strict=True)) < 0.6
        ```
    """
    vector = [0.0] * dimensions
    words = _WORD.findall(text.lower()) or [text]
    for word in words:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        slot = int.from_bytes(digest[:7], "little") % dimensions
        vector[slot] += 1.0 if digest[7] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:  # words that cancelled out: any fixed unit vector will do
        vector[0], norm = 1.0, 1.0
    return [x / norm for x in vector]


def embeddings_problem(body: Any) -> tuple[str, str] | None:
    """What is wrong with an embeddings request body, as OpenAI words it: (param, message)."""
    if not isinstance(body, dict):
        return "body", "We could not parse the JSON body of your request."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model", "you must provide a model parameter"
    texts = body.get("input")
    items = [texts] if isinstance(texts, str) else texts
    if not isinstance(items, list) or not items:
        return "input", "'input' must be a non-empty string or array of strings"
    if len(items) > MAX_INPUTS:
        return "input", f"'input' must have at most {MAX_INPUTS} items, got {len(items)}"
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item:
            return "input", f"'$.input[{i}]' is invalid: it must be a non-empty string"
    dimensions = body.get("dimensions")
    if dimensions is not None and (
        isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1
    ):
        return "dimensions", f"Invalid value for 'dimensions' = {dimensions!r}: must be >= 1"
    if body.get("encoding_format", "float") not in ("float", "base64"):
        return "encoding_format", "'encoding_format' must be 'float' or 'base64'"
    return None


def render_embeddings(body: dict[str, Any], default_dimensions: int) -> dict[str, Any]:
    """The `list` object OpenAI answers a valid request with (see `embeddings_problem`)."""
    texts = body["input"]
    items: list[str] = [texts] if isinstance(texts, str) else texts
    size = body.get("dimensions") or default_dimensions
    as_base64 = body.get("encoding_format") == "base64"
    data = []
    for index, text in enumerate(items):
        vector = fake_embedding(text, size)
        embedding: list[float] | str = (
            base64.b64encode(struct.pack(f"<{size}f", *vector)).decode() if as_base64 else vector
        )
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    tokens = sum(estimate_tokens(len(text)) for text in items)
    return {
        "object": "list",
        "data": data,
        "model": body["model"],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
