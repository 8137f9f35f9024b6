"""The built-in tool selectors: AllTools, KeywordSelector, EmbeddingSelector."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.errors import ConfigurationError
from rxagent.models.base import ToolSchema
from rxagent.rag import Embedder
from rxagent.tools import (
    AllTools,
    EmbeddingSelector,
    KeywordSelector,
    ToolSelector,
    keywords,
)

TOOLS = [
    ToolSchema(name="send_email", description="Send an email message to someone."),
    ToolSchema(name="get_weather", description="The weather forecast in a city."),
    ToolSchema(name="convert_currency", description="Convert an amount between currencies."),
    ToolSchema(name="search_docs", description="Search the product documentation."),
    ToolSchema(name="create_ticket", description="Open a support ticket for a customer."),
]


class HashEmbedder:
    """Deterministic bag of words: each keyword adds 1 to a hashed dimension."""

    name = "hash-bow"
    dimensions = 64

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        vectors = []
        for text in texts:
            vector = [0.0] * self.dimensions
            for word in keywords(text):
                digest = hashlib.sha256(word.encode()).digest()
                vector[digest[0] % self.dimensions] += 1.0
            vectors.append(vector)
        return vectors


def names(tools: Sequence[ToolSchema]) -> list[str]:
    return [t.name for t in tools]


def test_the_built_in_selectors_are_tool_selectors():
    for selector in (AllTools(), KeywordSelector(), EmbeddingSelector(HashEmbedder())):
        assert isinstance(selector, ToolSelector)
    assert isinstance(HashEmbedder(), Embedder)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("getWeather", {"weather"}),
        ("listFiles", {"list", "file"}),
        ("HTTPServer_status", {"http", "server", "status"}),
        ("the cities and their boxes", {"city", "box"}),
        ("searches analysis", {"search", "analysis"}),
        ("class glass", {"class", "glass"}),
        ("v2 of it", {"v", "2"}),
        ("", set()),
    ],
)
def test_keywords(text, expected):
    assert keywords(text) == expected


async def test_all_tools_keeps_the_toolkit_order():
    assert names(await AllTools().select("x", TOOLS, None)) == names(TOOLS)
    assert names(await AllTools().select("x", TOOLS, 2)) == ["send_email", "get_weather"]
    assert repr(AllTools()) == "AllTools()"


async def test_keyword_selector_ranks_name_words_over_description_words():
    selector = KeywordSelector()
    assert selector.score("search tickets", TOOLS[4]) == 2  # "ticket" in the name
    assert selector.score("documentation", TOOLS[3]) == 1  # only in the description
    chosen = await selector.select("open a ticket about documentation", TOOLS, 3)
    assert names(chosen) == ["create_ticket", "search_docs", "send_email"]  # 3, 1, 0


async def test_keyword_selector_ties_and_misses_keep_the_toolkit_order():
    chosen = await KeywordSelector().select("hello there", TOOLS, 3)
    assert names(chosen) == ["send_email", "get_weather", "convert_currency"]
    assert len(await KeywordSelector().select("hello", TOOLS, None)) == len(TOOLS)


async def test_always_tools_come_first_and_count_toward_the_limit():
    selector = KeywordSelector(always=["search_docs"])
    chosen = await selector.select("weather in Oslo", TOOLS, 2)
    assert names(chosen) == ["search_docs", "get_weather"]
    assert "always=['search_docs']" in repr(selector)


@pytest.mark.parametrize(
    ("always", "match"),
    [("search_docs", "not one string"), ([""], "tool names"), ([3], "tool names")],
)
def test_bad_always_is_refused(always, match):
    with pytest.raises(ConfigurationError, match=match):
        KeywordSelector(always=always)


async def test_embedding_selector_picks_the_most_similar_tools():
    embedder = HashEmbedder()
    selector = EmbeddingSelector(embedder)
    chosen = await selector.select("forecast for a city", TOOLS, 1)
    assert names(chosen) == ["get_weather"]
    assert "EmbeddingSelector(" in repr(selector)


async def test_embedding_selector_caches_tool_vectors_and_the_last_query():
    embedder = HashEmbedder()
    selector = EmbeddingSelector(embedder)
    await selector.select("weather", TOOLS, 2)
    await selector.select("weather", TOOLS, 2)
    assert len(embedder.batches) == 2  # the tools once, the query once
    await selector.select("currency", TOOLS, 2)
    assert embedder.batches[-1] == ["currency"]
    extra = [*TOOLS, ToolSchema(name="translate_text", description="Translate text.")]
    await selector.select("currency", extra, 2)
    assert embedder.batches[-1] == ["translate text: Translate text."]


async def test_embedding_selector_without_a_query_or_tools():
    embedder = HashEmbedder()
    selector = EmbeddingSelector(embedder, always=["create_ticket"])
    assert names(await selector.select("  ", TOOLS, 2)) == ["create_ticket", "send_email"]
    assert await selector.select("x", [], 2) == []
    assert embedder.batches == []


def test_embedding_selector_needs_an_embedder():
    with pytest.raises(ConfigurationError, match=r"needs an rxagent\.rag\.Embedder"):
        EmbeddingSelector(object())  # type: ignore[arg-type]


async def test_embedding_selector_refuses_a_wrong_number_of_vectors():
    class Short(HashEmbedder):
        async def embed(self, texts):
            return (await super().embed(texts))[:-1]

    with pytest.raises(ValueError, match="returned 4 vectors for 5 texts"):
        await EmbeddingSelector(Short()).select("weather", TOOLS, 1)


async def test_embedding_selector_refuses_vectors_of_different_sizes():
    class Shifting(HashEmbedder):
        async def embed(self, texts):
            self.dimensions += 1
            return await super().embed(texts)

    with pytest.raises(ValueError, match="one selector needs one embedder model"):
        await EmbeddingSelector(Shifting()).select("weather", TOOLS, 1)


async def test_a_zero_vector_scores_zero():
    class Zero(HashEmbedder):
        async def embed(self, texts):
            return [[0.0, 0.0] for _ in texts]

    chosen = await EmbeddingSelector(Zero()).select("weather", TOOLS, 2)
    assert names(chosen) == ["send_email", "get_weather"]


def test_tool_text_spells_the_name_in_words():
    assert EmbeddingSelector.tool_text(TOOLS[1]) == "get weather: The weather forecast in a city."
    assert EmbeddingSelector.tool_text(ToolSchema(name="__")) == "__"


tool_lists = st.lists(
    st.builds(
        ToolSchema,
        name=st.from_regex(r"[a-z]{1,6}(_[a-z]{1,6})?", fullmatch=True),
        description=st.text(alphabet="abcdefgh ", max_size=30),
    ),
    max_size=10,
    unique_by=lambda t: t.name,
)


@given(
    tools=tool_lists,
    query=st.text(alphabet="abcdefgh _", max_size=20),
    limit=st.none() | st.integers(1, 12),
)
async def test_selectors_return_a_stable_subset_within_the_limit(tools, query, limit):
    for selector in (AllTools(), KeywordSelector(), EmbeddingSelector(HashEmbedder())):
        first = await selector.select(query, tools, limit)
        again = await selector.select(query, tools, limit)
        assert names(first) == names(again)
        assert set(names(first)) <= set(names(tools))
        assert len(first) == (len(tools) if limit is None else min(limit, len(tools)))
        assert len(set(names(first))) == len(first)


def test_hash_embedder_is_deterministic():
    import asyncio

    a, b = (asyncio.run(HashEmbedder().embed(["weather city"])) for _ in range(2))
    assert a == b
    assert math.isclose(sum(a[0]), 2.0)


async def test_the_caches_are_bounded(monkeypatch):
    from rxagent.tools import _selection

    monkeypatch.setattr(_selection, "_CACHE_LIMIT", 3)
    keyword, embedder = KeywordSelector(), HashEmbedder()
    embedding = EmbeddingSelector(embedder)
    for selector in (keyword, embedding):
        assert len(await selector.select("weather", TOOLS[:2], 1)) == 1
        assert names(await selector.select("weather", TOOLS, 1)) == ["get_weather"]
    assert len(keyword._words) <= 3
    assert embedder.batches[2] == [EmbeddingSelector.tool_text(t) for t in TOOLS]  # all again
