"""Hybrid fusion: the dense ranking leads, a query-scaled BM25 bonus reorders close calls."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from qdrant_client import models

from rxagent.errors import ConfigurationError
from rxagent.rag import KnowledgeBase
from rxagent.rag._fusion import DEFAULT_SPARSE_WEIGHT, fuse


def point(pid: int, score: float) -> models.ScoredPoint:
    return models.ScoredPoint(id=pid, version=0, score=score)


def test_a_bm25_bonus_reorders_close_dense_scores_only():
    dense = [point(1, 0.60), point(2, 0.58), point(3, 0.30)]
    sparse = [point(3, 12.0), point(2, 6.0)]
    fused = fuse(dense, sparse, sparse_weight=0.05, limit=3)
    # 2 gains 0.025 and passes 1; 3 gains the full 0.05 and stays last: meaning leads
    assert [p.id for p in fused] == [2, 1, 3]
    assert fused[0].score == pytest.approx(0.58 + 0.05 * 6 / 12)
    assert dense[1].score == 0.58  # inputs are not modified


def test_a_point_only_bm25_found_ranks_from_the_lowest_cosine():
    fused = fuse([point(1, 0.7), point(2, 0.4)], [point(9, 5.0)], sparse_weight=0.05, limit=5)
    assert [p.id for p in fused] == [1, 9, 2]
    assert fused[1].score == pytest.approx(0.45)


def test_empty_or_zero_lists_fuse_to_what_there_is():
    assert fuse([], [], limit=3) == []
    only_sparse = fuse([], [point(4, 2.0), point(5, 1.0)], sparse_weight=0.1, limit=1)
    assert [p.id for p in only_sparse] == [4]
    assert only_sparse[0].score == pytest.approx(0.1)
    zero = fuse([point(1, 0.2)], [point(2, 0.0)], limit=2)  # no BM25 signal: no bonus
    assert [(p.id, p.score) for p in zero] == [(1, 0.2), (2, 0.2)]


scores = st.lists(st.floats(0, 1), min_size=0, max_size=12)
bm25 = st.lists(st.floats(0, 30), min_size=0, max_size=12)


@given(scores, bm25, st.floats(0, 1), st.integers(1, 20))
def test_fusion_invariants(dense_scores: list[float], sparse_scores: list[float], weight, limit):
    dense = [point(i, s) for i, s in enumerate(sorted(dense_scores, reverse=True))]
    sparse = [point(100 - i, s) for i, s in enumerate(sorted(sparse_scores, reverse=True))]
    fused = fuse(dense, sparse, sparse_weight=weight, limit=limit)
    ids = [p.id for p in fused]
    assert len(ids) == len(set(ids)) == min(limit, len(dense) + len(sparse))
    assert [p.score for p in fused] == sorted((p.score for p in fused), reverse=True)
    for p in fused:  # the bonus never exceeds the weight
        floor = min((d.score for d in dense), default=0.0)
        start = next((d.score for d in dense if d.id == p.id), floor)
        assert start <= p.score <= start + weight + 1e-9


@given(scores)
def test_without_a_sparse_weight_the_dense_order_stands(dense_scores: list[float]):
    dense = [point(i, s) for i, s in enumerate(sorted(dense_scores, reverse=True))]
    fused = fuse(dense, [point(i, 3.0) for i in range(len(dense))], sparse_weight=0, limit=20)
    assert [p.score for p in fused] == [p.score for p in dense]


class TideMinded:
    """An embedder that finds every query closest to the tides document."""

    name = "tide-minded"
    dimensions = 2

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[0.6, 0.8] if "E4012" in text else [1.0, 0.0] for text in texts]


@pytest.mark.parametrize(("weight", "first"), [(DEFAULT_SPARSE_WEIGHT, "t"), (1.0, "e")])
async def test_the_sparse_weight_sets_how_far_an_exact_code_climbs(weight: float, first: str):
    async with KnowledgeBase(":memory:", embedder=TideMinded(), sparse_weight=weight) as kb:
        assert kb.sparse_weight == weight
        await kb.add_texts(
            ["Error E4012 means the quota is spent.", "Tides follow the moon."], ids=["e", "t"]
        )
        hits = await kb.search("what is e4012", k=2)
        # cosine: t 1.0, e 0.6; only e has the term, so it gains the whole weight
        assert hits[0].id == first
        assert {h.id for h in hits} == {"e", "t"}
        assert max(h.score for h in hits) == pytest.approx(max(1.0, 0.6 + weight))


@pytest.mark.parametrize("weight", [-0.1, 1.5])
def test_a_sparse_weight_outside_0_to_1_is_refused(weight: float):
    with pytest.raises(ConfigurationError, match=r"sparse_weight=.*between 0 and 1"):
        KnowledgeBase(":memory:", embedder=None, sparse_weight=weight)


async def test_rrf_fusion_is_one_qdrant_query_that_ranks_by_both_lists():
    async with KnowledgeBase(":memory:", embedder=TideMinded(), fusion="rrf") as kb:
        await kb.add_texts(
            [
                "Error E4012 means the quota is spent.",
                "Tides follow the moon.",
                "Harbours close in storms.",
            ],
            ids=["e", "t", "h"],
            metadatas=[{"kind": "error"}, {"kind": "sea"}, {"kind": "sea"}],
        )
        hits = await kb.search("what is e4012", k=3)
        # e is first in BM25 and second by cosine; t first by cosine only: RRF puts e first
        # (the default score fusion keeps t first: see the sparse-weight test above)
        assert hits[0].id == "e"
        assert {h.id for h in hits} == {"e", "t", "h"}
        assert [h.id for h in await kb.search("what is e4012", k=3, filter={"kind": "sea"})] in (
            ["t", "h"],
            ["h", "t"],
        )


def test_an_unknown_fusion_is_refused():
    with pytest.raises(ConfigurationError, match=r"fusion='max'.*'score'.*'rrf'"):
        KnowledgeBase(":memory:", embedder=None, fusion="max")  # type: ignore[arg-type]
