"""Arguments of tools whose JSON schema comes from elsewhere (`Tool.from_schema`, MCP servers).

Such a tool's function takes the arguments as one dict. Before it runs, the arguments get a light
check against the schema's top level (required fields, unknown fields when the schema forbids
them, and the JSON type of each known field), so the model reads which fields are wrong; deeper
validation is the function's (or the server's) job.
"""

from __future__ import annotations

import typing
from types import MappingProxyType
from typing import Any, Final

from rxagent.errors import ToolDefinitionError

if typing.TYPE_CHECKING:
    from collections.abc import Collection, Mapping

__all__ = ["SchemaBinder"]

_JSON_TYPES: Final[Mapping[str, type[Any] | tuple[type[Any], ...]]] = MappingProxyType(
    {
        "string": str,
        "integer": int,
        "number": (int, float),
        "boolean": bool,
        "array": list,
        "object": dict,
        "null": type(None),
    }
)


class _InvalidArguments(Exception):
    """The model's arguments do not match the schema; `problems` lists them, one per field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@typing.final
class SchemaBinder:
    """Checks a model's arguments against a JSON schema and passes them to the function as a dict.

    Args:
        tool: The tool's name, for error messages.
        parameters: The JSON schema of the arguments (an object schema).
        preset: Values merged into the arguments; their names leave the schema.
        visible: Preset names kept in the schema: the model may send them, overriding the preset.
    """

    __slots__ = ("injected", "parameters", "preset", "source", "visible")

    def __init__(
        self,
        tool: str,
        parameters: Mapping[str, Any],
        preset: Mapping[str, Any] | None = None,
        *,
        visible: Collection[str] = (),
    ) -> None:
        if not isinstance(parameters, dict | MappingProxyType) or parameters.get(
            "type", "object"
        ) not in ("object", None):
            raise ToolDefinitionError(
                f"tool '{tool}': parameters must be a JSON schema of an object, "
                f'e.g. {{"type": "object", "properties": {{...}}}}, got {parameters!r}'
            )
        self.source: Mapping[str, Any] = parameters
        self.visible = frozenset(visible) & set(preset or ())
        preset = dict(preset or {})
        schema = dict(parameters)
        schema.setdefault("type", "object")
        properties = dict(schema.get("properties") or {})
        unknown = [name for name in preset if name not in properties]
        if unknown and schema.get("additionalProperties") is False:
            raise ToolDefinitionError(
                f"tool '{tool}' has no parameter {', '.join(map(repr, unknown))} to preset; "
                f"its parameters: {', '.join(properties) or 'none'}"
            )
        for name in preset:
            if name in self.visible and name in properties:
                properties[name] = {**properties[name], "default": preset[name]}
            else:
                properties.pop(name, None)
        schema["properties"] = properties
        schema["required"] = [r for r in schema.get("required", ()) if r not in preset]
        self.parameters: dict[str, Any] = schema
        self.preset: Mapping[str, Any] = MappingProxyType(preset)
        self.injected: Mapping[str, type[Any]] = MappingProxyType({})

    def bind(
        self, arguments: dict[str, Any], inject: Mapping[type[Any], object]
    ) -> tuple[list[Any], dict[str, Any]]:
        """Return `([arguments], {})`: the checked arguments with the preset merged in.

        Raises:
            _InvalidArguments: Listing each field that is missing, unknown or of the wrong type.
        """
        del inject  # such tools have no injected parameters
        schema = self.parameters
        properties: Mapping[str, Any] = schema["properties"]
        problems = [
            f"{name}: Field required" for name in schema["required"] if name not in arguments
        ]
        closed = schema.get("additionalProperties") is False
        for name, value in arguments.items():
            prop = properties.get(name)
            if prop is None:
                if closed or name in self.preset:  # a hidden preset is not the model's to send
                    problems.append(f"{name}: Extra inputs are not permitted")
                continue
            expected = _type_problem(prop, value)
            if expected is not None:
                problems.append(f"{name}: {expected}")
        if problems:
            raise _InvalidArguments(problems)
        shown = {k: v for k, v in self.preset.items() if k in self.visible}
        hidden = {k: v for k, v in self.preset.items() if k not in self.visible}
        return [{**shown, **arguments, **hidden}], {}  # the model's argument wins over `shown`


def _type_problem(prop: object, value: object) -> str | None:
    """Say how `value` fails the property's top-level JSON `type`, or None when it fits."""
    if not isinstance(prop, dict):
        return None
    declared = prop.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    kinds = [_JSON_TYPES[n] for n in names if n in _JSON_TYPES]
    if len(kinds) < len(names):
        return None  # a type we do not know: let the tool decide
    for name, kind in zip(names, kinds, strict=True):
        if isinstance(value, bool) and name in ("integer", "number"):
            continue
        if name == "integer" and isinstance(value, float) and value.is_integer():
            return None
        if isinstance(value, kind):
            return None
    return f"Input should be of type {' or '.join(names)}"
