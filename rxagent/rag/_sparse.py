"""The sparse half of hybrid search: BM25 term weights, computed without a model.

A text becomes terms (lower-cased words, English stop words left out, a light plural and
suffix folding so "indexes" meets "index"), each term is hashed to a 32-bit index, and a
document's weight for a term is BM25's saturated term frequency with length normalisation:

    tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg_length))

The other half of BM25, the inverse document frequency, depends on the whole collection, so
Qdrant computes it: the sparse vector is configured with `Modifier.IDF`. A query's weights are
its term counts, so the dot product Qdrant takes is the BM25 score.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import Final

__all__ = ["BM25_NAME", "SparseEncoder", "SparseVector", "terms"]

BM25_NAME: Final = "bm25-crc32-v1"
"""The name of this term and hashing scheme, stored with a collection: a change is a new name."""

_WORD: Final = re.compile(r"\w+")
_STOP_WORDS: Final = frozenset(
    """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)
# Longest first; each keeps a stem of at least three characters.
_SUFFIXES: Final = (("ies", "y"), ("sses", "ss"), ("es", ""), ("s", ""))


def _fold(word: str) -> str:
    """A light stem: plurals folded to the singular ("queries" and "query" meet)."""
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) + len(replacement) >= 3:
            stem = word[: -len(suffix)] + replacement
            # "es" is a plural ending after x, z, ch and sh ("boxes", "matches"); else only the
            # "s" goes ("cases" -> "case"; "classes" took the "sses" rule).
            if suffix == "es" and not stem.endswith(("x", "z", "ch", "sh")):
                return word[:-1]
            return stem
    return word


def terms(text: str) -> list[str]:
    """The terms of `text`, in order, with repeats: lower-cased, folded, stop words left out.

    Example:
        ```python
        from rxagent.rag import terms

        assert terms("The Indexes of queries") == ["index", "query"]
        ```
    """
    return [_fold(w) for w in _WORD.findall(text.lower()) if w not in _STOP_WORDS]


def _index(term: str) -> int:
    return zlib.crc32(term.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class SparseVector:
    """Parallel lists of term indices (unique, ascending) and weights."""

    indices: list[int]
    """The hashed terms."""
    values: list[float]
    """Their weights."""


class SparseEncoder:
    """BM25 document and query vectors, with Qdrant's IDF modifier doing the IDF part.

    Args:
        k1: Term-frequency saturation: how fast repeats stop counting (1.2, as Lucene).
        b: Length normalisation: 0 ignores a document's length, 1 divides by it fully.
        avg_length: The typical number of terms in a chunk (a 256-token chunk of prose has
            about 100 after stop words).

    Example:
        ```python
        from rxagent.rag import SparseEncoder

        encoder = SparseEncoder()
        doc = encoder.document("qdrant stores vectors; qdrant filters payloads")
        query = encoder.query("Qdrant")
        shared = set(doc.indices) & set(query.indices)
        assert len(shared) == 1 and len(doc.indices) == 5
        ```
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, avg_length: float = 100.0) -> None:
        self.k1 = k1
        self.b = b
        self.avg_length = avg_length

    def document(self, text: str) -> SparseVector:
        """The BM25 term weights of a document (a chunk with its heading)."""
        found = terms(text)
        norm = self.k1 * (1 - self.b + self.b * len(found) / self.avg_length)
        weights: dict[int, float] = {}
        for term, tf in Counter(found).items():
            index = _index(term)
            # Two terms with one hash (rare with 2^32 buckets) add up rather than overwrite.
            weights[index] = weights.get(index, 0.0) + tf * (self.k1 + 1) / (tf + norm)
        return _vector(weights)

    def query(self, text: str) -> SparseVector:
        """The query's term counts (Qdrant multiplies them by each term's IDF)."""
        weights: dict[int, float] = {}
        for term in terms(text):
            index = _index(term)
            weights[index] = weights.get(index, 0.0) + 1.0
        return _vector(weights)


def _vector(weights: dict[int, float]) -> SparseVector:
    indices = sorted(weights)
    return SparseVector(indices, [weights[i] for i in indices])
