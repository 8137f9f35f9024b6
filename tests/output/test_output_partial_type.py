"""`partial_type` and `PartialOutput`: the typed shape of an output while its JSON streams."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from rxagent.output import NO_PARTIAL, PartialOutput, partial_type


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Leaf(BaseModel):
    name: str = Field(min_length=3, alias="Name")
    color: Color


class Tree(BaseModel):
    label: str
    children: list[Tree] = []
    leaf: Optional[Leaf] = None  # noqa: UP045


@dataclass
class Point:
    x: int
    y: int = 0


class Movie(TypedDict):
    title: str
    cast: list[Leaf]


class Loop(TypedDict):
    again: list[Loop]


class Cat(BaseModel):
    pet: Literal["cat"]
    lives: int


class Dog(BaseModel):
    pet: Literal["dog"]


class Owner(BaseModel):
    animal: Cat | Dog = Field(discriminator="pet")


class Shadowing(BaseModel):
    schema_: str = Field(alias="schema")
    json_: int = Field(alias="json")


def test_models_become_all_optional():
    partial = partial_type(Leaf)
    assert partial.__name__ == "PartialLeaf"
    assert partial() == partial(Name=None, color=None)
    assert partial(Name="x").name == "x"  # constraints are dropped: "x" is short
    assert partial_type(Leaf) is partial  # cached


def test_recursive_models_refer_to_themselves():
    partial = partial_type(Tree)
    tree = partial.model_validate({"label": "a", "children": [{"children": [{"label": "c"}]}]})
    assert tree.children[0].label is None
    assert tree.children[0].children[0].label == "c"
    assert partial_type(list[Tree]) == list[partial]  # type: ignore[valid-type]


def test_dataclasses_typed_dicts_and_containers():
    point = partial_type(Point)
    assert point.__name__ == "PartialPoint"
    assert point(x=1).y is None
    movie = PartialOutput(Movie).validate({"title": "Up", "cast": [{"Name": "Carl"}]})
    assert movie["title"] == "Up"
    assert movie["cast"][0].name == "Carl"
    loop = PartialOutput(Loop).validate({"again": [{"again": []}]})
    assert loop == {"again": [{"again": []}]}
    assert partial_type(dict[str, Point]) == dict[str, point]  # type: ignore[valid-type]
    assert partial_type(tuple[Point, ...]) == tuple[point, ...]  # type: ignore[valid-type]
    assert partial_type(Annotated[int, Field(gt=3)]) is int
    assert partial_type(Literal["a"]) == Literal["a"]
    assert partial_type(Any) is Any
    assert partial_type(None) is None


def test_unfinished_values_are_left_out():
    partial = PartialOutput(Tree)
    value = partial.validate({"label": "t", "leaf": {"Name": "Oak", "color": "re"}})
    assert value.leaf.name == "Oak"
    assert value.leaf.color is None
    items = PartialOutput(list[Color]).validate(["red", "bl"])
    assert items == [Color.RED]


def test_union_members_are_tried():
    partial = PartialOutput(Owner)
    assert partial.validate({"animal": {"pet": "cat", "lives": 9}}).animal.lives == 9
    assert type(partial.validate({"animal": {"pet": "dog"}}).animal).__name__ == "PartialDog"
    unsure = partial.validate({"animal": {"pet": "ca"}})
    assert unsure.animal is None or unsure.animal.pet is None


def test_nothing_that_fits_gives_no_partial():
    assert PartialOutput(int).validate("x") is NO_PARTIAL
    assert PartialOutput(Tree).validate([1]) is NO_PARTIAL


def test_prune_limit_is_a_bound():
    partial = PartialOutput(list[int])
    assert partial.validate(["x"] * 40) is NO_PARTIAL  # more bad items than the retries
    assert partial.validate(["x"] * 3 + [1]) == [1]


def test_field_names_shadowing_base_model_attributes():
    value = PartialOutput(Shadowing).validate({"schema": "s", "json": 1})
    assert value.schema_ == "s"
    assert value.json_ == 1


def test_types_without_a_partial_form_fall_back_to_plain_json():
    class Weird:
        pass

    partial = PartialOutput(Weird)
    assert partial.type is Any
    assert partial.validate({"a": 1}) == {"a": 1}


@pytest.mark.parametrize("tp", [list[Point], Optional[Point], int | Point])  # noqa: UP045
def test_nested_dataclasses(tp):
    assert partial_type(tp) != tp


def test_classes_with_the_same_name_get_distinct_partials():
    def make() -> type[BaseModel]:
        class Item(BaseModel):
            a: int

        return Item

    first, second = make(), make()

    class Both(BaseModel):
        one: first  # type: ignore[valid-type]
        two: second  # type: ignore[valid-type]

    value = PartialOutput(Both).validate({"one": {"a": 1}, "two": {"a": 2}})
    assert type(value.one).__name__ == "PartialItem"
    assert type(value.two).__name__ == "PartialItem_"


def test_typed_dicts_are_cached_and_reused():
    built = partial_type(Movie)
    assert partial_type(list[Movie]) == list[built]  # type: ignore[valid-type]
