"""Toolkit.execute: validation, errors as results, timeouts, threads, cancellation, output."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any

import pytest
from pydantic import BaseModel

from rxagent.errors import ErrorCode
from rxagent.messages import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock
from rxagent.tools import Toolkit, ToolOutcome, tool


class Point(BaseModel):
    x: int
    y: int = 0


def call(tool_name: str, raw_input: str | None = None, **arguments: Any) -> ToolUseBlock:
    return ToolUseBlock(
        id=f"call_{tool_name}", name=tool_name, input=arguments, raw_input=raw_input
    )


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def run_tool(fn: Any, **arguments: Any) -> ToolOutcome:
    made = tool(fn)
    return await Toolkit([made]).execute(call(made.name, **arguments))


async def test_success_result_carries_the_call_id_and_name() -> None:
    outcome = await Toolkit([add]).execute(call("add", a=2, b=3))
    assert outcome.result == ToolResultBlock(id="call_add", name="add", output="5")
    assert outcome.ok
    assert (outcome.error_code, outcome.error_message, outcome.exception) == (None, None, None)
    assert outcome.duration_ms > 0


async def test_unknown_tool_lists_available_tools() -> None:
    outcome = await Toolkit([add]).execute(call("nope", x=1))
    assert outcome.result.is_error
    assert outcome.result.id == "call_nope"
    assert outcome.result.output == "Tool 'nope' not found. Available tools: add."
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.error_message == outcome.result.output
    empty = await Toolkit().execute(call("nope"))
    assert empty.result.text == "Tool 'nope' not found. Available tools: none."


async def test_invalid_json_arguments_are_shown_truncated() -> None:
    raw = '{"a": 1, "b": ' + "9" * 500
    outcome = await Toolkit([add]).execute(call("add", raw_input=raw))
    text = outcome.result.text
    assert outcome.result.is_error
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert text.startswith("Invalid arguments for tool 'add': they must be one JSON object")
    assert '{"a": 1, "b": 999' in text
    assert text.endswith("... (truncated)")
    assert len(text) < 400


async def test_validation_errors_name_each_field() -> None:
    outcome = await Toolkit([add]).execute(call("add", a="one"))
    assert outcome.result.is_error
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.result.output == (
        "Invalid arguments for tool 'add': "
        "a: Input should be a valid integer, unable to parse string as an integer; "
        "b: Field required"
    )
    assert outcome.exception is None


async def test_validation_errors_in_nested_models_and_extra_arguments() -> None:
    @tool
    def place(point: Point) -> str:
        """Place."""
        return "placed"

    outcome = await Toolkit([place]).execute(call("place", point={"y": 1}, z=3))
    assert outcome.result.output == (
        "Invalid arguments for tool 'place': point.x: Field required; "
        "z: Extra inputs are not permitted"
    )


async def test_arguments_are_validated_and_converted() -> None:
    seen: list[Any] = []

    @tool
    def record(point: Point, tags: list[str], ratio: float, flag: bool = False) -> None:
        """Record."""
        seen.extend([point, tags, ratio, flag])

    outcome = await Toolkit([record]).execute(
        call("record", point={"x": "3"}, tags=("a", "b"), ratio=1)
    )
    assert outcome.ok
    assert seen == [Point(x=3), ["a", "b"], 1.0, False]
    assert type(seen[1]) is list
    assert type(seen[2]) is float


async def test_read_only_input_reaches_the_tool_as_plain_mutable_json() -> None:
    received: list[Any] = []

    @tool
    def echo(payload: dict[str, Any], anything: Any) -> None:
        """Echo."""
        received.extend([payload, anything])

    arguments: dict[str, Any] = {
        "payload": {"items": [1, [2]], "sub": {"a": 1}},
        "anything": [{"b": [3]}],
    }
    outcome = await Toolkit([echo]).execute(call("echo", **arguments))
    assert outcome.ok
    assert received == [arguments["payload"], arguments["anything"]]
    payload, anything = received
    assert type(payload["items"]) is list
    assert type(payload["items"][1]) is list
    assert type(payload["sub"]) is dict
    assert type(anything[0]) is dict
    assert type(anything[0]["b"]) is list
    payload["sub"]["a"] = 2  # mutable: not the call's FrozenDict


async def test_parameters_named_like_basemodel_attributes_receive_their_values() -> None:
    @tool
    def shadow(json: str, schema: int, copy: bool = True) -> list[Any]:
        """Shadow."""
        return [json, schema, copy]

    outcome = await Toolkit([shadow]).execute(call("shadow", json="j", schema=2))
    assert outcome.result.output == '["j",2,true]'


async def test_positional_only_parameters() -> None:
    def scale(value: int, factor: int = 2, /, *, offset: int = 0) -> int:
        """Scale."""
        return value * factor + offset

    outcome = await run_tool(scale, value=3, offset=1)
    assert outcome.result.output == "7"


async def test_exception_becomes_error_result() -> None:
    def explode(reason: str) -> None:
        """Explode."""
        raise ValueError(reason)

    outcome = await run_tool(explode, reason="bad input")
    assert outcome.result.is_error
    assert outcome.result.output == "ValueError: bad input"
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.exception == "ValueError"
    assert outcome.error_message == "ValueError: bad input"


async def test_exception_without_message_is_its_type_name() -> None:
    async def explode() -> None:
        """Explode."""
        raise KeyError

    outcome = await run_tool(explode)
    assert outcome.result.output == "KeyError"
    assert outcome.exception == "KeyError"


async def test_tool_raising_timeout_error_is_a_tool_error_not_a_timeout() -> None:
    async def upstream() -> None:
        """Call upstream."""
        raise TimeoutError("upstream took too long")

    made = tool(upstream)
    outcome = await Toolkit([made]).execute(call("upstream"), timeout=10)
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.result.output == "TimeoutError: upstream took too long"


# --- timeouts -----------------------------------------------------------------------------------


async def test_async_tool_times_out_and_is_cancelled() -> None:
    cancelled = asyncio.Event()

    @tool(timeout=0.05)
    async def hang() -> str:
        """Hang."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    outcome = await Toolkit([hang]).execute(call("hang"), timeout=2)
    assert outcome.result.is_error
    assert outcome.result.output == "Tool 'hang' timed out after 0.05s"
    assert outcome.error_code is ErrorCode.TOOL_TIMEOUT
    assert outcome.exception is None
    assert cancelled.is_set()


async def test_execute_timeout_applies_to_tools_without_their_own() -> None:
    async def hang() -> None:
        """Hang."""
        await asyncio.Event().wait()

    made = tool(hang)
    outcome = await Toolkit([made]).execute(call("hang"), timeout=0.05)
    assert outcome.error_code is ErrorCode.TOOL_TIMEOUT
    assert outcome.result.text == "Tool 'hang' timed out after 0.05s"


async def test_tool_timeout_overrides_a_shorter_execute_timeout() -> None:
    @tool(timeout=30)
    async def short_nap() -> str:
        """Nap."""
        await asyncio.sleep(0.01)  # the behaviour: ten times the execute timeout
        return "rested"

    outcome = await Toolkit([short_nap]).execute(call("short_nap"), timeout=0.001)
    assert outcome.ok
    assert outcome.result.output == "rested"


async def test_sync_tool_times_out_while_its_thread_keeps_running() -> None:
    release = threading.Event()
    finished = threading.Event()

    @tool(timeout=0.05)
    def block() -> str:
        """Block."""
        release.wait(10)
        finished.set()
        return "late"

    try:
        outcome = await Toolkit([block]).execute(call("block"))
        assert outcome.error_code is ErrorCode.TOOL_TIMEOUT
        assert not finished.is_set()
    finally:
        release.set()
    assert await asyncio.to_thread(finished.wait, 5)


# --- threads and cancellation -------------------------------------------------------------------


async def test_sync_tools_run_in_a_worker_thread_and_async_tools_on_the_loop() -> None:
    loop_thread = threading.get_ident()
    threads: dict[str, int] = {}

    def sync_probe() -> None:
        """Probe."""
        threads["sync"] = threading.get_ident()

    async def async_probe() -> None:
        """Probe."""
        threads["async"] = threading.get_ident()

    kit = Toolkit([sync_probe, async_probe])
    await kit.execute(call("sync_probe"))
    await kit.execute(call("async_probe"))
    assert threads["sync"] != loop_thread
    assert threads["async"] == loop_thread


REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("REQUEST_ID", default="unset")


async def test_sync_tools_see_the_callers_context_variables() -> None:
    def read_request_id() -> str:
        """Read."""
        return REQUEST_ID.get()

    REQUEST_ID.set("req-42")
    outcome = await run_tool(read_request_id)
    assert outcome.result.output == "req-42"


async def test_cancellation_propagates_and_the_tool_sees_it() -> None:
    started, cleaned_up = asyncio.Event(), asyncio.Event()

    @tool
    async def wait_forever() -> None:
        """Wait."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned_up.set()

    task = asyncio.create_task(Toolkit([wait_forever]).execute(call("wait_forever"), timeout=60))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned_up.is_set()


async def test_cancelled_error_raised_by_a_tool_is_not_swallowed() -> None:
    async def give_up() -> None:
        """Give up."""
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await run_tool(give_up)


# --- output conversion --------------------------------------------------------------------------


class Unserializable:
    pass


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text", "plain text"),
        ("", ""),
        (None, ""),
        (3, "3"),
        (2.5, "2.5"),
        (True, "true"),
        ({"k": [1, None]}, '{"k":[1,null]}'),
        ([], "[]"),
        (["a", 1], '["a",1]'),
        (Point(x=1), '{"x":1,"y":0}'),
        ([Point(x=1), "s"], '[{"x":1,"y":0},"s"]'),
        ([TextBlock(text="a"), "b"], '[{"type":"text","text":"a"},"b"]'),
        (TextBlock(text="one"), (TextBlock(text="one"),)),
        (
            [TextBlock(text="see"), ImageBlock(url="https://x.test/a.png")],
            (TextBlock(text="see"), ImageBlock(url="https://x.test/a.png")),
        ),
        ((TextBlock(text="t"),), (TextBlock(text="t"),)),
    ],
)
async def test_output_conversion(value: Any, expected: str | tuple[Any, ...]) -> None:
    def produce() -> Any:
        """Produce."""
        return value

    outcome = await run_tool(produce)
    assert outcome.ok
    assert outcome.result.output == expected


async def test_unconvertible_output_is_an_error_result() -> None:
    def produce() -> Unserializable:
        """Produce."""
        return Unserializable()

    outcome = await run_tool(produce)
    assert outcome.result.is_error
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.result.text.startswith(
        "Tool 'produce' returned a Unserializable, which cannot be converted to JSON"
    )
    assert outcome.exception is None


async def test_sync_callable_returning_a_coroutine_is_awaited() -> None:
    async def double(x: int) -> int:
        return 2 * x

    class Doubler:
        def __call__(self, x: int) -> Any:
            """Double x."""
            return double(x)

    made = tool(Doubler())
    assert not made.is_async
    outcome = await Toolkit([made]).execute(call("Doubler", x=21))
    assert outcome.result.output == "42"


async def test_async_callable_object_is_awaited_on_the_loop() -> None:
    class AsyncDoubler:
        async def __call__(self, x: int) -> int:
            """Double x."""
            return 2 * x

    made = tool(AsyncDoubler(), name="double")
    assert made.is_async
    outcome = await Toolkit([made]).execute(call("double", x=4))
    assert outcome.result.output == "8"
