"""Rerankers: MMR on vectors or terms, the LLM reranker, and a knowledge base that uses one."""

from __future__ import annotations

import pytest
from rag_fakes import HashEmbedder  # type: ignore[import-not-found]

from rxagent.errors import ConfigurationError
from rxagent.rag import Hit, KnowledgeBase, LLMReranker, MMRReranker, Reranker
from rxagent.testing import ScriptedModel


def hit(doc: str, score: float, text: str = "", vector: tuple[float, ...] | None = None) -> Hit:
    return Hit(id=doc, text=text or doc, score=score, vector=vector)


async def test_mmr_on_vectors_skips_near_copies():
    hits = [
        hit("a", 0.9, vector=(1.0, 0.0)),
        hit("a2", 0.85, vector=(0.99, 0.01)),
        hit("b", 0.5, vector=(0.0, 1.0)),
    ]
    assert [h.id for h in await MMRReranker(0.5).rerank("q", hits, 2)] == ["a", "b"]
    assert [h.id for h in await MMRReranker(0.0).rerank("q", hits, 2)] == ["a", "a2"]


async def test_mmr_on_terms_without_vectors_and_edge_cases():
    hits = [hit("x", 1.0, "red apples"), hit("y", 1.0, "red apples"), hit("z", 1.0, "blue sea")]
    assert [h.id for h in await MMRReranker(0.7).rerank("q", hits, 3)] == ["x", "z", "y"]
    assert await MMRReranker().rerank("q", [], 3) == []
    zero = [hit("p", 1.0, vector=(0.0, 0.0)), hit("q", 0.5, vector=(0.0, 0.0))]
    assert len(await MMRReranker().rerank("q", zero, 5)) == 2
    assert isinstance(MMRReranker(), Reranker)
    with pytest.raises(ConfigurationError, match="diversity"):
        MMRReranker(1.5)


async def test_llm_reranker_follows_the_model_and_keeps_the_rest():
    hits = [hit("a", 0.9), hit("b", 0.8), hit("c", 0.7)]
    model = ScriptedModel(["3, 3, 9, 1"])  # a repeat and an unknown number are ignored
    assert [h.id for h in await LLMReranker(model).rerank("query", hits, 3)] == ["c", "a", "b"]
    prompt = model.requests[0].messages[1].text
    assert "Query: query" in prompt
    assert "[2] b" in prompt
    assert await LLMReranker(ScriptedModel([])).rerank("q", hits[:1], 3) == hits[:1]


async def test_a_knowledge_base_hands_its_reranker_vectors_and_more_candidates():
    seen: list[tuple[int, bool]] = []

    class Spy:
        async def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
            seen.append((len(hits), all(h.vector is not None for h in hits)))
            return list(reversed(hits))[:k]

    texts = [f"note {i} about tides" for i in range(10)]
    async with KnowledgeBase(":memory:", embedder=HashEmbedder(), reranker=Spy()) as kb:
        await kb.add_texts(texts)
        hits = await kb.search("tides", k=2)
    assert len(hits) == 2
    assert seen == [(8, True)]  # k * fetch_factor candidates, with their dense vectors
    assert hits[0].model_dump().keys() == {"id", "text", "score", "metadata"}  # never serialized
