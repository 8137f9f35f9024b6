"""Partial output types: what a structured output looks like while its JSON is still streaming.

`partial_type(tp)` derives from an output type the type of its partial values: every field of a
pydantic model or dataclass becomes optional with the default `None`, every TypedDict becomes
`total=False`, and that rule applies all the way down (lists, unions, dict values, nested and
recursive models). Field constraints and validators are left out: a partial value is a preview,
not an answer.

`PartialOutput` validates the best-effort value of `PartialJSON` against that type. A value that
cannot validate yet (an unfinished enum string, say) is left out of the partial object rather
than guessed, so every partial object is a fully validated instance of the partial type.
"""

from __future__ import annotations

import dataclasses
import threading
import typing
import warnings
from types import NoneType, UnionType
from typing import (
    Annotated,
    Any,
    Final,
    ForwardRef,
    Literal,
    Union,
    cast,
    final,
    get_args,
    get_origin,
)

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from typing_extensions import TypedDict, is_typeddict

__all__ = ["NO_PARTIAL", "PartialOutput", "partial_type"]

NO_PARTIAL: Final = object()
"""What `PartialOutput.validate` returns when nothing of the value validates yet."""

_PRUNE_LIMIT: Final = 32  # validation retries per partial value, each dropping one bad part
_CONFIG: Final = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True)

_cache: dict[Any, Any] = {}
_cache_lock: Final = threading.Lock()


def partial_type(tp: Any) -> Any:
    """Return the type of the partial values of output type `tp`.

    - a pydantic model or a dataclass `X` becomes a pydantic model `PartialX` whose fields
      (same names and aliases) are all optional, `None` until their value starts;
    - a TypedDict becomes a `total=False` TypedDict `PartialX`;
    - `list[X]`, `dict[str, X]`, unions and `Annotated[X, ...]` apply the rule to `X`
      (`Annotated` metadata, such as constraints, is dropped);
    - anything else (`str`, `int`, enums, `Literal`) stays as it is.

    Types are built once and cached.

    Args:
        tp: The output type.

    Returns:
        The partial type.

    Example:
        ```python
        from pydantic import BaseModel

        from rxagent.output import partial_type


        class Trip(BaseModel):
            city: str
            days: list[int]


        PartialTrip = partial_type(Trip)
        assert PartialTrip.__name__ == "PartialTrip"
        assert PartialTrip(city="Par") == PartialTrip(city="Par", days=None)
        assert partial_type(list[Trip]) == list[PartialTrip]
        ```
    """
    try:
        return _cache[tp]
    except KeyError:
        hashable = True
    except TypeError:  # an unhashable type (Annotated with unhashable metadata): not cached
        hashable = False
    with _cache_lock:
        if not hashable:
            return _Builder().run(tp)
        if tp not in _cache:
            _cache[tp] = _Builder().run(tp)
        return _cache[tp]


class _Builder:
    """Builds the partial types of one call of `partial_type` (recursion goes by forward refs)."""

    def __init__(self) -> None:
        self.names: dict[Any, str] = {}  # original class -> name of its partial class
        self.namespace: dict[str, Any] = {}
        self.models: list[type[BaseModel]] = []

    def run(self, tp: Any) -> Any:
        result = self.build(tp)
        for model in self.models:
            model.model_rebuild(force=True, _types_namespace=self.namespace)
        for original, name in self.names.items():  # reused by later types that contain them
            _cache.setdefault(original, self.namespace[name])
        return result

    def build(self, tp: Any) -> Any:
        origin, args = get_origin(tp), get_args(tp)
        if origin is Annotated:
            return self.build(args[0])
        if origin is Literal or tp is Any or tp is None or tp is NoneType:
            return tp
        if origin is Union or origin is UnionType:
            return Union[tuple(self.build(arg) for arg in args)]  # noqa: UP007 - built at runtime
        if origin is not None and args:
            built = tuple(arg if arg is Ellipsis else self.build(arg) for arg in args)
            return origin[built if len(built) > 1 else built[0]]
        if isinstance(tp, type):
            if issubclass(tp, BaseModel) or dataclasses.is_dataclass(tp):
                return self.model(tp)
            if is_typeddict(tp):
                return self.typed_dict(tp)
        return tp

    def _name_for(self, tp: type) -> str:
        name = f"Partial{tp.__name__}"
        while name in self.namespace:
            name += "_"
        return name

    def model(self, tp: type) -> Any:
        if tp in _cache:
            return _cache[tp]
        if tp in self.names:  # recursion: the class is being built; refer to it by name
            return ForwardRef(self.names[tp])
        name = self.names[tp] = self._name_for(tp)
        self.namespace[name] = None  # reserved
        definitions: dict[str, Any] = {}
        if issubclass(tp, BaseModel):
            for field_name, info in tp.model_fields.items():
                definitions[field_name] = (
                    self.build(info.annotation) | None,
                    Field(
                        default=None,
                        alias=info.alias,
                        validation_alias=info.validation_alias,
                        description=info.description,
                    ),
                )
        else:
            hints = typing.get_type_hints(tp)
            for field in dataclasses.fields(cast("Any", tp)):
                definitions[field.name] = (self.build(hints[field.name]) | None, None)
        with warnings.catch_warnings():  # a field named like a BaseModel attribute warned once
            warnings.simplefilter("ignore")
            model = create_model(
                name,
                __config__=_CONFIG,
                __doc__=f"A partial `{tp.__name__}`: each field is None until its value starts.",
                __module__=__name__,
                **definitions,
            )
        self.namespace[name] = model
        self.models.append(model)
        return model

    def typed_dict(self, tp: type) -> Any:
        if tp in _cache:
            return _cache[tp]
        if tp in self.names:  # a recursive TypedDict: its partial values are plain mappings
            return dict[str, Any]
        name = self.names[tp] = self._name_for(tp)
        hints = typing.get_type_hints(tp)
        fields = {key: self.build(hint) for key, hint in hints.items()}
        partial: Any = TypedDict(name, fields, total=False)  # type: ignore[misc]
        partial.__module__ = __name__
        self.namespace[name] = partial
        return partial


@final
class PartialOutput:
    """Validates partial JSON values of one output type against its `partial_type`.

    Args:
        output_type: The output type.

    Example:
        ```python
        from enum import Enum

        from pydantic import BaseModel

        from rxagent.output import NO_PARTIAL, PartialOutput


        class Color(Enum):
            RED = "red"


        class Paint(BaseModel):
            name: str
            color: Color


        partial = PartialOutput(Paint)
        value = partial.validate({"name": "Sky", "color": "re"})  # "re" is no color yet
        assert value.name == "Sky" and value.color is None
        assert partial.validate([1]) is NO_PARTIAL  # nothing of it fits
        ```
    """

    __slots__ = ("_adapter", "type")

    def __init__(self, output_type: Any) -> None:
        try:
            self.type: Any = partial_type(output_type)
            """The partial type (`Any`, the JSON as it is, for a type it cannot be built for)."""
            self._adapter: TypeAdapter[Any] = TypeAdapter(self.type)
        except Exception:  # an exotic type: partial outputs stay plain JSON, answers still typed
            self.type = Any
            self._adapter = TypeAdapter(Any)

    def validate(self, data: Any) -> Any:
        """Return `data` validated as the partial type, leaving out what does not validate yet.

        Args:
            data: A JSON value (`PartialJSON.value`); it may be changed in place.

        Returns:
            The partial value, or `NO_PARTIAL` when even the pruned value does not validate.
        """
        for _ in range(_PRUNE_LIMIT):
            try:
                return self._adapter.validate_python(data)
            except ValidationError as exc:
                if not _prune(data, exc.errors(include_url=False)):
                    return NO_PARTIAL
        return NO_PARTIAL


def _prune(data: Any, errors: list[Any]) -> bool:
    """Remove the value the first error points at; False when it points at the root."""
    for error in errors:
        parent: Any = None
        key: Any = None
        node = data
        for part in error["loc"]:
            if isinstance(node, dict) and isinstance(part, str) and part in node:
                parent, key, node = node, part, node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                parent, key, node = node, part, node[part]
            # anything else is a union member's tag in the location: skip it
        if parent is not None:
            del parent[key]
            return True
    return False
