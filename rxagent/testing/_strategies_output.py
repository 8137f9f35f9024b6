"""Strategies for structured output: random pydantic models and instances of them."""

from __future__ import annotations

import enum
import itertools
from typing import Any, Final, Literal, Optional

from hypothesis import strategies as st
from pydantic import BaseModel, create_model

from rxagent.testing._strategies_messages import Draw, SearchStrategy

__all__ = ["Shade", "output_models"]


class Shade(enum.Enum):
    """The enum the random output models use."""

    LIGHT = "light"
    DARK = "dark"


_FieldType = tuple[Any, SearchStrategy[Any]]
_names: Final = itertools.count()

_LEAVES: Final[list[_FieldType]] = [
    (int, st.integers(-(2**31), 2**31)),
    (str, st.text(max_size=6)),
    (bool, st.booleans()),
    (float, st.floats(allow_nan=False, allow_infinity=False, width=32)),
    (Shade, st.sampled_from(Shade)),
    (Literal["x", "y"], st.sampled_from(["x", "y"])),
    (int | str, st.one_of(st.integers(-1000, 1000), st.text(max_size=4))),
]


def _extend(children: SearchStrategy[_FieldType]) -> SearchStrategy[_FieldType]:
    def as_list(field: _FieldType) -> _FieldType:
        return list[field[0]], st.lists(field[1], max_size=3)  # type: ignore[valid-type]

    def as_optional(field: _FieldType) -> _FieldType:
        return Optional[field[0]], st.none() | field[1]  # noqa: UP045 - a runtime type

    return st.one_of(
        children.map(as_list),
        children.map(as_optional),
        st.lists(children, min_size=1, max_size=3).map(_nested),
    )


def _nested(fields: list[_FieldType]) -> _FieldType:
    definitions: dict[str, Any] = {f"f{i}": (tp, ...) for i, (tp, _) in enumerate(fields)}
    model = create_model(f"Nested{next(_names)}", **definitions)
    values = st.fixed_dictionaries({f"f{i}": strat for i, (_, strat) in enumerate(fields)})
    return model, values.map(lambda kw: model(**kw))


_FIELD_TYPES: Final = st.recursive(st.sampled_from(_LEAVES), _extend, max_leaves=6)


def output_models() -> SearchStrategy[tuple[type[BaseModel], BaseModel]]:
    """Draw a random pydantic output model and an instance of it.

    Fields are ints, strings, booleans, floats, an enum, a `Literal`, `int | str`, lists and
    optionals of them, and nested models, up to a few levels. Each root field is required or has
    a default (the drawn value), and the instance leaves some defaulted fields unset. Instances
    round-trip through JSON: `model.model_validate_json(instance.model_dump_json()) == instance`.

    Example:
        ```python
        from hypothesis import given, settings

        from rxagent.testing import strategies as rst


        @settings(max_examples=10)
        @given(rst.output_models())
        def test_round_trip(case) -> None:
            model, instance = case
            assert model.model_validate_json(instance.model_dump_json()) == instance


        test_round_trip()
        ```
    """
    return _output_models()


@st.composite
def _output_models(draw: Draw) -> tuple[type[BaseModel], BaseModel]:
    specs = draw(st.lists(st.tuples(_FIELD_TYPES, st.booleans()), min_size=1, max_size=4))
    fields: dict[str, Any] = {}
    values: dict[str, Any] = {}
    for i, ((tp, strategy), optional) in enumerate(specs):
        value = draw(strategy)
        fields[f"p{i}"] = (tp, value) if optional else (tp, ...)
        if not optional or draw(st.booleans()):
            values[f"p{i}"] = value
    model = create_model(f"Output{next(_names)}", **fields)
    return model, model(**values)
