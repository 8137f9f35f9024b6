"""Property-test your own hook chain: run the agent over random scripts and check the promise.

`scripts(tools=[...])` draws whole model scripts (thinking, text, parallel calls with valid
arguments, then an answer). The test runs the agent with the hook on each one and checks, on
every run, the event protocol and the hook's own promise: here, that `cap_results` keeps every
tool result the model reads to `LIMIT` characters. When a check fails, hypothesis shrinks the
script to a minimal one and prints it.

Run it (it is a pytest test too):

    python -m examples.property_test_hooks
    pytest examples/property_test_hooks.py
"""

import asyncio

from hypothesis import given, settings

from rxagent import BaseEvent, PostActingEvent, ReActAgent, hook
from rxagent.testing import ScriptedModel, Turn, assert_event_protocol
from rxagent.testing.strategies import scripts
from rxagent.testing.tools import add, echo

__all__ = ["LIMIT", "cap_results", "test_tool_results_are_capped"]

LIMIT = 10
runs: list[int] = []


@hook(PostActingEvent, priority=10)
def cap_results(event: PostActingEvent) -> PostActingEvent:
    """Cut each tool result to `LIMIT` characters, so no tool floods the context."""
    capped = event.result.model_copy(update={"output": event.result.text[:LIMIT]})
    return event.replace(result=capped)


async def run(agent: ReActAgent) -> list[BaseEvent]:
    """One run's events."""
    return [event async for event in agent.events("Go.")]


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(scripts(tools=[add, echo], max_parallel=3))
def test_tool_results_are_capped(script: list[Turn]) -> None:
    """Every run keeps the protocol, and the model never reads a result over `LIMIT`."""
    model = ScriptedModel(script)
    agent = ReActAgent("capped", "", model, tools=[add, echo], hooks=[cap_results])
    assert_event_protocol(asyncio.run(run(agent)))
    for request in model.requests:
        assert all(len(r.text) <= LIMIT for m in request.messages for r in m.tool_results)
    runs.append(len(script))


if __name__ == "__main__":
    test_tool_results_are_capped()
    print(f"the promise held on {len(runs)} random scripts of up to {max(runs)} turns")
