"""PartialJSON: unit tests, and properties over random JSON split into random chunks."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.output._partial import PartialJSON


def parse(*chunks: str) -> PartialJSON:
    parser = PartialJSON()
    for chunk in chunks:
        parser.feed(chunk)
    return parser


# -- unit tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", None),
        ("   ", None),
        ('"ab', "ab"),
        ('"a\\', "a"),
        ('"a\\u00', "a"),
        ("[", []),
        ("[1, tr", [1]),
        ("[1, -1.", [1]),
        ("[1, 2", [1]),
        ("[1, 2 ", [1, 2]),
        ("[1, 2,", [1, 2]),
        ('[["a", {"b', [["a", {}]]),
        ("{", {}),
        ('{"a', {}),
        ('{"a"', {}),
        ('{"a": ', {}),
        ('{"a": "', {"a": ""}),
        ('{"a": [', {"a": []}),
        ('{"a": {"b": nul', {"a": {}}),
        ('{"a": 1, "b": fals', {"a": 1}),
        ("tru", None),
        ("-1", None),
    ],
)
def test_partial_values(text: str, expected: Any):
    parser = parse(text)
    assert parser.value == expected
    assert not parser.done


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true", True),
        ("null", None),
        (' \n {"a": [1, 2.5, -3e2, "x"]} \n', {"a": [1, 2.5, -300.0, "x"]}),
        ("```json\n[1]\n```\n", [1]),
        ("```JSON [1]```", [1]),
        ("```\n{}\n", {}),
        ('"\\ud83d\\ude00 \\"\\/\\b\\f\\n\\r\\t"', '\U0001f600 "/\b\f\n\r\t'),
        ('"\\ud83d"', "\ud83d"),
        ('"\\ud83d\\u0041"', "\ud83dA"),
        ('"\\ud83d\\ud83d\\ude00"', "\ud83d\U0001f600"),
    ],
)
def test_complete_values(text: str, expected: Any):
    parser = parse(text)
    assert parser.done
    assert parser.value == expected
    assert parser.text == text


def test_surrogate_pair_split_across_chunks_is_held_back():
    parser = parse('"x\\ud83d')
    assert parser.value == "x"  # the high surrogate waits for what follows
    parser.feed("\\ude")
    assert parser.value == "x"
    parser.feed('00"')
    assert parser.value == "x\U0001f600"


def test_top_level_number_completes_on_finish():
    parser = parse("12")
    assert (parser.value, parser.done) == (None, False)  # `12` may go on: `123`
    parser.feed("3")
    parser.finish()
    assert parser.done
    assert parser.value == 123
    assert type(parser.value) is int


def test_value_is_a_fresh_copy():
    parser = parse('{"a": [1], "b": "x')
    parser.value["a"].append(2)
    assert parser.value == {"a": [1], "b": "x"}
    parser.feed('"}')
    parser.value["a"].append(2)
    assert parser.value == {"a": [1], "b": "x"}


def test_duplicate_keys_keep_the_last_value():
    assert parse('{"a": 1, "a": 2}').value == {"a": 2}


@pytest.mark.parametrize(
    ("text", "pos"),
    [
        ("x", 0),
        ("  [1,]", 5),
        ("[1 2]", 3),
        ('{"a" 1}', 5),
        ("{1: 2}", 1),
        ("[1}", 2),
        ('{"a": 1]', 7),
        ("[01]", 1),
        ("[1-2]", 1),
        ("[-]", 1),
        ("trux", 3),
        ('"a\\x"', 2),
        ('"a\\u12g4"', 6),
        ('"a\nb"', 2),
        ("[1] [2]", 4),
        ("[1] ```", 4),
        ("``x", 2),
        ("```python\n[1]", 9),
        ("```\n[1]\n``` x", 12),
        ("```\n[1]\n``x", 10),
        ("[1]`", 3),
    ],
)
def test_invalid_json_raises_with_position(text: str, pos: int):
    with pytest.raises(json.JSONDecodeError) as excinfo:
        parse(*text)  # one character at a time: positions are absolute, not per chunk
    assert excinfo.value.pos == pos
    assert isinstance(excinfo.value, ValueError)


@pytest.mark.parametrize("text", ["", "  ", "[1", '{"a": "b', "```json\n", '{"a"', "```\n[1]\n``"])
def test_finish_rejects_incomplete_input(text: str):
    parser = parse(text)
    with pytest.raises(ValueError, match="incomplete"):
        parser.finish()


def test_feed_after_finish_raises():
    parser = parse("[]")
    parser.finish()
    parser.feed("")
    with pytest.raises(ValueError, match="after finish"):
        parser.feed(" ")


# -- properties ------------------------------------------------------------------------------------

_KEYS = st.text(max_size=4)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_KEYS, kids, max_size=4),
    max_leaves=12,
)


@st.composite
def split_json(draw: st.DrawFn) -> tuple[Any, str, list[int]]:
    """A JSON value, its `json.dumps` text (random options) and sorted cut points into it."""
    value = draw(json_values)
    text = json.dumps(
        value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 0, 2]))
    )
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=12))
    return value, text, sorted(cuts)


def chunks_of(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


def is_prefix(partial: Any, final: Any) -> bool:
    """Whether `partial` could grow into `final` as more text arrives.

    Strings are prefixes; lists are prefixes whose last item is a prefix; dicts hold the first keys
    of `final` in order, the last key's value a prefix; scalars are equal (and of the same type).
    """
    if isinstance(final, str):
        return isinstance(partial, str) and final.startswith(partial)
    if isinstance(final, list):
        if not isinstance(partial, list) or len(partial) > len(final):
            return False
        if not partial:
            return True
        *init, last = partial
        return init == final[: len(init)] and is_prefix(last, final[len(init)])
    if isinstance(final, dict):
        if not isinstance(partial, dict):
            return False
        keys = list(partial)
        if keys != list(final)[: len(keys)]:
            return False
        if not keys:
            return True
        *init, last = keys
        return all(partial[k] == final[k] for k in init) and is_prefix(partial[last], final[last])
    return type(partial) is type(final) and partial == final


def test_is_prefix_rejects_non_prefixes():
    assert is_prefix({"a": [1, "x"]}, {"a": [1, "xy"], "b": 2})
    assert not is_prefix({"b": 2}, {"a": 1, "b": 2})
    assert not is_prefix([2], [1, 2])
    assert not is_prefix(["y"], ["xy"])
    assert not is_prefix(1, True)
    assert not is_prefix(1.0, 1)


@given(split_json())
def test_all_chunks_give_the_json_loads_value(case: tuple[Any, str, list[int]]):
    _, text, cuts = case
    parser = parse(*chunks_of(text, cuts))
    if not isinstance(json.loads(text), int | float) or isinstance(json.loads(text), bool):
        assert parser.done
    parser.finish()
    assert parser.done
    assert parser.value == json.loads(text)
    assert parser.text == text


@given(split_json())
def test_every_intermediate_value_is_a_prefix_of_the_final_value(case: tuple[Any, str, list[int]]):
    _, text, cuts = case
    final = json.loads(text)
    parser = PartialJSON()
    for chunk in chunks_of(text, cuts):
        parser.feed(chunk)
        value = parser.value
        if value is None and (
            parser.text.strip() == "" or not isinstance(final, str | list | dict)
        ):
            continue  # nothing started yet, or an unfinished top-level number or literal
        assert is_prefix(value, final), (parser.text, value)


@given(split_json())
def test_the_result_does_not_depend_on_the_split(case: tuple[Any, str, list[int]]):
    _, text, cuts = case
    parser = PartialJSON()
    for chunk, end in zip(chunks_of(text, cuts), [*cuts, len(text)], strict=True):
        parser.feed(chunk)
        whole = parse(text[:end])
        assert (parser.value, parser.done) == (whole.value, whole.done)
        assert json.dumps(parser.value) == json.dumps(whole.value)  # same types, not just ==
