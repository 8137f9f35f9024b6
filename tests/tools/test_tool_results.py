"""What the model gets back: text, JSON, blocks and images, error results, timeouts."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from rxagent.errors import ErrorCode, ToolDefinitionError
from rxagent.formatters.anthropic import AnthropicFormatter
from rxagent.formatters.gemini import GeminiFormatter
from rxagent.formatters.openai import OpenAIFormatter
from rxagent.messages import ImageBlock, Msg, TextBlock, ThinkingBlock, ToolUseBlock
from rxagent.models.base import ModelOptions
from rxagent.tools import Tool, Toolkit, ToolResult, tool

PIXEL = "iVBORw0KGgo="  # base64, short: the formatters do not decode it


def call(name: str, **args: Any) -> ToolUseBlock:
    return ToolUseBlock(id="call_1", name=name, input=args)


@tool
def echo_value(kind: str) -> Any:
    """Return a value of some kind."""
    values: dict[str, Any] = {
        "text": "plain",
        "none": None,
        "int": 3,
        "dict": {"a": [1, 2]},
        "block": TextBlock(text="t"),
        "blocks": [TextBlock(text="see"), ImageBlock(data=PIXEL, media_type="image/png")],
        "thinking": ThinkingBlock(thinking="hm"),
        "object": object(),
    }
    return values[kind]


@pytest.mark.parametrize(
    ("kind", "output"),
    [
        ("text", "plain"),
        ("none", ""),
        ("int", "3"),
        ("dict", '{"a":[1,2]}'),
        ("block", (TextBlock(text="t"),)),
        ("blocks", (TextBlock(text="see"), ImageBlock(data=PIXEL, media_type="image/png"))),
        ("thinking", '{"type":"thinking","thinking":"hm","signature":null}'),
    ],
)
async def test_values_become_outputs(kind: str, output: Any) -> None:
    outcome = await Toolkit([echo_value]).execute(call("echo_value", kind=kind))
    assert outcome.ok
    assert outcome.result.output == output


async def test_a_value_with_no_json_form_is_an_error_result() -> None:
    outcome = await Toolkit([echo_value]).execute(call("echo_value", kind="object"))
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert "returned a object, which cannot be converted to JSON" in outcome.result.text


async def test_an_error_tool_result_keeps_its_blocks() -> None:
    @tool
    def shot() -> ToolResult:
        """Fail with a screenshot."""
        image = ImageBlock(data=PIXEL, media_type="image/png")
        return ToolResult([TextBlock(text="page crashed"), image], is_error=True)

    @tool
    def silent() -> ToolResult:
        """Fail without text."""
        return ToolResult(ImageBlock(url="https://example.com/x.png"), is_error=True)

    outcome = await Toolkit([shot, silent]).execute(call("shot"))
    assert outcome.result.is_error
    assert outcome.error_message == "page crashed"
    assert isinstance(outcome.result.output, tuple)
    assert len(outcome.result.output) == 2
    outcome = await Toolkit([silent]).execute(call("silent"))
    assert outcome.error_message == "Tool 'silent' failed"


async def test_an_exception_is_type_and_message_and_the_traceback_goes_to_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @tool
    def explode(path: str) -> str:
        """Read a file."""
        raise FileNotFoundError(f"no such file: {path}")

    @tool
    async def bare() -> str:
        """Fail without a message."""
        raise RuntimeError

    with caplog.at_level(logging.WARNING, logger="rxagent.tools"):
        outcome = await Toolkit([explode]).execute(call("explode", path="/x"))
        bare_outcome = await Toolkit([bare]).execute(call("bare"))
    assert outcome.result.text == "FileNotFoundError: no such file: /x"
    assert "Traceback" not in outcome.result.text
    assert outcome.exception == "FileNotFoundError"
    assert bare_outcome.result.text == "RuntimeError"
    records = [r for r in caplog.records if r.name == "rxagent.tools"]
    assert [r.getMessage() for r in records] == [
        "tool 'explode' (call call_1) raised",
        "tool 'bare' (call call_1) raised",
    ]
    assert records[0].exc_info is not None
    assert records[0].exc_info[0] is FileNotFoundError


async def test_schema_violations_list_every_field() -> None:
    @tool
    def book(room: str, nights: int, guests: list[str]) -> str:
        """Book a room."""
        return "booked"

    outcome = await Toolkit([book]).execute(call("book", nights="two", guests="ann", extra=1))
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    text = outcome.result.text
    assert text.startswith("Invalid arguments for tool 'book': ")
    for field in ("room: Field required", "nights: ", "guests: ", "extra: Extra inputs"):
        assert field in text


async def test_schema_tool_violations_list_every_field() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "flag": {"type": "boolean"},
            "tags": {"type": ["array", "null"]},
            "any": {"type": "custom"},
            "free": {},
            "odd": True,
        },
        "required": ["n", "flag"],
        "additionalProperties": False,
    }
    made = Tool.from_schema("f", "F.", schema, lambda arguments: arguments)
    open_schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    extra = await Toolkit([Tool.from_schema("g", "G.", open_schema, str)]).execute(
        call("g", n=1, more="allowed")
    )
    assert extra.ok
    kit = Toolkit([made])
    bad = await kit.execute(call("f", n=True, tags="x", other=1))
    assert bad.result.text == (
        "Invalid arguments for tool 'f': flag: Field required; n: Input should be of type "
        "integer; tags: Input should be of type array or null; other: Extra inputs are not "
        "permitted"
    )
    good = await kit.execute(call("f", n=2.0, flag=False, tags=None, any=1, free=[1], odd=0))
    assert good.ok


def test_from_schema_refuses_a_schema_that_is_not_an_object() -> None:
    with pytest.raises(ToolDefinitionError, match=r"parameters must be a JSON schema of an object"):
        Tool.from_schema("f", "F.", {"type": "string"}, lambda a: a)


async def test_a_timeout_cancels_the_tool_and_is_tool_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    entered, cancelled = asyncio.Event(), asyncio.Event()

    @tool(timeout=0.01)
    async def wait_forever() -> str:
        """Wait for an event that never comes."""
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"  # pragma: no cover

    with caplog.at_level(logging.INFO, logger="rxagent.tools"):
        outcome = await Toolkit([wait_forever]).execute(call("wait_forever"))
    assert entered.is_set()
    assert cancelled.is_set()
    assert outcome.error_code is ErrorCode.TOOL_TIMEOUT
    assert outcome.result.text == "Tool 'wait_forever' timed out after 0.01s"
    assert "it was cancelled" in caplog.text


async def test_a_tool_raising_timeout_error_itself_is_a_tool_error() -> None:
    @tool
    async def upstream() -> str:
        """Call a slow upstream."""
        raise TimeoutError("upstream took too long")

    outcome = await Toolkit([upstream]).execute(call("upstream"), timeout=5)
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.result.text == "TimeoutError: upstream took too long"


# -- an image from a tool, as each provider receives it ------------------------------------------


@tool
def chart() -> list[TextBlock | ImageBlock]:
    """Draw a chart."""
    return [TextBlock(text="the chart"), ImageBlock(data=PIXEL, media_type="image/png")]


async def body(formatter: Any) -> dict[str, Any]:
    """The request body after `chart` ran: its result is what the toolkit made."""
    use = ToolUseBlock(id="call_1", name="chart", input={})
    outcome = await Toolkit([chart]).execute(use)
    messages = [Msg.user("draw"), Msg.assistant((use,)), Msg.tool(outcome.result)]
    return formatter.format(messages, [], ModelOptions(), model="m", stream=False)  # type: ignore[no-any-return]


async def test_anthropic_gets_the_image_inside_the_tool_result() -> None:
    wire = (await body(AnthropicFormatter()))["messages"][-1]["content"][0]
    assert wire["type"] == "tool_result"
    assert wire["content"] == [
        {"type": "text", "text": "the chart"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
    ]


async def test_gemini_gets_the_image_as_parts_of_the_function_response() -> None:
    contents = (await body(GeminiFormatter()))["contents"]
    response = contents[-1]["parts"][0]["functionResponse"]
    assert response["response"] == {"result": "the chart"}
    assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": PIXEL}}]


async def test_openai_gets_the_text_as_the_tool_message_and_the_image_in_a_user_message() -> None:
    messages = (await body(OpenAIFormatter()))["messages"]
    tool_msg, carrier = messages[-2], messages[-1]
    assert tool_msg == {"role": "tool", "tool_call_id": "call_1", "content": "the chart"}
    assert carrier["role"] == "user"
    assert carrier["content"][0] == {"type": "text", "text": "Images returned by tool call call_1:"}
    assert carrier["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PIXEL}"},
    }
