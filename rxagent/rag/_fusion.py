"""Hybrid search's fusion: the dense ranking leads, BM25 nudges it.

A hybrid search asks Qdrant for two candidate lists in one batch, the best chunks by cosine
similarity and the best by BM25, and fuses them here:

    score = cosine + sparse_weight * bm25 / (the best bm25 among the candidates)

so a chunk's BM25 score, scaled to 0..1 within the query, adds at most `sparse_weight` to its
cosine. Why not Qdrant's reciprocal-rank fusion: on questions worded unlike their documents it
gives BM25's noisy ranking as much say as the embedding's and halves the first places, and its
weighted form (`Rrf(weights=...)`) divides ranks by the weight, which flattens the favoured list's
order instead of trusting it. The measurements are in docs/rag.md. Fusing in rxagent from two
plain queries also works the same against every Qdrant server version and local mode.

A chunk only BM25 found gets the lowest cosine of the dense list (its own is no higher), so an
exact name or code the embedding misses still ranks, behind close meaning matches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

    from qdrant_client import models

__all__ = ["DEFAULT_SPARSE_WEIGHT", "fuse"]

DEFAULT_SPARSE_WEIGHT: Final = 0.05
"""How much a query's best BM25 match can add to a cosine similarity (chosen on the dev set)."""


def fuse(
    dense: Sequence[models.ScoredPoint],
    sparse: Sequence[models.ScoredPoint],
    *,
    sparse_weight: float = DEFAULT_SPARSE_WEIGHT,
    limit: int,
) -> list[models.ScoredPoint]:
    """The best `limit` of both lists by cosine plus scaled BM25, each point's score the fused one.

    Args:
        dense: Qdrant's dense results (score: cosine similarity), best first.
        sparse: Qdrant's BM25 results (score: BM25), best first.
        sparse_weight: What the best BM25 match adds; 0 ranks by cosine alone.
        limit: How many to return.

    Example:
        ```python
        from qdrant_client import models

        from rxagent.rag._fusion import fuse


        def point(id: int, score: float) -> models.ScoredPoint:
            return models.ScoredPoint(id=id, version=0, score=score)


        dense = [point(1, 0.60), point(2, 0.58), point(4, 0.40)]
        sparse = [point(2, 9.0), point(3, 7.0)]
        fused = fuse(dense, sparse, sparse_weight=0.05, limit=3)
        # 2: 0.58 + 0.05 beats 1's 0.60; 3, found by BM25 only, gets 0.40 + 0.05 * 7 / 9
        assert [p.id for p in fused] == [2, 1, 3]
        ```
    """
    floor = min((p.score for p in dense), default=0.0)
    best_sparse = max((p.score for p in sparse), default=0.0)
    points: dict[models.ExtendedPointId, models.ScoredPoint] = {}
    scores: dict[models.ExtendedPointId, float] = {}
    for point in dense:
        points[point.id] = point
        scores[point.id] = point.score
    for point in sparse:
        # The dense copy carries the dense vector a reranker may want; keep it when both have one.
        points.setdefault(point.id, point)
        share = point.score / best_sparse if best_sparse > 0 else 0.0  # 0..1 within the query
        scores[point.id] = scores.get(point.id, floor) + sparse_weight * share
    ranked = sorted(scores, key=lambda pid: scores[pid], reverse=True)[:limit]
    return [points[pid].model_copy(update={"score": scores[pid]}) for pid in ranked]
