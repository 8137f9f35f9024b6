"""Sync tools declared non-blocking (`@tool(blocking=False)`) run inline on the event loop."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import ActingChunkEvent, PostActingEvent, ReActAgent, RunContext
from rxagent.errors import ToolDefinitionError
from rxagent.messages import ToolUseBlock
from rxagent.testing import ScriptedModel, tool_call
from rxagent.tools import Tool, Toolkit, tool


def _thread_name() -> str:
    return threading.current_thread().name


@tool(blocking=False)
def where_inline() -> str:
    """Say which thread runs the call."""
    return _thread_name()


@tool
def where_threaded() -> str:
    """Say which thread runs the call."""
    return _thread_name()


async def test_a_non_blocking_sync_tool_runs_on_the_loop_thread() -> None:
    kit = Toolkit([where_inline, where_threaded])
    inline = await kit.execute(ToolUseBlock(id="1", name="where_inline", input={}))
    threaded = await kit.execute(ToolUseBlock(id="2", name="where_threaded", input={}))
    assert inline.result.text == threading.current_thread().name
    assert threaded.result.text == "rxagent-tool"
    assert where_inline.blocking is False
    assert where_threaded.blocking is True


async def test_a_non_blocking_generator_streams_progress_inline_in_order() -> None:
    seen: list[tuple[str, Any]] = []

    @tool(blocking=False)
    def count(n: int) -> Any:
        """Count to n.

        Args:
            n: How far.
        """
        for i in range(n):
            yield (i, _thread_name())
        yield "done"

    kit = Toolkit([count])
    out = await kit.execute(
        ToolUseBlock(id="1", name="count", input={"n": 3}),
        progress=lambda chunk: seen.append(("p", chunk)),
    )
    loop_thread = threading.current_thread().name
    assert [c for _, c in seen] == [(0, loop_thread), (1, loop_thread), (2, loop_thread), "done"]
    assert out.result.text == "done"  # the last value is the result (and progress, as always)


async def test_errors_of_a_non_blocking_tool_are_results() -> None:
    @tool(blocking=False)
    def boom() -> str:
        """Fail."""
        raise ValueError("no")

    out = await Toolkit([boom]).execute(ToolUseBlock(id="1", name="boom", input={}))
    assert out.result.is_error
    assert "ValueError: no" in out.result.text


async def test_a_plain_function_returning_a_generator_still_drains_on_a_worker() -> None:
    def make() -> Any:
        def gen() -> Any:
            yield _thread_name()
            yield "end"

        return gen()

    seen: list[Any] = []
    kit = Toolkit([tool(make, name="make")])
    out = await kit.execute(ToolUseBlock(id="1", name="make", input={}), progress=seen.append)
    assert seen == ["rxagent-tool", "end"]
    assert out.result.text == "end"


def test_blocking_must_be_a_bool() -> None:
    with pytest.raises(ToolDefinitionError, match="blocking must be True or False"):
        tool(lambda: 1, name="x", blocking="no")  # type: ignore[call-overload]
    with pytest.raises(ToolDefinitionError, match="blocking must be True or False"):
        Tool.from_schema("x", "", {"type": "object"}, lambda a: a, blocking=1)  # type: ignore[arg-type]


@given(first=st.booleans(), second=st.booleans())
def test_rewrapping_keeps_a_non_blocking_declaration(first: bool, second: bool) -> None:
    base = tool(where_inline.fn, name="w", blocking=first)
    again = tool(base, description="again", blocking=second)
    assert again.blocking is (first and second)
    assert base.with_preset().blocking is first
    schema_tool = Tool.from_schema("s", "", {"type": "object"}, lambda a: a, blocking=first)
    assert schema_tool.blocking is first


async def test_an_agent_runs_a_non_blocking_tool_with_its_run_context() -> None:
    @tool(blocking=False)
    def report(ctx: RunContext) -> str:
        """Report the session, with progress."""
        ctx.emit(ActingChunkEvent, tool_call_id="x", tool_name="report", chunk="working")
        return f"{ctx.session_id} on {_thread_name()}"

    agent = ReActAgent("a", "", ScriptedModel([tool_call("report"), "ok"]), tools=[report])
    events = [e async for e in agent.events("go", session_id="s1")]
    results = [e.result.text for e in events if isinstance(e, PostActingEvent)]
    assert results == [f"s1 on {threading.current_thread().name}"]
    assert [e.chunk for e in events if isinstance(e, ActingChunkEvent)] == ["working"]
