"""Tests for `rxagent.output._schema`: JSON schemas per provider."""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.shared_params import ResponseFormatJSONSchema
from pydantic import BaseModel, Field, TypeAdapter, create_model
from typing_extensions import TypedDict

from rxagent.errors import ConfigurationError
from rxagent.output._schema import (
    ProviderSchema,
    gemini_schema,
    json_schema_for,
    openai_strict_schema,
)

RESPONSE_FORMAT = TypeAdapter(ResponseFormatJSONSchema)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Inner(BaseModel):
    label: str = Field(description="a label")
    weight: int = 5


class Outer(BaseModel):
    inner: Inner = Field(description="nested")
    maybe: Inner | None = None
    tags: set[str] = set()
    kind: Literal["a", "b"] = "a"
    color: Color = Color.RED


class Node(BaseModel):
    children: list[Node] = []


class Movie(TypedDict):
    title: str
    year: int


@dataclass
class Point:
    x: int
    y: int


class Cat(BaseModel):
    pet: Literal["cat"]


class Dog(BaseModel):
    pet: Literal["dog"]


class Owner(BaseModel):
    animal: Cat | Dog = Field(discriminator="pet")


def walk(node: Any):
    """Every dict anywhere in a JSON value."""
    if isinstance(node, dict):
        yield node
        for child in node.values():
            yield from walk(child)
    elif isinstance(node, list):
        for child in node:
            yield from walk(child)


def schema_nodes(node: Any):
    """Every subschema (not property-name mappings) of a JSON schema."""
    if not isinstance(node, dict):
        return
    yield node
    for key in ("items", "additionalProperties", "not"):
        yield from schema_nodes(node.get(key))
    for key in ("anyOf", "allOf", "prefixItems"):
        for child in node.get(key, ()):
            yield from schema_nodes(child)
    for key in ("properties", "$defs"):
        for child in node.get(key, {}).values():
            yield from schema_nodes(child)


def assert_openai_strict(schema: dict[str, Any]) -> None:
    assert schema["type"] == "object"
    for node in schema_nodes(schema):
        assert "default" not in node
        assert "oneOf" not in node
        assert "const" not in node
        assert "discriminator" not in node
        if "$ref" in node:
            assert len(node) == 1, node
        if node.get("type") == "object" or "properties" in node:
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])
    RESPONSE_FORMAT.validate_python(
        {"type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": True}}
    )


@pytest.mark.parametrize(
    "tp", [Outer, Node, Movie, Point, list[Inner], int, str, int | str, Owner, Inner | None]
)
def test_supported_types_give_strict_schemas(tp):
    assert_openai_strict(openai_strict_schema(json_schema_for(tp)).schema)
    gemini = gemini_schema(json_schema_for(tp))
    assert not any("const" in n or "oneOf" in n or "discriminator" in n for n in walk(gemini))


@pytest.mark.parametrize("tp", [set[Callable[[], None]], type("Plain", (), {})])
def test_unsupported_types_raise_configuration_error(tp):
    with pytest.raises(ConfigurationError, match="cannot be described as a JSON schema") as info:
        json_schema_for(tp)
    assert "pydantic model" in str(info.value)


def test_optional_properties_become_required_and_nullable():
    schema = openai_strict_schema(json_schema_for(Outer)).schema
    props = schema["properties"]
    assert schema["required"] == ["inner", "maybe", "tags", "kind", "color"]
    assert props["maybe"]["anyOf"][-1] == {"type": "null"}
    assert sum(branch == {"type": "null"} for branch in props["maybe"]["anyOf"]) == 1
    assert props["kind"]["anyOf"][-1] == {"type": "null"}
    assert props["inner"] == {"anyOf": [{"$ref": "#/$defs/Inner"}], "description": "nested"}
    assert "uniqueItems" not in props["tags"]["anyOf"][0]
    inner = schema["$defs"]["Inner"]
    assert inner["required"] == ["label", "weight"]
    assert inner["properties"]["weight"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "title": "Weight",
    }


def test_input_schema_is_not_modified():
    original = json_schema_for(Outer)
    snapshot = json_schema_for(Outer)
    openai_strict_schema(original)
    gemini_schema(original)
    assert original == snapshot


def test_non_object_root_is_wrapped_and_unwrapped():
    result = openai_strict_schema(json_schema_for(list[Inner]))
    assert result.wrapped
    assert set(result.schema) == {"type", "properties", "required", "additionalProperties", "$defs"}
    assert result.schema["properties"]["value"]["items"] == {"$ref": "#/$defs/Inner"}
    assert result.unwrap({"value": [1]}) == [1]
    with pytest.raises(ValueError, match="'value'"):
        result.unwrap([1])


def test_recursive_root_ref_is_inlined_and_defs_kept():
    result = openai_strict_schema(json_schema_for(Node))
    assert not result.wrapped
    assert "$ref" not in result.schema
    assert result.schema["type"] == "object"
    assert "Node" in result.schema["$defs"]


def test_discriminated_union_becomes_any_of():
    schema = openai_strict_schema(json_schema_for(Owner)).schema
    assert len(schema["properties"]["animal"]["anyOf"]) == 2
    assert schema["$defs"]["Cat"]["properties"]["pet"] == {
        "enum": ["cat"],
        "type": "string",
        "title": "Pet",
    }


def test_property_named_like_a_keyword_is_kept():
    model = create_model("Kw", default=(int, 1), format=(str, ...))
    schema = openai_strict_schema(json_schema_for(model)).schema
    assert schema["required"] == ["default", "format"]


def test_unsupported_string_formats_are_dropped():
    model = create_model("Fmt", when=(str, Field(json_schema_extra={"format": "date-time"})))
    kept = openai_strict_schema(json_schema_for(model)).schema
    assert kept["properties"]["when"]["format"] == "date-time"
    dropped = openai_strict_schema({"type": "string", "format": "uri"}).schema
    assert "format" not in dropped["properties"]["value"]


@pytest.mark.parametrize("tp", [dict[str, int], create_model("Loose", extra=(dict[str, Any], ...))])
def test_free_form_mappings_are_rejected_for_openai(tp):
    with pytest.raises(ConfigurationError, match="free-form mapping"):
        openai_strict_schema(json_schema_for(tp))


def test_gemini_keeps_refs_and_non_object_roots():
    schema = gemini_schema(json_schema_for(list[Inner]))
    assert schema["type"] == "array"
    assert schema["items"] == {"$ref": "#/$defs/Inner"}
    weight = schema["$defs"]["Inner"]["properties"]["weight"]
    assert weight == {"type": "integer", "title": "Weight"}  # `default` is not a Gemini keyword


def test_provider_schema_is_frozen():
    result = ProviderSchema(schema={}, wrapped=False)
    with pytest.raises(AttributeError):
        result.wrapped = True  # type: ignore[misc]


# --- property: random models -------------------------------------------------------------

_names = itertools.count()
FieldType = tuple[Any, st.SearchStrategy[Any]]

_leaves: st.SearchStrategy[FieldType] = st.sampled_from(
    [
        (int, st.integers(-(2**31), 2**31)),
        (str, st.text(max_size=5)),
        (bool, st.booleans()),
        (float, st.floats(allow_nan=False, allow_infinity=False)),
        (Color, st.sampled_from(Color)),
        (Literal["x", "y"], st.sampled_from(["x", "y"])),
        (int | str, st.one_of(st.integers(), st.text(max_size=3))),
    ]
)


def _extend(children: st.SearchStrategy[FieldType]) -> st.SearchStrategy[FieldType]:
    def as_list(ft: FieldType) -> FieldType:
        return list[ft[0]], st.lists(ft[1], max_size=3)  # type: ignore[valid-type]

    def as_optional(ft: FieldType) -> FieldType:
        return Optional[ft[0]], st.none() | ft[1]  # noqa: UP045

    return st.one_of(
        children.map(as_list),
        children.map(as_optional),
        st.lists(children, min_size=1, max_size=3).map(_nested_model),
    )


def _nested_model(fields: list[FieldType]) -> FieldType:
    definitions: dict[str, Any] = {f"f{i}": (tp, ...) for i, (tp, _) in enumerate(fields)}
    model = create_model(f"M{next(_names)}", **definitions)
    values = st.fixed_dictionaries({f"f{i}": strat for i, (_, strat) in enumerate(fields)})
    return model, values.map(lambda kw: model(**kw))


_field_types = st.recursive(_leaves, _extend, max_leaves=6)


@st.composite
def models(draw: st.DrawFn) -> tuple[type[BaseModel], BaseModel]:
    specs = draw(st.lists(st.tuples(_field_types, st.booleans()), min_size=1, max_size=4))
    fields: dict[str, Any] = {}
    values: dict[str, Any] = {}
    for i, ((tp, strat), optional) in enumerate(specs):
        value = draw(strat)
        fields[f"p{i}"] = (tp, value) if optional else (tp, ...)
        if not optional or draw(st.booleans()):
            values[f"p{i}"] = value
    model = create_model(f"Root{next(_names)}", **fields)
    return model, model(**values)


@given(models())
def test_random_models_give_strict_schemas_and_round_trip(case):
    model, instance = case
    result = openai_strict_schema(json_schema_for(model))
    assert not result.wrapped
    assert_openai_strict(result.schema)
    assert model.model_validate_json(instance.model_dump_json()) == instance
