"""`KnowledgeBase`: documents chunked, embedded and searched in a Qdrant collection."""

from __future__ import annotations

import enum
import uuid
from typing import TYPE_CHECKING, Any, Final, Literal, Self, TypeAlias

from qdrant_client import models

from rxagent.errors import ConfigurationError, EmbedderMismatchError
from rxagent.events import Hit
from rxagent.rag._chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_TOKENS, Chunk, chunk_text
from rxagent.rag._defaults import default_embedder
from rxagent.rag._filters import MetadataFilter, to_qdrant_filter
from rxagent.rag._fusion import DEFAULT_SPARSE_WEIGHT, fuse
from rxagent.rag._sparse import BM25_NAME, SparseEncoder
from rxagent.rag._store import MEMORY, QdrantBackend
from rxagent.rag._tool import search_tool
from rxagent.tokens import counter_for

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import TracebackType

    from rxagent.rag._embedding import Embedder
    from rxagent.rag._rerank import Reranker
    from rxagent.tokens import TokenCounter
    from rxagent.tools import Tool

__all__ = ["DEFAULT_PATH", "KnowledgeBase", "SearchMode"]

DEFAULT_PATH: Final = ".rxagent/qdrant"
"""Where `KnowledgeBase()` keeps its collection: qdrant-client's local mode, in this folder."""

SearchMode: TypeAlias = Literal["hybrid", "sparse", "dense"]
"""Which vectors a search uses: both fused (the default with an embedder), or one of them."""

DENSE: Final = "dense"
SPARSE: Final = "bm25"
RESERVED: Final = frozenset({"text", "doc_id", "position", "chunks", "heading"})
"""Payload keys the knowledge base writes itself; metadata may not use them."""
_IDS: Final = uuid.UUID("6b1d4c55-8a5e-4a7e-9a43-3c1f1d7e2f10")
_UPSERT_BATCH: Final = 256
_CANDIDATES_FLOOR: Final = 40


class _Default(enum.Enum):
    EMBEDDER = enum.auto()


def point_id(doc_id: str, position: int) -> str:
    """The Qdrant point id of a document's chunk: stable, so re-adding replaces it."""
    return str(uuid.uuid5(_IDS, f"{doc_id}\x00{position}"))


def _indexed(chunk: Chunk) -> str:
    """The text searched for a chunk: its section's heading goes with it."""
    first_line = chunk.text.split("\n", 1)[0]
    if chunk.heading and chunk.heading not in first_line:
        return f"{chunk.heading}\n{chunk.text}"
    return chunk.text


class KnowledgeBase:
    """Documents in a Qdrant collection, searched by meaning and by words at once.

    `add_texts` cuts each text into token-bounded chunks (headings kept with their sections),
    embeds them in batches and upserts them under ids derived from the document id, so adding a
    document again replaces it. `search` fuses a sparse BM25 search and, with an embedder, a
    dense one: the dense ranking leads and BM25 adds a small, query-scaled bonus (exact names
    and codes still count).

    Args:
        location: `":memory:"`, a folder for local mode, or a server URL (`http(s)://...`);
            the same as `path=` or `url=`.
        path: A folder for qdrant-client's local mode (the default, `.rxagent/qdrant`). Local
            mode locks the folder until `aclose()`.
        url: A Qdrant server or cluster.
        api_key: The server's API key.
        collection: The collection's name.
        embedder: The dense embedder; by default `LocalEmbedder` when the MiniLM weights are
            installed, else none (logged once). None for sparse (BM25) search only.
        chunk_tokens: The most tokens in a chunk.
        chunk_overlap: Tokens shared by consecutive chunks of one section.
        batch_size: Texts per embedder call.
        reranker: Reorders each search's candidates (fetched `fetch_factor` times `k`).
        fetch_factor: How many more candidates than `k` a reranker sees.
        search_mode: What `search` does by default: `"hybrid"` (with an embedder; the
            default), `"dense"` (with an embedder) or `"sparse"` (the default without).
        counter: Counts tokens for chunking (`rxagent.tokens.counter_for(None)` by default).
        sparse: The BM25 encoder (its `k1`, `b` and `avg_length`).
        sparse_weight: In hybrid search, what the query's best BM25 match adds to a chunk's
            cosine similarity (BM25 scores are scaled to 0..1 per query); 0 ranks by meaning
            alone. See `rxagent.rag._fusion`.
        fusion: How hybrid search combines its two rankings: `"score"` (the default: cosine
            plus the scaled BM25 bonus, fused by rxagent from one batch of two queries) or
            `"rrf"` (Qdrant's reciprocal-rank fusion of two prefetches, in one query on the
            server). `"score"` ranked paraphrased questions better (see "Measured" in the
            retrieval guide); `"rrf"` leaves the fusing to a Qdrant server.

    Raises:
        ConfigurationError: For two locations at once, a bad chunk size, sparse_weight or
            fusion.

    Example:
        ```python
        import asyncio
        from rxagent.rag import KnowledgeBase


        async def main() -> None:
            async with KnowledgeBase(":memory:", embedder=None) as kb:
                await kb.add_texts(
                    ["Qdrant stores vectors.", "Tides follow the moon."],
                    metadatas=[{"topic": "db"}, {"topic": "sea"}],
                    ids=["qdrant", "tides"],
                )
                hits = await kb.search("where are vectors stored?", k=1)
                assert hits[0].id == "qdrant" and hits[0].metadata["topic"] == "db"
                assert await kb.count(filter={"topic": "sea"}) == 1


        asyncio.run(main())
        ```
    """

    def __init__(
        self,
        location: str | None = None,
        *,
        path: str | None = None,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = "rxagent",
        embedder: Embedder | _Default | None = _Default.EMBEDDER,
        chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
        chunk_overlap: int = DEFAULT_CHUNK_OVERLAP,
        batch_size: int = 64,
        reranker: Reranker | None = None,
        fetch_factor: int = 4,
        search_mode: SearchMode | None = None,
        counter: TokenCounter | None = None,
        sparse: SparseEncoder | None = None,
        sparse_weight: float = DEFAULT_SPARSE_WEIGHT,
        fusion: Literal["score", "rrf"] = "score",
    ) -> None:
        if sum(x is not None for x in (location, path, url)) > 1:
            raise ConfigurationError(
                "KnowledgeBase takes one of location, path= and url=; got "
                f"location={location!r}, path={path!r}, url={url!r}"
            )
        if location is not None:
            if location.startswith(("http://", "https://")):
                url = location
            else:
                path = location
        if url is None and path is None:
            path = DEFAULT_PATH
        if chunk_overlap < 0 or chunk_overlap * 2 > chunk_tokens:
            raise ConfigurationError(
                f"KnowledgeBase(chunk_overlap={chunk_overlap}) must be between 0 and half of "
                f"chunk_tokens={chunk_tokens}"
            )
        if search_mode not in (None, "hybrid", "dense", "sparse"):
            raise ConfigurationError(
                f"KnowledgeBase(search_mode={search_mode!r}) must be 'hybrid', 'dense' or 'sparse'"
            )
        if not 0 <= sparse_weight <= 1:
            raise ConfigurationError(
                f"KnowledgeBase(sparse_weight={sparse_weight}) must be between 0 and 1 (what the "
                "best BM25 match adds to a cosine similarity; 0.05 by default)"
            )
        if fusion not in ("score", "rrf"):
            raise ConfigurationError(
                f"KnowledgeBase(fusion={fusion!r}) must be 'score' (cosine plus a BM25 bonus) or "
                "'rrf' (Qdrant's reciprocal-rank fusion)"
            )
        if batch_size < 1 or fetch_factor < 1:
            raise ConfigurationError("KnowledgeBase(batch_size=, fetch_factor=) must be >= 1")
        self.collection = collection
        self.embedder: Embedder | None = (
            default_embedder() if embedder is _Default.EMBEDDER else embedder
        )
        self.chunk_tokens = chunk_tokens
        self.chunk_overlap = chunk_overlap
        self.batch_size = batch_size
        self.reranker = reranker
        self.fetch_factor = fetch_factor
        self.sparse_weight = sparse_weight
        self.fusion = fusion
        self._mode = search_mode
        self.sparse = sparse if sparse is not None else SparseEncoder()
        self._counter = counter
        self._backend = QdrantBackend(path=path, url=url, api_key=api_key)
        self._exists: bool | None = None  # None until the collection was looked up

    def __repr__(self) -> str:
        where = self._backend.url or self._backend.path
        name = self.embedder.name if self.embedder is not None else None
        return f"KnowledgeBase({where!r}, collection={self.collection!r}, embedder={name!r})"

    @property
    def location(self) -> str:
        """The folder, `":memory:"` or the server URL."""
        return self._backend.url or self._backend.path or MEMORY

    @property
    def mode(self) -> SearchMode:
        """What `search` does by default: `search_mode`, else hybrid with an embedder."""
        if self._mode is not None:
            return self._mode
        return "hybrid" if self.embedder is not None else "sparse"

    # -- the collection ---------------------------------------------------------------------------

    def _expected(self) -> dict[str, Any]:
        embedder = self.embedder
        return {
            "rxagent": 1,
            "sparse": BM25_NAME,
            "embedder": embedder.name if embedder is not None else None,
            "dimensions": embedder.dimensions if embedder is not None else None,
        }

    async def _lookup(self) -> bool:
        """Whether the collection exists; checks once that it was made with this embedder."""
        if self._exists is None:
            exists = bool(
                await self._backend.call("collection_exists", collection_name=self.collection)
            )
            if exists:
                info = await self._backend.call("get_collection", collection_name=self.collection)
                self._check(dict(info.config.metadata or {}))
            self._exists = exists
        return self._exists

    def _check(self, stored: dict[str, Any]) -> None:
        expected = self._expected()
        where = f"collection {self.collection!r} at {self.location!r}"
        if stored.get("rxagent") != 1:
            raise EmbedderMismatchError(
                f"{where} was not made by rxagent's KnowledgeBase; choose another collection="
            )
        same_dims = expected["dimensions"] in (None, stored.get("dimensions"))
        if stored.get("embedder") != expected["embedder"] or not same_dims:
            made = f"{stored.get('embedder')!r} ({stored.get('dimensions')} dimensions)"
            now = f"{expected['embedder']!r} ({expected['dimensions']} dimensions)"
            raise EmbedderMismatchError(
                f"{where} was made with embedder {made} and is opened with {now}; open it with "
                "the same embedder (embedder=None for sparse only), or use another collection= "
                "and add the documents again"
            )
        if stored.get("sparse") != BM25_NAME:
            raise EmbedderMismatchError(
                f"{where} holds sparse vectors {stored.get('sparse')!r}, this rxagent writes "
                f"{BM25_NAME!r}; add the documents again to another collection="
            )

    async def _create(self, dimensions: int | None) -> None:
        metadata = self._expected() | {"dimensions": dimensions}
        dense = (
            {DENSE: models.VectorParams(size=dimensions, distance=models.Distance.COSINE)}
            if dimensions is not None
            else {}
        )
        await self._backend.call(
            "create_collection",
            collection_name=self.collection,
            vectors_config=dense,
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata=metadata,
        )
        if not self._backend.is_local:  # local mode scans; a server's filters need an index
            for field, schema in (("doc_id", "keyword"), ("source", "keyword")):
                await self._backend.call(
                    "create_payload_index",
                    collection_name=self.collection,
                    field_name=field,
                    field_schema=schema,
                )
        self._exists = True

    # -- writing ----------------------------------------------------------------------------------

    def _chunks(self, text: str) -> list[Chunk]:
        if self._counter is None:
            self._counter = counter_for(None)
        return chunk_text(
            text, self._counter, max_tokens=self.chunk_tokens, overlap=self.chunk_overlap
        )

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        assert self.embedder is not None  # callers check
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(await self.embedder.embed(texts[start : start + self.batch_size]))
        return vectors

    async def _old_counts(self, ids: Sequence[str]) -> dict[str, int]:
        """How many chunks each document had before (from its first chunk's payload)."""
        if not ids or not await self._lookup():
            return {}
        points = await self._backend.call(
            "retrieve",
            collection_name=self.collection,
            ids=[point_id(i, 0) for i in ids],
            with_payload=["doc_id", "chunks"],
        )
        return {p.payload["doc_id"]: int(p.payload["chunks"]) for p in points if p.payload}

    async def add_texts(
        self,
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]] | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[str]:
        """Chunk, embed and store texts; a document added again under its id is replaced.

        Args:
            texts: The documents.
            metadatas: One JSON-ready dict per text, stored with each of its chunks (filterable).
                A `source` key names where it came from (the id otherwise).
            ids: One id per text; random ids by default. Re-adding an id replaces the
                document's chunks, including any it no longer has.

        Returns:
            The documents' ids, in order.

        Raises:
            ConfigurationError: When the lengths differ, an id repeats, or metadata uses a key
                the knowledge base writes itself (`text`, `doc_id`, `position`, `chunks`,
                `heading`).
            EmbedderMismatchError: When the collection was made with another embedder.
        """
        texts = list(texts)
        metas = [dict(m) for m in metadatas] if metadatas is not None else [{} for _ in texts]
        doc_ids = list(ids) if ids is not None else [uuid.uuid4().hex for _ in texts]
        if len(metas) != len(texts) or len(doc_ids) != len(texts):
            raise ConfigurationError(
                f"add_texts got {len(texts)} texts, {len(metas)} metadatas and {len(doc_ids)} "
                "ids; pass one of each per text"
            )
        if len(set(doc_ids)) != len(doc_ids):
            raise ConfigurationError("add_texts(ids=...) repeats an id; ids must be unique")
        for meta in metas:
            clash = RESERVED & meta.keys()
            if clash:
                raise ConfigurationError(
                    f"metadata key {sorted(clash)[0]!r} is written by the knowledge base; rename "
                    f"it (reserved: {', '.join(sorted(RESERVED))})"
                )
        old = await self._old_counts(doc_ids if ids is not None else [])
        points: list[models.PointStruct] = []
        indexed: list[str] = []
        stale: list[str] = []
        for doc_id, text, meta in zip(doc_ids, texts, metas, strict=True):
            chunks = self._chunks(text)
            stale.extend(point_id(doc_id, i) for i in range(len(chunks), old.get(doc_id, 0)))
            for position, chunk in enumerate(chunks):
                payload = {**meta, "source": meta.get("source", doc_id), "doc_id": doc_id}
                payload |= {"position": position, "chunks": len(chunks), "text": chunk.text}
                if chunk.heading:
                    payload["heading"] = chunk.heading
                points.append(
                    models.PointStruct(id=point_id(doc_id, position), vector={}, payload=payload)
                )
                indexed.append(_indexed(chunk))
        await self._write(points, indexed)
        if stale:
            await self._backend.call(
                "delete",
                collection_name=self.collection,
                points_selector=models.PointIdsList(points=stale),
            )
        return doc_ids

    async def _write(self, points: list[models.PointStruct], indexed: list[str]) -> None:
        if not points:
            return
        dense = await self._embed(indexed) if self.embedder is not None else None
        if not await self._lookup():
            await self._create(len(dense[0]) if dense else None)
        for index, point in enumerate(points):
            sparse = self.sparse.document(indexed[index])
            vector: dict[str, Any] = {
                SPARSE: models.SparseVector(indices=sparse.indices, values=sparse.values)
            }
            if dense is not None:
                vector[DENSE] = dense[index]
            point.vector = vector
        for start in range(0, len(points), _UPSERT_BATCH):
            await self._backend.call(
                "upsert",
                collection_name=self.collection,
                points=points[start : start + _UPSERT_BATCH],
            )

    async def delete(
        self, ids: Sequence[str] | None = None, *, filter: MetadataFilter | None = None
    ) -> None:
        """Delete documents by id, or every chunk that matches a metadata filter.

        Both given, a chunk must match both. `filter={}` matches every chunk.

        Raises:
            ConfigurationError: When neither `ids` nor `filter` is given.
        """
        if ids is None and filter is None:
            raise ConfigurationError("delete() needs ids or filter=")
        if not await self._lookup():
            return
        conditions: list[models.Condition] = []
        if ids is not None:
            if not ids:
                return
            conditions.append(
                models.FieldCondition(key="doc_id", match=models.MatchAny(any=list(ids)))
            )
        translated = to_qdrant_filter(filter)
        if translated is not None:
            conditions.append(translated)
        await self._backend.call(
            "delete",
            collection_name=self.collection,
            points_selector=models.FilterSelector(filter=models.Filter(must=conditions)),
        )

    # -- reading ----------------------------------------------------------------------------------

    async def count(self, *, filter: MetadataFilter | None = None) -> int:
        """The number of chunks (of the documents matching `filter`)."""
        if not await self._lookup():
            return 0
        result = await self._backend.call(
            "count",
            collection_name=self.collection,
            count_filter=to_qdrant_filter(filter),
            exact=True,
        )
        return int(result.count)

    async def documents(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored metadata of the documents that exist, by id (read from their first chunk).

        Example:
            ```python
            import asyncio
            from rxagent.rag import KnowledgeBase


            async def main() -> None:
                async with KnowledgeBase(":memory:", embedder=None) as kb:
                    await kb.add_texts(["Hello."], metadatas=[{"sha": "1f"}], ids=["a"])
                    found = await kb.documents(["a", "b"])
                    assert found["a"]["sha"] == "1f" and "b" not in found


            asyncio.run(main())
            ```
        """
        if not ids or not await self._lookup():
            return {}
        points = await self._backend.call(
            "retrieve",
            collection_name=self.collection,
            ids=[point_id(i, 0) for i in ids],
            with_payload=True,
        )
        found: dict[str, dict[str, Any]] = {}
        for point in points:
            payload = dict(point.payload or {})
            doc_id = payload.pop("doc_id")
            for key in ("text", "heading", "position"):
                payload.pop(key, None)
            found[doc_id] = payload
        return found

    async def search(
        self,
        query: str,
        k: int = 5,
        filter: MetadataFilter | None = None,
        *,
        mode: SearchMode | None = None,
    ) -> list[Hit]:
        """The `k` chunks that best match `query`, best first.

        Args:
            query: What to look for, in any words.
            k: How many chunks to return.
            filter: Only chunks whose metadata match (see `to_qdrant_filter`).
            mode: `"hybrid"` (dense ranking with a BM25 bonus; the default with an
                embedder), `"sparse"` (BM25 only; the default without) or `"dense"`.

        Raises:
            ConfigurationError: When `k` < 1, or `mode` needs an embedder there is not.
        """
        if k < 1:
            raise ConfigurationError(f"search(k={k}) must be at least 1")
        mode = mode or self.mode
        if mode != "sparse" and self.embedder is None:
            raise ConfigurationError(
                f"search(mode={mode!r}) needs an embedder; this knowledge base is sparse only"
            )
        if not query.strip() or not await self._lookup():
            return []
        fetch = k * self.fetch_factor if self.reranker is not None else k
        requests = await self._requests(query, mode, fetch, to_qdrant_filter(filter))
        if not requests:
            return []
        responses = await self._backend.call(
            "query_batch_points", collection_name=self.collection, requests=requests
        )
        if len(responses) == 2:  # hybrid: dense and sparse candidates, fused here
            points = fuse(
                responses[0].points,
                responses[1].points,
                sparse_weight=self.sparse_weight,
                limit=fetch,
            )
        else:
            points = responses[0].points
        hits = [_hit(point) for point in points]
        if self.reranker is not None:
            hits = await self.reranker.rerank(query, hits, k)
        return hits[:k]

    async def _requests(
        self, query: str, mode: SearchMode, fetch: int, where: models.Filter | None
    ) -> list[models.QueryRequest]:
        """One query per vector the mode uses (dense first); none when nothing can match."""
        want_vectors = self.reranker is not None and self.embedder is not None
        common: dict[str, Any] = {
            "filter": where,
            "with_payload": True,
            "with_vector": [DENSE] if want_vectors else False,
        }
        sparse = self.sparse.query(query)
        sparse_query = models.QueryRequest(
            query=models.SparseVector(indices=sparse.indices, values=sparse.values),
            using=SPARSE,
            limit=fetch if mode == "sparse" else max(fetch * 4, _CANDIDATES_FLOOR),
            **common,
        )
        if mode == "sparse":
            return [sparse_query] if sparse.indices else []
        dense = (await self._embed([query]))[0]
        if mode == "dense" or not sparse.indices:
            return [models.QueryRequest(query=dense, using=DENSE, limit=fetch, **common)]
        depth = max(fetch * 4, _CANDIDATES_FLOOR)
        if self.fusion == "rrf":  # one query: Qdrant fuses the two prefetches
            sparse_vector = models.SparseVector(indices=sparse.indices, values=sparse.values)
            prefetch = [
                models.Prefetch(query=dense, using=DENSE, limit=depth, filter=where),
                models.Prefetch(query=sparse_vector, using=SPARSE, limit=depth, filter=where),
            ]
            rrf = models.FusionQuery(fusion=models.Fusion.RRF)
            return [models.QueryRequest(prefetch=prefetch, query=rrf, limit=fetch, **common)]
        return [models.QueryRequest(query=dense, using=DENSE, limit=depth, **common), sparse_query]

    # -- the model's view and the lifecycle -------------------------------------------------------

    def as_tool(
        self, name: str = "search_knowledge", k: int = 5, description: str | None = None
    ) -> Tool[..., Any]:
        """A tool the model calls to search this knowledge base (numbered sources as text).

        Example:
            ```python
            from rxagent.rag import KnowledgeBase

            tool = KnowledgeBase(":memory:", embedder=None).as_tool(k=3)
            assert tool.name == "search_knowledge" and "query" in str(tool.schema.parameters)
            ```
        """
        return search_tool(self, name=name, k=k, description=description)

    async def aclose(self) -> None:
        """Close the client; local mode releases its folder. Idempotent."""
        await self._backend.aclose()
        self._exists = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _hit(point: models.ScoredPoint) -> Hit:
    payload = dict(point.payload or {})
    text = str(payload.pop("text", ""))
    doc_id = str(payload.pop("doc_id", point.id))
    payload.pop("chunks", None)
    vector = point.vector.get(DENSE) if isinstance(point.vector, dict) else None
    return Hit(
        id=doc_id,
        text=text,
        score=point.score,
        metadata=payload,
        vector=tuple(vector) if isinstance(vector, list) else None,
    )
