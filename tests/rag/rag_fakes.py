"""Deterministic embedders with no model, for the knowledge-base tests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from rxagent.rag import terms

# Words a "meaning" embedder treats as one: what dense search adds over words.
SYNONYMS = {"automobile": "car", "vehicle": "car", "physician": "doctor", "medic": "doctor"}


class HashEmbedder:
    """Each term adds 1 to one of `dimensions` slots (synonyms share a slot)."""

    def __init__(self, dimensions: int = 32, name: str = "hash-32") -> None:
        self.name = name
        self.dimensions = dimensions
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        vectors = []
        for text in texts:
            vector = [0.0] * self.dimensions
            for term in terms(text):
                term = SYNONYMS.get(term, term)
                vector[hashlib.md5(term.encode()).digest()[0] % self.dimensions] += 1.0
            vector[0] += 0.01  # never all zeros (cosine of a zero vector is undefined)
            vectors.append(vector)
        return vectors
