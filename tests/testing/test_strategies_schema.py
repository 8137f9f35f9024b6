"""Arguments drawn from a tool's JSON schema: valid for the tool, or a clear error."""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import json
import uuid
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given
from pydantic import BaseModel, Field

from rxagent import ReActAgent, ToolUseBlock
from rxagent.models import ToolSchema
from rxagent.testing import ScriptedModel, assert_event_protocol
from rxagent.testing import strategies as rst
from rxagent.testing.tools import add, echo
from rxagent.tools import Tool, Toolkit, tool


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(BaseModel):
    x: int
    y: float = 0.0
    label: str | None = None


@tool
async def everything(
    count: int,
    ratio: float,
    name: str,
    flag: bool,
    numbers: list[int],
    mode: Literal["fast", "slow"],
    color: Color,
    point: Point,
    maybe: int | None = None,
    points: list[Point] | None = None,
    scores: dict[str, int] | None = None,
    pair: tuple[int, str] = (0, ""),
    tags: set[str] | None = None,
    small: Annotated[int, Field(ge=1, le=5)] = 1,
    fraction: Annotated[float, Field(gt=0, lt=1)] = 0.5,
    above: Annotated[int, Field(gt=-3, lt=3)] = 0,
    code: Annotated[str, Field(pattern=r"^[A-Z]{2}[0-9]$")] = "AB1",
    short: Annotated[str, Field(min_length=2, max_length=4)] = "ab",
    when: dt.datetime | None = None,
    day: dt.date | None = None,
    at: dt.time | None = None,
    ident: uuid.UUID | None = None,
    anything: Any = None,
    labels: Annotated[list[str], Field(min_length=1, max_length=2)] = ["a"],  # noqa: B006
) -> str:
    """Take one argument of each supported kind."""
    return "ok"


def execute(tool_: Tool[..., Any], arguments: dict[str, Any]) -> Any:
    """Run the call as the agent would, after a JSON round trip (as a model sends arguments)."""
    call = ToolUseBlock(id="c1", name=tool_.name, input=json.loads(json.dumps(arguments)))
    return asyncio.run(Toolkit([tool_]).execute(call)).result


@given(rst.tool_args(everything))
def test_arguments_drawn_from_a_schema_validate_for_the_tool(arguments: dict[str, Any]) -> None:
    result = execute(everything, arguments)
    assert not result.is_error, result.output
    assert result.output == "ok"


@given(rst.tool_args(everything.schema))
def test_a_tool_schema_works_as_the_tool(arguments: dict[str, Any]) -> None:
    required = set(everything.schema.parameters["required"])
    assert required <= set(arguments) <= set(everything.schema.parameters["properties"])


@given(rst.tool_args(add), rst.tool_args(echo))
def test_the_kit_tools_get_their_own_arguments(a: dict[str, Any], e: dict[str, Any]) -> None:
    assert set(a) == {"a", "b"}
    assert all(isinstance(v, int) for v in a.values())
    assert set(e) == {"text"}
    assert execute(echo, e).output == e["text"]


@given(rst.tool_schemas(names=["add", "echo"]))
def test_tool_schemas_of_the_kit_tools_are_the_tools_schemas(schema: ToolSchema) -> None:
    kit = {"add": add.schema, "echo": echo.schema}[schema.name]
    assert schema.parameters == kit.parameters


@given(rst.scripts(tools=[everything, echo], max_tool_turns=2, max_parallel=2))
def test_a_script_of_your_own_tools_plays_without_argument_errors(script: list[Any]) -> None:
    agent = ReActAgent("a", "", ScriptedModel(script, chunk_size=7), tools=[everything, echo])

    async def main() -> list[Any]:
        return [e async for e in agent.events("go")]

    events = asyncio.run(main())
    assert_event_protocol(events)
    results = [e.result for e in events if e.type == "post_acting"]
    assert not any(r.is_error for r in results), [r.output for r in results if r.is_error]
    assert events[-1].result.ok


@given(
    rst.tool_args(
        Tool.from_schema(
            name="loose",
            description="A hand-written schema.",
            parameters={
                "type": "object",
                "properties": {
                    "either": {"type": ["string", "null"], "maxLength": 3},
                    "free": {},
                    "extra": {"type": "object", "additionalProperties": {"type": "boolean"}},
                    "open": {"type": "object", "additionalProperties": True},
                    "unique": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
                    "choice": {"oneOf": [{"const": 1}, {"type": "string", "format": "date"}]},
                    "wrapped": {
                        "allOf": [{"$ref": "#/definitions/Small"}],
                        "description": "old pydantic",
                    },
                    "ranged": {"type": "number", "minimum": 2, "maximum": 3},
                    "floor": {"type": "integer", "minimum": 0.5, "maximum": 2.5},
                },
                "required": ["either", "free", "extra", "open", "unique", "choice", "wrapped"],
                "definitions": {"Small": {"type": "integer", "exclusiveMaximum": 10.5}},
            },
            fn=lambda arguments: arguments,
        )
    )
)
def test_hand_written_schemas_within_the_subset(arguments: dict[str, Any]) -> None:
    either = arguments["either"]
    assert either is None or (isinstance(either, str) and len(either) <= 3)
    assert all(isinstance(v, bool) for v in arguments["extra"].values())
    assert isinstance(arguments["open"], dict)
    assert len(set(arguments["unique"])) == len(arguments["unique"])
    choice = arguments["choice"]
    assert choice == 1 or dt.date.fromisoformat(choice)
    assert isinstance(arguments["wrapped"], int)
    assert arguments["wrapped"] <= 10
    assert 2 <= arguments.get("ranged", 2) <= 3
    assert 1 <= arguments.get("floor", 1) <= 2


def schema_tool(parameters: dict[str, Any]) -> Tool[[dict[str, Any]], Any]:
    return Tool.from_schema(
        name="odd", description="An odd schema.", parameters=parameters, fn=lambda a: a
    )


def with_property(schema: Any, **root: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"p": schema}, **root}


@pytest.mark.parametrize(
    ("parameters", "problem"),
    [
        (with_property({"type": "integer", "multipleOf": 3}), "'multipleOf' is not supported"),
        (with_property({"not": {"type": "string"}}), "'not' is not supported"),
        (with_property({"type": "string", "format": "email"}), "format 'email'"),
        (with_property({"type": "tuple"}), "'tuple' is not a JSON Schema type"),
        (with_property({"allOf": [{"type": "integer"}, {"minimum": 1}]}), "allOf with more"),
        (with_property({"$ref": "https://example.com/s.json"}), "does not point into $defs"),
        (with_property({"$ref": "#/$defs/Missing"}), "does not point into $defs"),
        (with_property([1, 2]), "is not an object"),
        (with_property({"anyOf": [{"type": "integer"}]}, patternProperties={}), "patternProp"),
        ({"type": "object", "required": ["q"]}, "required property 'q' has no schema"),
        (
            with_property(
                {"$ref": "#/$defs/Node"},
                **{"$defs": {"Node": with_property({"$ref": "#/$defs/Node"})}},
            ),
            "is recursive",
        ),
    ],
)
def test_unsupported_schemas_are_refused_by_name(parameters: dict[str, Any], problem: str) -> None:
    with pytest.raises(rst.UnsupportedSchemaError) as caught:
        rst.tool_args(schema_tool(parameters))
    message = str(caught.value)
    assert problem in message
    assert "tool 'odd'" in message
    assert "script its calls with tool_call()" in message


def test_the_error_says_where_in_the_schema() -> None:
    deep = with_property({"type": "array", "items": {"type": "integer", "multipleOf": 2}})
    with pytest.raises(ValueError, match=r"at properties\.p\.items"):
        rst.scripts(tools=[schema_tool(deep)])


class Node(BaseModel):
    value: int
    children: list[Node] = []


@tool
def walk(tree: Node) -> int:
    """Walk a tree."""
    return tree.value


def test_a_schema_that_is_not_an_object_is_refused() -> None:
    schema = ToolSchema(name="odd", description="", parameters={"type": "array"})
    with pytest.raises(rst.UnsupportedSchemaError, match="is not of type 'object' at the root"):
        rst.tool_args(schema)


def test_a_recursive_model_is_refused() -> None:
    with pytest.raises(rst.UnsupportedSchemaError, match=r"\$ref '#/\$defs/Node' is recursive"):
        rst.tool_args(walk)


def test_tool_args_and_scripts_check_what_they_are_given() -> None:
    with pytest.raises(TypeError, match="got 42"):
        rst.tool_args(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got 'add'"):
        rst.scripts(tools=["add"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="not both"):
        rst.scripts(tools=[add], tool_names=["add"])
    with pytest.raises(ValueError, match="two tools named 'add'"):
        rst.scripts(tools=[add, add.schema])


@given(rst.scripts(tools=Toolkit([add, echo])))
def test_scripts_take_a_toolkit(script: list[Any]) -> None:
    names = {b.name for turn in ScriptedModel(script).turns for b in turn if b.type == "tool_use"}
    assert names <= {"add", "echo"}
