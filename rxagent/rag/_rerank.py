"""Rerankers: reorder a search's candidates before the best `k` are kept.

`MMRReranker` trades relevance for variety (maximal marginal relevance), so five near-copies
of one paragraph do not crowd out the other answers. `LLMReranker` asks a chat model to rank
the candidates.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from rxagent.errors import ConfigurationError
from rxagent.messages import Msg
from rxagent.models.base import ModelOptions, TextDelta
from rxagent.rag._sparse import terms

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.events import Hit
    from rxagent.models.base import ChatModel

__all__ = ["LLMReranker", "MMRReranker", "Reranker"]


@runtime_checkable
class Reranker(Protocol):
    """Reorders hits for a query and keeps the best `k`.

    Example:
        ```python
        from rxagent.rag import Hit, Reranker


        class Shortest:
            async def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
                return sorted(hits, key=lambda hit: len(hit.text))[:k]


        assert isinstance(Shortest(), Reranker)
        ```
    """

    async def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
        """The best `k` of `hits` for `query`, best first."""
        ...


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


class MMRReranker:
    """Maximal marginal relevance: each pick is relevant and unlike the picks before it.

    A hit's relevance is its search score, scaled to 0..1 among the candidates; its similarity
    to the picks is the cosine of dense vectors when the hits carry them (a knowledge base with
    an embedder fetches them for its reranker), else the overlap of their terms (Jaccard).

    Args:
        diversity: 0 keeps the search's order; 1 maximises variety (`1 - lambda` in the
            MMR paper).

    Example:
        ```python
        import asyncio
        from rxagent.rag import Hit, MMRReranker

        hits = [
            Hit(id="a", text="tides follow the moon", score=0.9),
            Hit(id="b", text="tides follow the moon", score=0.8),
            Hit(id="c", text="rivers run to the sea", score=0.7),
        ]
        picked = asyncio.run(MMRReranker(diversity=0.5).rerank("tides", hits, 2))
        assert [hit.id for hit in picked] == ["a", "c"]
        ```
    """

    def __init__(self, diversity: float = 0.3) -> None:
        if not 0.0 <= diversity <= 1.0:
            raise ConfigurationError(f"MMRReranker(diversity={diversity}) must be within 0..1")
        self.diversity = diversity

    async def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
        """The `k` hits MMR picks, in the order picked."""
        if not hits:
            return []
        scores = [hit.score for hit in hits]
        low, high = min(scores), max(scores)
        relevance = [(s - low) / (high - low) if high > low else 1.0 for s in scores]
        dense = all(hit.vector is not None for hit in hits)
        bags = [frozenset(terms(hit.text)) for hit in hits] if not dense else []

        def similarity(i: int, j: int) -> float:
            if dense:
                return _cosine(hits[i].vector or (), hits[j].vector or ())
            return _jaccard(bags[i], bags[j])

        picked: list[int] = []
        left = list(range(len(hits)))
        while left and len(picked) < k:
            best = max(
                left,
                key=lambda i: (
                    (1 - self.diversity) * relevance[i]
                    - self.diversity * max((similarity(i, j) for j in picked), default=0.0)
                ),
            )
            picked.append(best)
            left.remove(best)
        return [hits[i] for i in picked]


_RANKING: Final = re.compile(r"\d+")
_PROMPT: Final = (
    "Rank the passages by how well they answer the query. Reply with the passage numbers "
    "only, best first, separated by commas (for example: 3, 1, 2). Leave out passages that "
    "do not help."
)


class LLMReranker:
    """Ask a chat model to rank the candidates (any `ChatModel`; one call per search).

    The model sees the query and the numbered passages and answers with numbers, best first.
    Passages it leaves out follow in search order, so a terse or odd answer never loses hits.

    Args:
        model: The model that ranks.
        max_chars: Each passage is cut to this many characters in the prompt.

    Example:
        ```python
        import asyncio
        from rxagent.rag import Hit, LLMReranker
        from rxagent.testing import ScriptedModel

        hits = [Hit(id="a", text="cats", score=0.9), Hit(id="b", text="dogs", score=0.8)]
        reranker = LLMReranker(ScriptedModel(["2, 1"]))
        picked = asyncio.run(reranker.rerank("dogs?", hits, 1))
        assert [hit.id for hit in picked] == ["b"]
        ```
    """

    def __init__(self, model: ChatModel, *, max_chars: int = 1_000) -> None:
        self.model = model
        self.max_chars = max_chars

    async def rerank(self, query: str, hits: list[Hit], k: int) -> list[Hit]:
        """The `k` best hits in the order the model gives."""
        if len(hits) <= 1:
            return hits[:k]
        passages = "\n\n".join(
            f"[{n}] {hit.text[: self.max_chars]}" for n, hit in enumerate(hits, 1)
        )
        messages = [Msg.system(_PROMPT), Msg.user(f"Query: {query}\n\nPassages:\n\n{passages}")]
        answer = ""
        async for delta in self.model.stream(messages, [], ModelOptions(temperature=0.0)):
            if isinstance(delta, TextDelta):
                answer += delta.text
        order: list[int] = []
        for number in (int(n) for n in _RANKING.findall(answer)):
            if 1 <= number <= len(hits) and number - 1 not in order:
                order.append(number - 1)
        order.extend(i for i in range(len(hits)) if i not in order)
        return [hits[i] for i in order[:k]]
