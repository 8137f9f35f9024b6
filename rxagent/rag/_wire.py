"""The `/v1/embeddings` wire format, pure: the request body and the reading of an answer."""

from __future__ import annotations

import base64
import binascii
import struct
from typing import TYPE_CHECKING, Any

from rxagent.formatters.base import malformed

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["embeddings_request", "read_embeddings"]


def embeddings_request(model: str, texts: Sequence[str], dimensions: int | None) -> dict[str, Any]:
    """The body of one request: the texts, floats asked for, and the size when one is wanted."""
    body: dict[str, Any] = {"model": model, "input": list(texts), "encoding_format": "float"}
    if dimensions is not None:
        body["dimensions"] = dimensions
    return body


def read_embeddings(
    provider: str, data: Any, count: int, dimensions: int | None
) -> tuple[list[list[float]], int]:
    """The `count` vectors of an answer in input order (by `index`), and its prompt tokens.

    Raises:
        ProviderError: The answer lacks an item, repeats an index, holds something other than
            numbers, or vectors of several sizes, or not of `dimensions` when that is given.
    """
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != count:
        got = len(items) if isinstance(items, list) else "no"
        raise malformed(provider, f"expected {count} embeddings in 'data', got {got}", data)
    vectors: list[list[float] | None] = [None] * count
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < count or vectors[index] is not None:
            raise malformed(provider, f"a bad or repeated 'index': {index!r}", data)
        vectors[index] = _vector(item.get("embedding"), provider, data)
    done = [v for v in vectors if v is not None]
    sizes = {len(v) for v in done}
    if len(sizes) != 1 or (dimensions is not None and sizes != {dimensions}):
        expected = dimensions or "one size"
        raise malformed(provider, f"vectors of sizes {sorted(sizes)}, not {expected}", data)
    usage = data.get("usage")
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return done, tokens if isinstance(tokens, int) else 0


def _vector(value: Any, provider: str, data: Any) -> list[float]:
    """An item's embedding: a list of numbers, or base64 float32 from a server that sends it."""
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except binascii.Error:
            raw = b""
        if raw and len(raw) % 4 == 0:
            return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    if (
        isinstance(value, list)
        and value
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in value)
    ):
        return [float(x) for x in value]
    raise malformed(provider, "an 'embedding' that is not a list of numbers (nor base64)", data)
