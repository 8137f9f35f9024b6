"""Turn a Python output type into the JSON schema each provider accepts.

`json_schema_for` asks pydantic for the schema of a type. The provider functions rewrite that
schema into the subset a provider accepts; they are pure and never change their input:

- `openai_strict_schema`: OpenAI structured outputs in strict mode (`response_format` with
  `"strict": true`). The root is wrapped in an object when it is not one (see `ProviderSchema`).
- `gemini_schema`: Gemini's `responseJsonSchema` (JSON Schema, `$ref`/`$defs` kept).
- `object_root`: any schema with an object at the root, for tool parameters.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, final

from pydantic import TypeAdapter
from pydantic.errors import PydanticUserError

from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "GEMINI_KEYWORDS",
    "WRAPPED_VALUE_KEY",
    "ProviderSchema",
    "gemini_schema",
    "json_schema_for",
    "object_root",
    "openai_strict_schema",
]

WRAPPED_VALUE_KEY: Final = "value"
"""The property that holds a non-object output inside the object OpenAI requires at the root."""

# Keywords whose value is one subschema, a list of subschemas, or a name -> subschema mapping.
# Walking only these keeps a property *named* e.g. "default" from being taken for a keyword.
_SUBSCHEMA_KEYS: Final = ("items", "additionalProperties", "not", "contains")
_SUBSCHEMA_LIST_KEYS: Final = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAP_KEYS: Final = ("properties", "$defs", "definitions", "patternProperties")

# Not accepted in OpenAI strict mode, per OpenAI's structured-outputs guide ("Supported schemas"):
# `default` and `discriminator` are not JSON Schema keywords OpenAI lists; the rest are listed as
# unsupported object / array keywords.
_OPENAI_DROPPED_KEYS: Final = frozenset(
    {
        "$schema",
        "default",
        "discriminator",
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
    }
)
# The string formats OpenAI strict mode documents; pydantic also emits e.g. "uri" and "binary".
_OPENAI_STRING_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
GEMINI_KEYWORDS: Final = frozenset(
    {
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
    }
)
"""The keywords Gemini's `responseJsonSchema` supports, as the google-genai SDK documents them
(`GenerateContentConfig.response_json_schema`); `gemini_schema` drops every other one."""


@final
@dataclass(frozen=True, slots=True)
class ProviderSchema:
    """A provider-ready JSON schema, and whether the output was wrapped to fit it.

    Example:
        ```python
        from rxagent.output._schema import ProviderSchema

        ps = ProviderSchema(schema={"type": "object"}, wrapped=False)
        assert ps.unwrap({"a": 1}) == {"a": 1}
        wrapped = ProviderSchema(schema={"type": "object"}, wrapped=True)
        assert wrapped.unwrap({"value": [1, 2]}) == [1, 2]
        ```
    """

    schema: dict[str, Any]
    """The schema to send to the provider."""
    wrapped: bool
    """`True` when the output sits under `WRAPPED_VALUE_KEY` of an object the provider returns."""

    def unwrap(self, data: Any) -> Any:
        """Return the output from decoded provider JSON, taking it out of the wrapper if any.

        Args:
            data: The JSON the provider returned, already decoded.

        Returns:
            `data[WRAPPED_VALUE_KEY]` when `wrapped`, else `data` unchanged.

        Raises:
            ValueError: `wrapped` is set but `data` is not an object holding the value.

        Example:
            ```python
            from rxagent.output._schema import json_schema_for, openai_strict_schema

            ps = openai_strict_schema(json_schema_for(list[int]))
            assert ps.wrapped
            assert ps.unwrap({"value": [3]}) == [3]
            ```
        """
        if not self.wrapped:
            return data
        if not isinstance(data, dict) or WRAPPED_VALUE_KEY not in data:
            raise ValueError(f"expected an object with a {WRAPPED_VALUE_KEY!r} key, got {data!r}")
        return data[WRAPPED_VALUE_KEY]


def json_schema_for(tp: Any) -> dict[str, Any]:
    """Return the JSON schema pydantic builds to validate values of `tp`.

    Works for pydantic models, dataclasses, TypedDicts, `list[...]`, unions and scalars.

    Args:
        tp: The output type.

    Returns:
        A fresh JSON schema (validation mode), with shared definitions under `$defs`.

    Raises:
        ConfigurationError: `tp` has no JSON schema, e.g. a plain class or a callable type.

    Example:
        ```python
        from pydantic import BaseModel

        from rxagent.errors import ConfigurationError
        from rxagent.output._schema import json_schema_for


        class City(BaseModel):
            name: str


        assert json_schema_for(City)["required"] == ["name"]
        assert json_schema_for(list[int]) == {"type": "array", "items": {"type": "integer"}}
        class Plain:
            pass


        try:
            json_schema_for(Plain)
        except ConfigurationError as exc:
            assert "Plain" in str(exc)
        else:
            raise AssertionError("expected ConfigurationError")
        ```
    """
    try:
        return TypeAdapter(tp).json_schema()
    except (PydanticUserError, TypeError) as exc:
        raise ConfigurationError(
            f"output type {tp!r} cannot be described as a JSON schema ({exc.__class__.__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}); use a pydantic model, dataclass, "
            "TypedDict, or a list/union/Literal of JSON-compatible types instead"
        ) from exc


def openai_strict_schema(schema: dict[str, Any]) -> ProviderSchema:
    """Rewrite a JSON schema for OpenAI structured outputs in strict mode.

    The rules applied, following OpenAI's "Supported schemas" guide:

    - every object gets `additionalProperties: false` and lists all its properties in
      `required`; a property that was optional becomes nullable (`null` is added to it), so the
      model sends `null` where it would have left the property out;
    - `default`, `discriminator` and the keywords OpenAI lists as unsupported are dropped, as are
      string `format`s it does not list; `oneOf` becomes `anyOf`, `const` becomes a one-value
      `enum`, and a `$ref` with sibling keywords moves into a one-branch `anyOf`;
    - `$defs` and `$ref` are kept (a root `$ref` is inlined, since the root must be an object);
    - the root must be an object: any other root is wrapped as
      `{"type": "object", "properties": {"value": ...}, "required": ["value"],
      "additionalProperties": false}` and `ProviderSchema.wrapped` is set, so callers take the
      output out with `ProviderSchema.unwrap`.

    A property that was optional and whose type does not allow `None` (e.g. `x: int = 5`) can
    come back as `null`; drop such `null`s before validating so the default applies.

    Args:
        schema: A JSON schema, e.g. from `json_schema_for`. It is not modified.

    Returns:
        The strict schema and whether the root was wrapped.

    Raises:
        ConfigurationError: The schema has a free-form mapping (`dict[str, X]`), which strict
            mode cannot express.

    Example:
        ```python
        from pydantic import BaseModel

        from rxagent.output._schema import json_schema_for, openai_strict_schema


        class Answer(BaseModel):
            text: str
            score: float | None = None


        ps = openai_strict_schema(json_schema_for(Answer))
        assert not ps.wrapped
        assert ps.schema["additionalProperties"] is False
        assert ps.schema["required"] == ["text", "score"]
        assert "default" not in ps.schema["properties"]["score"]
        assert openai_strict_schema(json_schema_for(int)).wrapped
        ```
    """
    result = _inline_root_ref(copy.deepcopy(schema))
    wrapped = not _is_object(result)
    if wrapped:
        result = _wrap(result)
    _walk(result, _openai_node, path="#")
    return ProviderSchema(schema=result, wrapped=wrapped)


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a JSON schema for Gemini's `generationConfig.responseJsonSchema`.

    Gemini takes JSON Schema there (and in `parametersJsonSchema`), `$ref`/`$defs` and a
    non-object root included, but only the keywords in `GEMINI_KEYWORDS`. The rewrite follows the
    rules the google-genai SDK documents:

    - `const` becomes a one-value `enum`, `oneOf` becomes `anyOf` (pydantic's discriminated
      unions have disjoint branches, so the meaning is the same);
    - `enum` is kept only when every value is a string or a number (the documented kinds);
    - a `$ref` takes no sibling keywords but `$`-ones: the siblings stay and the reference moves
      into a one-branch `anyOf`;
    - every other keyword is dropped (`default`, `discriminator`, `minLength`, `pattern`,
      `exclusiveMinimum`, `uniqueItems`, ...): they only narrow what the output may be, and the
      answer is validated against the full type anyway.

    Args:
        schema: A JSON schema, e.g. from `json_schema_for`. It is not modified.

    Returns:
        The rewritten schema.

    Example:
        ```python
        from typing import Literal

        from rxagent.output._schema import gemini_schema, json_schema_for

        schema = gemini_schema(json_schema_for(Literal["yes"]))
        assert schema == {"enum": ["yes"], "type": "string"}
        ```
    """
    result = copy.deepcopy(schema)
    _walk(result, _gemini_node, path="#")
    return result


def object_root(schema: dict[str, Any]) -> ProviderSchema:
    """Return `schema` with an object at its root, as tool parameters need.

    A root `$ref` is inlined; any other non-object root is wrapped in
    `{"type": "object", "properties": {"value": ...}, "required": ["value"]}` (its `$defs` move to
    the wrapper) and `ProviderSchema.wrapped` is set. Nothing else changes.

    Args:
        schema: A JSON schema. It is not modified.

    Returns:
        The schema, an object at the root, and whether it was wrapped.

    Example:
        ```python
        from rxagent.output._schema import json_schema_for, object_root

        ps = object_root(json_schema_for(list[int]))
        assert ps.wrapped and ps.schema["required"] == ["value"]
        assert not object_root({"type": "object", "properties": {}}).wrapped
        ```
    """
    result = _inline_root_ref(copy.deepcopy(schema))
    wrapped = not _is_object(result)
    if wrapped:
        result = _wrap(result)
    return ProviderSchema(schema=result, wrapped=wrapped)


def _inline_root_ref(result: dict[str, Any]) -> dict[str, Any]:
    """The root must be an object itself, not a reference to one (recursive models have one)."""
    root_ref = result.get("$ref")
    if isinstance(root_ref, str) and root_ref.startswith("#/$defs/"):
        target = result.get("$defs", {}).get(root_ref.removeprefix("#/$defs/"), {})
        del result["$ref"]
        result = {**copy.deepcopy(target), **result}
    return result


def _wrap(result: dict[str, Any]) -> dict[str, Any]:
    hoisted = result.pop("$defs", None)
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {WRAPPED_VALUE_KEY: result},
        "required": [WRAPPED_VALUE_KEY],
        "additionalProperties": False,
    }
    if hoisted is not None:
        wrapper["$defs"] = hoisted
    return wrapper


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def _admits_null(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "enum" in node:
        return None in node["enum"]
    if "const" in node:
        return node["const"] is None
    return any(_admits_null(branch) for branch in node.get("anyOf", ()))


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if _admits_null(node):
        return node
    if isinstance(node.get("anyOf"), list):
        node["anyOf"].append({"type": "null"})
        return node
    outer: dict[str, Any] = {k: node.pop(k) for k in ("title", "description") if k in node}
    return {"anyOf": [node, {"type": "null"}], **outer}


def _walk(node: Any, visit: Callable[[dict[str, Any], str], None], path: str) -> None:
    """Call `visit(node, path)` on `node`, then on every subschema below it (depth first)."""
    if not isinstance(node, dict):
        return
    visit(node, path)
    for key in _SUBSCHEMA_KEYS:
        _walk(node.get(key), visit, f"{path}/{key}")
    for key in _SUBSCHEMA_LIST_KEYS:
        for index, child in enumerate(node.get(key, ())):
            _walk(child, visit, f"{path}/{key}/{index}")
    for key in _SUBSCHEMA_MAP_KEYS:
        children = node.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                _walk(child, visit, f"{path}/{key}/{name}")


def _common_rewrites(node: dict[str, Any], dropped: frozenset[str]) -> None:
    for key in dropped & node.keys():
        del node[key]
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf") + node.get("anyOf", [])
    if "const" in node:
        value = node.pop("const")
        node.setdefault("enum", [value])


def _gemini_node(node: dict[str, Any], path: str) -> None:
    del path
    _common_rewrites(node, frozenset(node.keys() - GEMINI_KEYWORDS - {"const"}))
    enum = node.get("enum")
    if isinstance(enum, list) and not all(_gemini_enum_value(v) for v in enum):
        del node["enum"]
    if "$ref" in node and any(not key.startswith("$") for key in node):
        node["anyOf"] = [{"$ref": node.pop("$ref")}, *node.get("anyOf", [])]


def _gemini_enum_value(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _openai_node(node: dict[str, Any], path: str) -> None:
    _common_rewrites(node, _OPENAI_DROPPED_KEYS)
    if node.get("format") not in (None, *_OPENAI_STRING_FORMATS):
        del node["format"]
    if "$ref" in node and len(node) > 1:
        # strict mode rejects siblings next to `$ref` but accepts them next to `anyOf`
        node["anyOf"] = [{"$ref": node.pop("$ref")}, *node.get("anyOf", [])]
    if not _is_object(node):
        return
    properties: dict[str, Any] = node.setdefault("properties", {})
    extra = node.get("additionalProperties", False)
    if isinstance(extra, dict) or (not properties and extra is not False):
        raise ConfigurationError(
            f"the output schema has a free-form mapping at {path} (e.g. `dict[str, X]`), which "
            "OpenAI strict mode cannot express; use a model with named fields, or a list of "
            "key/value models, instead"
        )
    required = set(node.get("required", ()))
    for name in list(properties):
        if name not in required:
            properties[name] = _nullable(properties[name])
    node["required"] = list(properties)
    node["additionalProperties"] = False
