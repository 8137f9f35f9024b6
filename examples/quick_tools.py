"""Quick sync tools run inline: `@tool(blocking=False)` skips the worker thread.

A plain `def` tool runs on a worker thread, so a slow one never stalls the event loop. For a
cheap, pure function (arithmetic, a lookup) the hand-off to the thread and back is most of the
call's cost; declare it `blocking=False` and it runs on the loop, like an async tool. Keep the
thread for anything that waits: files, sockets, `time.sleep`.

This script runs the same three-step agent with each kind of tool and prints which thread ran
the tool and what a run cost in CPU time (`rxagent bench` measures it all over HTTP).

Run it:

    python -m examples.quick_tools
"""

import asyncio
import statistics
import threading
import time
from typing import Any

from rxagent import ReActAgent, Tool, tool
from rxagent.testing import ScriptedModel, tool_call

__all__ = ["add_inline", "add_threaded", "main"]

RUNS = 50
ROUNDS = 7
ran_on: set[str] = set()  # the threads the tool ran on


def _add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    ran_on.add(threading.current_thread().name)
    return a + b


add_threaded = tool(_add, name="add")  # the default: a worker thread per call
add_inline = tool(_add, name="add", blocking=False)  # declared quick: on the loop's thread


def _script() -> list[Any]:
    return [tool_call("add", a=i, b=1) for i in range(3)] + ["done"]


async def _cpu_per_run(agent: ReActAgent, runs: int) -> float:
    """Run the agent; return the CPU µs per run."""
    start = time.process_time()
    for i in range(runs):
        result = await agent.call("add things", session_id=f"s{i}")
        assert result.tools_used == ("add", "add", "add")
        await agent.store.delete(agent.name, f"s{i}")
    return (time.process_time() - start) / runs * 1e6


def _agent(add: Tool[..., Any]) -> ReActAgent:
    model = ScriptedModel(_script() * (ROUNDS * RUNS + 1))
    return ReActAgent("calc", "Use the add tool.", model, tools=[add])


async def main() -> None:
    """Run both agents in alternating rounds; print where the tool ran and the median cost."""
    agents = {"threaded": _agent(add_threaded), "inline": _agent(add_inline)}
    where: dict[str, set[str]] = {}
    cost: dict[str, list[float]] = {name: [] for name in agents}
    for name, agent in agents.items():  # a first run each: where does the tool run?
        ran_on.clear()
        await agent.call("add things", session_id="first")
        where[name] = set(ran_on)
    for _ in range(ROUNDS):
        for name, agent in agents.items():
            cost[name].append(await _cpu_per_run(agent, RUNS))
    threaded_where, inline_where = where["threaded"], where["inline"]
    threaded_us, inline_us = (statistics.median(cost[name]) for name in agents)
    assert threaded_where == {"rxagent-tool"}  # the worker threads
    assert inline_where == {threading.current_thread().name}  # the event loop's own thread
    print(f"blocking=True:  ran on {threaded_where.pop()!r}, {threaded_us:.0f} µs CPU per run")
    print(f"blocking=False: ran on {inline_where.pop()!r}, {inline_us:.0f} µs CPU per run")
    print(f"inline saves {threaded_us - inline_us:.0f} µs of CPU per run of three tool calls")


if __name__ == "__main__":
    asyncio.run(main())
