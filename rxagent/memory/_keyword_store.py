"""`KeywordStore`: a `MemoryStore` in a dict, searched by shared keywords; no model, no Qdrant.

For tests, examples and small single-process apps: nothing is saved, and a fact is found only by
words it shares with the query (`rxagent.tools.keywords`, so plurals and case do not matter).
`rxagent.rag.KnowledgeBase` is the store for real use: persistent, and it finds paraphrases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from rxagent.messages import new_id
from rxagent.tools import keywords

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["KeywordHit", "KeywordStore"]


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """One search result of a `KeywordStore`."""

    id: str
    """The stored text's id."""
    text: str
    """The stored text."""
    score: float
    """Shared keywords, divided by the square root of the text's keyword count."""
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The metadata stored with it."""


class KeywordStore:
    """Texts with metadata in memory, found by the keywords they share with a query.

    Example:
        ```python
        import asyncio
        from rxagent.memory import KeywordStore


        async def main() -> None:
            store = KeywordStore()
            await store.add_texts(["Ann likes green tea", "Bob likes coffee"],
                                  metadatas=[{"user": "ann"}, {"user": "bob"}], ids=["a", "b"])
            await store.add_texts(["Ann likes black tea"], metadatas=[{"user": "ann"}], ids=["a"])
            (hit,) = await store.search("which tea?", filter={"user": "ann"})
            assert hit.text == "Ann likes black tea" and await store.count() == 2


        asyncio.run(main())
        ```
    """

    def __init__(self) -> None:
        self._texts: dict[str, tuple[str, Mapping[str, Any], frozenset[str]]] = {}

    async def add_texts(
        self,
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]] | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[str]:
        """Store `texts`; a text under an id already stored replaces it. Returns the ids.

        Raises:
            ValueError: `metadatas` or `ids` of another length than `texts`.
        """
        for name, given in (("metadatas", metadatas), ("ids", ids)):
            if given is not None and len(given) != len(texts):
                raise ValueError(f"{len(texts)} texts need {len(texts)} {name}, got {len(given)}")
        stored = list(ids) if ids is not None else [new_id() for _ in texts]
        for i, (key, text) in enumerate(zip(stored, texts, strict=True)):
            metadata = MappingProxyType(dict(metadatas[i])) if metadatas is not None else None
            self._texts.pop(key, None)  # replaced texts count as new: they go last
            self._texts[key] = (text, metadata or MappingProxyType({}), keywords(text))
        return stored

    async def search(
        self, query: str, k: int = 5, filter: Mapping[str, Any] | None = None
    ) -> list[KeywordHit]:
        """The `k` texts sharing most keywords with `query` whose metadata has `filter`'s values.

        Texts sharing no keyword are not found; ties keep the order of storing.
        """
        wanted = keywords(query)
        found: list[tuple[float, int, KeywordHit]] = []
        for position, (key, (text, metadata, words)) in enumerate(self._texts.items()):
            if filter and any(metadata.get(name) != value for name, value in filter.items()):
                continue
            shared = len(wanted & words)
            if shared:
                score = shared / math.sqrt(len(words))
                found.append((-score, position, KeywordHit(key, text, score, metadata)))
        found.sort(key=lambda item: (item[0], item[1]))
        return [hit for _, _, hit in found[:k]]

    async def delete(self, ids: Sequence[str]) -> int:
        """Delete the texts with these ids; return how many there were."""
        return sum(self._texts.pop(key, None) is not None for key in ids)

    async def count(self) -> int:
        """How many texts are stored."""
        return len(self._texts)

    def __repr__(self) -> str:
        return f"<KeywordStore texts={len(self._texts)}>"
