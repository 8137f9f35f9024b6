"""`OutputReader`: answers decoded, unwrapped, stripped of strict-mode nulls and validated."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from rxagent.messages import ToolUseBlock
from rxagent.output import (
    OutputFailure,
    OutputReader,
    ParsedOutput,
    decode_answer,
    json_schema_for,
)


class Inner(BaseModel):
    label: str
    weight: int = 5
    note: str | None = "n/a"


class Outer(BaseModel):
    inner: Inner
    items: list[Inner] = []
    maybe: Inner | None = None
    kind: Literal["a", "b"] = "a"


@dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


def ok(outcome: ParsedOutput | OutputFailure) -> ParsedOutput:
    assert isinstance(outcome, ParsedOutput), outcome
    return outcome


def bad(outcome: ParsedOutput | OutputFailure) -> OutputFailure:
    assert isinstance(outcome, OutputFailure), outcome
    return outcome


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  ```json\n{"a": 1}\n```  ', {"a": 1}),
        ("```\n[1, 2]\n```", [1, 2]),
        ('Sure:\n```json\n{"a": 2}\n```\nBye', {"a": 2}),
        ('Two fences:\n```json\n{"a": \n```\nthen\n```json\n{"a": 3}\n```', {"a": 3}),
        ("42", 42),
    ],
)
def test_decode_answer(text, expected):
    assert decode_answer(text) == expected


@pytest.mark.parametrize("text", ["", "Sure thing!", '{"a": 1} and more', "```json\n{\n```"])
def test_decode_answer_refuses_what_is_not_one_json_value(text):
    with pytest.raises(json.JSONDecodeError):
        decode_answer(text)


@pytest.mark.parametrize(
    ("tp", "text", "value"),
    [
        (Outer, '{"inner": {"label": "x"}}', Outer(inner=Inner(label="x"))),
        (Point, '{"x": 1, "y": 2}', Point(1, 2)),
        (Movie, '{"title": "Up", "year": 2009}', {"title": "Up", "year": 2009}),
        (list[int], "[1, 2]", [1, 2]),
        (int | str, '"7"', "7"),
        (int, "7", 7),
        (Literal["yes", "no"], '"no"', "no"),
    ],
)
def test_supported_types_read_from_text(tp, text, value):
    assert ok(OutputReader(tp).read_text(text)).value == value


def test_text_that_is_not_json_reports_where():
    failure = bad(OutputReader(Outer).read_text("I think the answer is 4"))
    assert failure.raw == "I think the answer is 4"
    assert failure.errors == (
        {
            "type": "json_invalid",
            "loc": [],
            "msg": "the answer is not JSON (expected a JSON value at character 0)",
        },
    )


def test_validation_errors_keep_type_loc_and_msg():
    failure = bad(OutputReader(Outer).read_text('{"inner": {"weight": "heavy"}}'))
    by_loc = {tuple(e["loc"]): e for e in failure.errors}
    assert by_loc[("inner", "label")]["type"] == "missing"
    assert by_loc[("inner", "weight")]["type"] == "int_parsing"
    assert set(failure.errors[0]) == {"type", "loc", "msg"}
    assert "inner.label: Field required" in failure.summary()


def test_summary_is_capped():
    failure = OutputFailure("x", tuple({"type": "t", "loc": [i], "msg": "m"} for i in range(12)))
    lines = failure.summary().splitlines()
    assert len(lines) == 9
    assert lines[-1] == "... and 4 more"


def test_wrapped_text_may_come_wrapped_or_bare():
    reader = OutputReader(list[int], wrapped=True)
    assert ok(reader.read_text('{"value": [1]}')).value == [1]
    assert ok(reader.read_text("[1]")).json_text == "[1]"
    failure = bad(reader.read_text('{"value": "x"}'))
    assert failure.errors[0]["type"] == "list_type"


def test_wrapped_dict_with_a_value_key_falls_back_to_the_whole_value():
    reader = OutputReader(dict[str, str] | list[int], wrapped=True)
    assert ok(reader.read_text('{"value": "v"}')).value == {"value": "v"}


def test_strict_nulls_are_dropped_so_defaults_apply_at_every_depth():
    reader = OutputReader(Outer, json_schema_for(Outer), strict_nulls=True)
    text = json.dumps(
        {
            "inner": {"label": "a", "weight": None, "note": None},
            "items": [{"label": "b", "weight": None, "note": "k"}],
            "maybe": None,
            "kind": None,
        }
    )
    value = ok(reader.read_text(text)).value
    assert value == Outer(
        inner=Inner(label="a", note=None),  # note admits None: the null stays
        items=[Inner(label="b", note="k")],
        maybe=None,
    )
    assert value.inner.weight == 5
    assert value.kind == "a"
    plain = OutputReader(Outer, json_schema_for(Outer))  # not strict: a null is an error
    assert bad(plain.read_text(text)).errors


def test_required_nulls_are_kept_and_reported():
    reader = OutputReader(Inner, json_schema_for(Inner), strict_nulls=True)
    failure = bad(reader.read_text('{"label": null}'))
    assert failure.errors[0]["loc"] == ["label"]


def test_read_call_takes_the_arguments():
    reader = OutputReader(Point)
    call = ToolUseBlock(id="c", name="final_answer", input={"x": 1, "y": 2})
    parsed = ok(reader.read_call(call))
    assert parsed.value == Point(1, 2)
    assert parsed.json_text == '{"x": 1, "y": 2}'
    broken = ToolUseBlock(id="c", name="final_answer", raw_input='{"x": 1,')
    failure = bad(reader.read_call(broken))
    assert failure.raw == '{"x": 1,'
    assert failure.errors[0]["type"] == "json_invalid"


def test_read_call_unwraps_and_requires_the_value_key():
    reader = OutputReader(list[int], wrapped=True)
    assert ok(reader.read_call(ToolUseBlock(id="c", name="f", input={"value": [3]}))).value == [3]
    failure = bad(reader.read_call(ToolUseBlock(id="c", name="f", input={"items": [3]})))
    assert failure.errors[0]["loc"] == ["value"]
    assert failure.raw == '{"items": [3]}'


def test_strict_nulls_need_a_schema():
    assert not OutputReader(Inner, strict_nulls=True).strict_nulls


def test_bad_refs_resolve_to_nothing():
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}
    reader = OutputReader(dict[str, int | None], schema, strict_nulls=True)
    assert ok(reader.read_text('{"a": null}')).value == {}
