"""@tool: JSON schema from signatures and docstrings, and definition errors."""

from __future__ import annotations

import dataclasses
import enum
import functools
import sys
import typing
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict as TypedDictForPydantic

from rxagent.errors import ToolDefinitionError
from rxagent.models.base import ToolSchema
from rxagent.tools import Injected, Tool, tool
from rxagent.tools._schema import parse_docstring

if typing.TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(BaseModel):
    x: int
    title: str = "origin"


@dataclasses.dataclass
class Box:
    width: int
    height: int


class Filters(TypedDictForPydantic):
    lang: str
    year: int


class Database:
    """A plain class pydantic has no schema for: injected by type."""


def _keys_anywhere(node: Any) -> set[str]:
    """Every dict key in a JSON structure, except property names under `properties`."""
    keys: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            keys.add(key)
            if key == "properties":
                for prop in value.values():
                    keys |= _keys_anywhere(prop)
            else:
                keys |= _keys_anywhere(value)
    elif isinstance(node, list | tuple):
        for item in node:
            keys |= _keys_anywhere(item)
    return keys


@tool
def search(query: str, limit: int = 10, lang: Literal["en", "fr"] = "en") -> list[str]:
    """Search the web.

    Use it for recent events.

    Args:
        query: What to look for.
        limit: The most results
            to return.
        lang (str): Result language.

    Returns:
        The matching titles.
    """
    return [query] * limit


def test_description_is_docstring_without_args_section() -> None:
    assert search.description == (
        "Search the web.\n\nUse it for recent events.\n\nReturns:\n    The matching titles."
    )
    assert search.schema == ToolSchema(
        name="search", description=search.description, parameters=search.schema.parameters
    )


def test_schema_has_descriptions_required_and_defaults() -> None:
    params = search.schema.parameters
    assert params["type"] == "object"
    assert params["required"] == ("query",)
    assert params["additionalProperties"] is False
    assert params["properties"] == {
        "query": {"type": "string", "description": "What to look for."},
        "limit": {"type": "integer", "default": 10, "description": "The most results to return."},
        "lang": {
            "type": "string",
            "enum": ("en", "fr"),
            "default": "en",
            "description": "Result language.",
        },
    }


def test_schema_without_parameters_is_an_empty_object() -> None:
    @tool
    def now() -> str:
        """Tell the time."""
        return "noon"

    assert dict(now.schema.parameters) == {
        "type": "object",
        "properties": {},
        "required": (),
        "additionalProperties": False,
    }


def test_nested_models_enums_dataclasses_and_typeddicts_use_defs_without_titles() -> None:
    @tool
    def draw(point: Point, color: Color, box: Box, filters: Filters | None = None) -> str:
        """Draw.

        Args:
            point: Where.
            color: Which color.
        """
        return ""

    params = draw.schema.parameters
    assert params["required"] == ("point", "color", "box")
    assert params["properties"]["point"] == {"$ref": "#/$defs/Point", "description": "Where."}
    assert params["properties"]["color"] == {"$ref": "#/$defs/Color", "description": "Which color."}
    assert params["$defs"]["Color"] == {"type": "string", "enum": ("red", "green")}
    # A property that is itself called "title" is kept; pydantic's generated titles are not.
    assert params["$defs"]["Point"]["properties"] == {
        "x": {"type": "integer"},
        "title": {"type": "string", "default": "origin"},
    }
    assert set(params["$defs"]) == {"Point", "Color", "Box", "Filters"}
    assert params["properties"]["filters"]["anyOf"] == (
        {"$ref": "#/$defs/Filters"},
        {"type": "null"},
    )
    assert "title" not in _keys_anywhere(params)


def test_annotated_constraints_reach_the_schema() -> None:
    @tool
    def page(n: Annotated[int, Field(ge=1, le=50)] = 1) -> int:
        """Page."""
        return n

    assert page.schema.parameters["properties"]["n"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 1,
    }


@dataclasses.dataclass
class Settings:
    verbose: bool


def test_injected_parameters_are_left_out_of_the_schema() -> None:
    @tool
    def lookup(key: str, db: Database, settings: Injected[Settings]) -> str:
        """Look up.

        Args:
            key: The key.
            db: Not for the model.
        """
        return key

    assert list(lookup.schema.parameters["properties"]) == ["key"]
    assert lookup.schema.parameters["required"] == ("key",)
    assert dict(lookup.injected) == {"db": Database, "settings": Settings}


def test_parameters_named_like_basemodel_attributes_keep_their_names() -> None:
    @tool
    def shadow(json: str, schema: int, model_config: bool = False) -> str:
        """Shadow BaseModel attribute names."""
        return json

    assert list(shadow.schema.parameters["properties"]) == ["json", "schema", "model_config"]
    assert shadow.schema.parameters["required"] == ("json", "schema")


class Choice(BaseModel):
    default: int
    enum: list[str]


def test_parameters_and_fields_named_like_schema_keywords_are_cleaned_too() -> None:
    @tool
    def pick(default: int, enum: Choice, title: str = "t", examples: bool = False) -> str:
        """Pick."""
        return title

    params = pick.schema.parameters
    assert params["properties"] == {
        "default": {"type": "integer"},
        "enum": {"$ref": "#/$defs/Choice"},
        "title": {"type": "string", "default": "t"},
        "examples": {"type": "boolean", "default": False},
    }
    assert params["$defs"]["Choice"]["properties"] == {
        "default": {"type": "integer"},
        "enum": {"type": "array", "items": {"type": "string"}},
    }


def test_decorator_forms_and_options() -> None:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    bare = tool(add)
    configured = tool(name="plus", description="Adds numbers.", timeout=2)(add)
    assert (bare.name, bare.description, bare.timeout) == ("add", "Add.", None)
    assert (configured.name, configured.description, configured.timeout) == (
        "plus",
        "Adds numbers.",
        2.0,
    )
    assert configured.schema.name == "plus"
    assert configured.schema.description == "Adds numbers."
    assert configured.fn is add
    assert configured.__wrapped__ is add
    assert isinstance(bare, Tool)


def test_calling_a_tool_calls_the_function_directly() -> None:
    calls: list[tuple[int, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        calls.append((a, b))
        return a + b

    assert add(1, b=2) == 3
    assert calls == [(1, 2)]
    # No validation on direct calls: the function is called as is.
    assert add("x", "y") == "xy"  # type: ignore[arg-type,comparison-overlap]


async def test_async_tool_call_returns_the_coroutine() -> None:
    @tool
    async def double(x: int) -> int:
        """Double."""
        return 2 * x

    assert double.is_async
    assert await double(4) == 8


def test_retooling_a_tool_keeps_it_or_applies_new_options() -> None:
    assert tool(search) is search
    renamed = tool(search, name="find")
    assert renamed is not search
    assert renamed.name == "find"
    assert renamed.description == search.description
    assert renamed.schema.parameters == search.schema.parameters


def test_bound_methods_partials_and_callable_objects() -> None:
    class Greeter:
        def greet(self, name: str) -> str:
            """Greet someone."""
            return f"hi {name}"

        def __call__(self, name: str) -> str:
            """Wave at someone."""
            return f"wave {name}"

    def power(base: int, exp: int) -> int:
        """Raise base to exp."""
        return int(base**exp)

    method = tool(Greeter().greet)
    assert (method.name, list(method.schema.parameters["properties"])) == ("greet", ["name"])
    obj = tool(Greeter())
    assert (obj.name, obj.description) == ("Greeter", "Wave at someone.")
    square = tool(functools.partial(power, exp=2), name="square")
    assert square.description == "Raise base to exp."
    assert square.schema.parameters["required"] == ("base",)


# --- definition errors --------------------------------------------------------------------------


def test_untyped_parameter_names_tool_parameter_and_fix() -> None:
    def search(query, limit: int = 3):
        """Search."""

    with pytest.raises(ToolDefinitionError) as info:
        tool(search)
    assert str(info.value) == (
        "tool 'search': parameter 'query' has no type annotation; annotate it, e.g. `query: str`"
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(*items: int) -> None: ...", "tool 'f': *items is not supported, because"),
        ("def f(**options: int) -> None: ...", "tool 'f': **options is not supported, because"),
    ],
)
def test_var_args_are_refused_with_a_reason(source: str, expected: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(ToolDefinitionError) as info:
        tool(namespace["f"])
    assert str(info.value).startswith(expected)
    assert "declare each argument as a named, typed parameter" in str(info.value)


def test_unbound_method_gets_a_hint() -> None:
    class Service:
        def fetch(self, url: str) -> str:
            """Fetch."""
            return url

    with pytest.raises(ToolDefinitionError, match=r"parameter 'self' .* looks like a method"):
        tool(Service.fetch)


def test_type_without_json_schema_inside_a_container_is_refused() -> None:
    def merge(dbs: list[Database]) -> None:
        """Merge."""

    with pytest.raises(ToolDefinitionError) as info:
        tool(merge)
    message = str(info.value)
    assert message.startswith("tool 'merge': parameter 'dbs' has type")
    assert "Injected[...]" in message


class StdlibFilters(typing.TypedDict):
    lang: str


@pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="pydantic accepts typing.TypedDict on 3.12+"
)
def test_pydantic_refusal_names_the_parameter_and_keeps_pydantics_hint() -> None:
    def find(filters: StdlibFilters) -> None:
        """Find."""

    with pytest.raises(ToolDefinitionError) as info:
        tool(find)
    message = str(info.value)
    assert message.startswith("tool 'find': parameter 'filters' has type StdlibFilters, ")
    assert "typing_extensions.TypedDict" in message


def test_unresolvable_annotation_is_explained() -> None:
    class Local(BaseModel):  # under `from __future__ import annotations`, not resolvable
        x: int

    def use(item: Local) -> None:
        """Use."""

    with pytest.raises(ToolDefinitionError) as info:
        tool(use)
    assert "tool 'use': cannot resolve the annotation of parameter 'item'" in str(info.value)
    assert "at module level" in str(info.value)


def test_field_default_is_refused_with_the_annotated_form() -> None:
    def page(n: int = Field(1, ge=1)) -> int:
        """Page."""
        return n

    with pytest.raises(ToolDefinitionError, match=r"Annotated\[int, Field\(ge=1\)\] = 10"):
        tool(page)


def test_injected_needs_a_class() -> None:
    def f(x: Injected[int | str]) -> None:
        """F."""

    with pytest.raises(ToolDefinitionError, match=r"parameter 'x' is Injected\[.*use a class"):
        tool(f)


def test_generators_are_progress_tools_even_with_an_unresolvable_return_annotation() -> None:
    def numbers(n: int) -> Iterator[int]:  # Iterator is only imported for type checking
        """Numbers."""
        yield n

    async def anumbers(n: int) -> AsyncIterator[int]:
        """Numbers."""
        yield n

    for fn in (numbers, anumbers):
        made = tool(fn)
        assert made.is_generator
        assert made.schema.parameters["required"] == ("n",)
    assert tool(anumbers).is_async
    assert not tool(numbers).is_async


@pytest.mark.parametrize("name", ["", "has space", "dotted.name", "x" * 65, "<lambda>"])
def test_invalid_names_are_refused(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match=r"tool name .* is invalid"):
        tool(search.fn, name=name)


def test_lambda_needs_a_name() -> None:
    with pytest.raises(ToolDefinitionError, match=r"pass a valid name with @tool\(name=...\)"):
        tool(lambda: None)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "5"])
def test_invalid_timeouts_are_refused(timeout: Any) -> None:
    with pytest.raises(ToolDefinitionError, match="timeout must be a positive number"):
        tool(search.fn, timeout=timeout)


def test_non_callables_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="@tool decorates a function, got 3"):
        tool(3)  # type: ignore[call-overload]


# --- docstrings ---------------------------------------------------------------------------------


def test_parse_docstring_handles_types_continuations_and_other_sections() -> None:
    doc = """Summary line.

    Body text.

    Arguments:
        a (int): First.
        b: Second,
            continued.

            After a blank line.
        *rest: Ignored form.

    Raises:
        ValueError: Never.
    """
    description, params = parse_docstring(doc)
    assert description == "Summary line.\n\nBody text.\n\nRaises:\n    ValueError: Never."
    assert params == {
        "a": "First.",
        "b": "Second, continued. After a blank line.",
        "rest": "Ignored form.",
    }


def test_parse_docstring_ignores_sections_inside_code_fences() -> None:
    doc = "Run code.\n\n```text\nArgs:\n    x: not a parameter\n```\n"
    assert parse_docstring(doc) == (
        "Run code.\n\n```text\nArgs:\n    x: not a parameter\n```",
        {},
    )


def test_parse_docstring_without_docstring() -> None:
    assert parse_docstring(None) == ("", {})
    assert parse_docstring("") == ("", {})


def test_dedented_text_after_args_section_is_description_again() -> None:
    description, params = parse_docstring("Top.\n\nArgs:\n    x: An x.\nTrailing note.")
    assert params == {"x": "An x."}
    assert description == "Top.\n\nTrailing note."
