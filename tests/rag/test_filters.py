"""The dict filter form and its translation to Qdrant's models.Filter."""

from __future__ import annotations

import pytest
from qdrant_client import models

from rxagent.errors import ConfigurationError
from rxagent.rag import to_qdrant_filter


def test_values_lists_and_ranges_translate():
    result = to_qdrant_filter({"lang": "en", "tags": ["a", "b"], "n": [1, 2], "year": {"gte": 3}})
    assert result is not None
    conditions = result.must
    assert isinstance(conditions, list)
    assert all(isinstance(c, models.FieldCondition) for c in conditions)
    lang, tags, numbers, year = (c for c in conditions if isinstance(c, models.FieldCondition))
    assert lang.match == models.MatchValue(value="en")
    assert tags.match == models.MatchAny(any=["a", "b"])
    assert numbers.match == models.MatchAny(any=[1, 2])
    assert year.range == models.Range(gte=3)


def test_none_and_qdrant_filters_pass_through():
    native = models.Filter(
        must_not=[models.IsEmptyCondition(is_empty=models.PayloadField(key="x"))]
    )
    assert to_qdrant_filter(None) is None
    assert to_qdrant_filter(native) is native


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"x": []}, "non-empty list"),
        ({"x": ["a", 1]}, "non-empty list"),
        ({"x": {"near": 1}}, "range"),
        ({"x": {}}, "range"),
        ({"x": 1.5}, "float"),
        (["x"], "dict of field"),
    ],
)
def test_what_the_dict_form_cannot_say_is_refused_with_the_field(bad, match):
    with pytest.raises(ConfigurationError, match=match):
        to_qdrant_filter(bad)
