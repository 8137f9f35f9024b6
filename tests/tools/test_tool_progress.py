"""Generator tools stream progress: chunks in order, then one result; cancellation stops them."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

import pytest

from rxagent import ActingChunkEvent, PostActingEvent, ReActAgent, current_run
from rxagent.errors import ErrorCode
from rxagent.messages import ToolUseBlock
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call
from rxagent.tools import Tool, Toolkit, ToolResult, tool
from rxagent.tools._execute import ProgressSink

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from rxagent.events import BaseEvent


def call(name: str, **args: Any) -> ToolUseBlock:
    return ToolUseBlock(id=f"id_{name}", name=name, input=args)


async def run_kit(kit: Toolkit, block: ToolUseBlock, **kwargs: Any) -> tuple[Any, list[Any]]:
    chunks: list[Any] = []
    outcome = await kit.execute(block, progress=chunks.append, **kwargs)
    return outcome, chunks


@tool
async def count(n: int) -> AsyncIterator[Any]:
    """Count to n, then say so."""
    for i in range(n):
        yield {"i": i}
    yield ToolResult(f"counted {n}")


@tool
def count_sync(n: int) -> Iterator[Any]:
    """Count to n on a worker thread; the last value is the result."""
    yield from range(n)


async def test_an_async_generator_streams_its_chunks_then_its_tool_result() -> None:
    outcome, chunks = await run_kit(Toolkit([count]), call("count", n=3))
    assert chunks == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert outcome.ok
    assert outcome.result.output == "counted 3"


async def test_a_sync_generator_runs_on_a_thread_and_its_last_value_is_the_result() -> None:
    names: list[str] = []

    @tool
    def where() -> Iterator[str]:
        """Say where it runs."""
        names.append(threading.current_thread().name)
        yield "a"
        yield "b"

    outcome, chunks = await run_kit(Toolkit([where, count_sync]), call("where"))
    assert chunks == ["a", "b"]
    assert outcome.result.output == "b"
    assert names == ["rxagent-tool"]
    outcome, chunks = await run_kit(Toolkit([count_sync]), call("count_sync", n=4))
    assert chunks == [0, 1, 2, 3]
    assert outcome.result.output == "3"


async def test_a_generator_that_yields_nothing_has_an_empty_result() -> None:
    @tool
    async def quiet() -> AsyncIterator[str]:
        """Yield nothing."""
        nothing: tuple[str, ...] = ()
        for item in nothing:
            yield item

    @tool
    def quiet_sync() -> Iterator[str]:
        """Yield nothing."""
        yield from ()

    kit = Toolkit([quiet, quiet_sync])
    for name in ("quiet", "quiet_sync"):
        outcome, chunks = await run_kit(kit, call(name))
        assert outcome.ok
        assert outcome.result.output == ""
        assert chunks == []


async def test_a_tool_result_ends_the_generator_and_runs_its_finally_blocks() -> None:
    closed: list[str] = []

    @tool
    async def early() -> AsyncIterator[Any]:
        """Stop at the result."""
        try:
            yield 1
            yield ToolResult({"done": True})
            yield 2  # pragma: no cover - never resumed
        finally:
            closed.append("async")

    @tool
    def early_sync() -> Iterator[Any]:
        """Stop at the result."""
        try:
            yield 1
            yield ToolResult("stopped", is_error=True)
            yield 2  # pragma: no cover - never resumed
        finally:
            closed.append("sync")

    kit = Toolkit([early, early_sync])
    outcome, chunks = await run_kit(kit, call("early"))
    assert chunks == [1]
    assert outcome.result.output == '{"done":true}'
    outcome, chunks = await run_kit(kit, call("early_sync"))
    assert chunks == [1]
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.result.is_error
    assert outcome.result.output == "stopped"
    assert closed == ["async", "sync"]


async def test_a_generator_that_raises_after_progress_is_an_error_result() -> None:
    @tool
    async def broken() -> AsyncIterator[int]:
        """Fail midway."""
        yield 1
        raise ValueError("disk full")

    outcome, chunks = await run_kit(Toolkit([broken]), call("broken"))
    assert chunks == [1]
    assert outcome.exception == "ValueError"
    assert outcome.result.text == "ValueError: disk full"


async def test_a_timeout_cancels_an_async_generator_and_reports_tool_timeout() -> None:
    started, cleaned = asyncio.Event(), asyncio.Event()

    @tool(timeout=0.01)
    async def hang() -> AsyncIterator[str]:
        """Hang after the first chunk."""
        try:
            yield "started"
            started.set()
            await asyncio.Event().wait()
            yield "never"  # pragma: no cover
        finally:
            cleaned.set()

    outcome, chunks = await run_kit(Toolkit([hang]), call("hang"))
    assert started.is_set()
    assert cleaned.is_set()
    assert chunks == ["started"]
    assert outcome.error_code is ErrorCode.TOOL_TIMEOUT


async def test_a_timeout_stops_a_sync_generator_at_its_next_yield_and_drops_late_chunks() -> None:
    release, closed = threading.Event(), threading.Event()

    @tool(timeout=0.01)
    def slow() -> Iterator[str]:
        """Block on a thread between chunks."""
        try:
            yield "first"
            release.wait(5)
            yield "late"  # after the timeout: dropped, and the generator is closed here
            yield "never"  # pragma: no cover
        finally:
            closed.set()

    outcome, chunks = await run_kit(Toolkit([slow]), call("slow"))
    assert outcome.error_code is ErrorCode.TOOL_TIMEOUT
    release.set()
    assert await asyncio.to_thread(closed.wait, 5)
    await asyncio.sleep(0)  # let any chunk posted by the thread reach the loop
    assert chunks == ["first"]


def test_a_progress_sink_drops_chunks_after_it_is_closed() -> None:
    got: list[int] = []
    sink = ProgressSink(got.append)
    sink(1)
    sink.close()
    sink(2)
    assert got == [1]
    nowhere = ProgressSink(None)
    nowhere(3)  # no callback: chunks are dropped
    assert nowhere.closed


async def test_progress_without_a_callback_or_a_run_is_dropped() -> None:
    outcome = await Toolkit([count]).execute(call("count", n=2))
    assert outcome.result.output == "counted 2"


async def test_schema_tools_can_be_generators() -> None:
    async def stream(arguments: dict[str, Any]) -> AsyncIterator[Any]:
        for word in arguments["text"].split():
            yield word
        yield ToolResult("ok")

    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    made = Tool.from_schema("words", "Stream words.", schema, stream)
    assert made.is_generator
    assert made.is_async
    outcome, chunks = await run_kit(Toolkit([made]), call("words", text="a b"))
    assert chunks == ["a", "b"]
    assert outcome.result.output == "ok"


async def test_an_async_tool_returning_a_sync_generator_is_drained() -> None:
    async def factory() -> Iterator[int]:
        """Return a generator."""
        return iter_numbers()

    def iter_numbers() -> Iterator[int]:
        yield 1
        yield 2

    outcome, chunks = await run_kit(Toolkit([tool(factory)]), call("factory"))
    assert chunks == [1, 2]
    assert outcome.result.output == "2"


# -- in an agent ---------------------------------------------------------------------------------


async def test_concurrent_generator_tools_interleave_progress_in_order_per_call() -> None:
    """Two tools take turns through events; each call's chunks keep their order and call id."""
    turns = {"a": asyncio.Event(), "b": asyncio.Event()}

    @tool
    async def relay(me: str, other: str, n: int) -> AsyncIterator[Any]:
        """Alternate with the other tool."""
        for i in range(n):
            if me == "b" or i:
                await turns[me].wait()
                turns[me].clear()
            yield f"{me}{i}"
            turns[other].set()
        yield ToolResult(f"{me} done")

    model = ScriptedModel(
        [
            [
                tool_call("relay", me="a", other="b", n=3),
                tool_call("relay", me="b", other="a", n=3),
            ],
            "finished",
        ]
    )
    agent = ReActAgent("p", "", model, tools=[relay])
    events: list[BaseEvent] = [e async for e in agent.events("go")]
    assert_event_protocol(events)
    chunks = [e for e in events if isinstance(e, ActingChunkEvent)]
    assert [e.chunk for e in chunks] == ["a0", "b0", "a1", "b1", "a2", "b2"]
    ids = {e.chunk[0]: e.tool_call_id for e in chunks}
    assert ids["a"] != ids["b"]
    for who in "ab":
        mine = [e.chunk for e in chunks if e.tool_call_id == ids[who]]
        assert mine == [f"{who}0", f"{who}1", f"{who}2"]
        assert all(e.tool_name == "relay" for e in chunks)
    posts = [e for e in events if isinstance(e, PostActingEvent)]
    assert [p.result.output for p in posts] == ["a done", "b done"]


@pytest.mark.parametrize("parallel", [True, False])
async def test_sync_generators_and_run_context_progress_reach_the_stream(parallel: bool) -> None:
    @tool
    def steps(n: int) -> Iterator[int]:
        """Yield steps on a thread."""
        yield from range(n)

    @tool
    async def crawl(pages: int) -> str:
        """Report progress through the run context."""
        for page in range(pages):
            current_run().progress({"page": page})
        return "crawled"

    model = ScriptedModel([[tool_call("steps", n=3), tool_call("crawl", pages=2)], "ok"])
    agent = ReActAgent("s", "", model, tools=[steps, crawl], parallel_tool_calls=parallel)
    events: list[BaseEvent] = [e async for e in agent.events("go")]
    assert_event_protocol(events)
    by_tool: dict[str, list[Any]] = {}
    for e in events:
        if isinstance(e, ActingChunkEvent):
            by_tool.setdefault(e.tool_name, []).append(e.chunk)
    assert by_tool == {"steps": [0, 1, 2], "crawl": [{"page": 0}, {"page": 1}]}
