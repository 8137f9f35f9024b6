"""A finished run is let go: nothing the loop still holds keeps its context (and so the run).

A cancelled timer stays on the event loop until it is due, behind any live timer that is due
earlier. The run's `request_timeout` (two minutes by default), its lease renewal and a tool's
timeout used to be timers in the run's own context, whose `RunContext` holds the whole run:
its memory, events and results stayed alive that long after the run ended.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

import pytest

from rxagent import ReActAgent, RunContext, tool
from rxagent.testing import ScriptedModel, tool_call


@pytest.mark.parametrize(
    ("request_timeout", "lease_ttl_s", "tool_timeout"),
    [(60.0, 30.0, None), (None, 30.0, None), (None, 30.0, 20.0)],
    ids=["request timeout and lease", "the lease's", "a tool timeout"],
)
async def test_a_finished_run_is_not_kept_alive_by_its_timers(
    request_timeout: float | None, lease_ttl_s: float, tool_timeout: float | None
):
    contexts: list[weakref.ref[RunContext]] = []

    @tool
    def look(ctx: RunContext) -> str:
        """Look around."""
        contexts.append(weakref.ref(ctx))
        return "nothing"

    loop = asyncio.get_running_loop()
    earlier = loop.call_later(5, lambda: None)  # due first: the cancelled timers stay behind it
    try:
        model = ScriptedModel([tool_call("look"), "done"])
        agent = ReActAgent(
            "a",
            "",
            model,
            tools=[look],
            request_timeout=request_timeout,
            lease_ttl_s=lease_ttl_s,
            tool_timeout=tool_timeout,
        )
        result = await agent.call("hi")
        assert result.text == "done"
        del result
        model.reset()  # the scripted model's record of requests
        assert await _released(contexts[0])
    finally:
        earlier.cancel()


async def _released(ref: weakref.ref[Any], turns: int = 10) -> bool:
    """Whether the object goes within a few turns of the loop (the run's cleanup ends on one)."""
    for _ in range(turns):
        await asyncio.sleep(0)
        gc.collect()
        if ref() is None:
            return True
    return False


async def test_the_request_timeout_still_interrupts_a_run():
    async def slow(*_: Any) -> str:
        await asyncio.sleep(5)
        return "late"

    @tool
    async def wait() -> str:
        """Wait."""
        return await slow()

    model = ScriptedModel([tool_call("wait"), "never"])
    agent = ReActAgent("a", "", model, tools=[wait], request_timeout=0.05)
    result = await asyncio.wait_for(agent.call("hi"), 5)
    assert result.interrupted
    assert "request_timeout" in (result.error.message if result.error else "")


async def test_a_tool_timeout_still_stops_a_slow_tool():
    @tool(timeout=0.05)
    async def slow() -> str:
        """Take long."""
        await asyncio.sleep(5)
        return "late"

    model = ScriptedModel([tool_call("slow"), "gave up"])
    agent = ReActAgent("a", "", model, tools=[slow])
    result = await asyncio.wait_for(agent.call("hi"), 5)
    assert result.text == "gave up"
    (seen,) = model.requests[-1].messages[-1].tool_results
    assert seen.is_error
    assert "timed out after 0.05s" in seen.text
