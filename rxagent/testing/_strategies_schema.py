"""Draw a tool's arguments from its JSON schema (see `strategies.tool_args` and `scripts`).

The schemas `@tool` builds from typed signatures are covered: the JSON types, `enum` and `const`
(`Literal`, `Enum`), `anyOf` / `oneOf` (unions, `X | None`), local `$ref`s into `$defs` (pydantic
models, enums), arrays with `items` or `prefixItems` (lists, sets, tuples) and objects with
`properties` or `additionalProperties` (models, `dict[str, X]`), with their numeric bounds,
length bounds, `pattern`, and the `date-time`, `date`, `time` and `uuid` formats. Anything else
(`not`, `if`, `patternProperties`, `multipleOf`, other formats, recursive `$ref`s, ...) raises
`UnsupportedSchemaError`, naming the tool, where in the schema, and the keyword.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from hypothesis import strategies as st

from rxagent.errors import UnsupportedSchemaError as UnsupportedSchemaError
from rxagent.models.base import ToolSchema
from rxagent.testing._strategies_messages import SearchStrategy, json_values, name_args
from rxagent.tools import Tool

__all__ = ["arguments_for_schema", "tool_args"]

_ANNOTATIONS: Final = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)
_ANNOTATIONS_AND_META: Final = _ANNOTATIONS | {"$comment", "$schema", "$id", "$defs", "definitions"}
_BY_TYPE: Final[dict[str, frozenset[str]]] = {
    "string": frozenset({"minLength", "maxLength", "pattern", "format"}),
    "integer": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}),
    "boolean": frozenset(),
    "null": frozenset(),
    "array": frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"}),
    "object": frozenset({"properties", "required", "additionalProperties"}),
}
_FORMATS: Final[dict[str, SearchStrategy[str]]] = {
    "date-time": st.datetimes(timezones=st.just(dt.UTC)).map(lambda d: d.isoformat()),
    "date": st.dates().map(lambda d: d.isoformat()),
    "time": st.times().map(lambda t: t.isoformat()),
    "uuid": st.uuids().map(str),
}
_MAX_ITEMS: Final = 3
_MAX_TEXT: Final = 20


def _at(where: str, part: str) -> str:
    """The path of `part` inside the schema at `where` (`properties.a.items`)."""
    return f"{where}.{part}" if where else part


def _thaw(value: Any) -> Any:
    """Plain dicts and lists from the frozen mappings and tuples a `ToolSchema` holds."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_thaw(v) for v in value]
    return value


class _Drawer:
    """Turns one tool's schema into strategies, resolving `$ref`s against its root."""

    def __init__(self, tool: str, root: dict[str, Any]) -> None:
        self.tool = tool
        self.defs: dict[str, Any] = {**root.get("definitions", {}), **root.get("$defs", {})}
        self.resolving: list[str] = []

    def fail(self, where: str, problem: str) -> UnsupportedSchemaError:
        return UnsupportedSchemaError(
            f"cannot draw arguments for tool {self.tool!r}: {problem} at {where or 'the root'}. "
            "Supported: the JSON types, enum, const, anyOf, oneOf, local $refs, items, "
            "prefixItems, properties, additionalProperties, numeric and length bounds, pattern, "
            "and the formats date-time, date, time and uuid. Give the tool simpler parameter "
            "types, or script its calls with tool_call()."
        )

    def check_keywords(self, schema: dict[str, Any], allowed: frozenset[str], where: str) -> None:
        unknown = sorted(schema.keys() - allowed - _ANNOTATIONS_AND_META - {"type"})
        if unknown:
            raise self.fail(where, f"the keyword {unknown[0]!r} is not supported")

    def value(self, schema: Any, where: str) -> SearchStrategy[Any]:
        if schema is True or schema == {}:
            return json_values()
        if not isinstance(schema, dict):
            raise self.fail(where, f"the schema {schema!r} is not an object")
        for keyword, combine in (("$ref", self.ref), ("allOf", self.all_of)):
            if keyword in schema:
                self.check_keywords(schema, frozenset({keyword}), where)
                return combine(schema[keyword], where)
        if "enum" in schema:
            self.check_keywords(schema, frozenset({"enum"}), where)
            return st.sampled_from(schema["enum"])
        if "const" in schema:
            self.check_keywords(schema, frozenset({"const"}), where)
            return st.just(schema["const"])
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                self.check_keywords(schema, frozenset({keyword}), where)
                options = schema[keyword]
                return st.one_of(
                    *(self.value(s, _at(where, f"{keyword}[{i}]")) for i, s in enumerate(options))
                )
        kind = schema.get("type")
        if kind is None:
            self.check_keywords(schema, frozenset(), where)
            return json_values()
        if isinstance(kind, list):
            allowed = frozenset().union(*(_BY_TYPE.get(k, frozenset()) for k in kind))
            self.check_keywords(schema, allowed, where)
            return st.one_of(*(self.typed({**schema, "type": k}, where, check=False) for k in kind))
        return self.typed(schema, where)

    def ref(self, ref: str, where: str) -> SearchStrategy[Any]:
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith(("#/$defs/", "#/definitions/")) or name not in self.defs:
            raise self.fail(where, f"the $ref {ref!r} does not point into $defs")
        if name in self.resolving:
            raise self.fail(where, f"the $ref {ref!r} is recursive")
        self.resolving.append(name)
        try:
            return self.value(self.defs[name], f"$defs.{name}")
        finally:
            self.resolving.pop()

    def all_of(self, parts: Sequence[Any], where: str) -> SearchStrategy[Any]:
        if len(parts) != 1:  # pydantic wraps a lone $ref in allOf; anything more is an intersection
            raise self.fail(where, "allOf with more than one schema is not supported")
        return self.value(parts[0], _at(where, "allOf[0]"))

    def typed(
        self, schema: dict[str, Any], where: str, *, check: bool = True
    ) -> SearchStrategy[Any]:
        kind = schema["type"]
        if kind not in _BY_TYPE:
            raise self.fail(where, f"the type {kind!r} is not a JSON Schema type")
        if check:  # a list of types was checked against all of them at once
            self.check_keywords(schema, _BY_TYPE[kind], where)
        if kind == "string":
            return self.string(schema, where)
        if kind in ("integer", "number"):
            return self.number(schema, kind)
        if kind == "array":
            return self.array(schema, where)
        if kind == "object":
            return self.object(schema, where)
        return st.booleans() if kind == "boolean" else st.none()

    def string(self, schema: dict[str, Any], where: str) -> SearchStrategy[str]:
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        fmt = schema.get("format")
        if fmt is not None:
            if fmt not in _FORMATS:
                raise self.fail(where, f"the string format {fmt!r} is not supported")
            return _FORMATS[fmt]
        if "pattern" in schema:
            matching = st.from_regex(schema["pattern"], fullmatch=True)
            return matching.filter(lambda s: low <= len(s) <= (len(s) if high is None else high))
        return st.text(min_size=low, max_size=max(low, _MAX_TEXT) if high is None else high)

    @staticmethod
    def number(schema: dict[str, Any], kind: str) -> SearchStrategy[Any]:
        low, high = schema.get("minimum"), schema.get("maximum")
        if kind == "integer":
            if "exclusiveMinimum" in schema:
                low = math.floor(schema["exclusiveMinimum"]) + 1
            elif low is not None:
                low = math.ceil(low)
            if "exclusiveMaximum" in schema:
                high = math.ceil(schema["exclusiveMaximum"]) - 1
            elif high is not None:
                high = math.floor(high)
            return st.integers(min_value=low, max_value=high)
        return st.floats(
            min_value=schema.get("exclusiveMinimum", low),
            max_value=schema.get("exclusiveMaximum", high),
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
            allow_nan=False,
            allow_infinity=False,
        )

    def array(self, schema: dict[str, Any], where: str) -> SearchStrategy[list[Any]]:
        prefix = schema.get("prefixItems")
        if prefix is not None:  # a tuple: these items, and no more (pydantic sets maxItems)
            parts = [self.value(s, _at(where, f"prefixItems[{i}]")) for i, s in enumerate(prefix)]
            return st.tuples(*parts).map(list)
        items = self.value(schema.get("items", {}), _at(where, "items"))
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", max(low, _MAX_ITEMS))
        if schema.get("uniqueItems"):
            return st.lists(items, min_size=low, max_size=high, unique_by=repr)
        return st.lists(items, min_size=low, max_size=high)

    def object(self, schema: dict[str, Any], where: str) -> SearchStrategy[dict[str, Any]]:
        properties: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        missing = sorted(required - properties.keys())
        if missing:
            raise self.fail(where, f"the required property {missing[0]!r} has no schema")
        drawn = {n: self.value(s, _at(where, f"properties.{n}")) for n, s in properties.items()}
        fixed = st.fixed_dictionaries(
            {n: s for n, s in drawn.items() if n in required},
            optional={n: s for n, s in drawn.items() if n not in required},
        )
        extra = schema.get("additionalProperties", False)
        if extra is False or properties:  # a model: its own fields only
            return fixed
        values = self.value(extra, _at(where, "additionalProperties"))
        return st.dictionaries(st.text(max_size=10), values, max_size=_MAX_ITEMS)


def arguments_for_schema(
    tool: str, parameters: Mapping[str, Any]
) -> SearchStrategy[dict[str, Any]]:
    """Draw argument objects valid under `parameters`, the JSON schema of tool `tool`'s arguments.

    Raises:
        UnsupportedSchemaError: When the schema is not an object schema or uses a keyword outside
            the supported subset (see the module docstring).
    """
    root: dict[str, Any] = _thaw(parameters)
    drawer = _Drawer(tool, root)
    if root.get("type") != "object":
        raise drawer.fail("", "the arguments' schema is not of type 'object'")
    strategy: SearchStrategy[dict[str, Any]] = drawer.typed(root, "")
    return strategy


def tool_args(tool: str | Tool[..., Any] | ToolSchema) -> SearchStrategy[dict[str, Any]]:
    """Draw arguments for a tool: a name from the kit's defaults, or your own tool's schema.

    - `"add"` gets ints `a`, `b` (from -1000 to 1000) and `"echo"` gets `text` (the tools in
      `rxagent.testing.tools`); any other name gets one JSON `value`.
    - A `Tool` (from `@tool`) or a `ToolSchema` gets objects valid under its JSON schema: the
      schemas `@tool` builds from typed signatures are covered (see `UnsupportedSchemaError`).

    Raises:
        UnsupportedSchemaError: When the tool's schema uses JSON Schema outside that subset.
        TypeError: For anything that is not a name, a `Tool` or a `ToolSchema`.

    Example:
        ```python
        from typing import Literal

        from hypothesis import given, settings
        from rxagent import tool
        from rxagent.testing.strategies import tool_args


        @tool
        def search(query: str, limit: int = 5, mode: Literal["web", "news"] = "web") -> str:
            \"\"\"Search.\"\"\"
            return query


        @settings(max_examples=10)
        @given(tool_args("add"), tool_args(search))
        def test_args(add_args, search_args) -> None:
            assert set(add_args) == {"a", "b"}
            assert "query" in search_args and set(search_args) <= {"query", "limit", "mode"}
            search.fn(**search_args)  # valid arguments for the function


        test_args()
        ```
    """
    if isinstance(tool, str):
        return name_args(tool)
    schema = tool.schema if isinstance(tool, Tool) else tool
    if not isinstance(schema, ToolSchema):
        raise TypeError(
            f"tool_args() takes a tool name, a Tool (from @tool) or a ToolSchema; got {tool!r}"
        )
    return arguments_for_schema(schema.name, schema.parameters)
