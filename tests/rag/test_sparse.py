"""The BM25 sparse vectors: terms, saturation, length normalisation, stable hashing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rxagent.rag import SparseEncoder, terms
from rxagent.rag._sparse import BM25_NAME


def test_terms_fold_plurals_and_drop_stop_words():
    assert terms("The Indexes of the queries and classes") == ["index", "query", "class"]
    assert terms("cases boxes matches status this") == ["case", "box", "match", "status"]
    assert terms("bus gas") == ["bus", "gas"]


def test_repeats_saturate_and_long_documents_weigh_less():
    encoder = SparseEncoder()
    once = encoder.document("qdrant")
    thrice = encoder.document("qdrant qdrant qdrant")
    (index,) = once.indices
    w1 = once.values[0]
    w3 = thrice.values[thrice.indices.index(index)]
    assert w1 < w3 < w1 * 3
    assert w3 < encoder.k1 + 1  # the BM25 ceiling
    padded = encoder.document("qdrant " + " ".join(f"filler{i}" for i in range(300)))
    assert padded.values[padded.indices.index(index)] < w1


def test_no_length_normalisation_with_b_zero():
    encoder = SparseEncoder(b=0.0)
    short = encoder.document("qdrant")
    long = encoder.document("qdrant " + " ".join(f"filler{i}" for i in range(300)))
    assert short.values[0] == long.values[long.indices.index(short.indices[0])]


def test_query_weights_are_term_counts():
    query = SparseEncoder().query("vector vectors database")
    assert sorted(query.values) == [1.0, 2.0]


@given(st.text(max_size=200))
def test_vectors_are_sorted_unique_positive_and_match_the_terms(text):
    encoder = SparseEncoder()
    for vector in (encoder.document(text), encoder.query(text)):
        assert vector.indices == sorted(set(vector.indices))
        assert len(vector.values) == len(vector.indices)
        assert all(v > 0 for v in vector.values)
        assert all(0 <= i < 2**32 for i in vector.indices)
        assert len(vector.indices) <= len(set(terms(text)))
    assert encoder.query(text).indices == encoder.document(text).indices


def test_the_hashing_is_stable_across_processes():
    # crc32 of "qdrant": a change would make stored collections unreadable (new BM25_NAME)
    assert SparseEncoder().query("qdrant").indices == [960205894]
    assert BM25_NAME == "bm25-crc32-v1"
