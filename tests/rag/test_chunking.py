"""Chunking: order, coverage, token limits, overlap and headings (property-based)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.errors import ConfigurationError
from rxagent.rag import chunk_text
from rxagent.tokens import counter_for

COUNTER = counter_for(None)
PIECES = st.sampled_from(
    [
        "alpha",
        "beta.",
        "gamma\n\n",
        "# Heading one\n",
        "delta ",
        "x" * 40,
        "é",
        "日本語",
        "Title\n=====\n",
        "\n```\n# not a heading\n```\n",
        "  ",
        "\n",
        "The tide turns twice a day.",
    ]
)
TEXTS = st.lists(PIECES, max_size=120).map(" ".join)


@given(TEXTS, st.integers(min_value=8, max_value=80), st.data())
def test_chunks_cover_the_text_in_order_within_the_limit(text, max_tokens, data):
    overlap = data.draw(st.integers(min_value=0, max_value=max_tokens // 2))
    chunks = chunk_text(text, COUNTER, max_tokens=max_tokens, overlap=overlap)
    covered: set[int] = set()
    for index, chunk in enumerate(chunks):
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.text.strip() == chunk.text  # no chunk starts or ends with blanks
        assert COUNTER.count_text(chunk.text) <= max_tokens
        covered.update(range(chunk.start, chunk.end))
        if index:
            before = chunks[index - 1]
            assert chunk.start > before.start
            assert chunk.end > before.end
            assert chunk.section >= before.section
            if chunk.start < before.end:  # they overlap: within one section, by the budget
                assert chunk.section == before.section
                assert COUNTER.count_text(text[chunk.start : before.end]) <= overlap
    assert all(text[i].isspace() for i in range(len(text)) if i not in covered)


@given(st.integers(min_value=20, max_value=60), st.integers(min_value=4, max_value=10))
def test_long_prose_overlaps_as_configured(max_tokens, overlap):
    text = " ".join(f"word{i}" for i in range(400))
    chunks = chunk_text(text, COUNTER, max_tokens=max_tokens, overlap=overlap)
    assert len(chunks) > 2
    for before, after in itertools.pairwise(chunks):
        assert after.start < before.end  # words are short: some always fit in the overlap
        assert COUNTER.count_text(text[after.start : before.end]) <= overlap


def test_no_overlap_means_disjoint_chunks():
    text = "one two three four five six seven eight nine ten " * 30
    chunks = chunk_text(text, COUNTER, max_tokens=20, overlap=0)
    assert all(b.start >= a.end for a, b in itertools.pairwise(chunks))


def test_headings_start_sections_and_stay_with_them():
    text = (
        "Intro line.\n\n# Install\n\nRun pip install rxagent.\n\n"
        "Usage\n-----\n\nCall it.\n\n```\n# a comment, not a heading\n```\n\n"
        "## Deep one ##\n\nMore."
    )
    chunks = chunk_text(text, COUNTER, max_tokens=200)
    assert [c.heading for c in chunks] == ["", "Install", "Usage", "Deep one ##"]
    assert chunks[1].text.startswith("# Install")
    assert chunks[2].text.startswith("Usage\n-----")
    assert "# a comment" in chunks[2].text
    assert [c.section for c in chunks] == [0, 1, 2, 3]


def test_later_chunks_of_a_section_keep_its_heading():
    text = "# Tides\n\n" + "The moon pulls the sea. " * 60
    chunks = chunk_text(text, COUNTER, max_tokens=40, overlap=5)
    assert len(chunks) > 3
    assert {c.heading for c in chunks} == {"Tides"}
    assert not chunks[2].text.startswith("#")


def test_sentence_and_paragraph_boundaries_are_preferred():
    text = ("A short sentence here. " * 5 + "\n\n") * 6
    for chunk in chunk_text(text, COUNTER, max_tokens=40, overlap=0):
        assert chunk.text.endswith(".")


def test_headings_can_be_ignored_for_source_code():
    code = "# a comment\nx = 1\n# another\ny = 2\n"
    (chunk,) = chunk_text(code, COUNTER, headings=False)
    assert chunk.heading == ""
    assert chunk.text == code.strip()


def test_a_word_longer_than_the_limit_is_cut():
    text = "z" * 500
    chunks = chunk_text(text, COUNTER, max_tokens=10, overlap=0)
    assert "".join(c.text for c in chunks) == text
    assert all(COUNTER.count_text(c.text) <= 10 for c in chunks)


def test_blank_text_has_no_chunks():
    assert chunk_text("  \n\n ", COUNTER) == []


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (10, -1), (10, 6)])
def test_bad_sizes_are_refused(max_tokens, overlap):
    with pytest.raises(ConfigurationError, match=r"max_tokens|overlap"):
        chunk_text("text", COUNTER, max_tokens=max_tokens, overlap=overlap)
