"""From a typed function and its Google-style docstring to a JSON schema and an argument binder.

Everything here runs once, when a tool is defined: the docstring is parsed, each parameter is
classified (an argument the model sends, or a value injected at call time), and one pydantic model
is built for the arguments. At call time `ArgumentBinder.bind` only validates and looks up
injections.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
import warnings
from types import MappingProxyType
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.errors import PydanticUserError
from pydantic.fields import FieldInfo
from pydantic.json_schema import PydanticJsonSchemaWarning

from rxagent.context import NOT_FOUND
from rxagent.errors import ToolDefinitionError
from rxagent.tools._inject import (
    _MissingInjection,
    find_injection,
    has_json_schema,
    injection_key,
    missing_injection_message,
)

if typing.TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

__all__ = ["ArgumentBinder", "build_binder", "parse_docstring"]

_ARG_SECTIONS: Final = frozenset(
    {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
)
_SECTIONS: Final = _ARG_SECTIONS | {
    "attributes",
    "example",
    "examples",
    "note",
    "notes",
    "raises",
    "references",
    "returns",
    "return",
    "see also",
    "todo",
    "warning",
    "warnings",
    "warns",
    "yields",
    "yield",
}
_HEADER: Final = re.compile(r"([A-Za-z][A-Za-z ]*):\s*")
_ENTRY: Final = re.compile(r"\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:(.*)")
_NO_DEFAULT: Final = inspect.Parameter.empty
_NO_PRESET: Final = object()
# Schema keys whose values are maps of names (or plain data), not schemas: never strip them.
_NAME_MAPS: Final = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_DATA_KEYS: Final = frozenset({"default", "const", "enum", "examples"})


# --- docstrings ---------------------------------------------------------------------------------


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    r"""Split a Google-style docstring into the description and the parameter descriptions.

    The description is the docstring without its `Args:` section (also spelt `Arguments:`,
    `Parameters:` or `Keyword Args:`); other sections such as `Returns:` are kept, since they
    tell the model what comes back.

    Example:
        ```python
        from rxagent.tools._schema import parse_docstring

        doc = (
            "Search the web.\n\n"
            "Args:\n"
            "    query: What to look for.\n"
            "    limit (int): At most\n"
            "        this many results.\n"
        )
        assert parse_docstring(doc) == (
            "Search the web.",
            {"query": "What to look for.", "limit": "At most this many results."},
        )
        ```
    """
    if not doc:
        return "", {}
    kept: list[str] = []
    params: dict[str, str] = {}
    in_args = in_fence = False
    entry_indent: int | None = None
    current: str | None = None
    for line in inspect.cleandoc(doc).splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")) and not in_args:
            in_fence = not in_fence
        header = None if in_fence or line[:1].isspace() else _HEADER.fullmatch(line)
        if header is not None and header.group(1).lower() in _SECTIONS:
            in_args = header.group(1).lower() in _ARG_SECTIONS
            entry_indent, current = None, None
        elif in_args and stripped and not line[:1].isspace():
            in_args = False  # a dedented line ends the section
        if not in_args:
            kept.append(line)
            continue
        if header is not None or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        entry_indent = indent if entry_indent is None else entry_indent
        entry = _ENTRY.fullmatch(stripped) if indent <= entry_indent else None
        if entry is not None:
            current = entry.group(1)
            params[current] = entry.group(2).strip()
        elif current is not None:
            params[current] = f"{params[current]} {stripped}".strip()
    return "\n".join(kept).strip(), params


# --- parameters ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class _Slot:
    """How one parameter gets its value at call time."""

    name: str
    field: str | None  # the argument model's field, or None when injected or preset
    inject: type[Any] | None  # the injection key, or None for an argument
    default: Any  # the Python default, or inspect.Parameter.empty
    positional: bool  # positional-only: passed by position
    preset: Any = _NO_PRESET  # the hidden preset value, if any


@typing.final
class ArgumentBinder:
    """Validates a model's arguments and binds them, with injections, to a function's parameters.

    Built once per tool by `build_binder`; `bind` is the per-call hot path.
    """

    __slots__ = ("injected", "model", "parameters", "slots", "visible")

    def __init__(
        self,
        model: type[BaseModel],
        parameters: dict[str, Any],
        slots: tuple[_Slot, ...],
        visible: frozenset[str] = frozenset(),
    ) -> None:
        self.model = model
        self.visible = visible  # preset names kept in the schema
        self.parameters = parameters
        self.slots = slots
        self.injected: Mapping[str, type[Any]] = MappingProxyType(
            {s.name: s.inject for s in slots if s.inject is not None}
        )

    def bind(
        self, arguments: dict[str, Any], inject: Mapping[type[Any], object]
    ) -> tuple[list[Any], dict[str, Any]]:
        """Return `(args, kwargs)` for the function.

        Raises:
            pydantic.ValidationError: When the arguments do not match the schema.
            _MissingInjection: When an injected parameter without a default has no value.
        """
        values = self.model.model_validate(arguments).__dict__
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for slot in self.slots:
            # Priority: model argument > preset > injected. A visible preset is the field's default
            # (the model may override it); hidden presets and injected names are not in the
            # schema and extra arguments are refused, so the model cannot override those.
            if slot.field is not None:
                value = values[slot.field]
            elif slot.preset is not _NO_PRESET:
                value = slot.preset
            else:
                assert slot.inject is not None
                value = find_injection(slot.inject, inject)
                if value is NOT_FOUND:
                    if slot.default is _NO_DEFAULT:
                        raise _MissingInjection(missing_injection_message(slot.name, slot.inject))
                    if not slot.positional:
                        continue  # leave it to the Python default
                    value = slot.default
            if slot.positional:
                args.append(value)
            else:
                kwargs[slot.name] = value
        return args, kwargs


# --- building a binder -----------------------------------------------------------------------


def _check_kind(tool: str, param: inspect.Parameter) -> None:
    if param.kind is inspect.Parameter.VAR_POSITIONAL:
        raise ToolDefinitionError(
            f"tool '{tool}': *{param.name} is not supported, because the model sends arguments "
            "as one JSON object of named fields; declare each argument as a named, typed parameter"
        )
    if param.kind is inspect.Parameter.VAR_KEYWORD:
        raise ToolDefinitionError(
            f"tool '{tool}': **{param.name} is not supported, because the JSON schema must list "
            "every argument the model may send; declare each argument as a named, typed parameter"
        )
    if isinstance(param.default, FieldInfo):
        raise ToolDefinitionError(
            f"tool '{tool}': parameter '{param.name}' has a pydantic Field(...) as its default; "
            f"put the constraints in the annotation instead, e.g. "
            f"`{param.name}: Annotated[int, Field(ge=1)] = 10`"
        )


def _type_hints(
    tool: str, fn: Callable[..., Any], params: list[inspect.Parameter]
) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except NameError:
        pass
    try:  # the return annotation is not needed (`-> AsyncIterator[str]` under TYPE_CHECKING)
        return typing.get_type_hints(_Parameters(fn), include_extras=True)
    except NameError as exc:
        missing = getattr(exc, "name", None) or str(exc)
        where = next((p.name for p in params if missing in str(p.annotation)), None)
        subject = f"the annotation of parameter '{where}'" if where else "an annotation"
        raise ToolDefinitionError(
            f"tool '{tool}': cannot resolve {subject} ({exc}); define or import "
            f"'{missing}' at module level, not inside a function or under TYPE_CHECKING"
        ) from exc


class _Parameters:
    """A function's parameter annotations without its return annotation, for get_type_hints."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        annotations = getattr(fn, "__annotations__", None) or {}
        self.__annotations__ = {k: v for k, v in annotations.items() if k != "return"}
        self.__globals__ = getattr(inspect.unwrap(fn), "__globals__", {})


def _untyped(tool: str, param: inspect.Parameter) -> ToolDefinitionError:
    if param.name in ("self", "cls"):
        return ToolDefinitionError(
            f"tool '{tool}': parameter '{param.name}' has no type annotation; this looks like a "
            f"method: decorate a plain function, or make a tool from the bound method, "
            f"e.g. `tool(obj.{tool})`"
        )
    return ToolDefinitionError(
        f"tool '{tool}': parameter '{param.name}' has no type annotation; annotate it, "
        f"e.g. `{param.name}: str`"
    )


def build_binder(
    tool: str,
    fn: Callable[..., Any],
    hints_from: Callable[..., Any],
    docs: Mapping[str, str],
    preset: Mapping[str, Any] = MappingProxyType({}),
    *,
    visible: Collection[str] = (),
) -> ArgumentBinder:
    """Classify `fn`'s parameters, build the argument model and its JSON schema.

    Args:
        tool: The tool's name, for error messages.
        fn: The callable whose signature is used.
        hints_from: The function to read type hints from (differs from `fn` for partials).
        docs: Parameter descriptions from the docstring.
        preset: Values for parameters, by name: hidden from the schema, or (named in
            `visible`) the default of an argument the model may override.
        visible: Preset arguments kept in the schema, with the preset value as the default.

    Raises:
        ToolDefinitionError: For a parameter that cannot become an argument or an injection,
            or a preset for a parameter `fn` does not have.
    """
    params = list(inspect.signature(fn).parameters.values())
    for param in params:
        _check_kind(tool, param)
    _check_preset(tool, params, preset)
    hints = _type_hints(tool, hints_from, params)
    taken = {p.name for p in params}
    fields: dict[str, Any] = {}
    annotations: dict[str, Any] = {}
    slots: list[_Slot] = []
    for index, param in enumerate(params):
        if param.name not in hints:
            raise _untyped(tool, param)
        annotation = hints[param.name]
        positional = param.kind is inspect.Parameter.POSITIONAL_ONLY
        try:
            key = injection_key(tool, param.name, annotation)
        except PydanticUserError as exc:  # e.g. typing.TypedDict on Python < 3.12
            problem = str(getattr(exc, "message", exc))
            raise _parameter_error(tool, param.name, annotation, problem) from exc
        if param.name in preset and (key is not None or param.name not in visible):
            value = preset[param.name]
            slots.append(_Slot(param.name, None, key, param.default, positional, value))
            continue
        if key is not None:
            slots.append(_Slot(param.name, None, key, param.default, positional))
            continue
        field = param.name
        extra: dict[str, Any] = {}
        if field.startswith("_") or hasattr(BaseModel, field):
            field = _free_name(index, taken)  # e.g. `json` or `schema` would shadow BaseModel
            extra["alias"] = param.name
        if param.name in docs:
            extra["description"] = docs[param.name]
        default = ... if param.default is _NO_DEFAULT else param.default
        default = preset.get(param.name, default)
        fields[field] = (annotation, Field(default, **extra))
        annotations[param.name] = annotation
        slots.append(_Slot(param.name, field, None, param.default, positional))
    model = _create_model(tool, fields, annotations)
    parameters = _parameters_schema(tool, model, annotations)
    return ArgumentBinder(model, parameters, tuple(slots), frozenset(visible) & set(preset))


def _check_preset(tool: str, params: list[inspect.Parameter], preset: Mapping[str, Any]) -> None:
    names = [p.name for p in params]
    unknown = [name for name in preset if name not in names]
    if unknown:
        raise ToolDefinitionError(
            f"tool '{tool}' has no parameter {', '.join(map(repr, unknown))} to preset; "
            f"its parameters: {', '.join(names) or 'none'}"
        )


def _free_name(index: int, taken: set[str]) -> str:
    name = f"arg{index}"
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _create_model(
    tool: str, fields: dict[str, Any], annotations: Mapping[str, Any]
) -> type[BaseModel]:
    config = ConfigDict(extra="forbid", protected_namespaces=(), title=f"{tool} arguments")
    try:
        return create_model(f"{tool}_arguments", __config__=config, **fields)
    except PydanticUserError as exc:
        raise _schema_error(tool, annotations, exc) from exc


def _parameters_schema(
    tool: str, model: type[BaseModel], annotations: Mapping[str, Any]
) -> dict[str, Any]:
    try:
        with warnings.catch_warnings():
            # A default that is not JSON (say, a sentinel) is left out of the schema: that's fine.
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            raw = model.model_json_schema()
    except PydanticUserError as exc:
        raise _schema_error(tool, annotations, exc) from exc
    schema: dict[str, Any] = {
        "type": "object",
        "properties": _strip_titles(raw.get("properties", {}), names=True),
        "required": list(raw.get("required", ())),
    }
    if raw.get("additionalProperties") is False:
        schema["additionalProperties"] = False
    if "$defs" in raw:
        schema["$defs"] = _strip_titles(raw["$defs"], names=True)
    return schema


def _schema_error(
    tool: str, annotations: Mapping[str, Any], exc: PydanticUserError
) -> ToolDefinitionError:
    for name, annotation in annotations.items():
        problem = _schema_problem(annotation)
        if problem is not None:
            return _parameter_error(tool, name, annotation, problem)
    return ToolDefinitionError(f"tool '{tool}': its arguments have no JSON schema: {exc}")


def _schema_problem(annotation: object) -> str | None:
    """Say why `annotation` cannot be an argument, or return None when it can."""
    try:
        if has_json_schema(annotation):
            return None
    except PydanticUserError as exc:
        return str(getattr(exc, "message", exc))
    return (
        "which pydantic cannot describe as JSON schema; use JSON-compatible types (str, int, "
        "list[...], a BaseModel, ...), or annotate it `Injected[...]` if its value should come "
        "from deps"
    )


def _parameter_error(
    tool: str, param: str, annotation: object, problem: str
) -> ToolDefinitionError:
    shown = getattr(annotation, "__name__", None) or repr(annotation)
    if typing.get_args(annotation):  # a generic alias such as list[Database]: show it whole
        shown = repr(annotation).replace("typing.", "")
    return ToolDefinitionError(f"tool '{tool}': parameter '{param}' has type {shown}, {problem}")


def _strip_titles(node: Any, *, names: bool = False) -> Any:
    """Return a copy of a JSON schema without pydantic's generated `title` keys.

    `names` is True when `node` maps names to schemas (`properties`, `$defs`): its keys are kept,
    even one called `title`.
    """
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    if names:
        return {key: _strip_titles(value) for key, value in node.items()}
    stripped: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _DATA_KEYS:
            stripped[key] = value
        else:
            stripped[key] = _strip_titles(value, names=key in _NAME_MAPS)
    return stripped
