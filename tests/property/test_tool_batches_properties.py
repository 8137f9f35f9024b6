"""Random batches of tool calls (successes, failures, timeouts, schema violations, progress)
always end with exactly one result per call, in call order, with the right error codes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rxagent import ActingChunkEvent, ErrorEvent, PostActingEvent, ReActAgent, tool
from rxagent.errors import ErrorCode
from rxagent.events import BaseEvent
from rxagent.messages import ToolResultBlock, ToolUseBlock
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call
from rxagent.tools import ToolResult


@tool
async def ok(x: int) -> str:
    """Succeed on the loop."""
    return f"ok {x}"


@tool
def ok_sync(x: int) -> str:
    """Succeed on a thread."""
    return f"sync {x}"


@tool
async def fail(x: int) -> str:
    """Raise."""
    raise ValueError(f"bad {x}")


@tool
def fail_sync(x: int) -> str:
    """Raise on a thread."""
    raise KeyError(x)


@tool(timeout=0.002)
async def hang(x: int) -> str:
    """Wait for an event nobody sets; the tiny timeout cancels it."""
    await asyncio.Event().wait()
    return "never"  # pragma: no cover


@tool
async def stream(x: int) -> AsyncIterator[Any]:
    """Report progress, then a result."""
    for i in range(x % 3):
        yield i
    yield ToolResult(f"streamed {x}")


@tool
async def refuse(x: int) -> ToolResult:
    """Return an error result without raising."""
    return ToolResult(f"refused {x}", is_error=True)


TOOLS: list[Any] = [ok, ok_sync, fail, fail_sync, hang, stream, refuse]

# kind -> (tool name, arguments, expected error code or None, expected text)
KINDS: dict[str, Any] = {
    "ok": lambda x: ("ok", {"x": x}, None, f"ok {x}"),
    "ok_sync": lambda x: ("ok_sync", {"x": x}, None, f"sync {x}"),
    "fail": lambda x: ("fail", {"x": x}, ErrorCode.TOOL_ERROR, f"ValueError: bad {x}"),
    "fail_sync": lambda x: ("fail_sync", {"x": x}, ErrorCode.TOOL_ERROR, f"KeyError: {x}"),
    "hang": lambda x: ("hang", {"x": x}, ErrorCode.TOOL_TIMEOUT, "Tool 'hang' timed out"),
    "stream": lambda x: ("stream", {"x": x}, None, f"streamed {x}"),
    "refuse": lambda x: ("refuse", {"x": x}, ErrorCode.TOOL_ERROR, f"refused {x}"),
    "violation": lambda x: ("ok", {"x": f"n{x}"}, ErrorCode.TOOL_ERROR, "Invalid arguments"),
    "missing": lambda x: ("ok", {}, ErrorCode.TOOL_ERROR, "x: Field required"),
    "unknown": lambda x: ("nope", {"x": x}, ErrorCode.TOOL_ERROR, "Tool 'nope' not found"),
}

batches = st.lists(st.tuples(st.sampled_from(sorted(KINDS)), st.integers(0, 99)), min_size=1)


@given(batches=batches.map(lambda b: b[:6]), parallel=st.booleans())
def test_every_call_gets_exactly_one_result_in_call_order(
    batches: list[tuple[str, int]], parallel: bool
) -> None:
    expected = [KINDS[kind](x) for kind, x in batches]
    turn = [tool_call(name, **args) for name, args, _, _ in expected]

    async def main() -> list[BaseEvent]:
        agent = ReActAgent(
            "b", "", ScriptedModel([turn, "done"]), tools=TOOLS, parallel_tool_calls=parallel
        )
        events = [e async for e in agent.events("go")]
        stored = await agent.store.load("b", "default")
        assert stored is not None
        memory = stored.state.memory
        calls = [b for m in memory for b in m.blocks if isinstance(b, ToolUseBlock)]
        results = [b for m in memory for b in m.blocks if isinstance(b, ToolResultBlock)]
        assert [r.id for r in results] == [c.id for c in calls]  # one each, in call order
        for result, (name, _, code, text) in zip(results, expected, strict=True):
            assert result.name == name
            assert result.is_error == (code is not None)
            assert text in result.text
        return events

    events = asyncio.run(main())
    assert_event_protocol(events)
    posts = [e for e in events if isinstance(e, PostActingEvent)]
    assert len(posts) == len(expected)
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.code for e in errors] == [code for _, _, code, _ in expected if code is not None]
    chunks = [e for e in events if isinstance(e, ActingChunkEvent)]
    assert len(chunks) == sum(x % 3 for kind, x in batches if kind == "stream")
