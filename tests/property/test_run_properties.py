"""Properties of whole runs over random scripts: the event protocol, interrupts, save/load."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent import EVENT_ADAPTER, PreReasoningEvent, ReActAgent, tool
from rxagent.events import BaseEvent
from rxagent.testing import ScriptedModel, assert_event_protocol
from rxagent.testing.strategies import hook_chains, scripts


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool
async def echo(text: str) -> str:
    """Echo text.

    Args:
        text: The text.
    """
    await asyncio.sleep(0)
    return text


TOOLS: list[Any] = [add, echo]
GENERATED_ID = re.compile(r"^[0-9a-f]{32}$")
VOLATILE_KEYS = {"run_id", "timestamp", "duration_ms"}


def normalize(value: Any) -> Any:
    """Drop what differs between equivalent runs: run ids, times and generated message ids."""
    if isinstance(value, dict):
        return {
            k: normalize(v)
            for k, v in value.items()
            if k not in VOLATILE_KEYS
            and not (k == "id" and isinstance(v, str) and GENERATED_ID.match(v))
        }
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def comparable(events: list[BaseEvent]) -> list[Any]:
    return [normalize(EVENT_ADAPTER.dump_python(e, mode="json")) for e in events]  # type: ignore[arg-type]


async def run_events(agent: ReActAgent, msg: str, **kw: Any) -> list[BaseEvent]:
    return [e async for e in agent.events(msg, **kw)]


def memory_pairs_every_call(state: dict[str, Any]) -> bool:
    calls, results = [], []
    for m in state["memory"]:
        if isinstance(m["content"], list):
            calls += [b["id"] for b in m["content"] if b["type"] == "tool_use"]
            results += [b["id"] for b in m["content"] if b["type"] == "tool_result"]
    return sorted(calls) == sorted(results) and len(set(results)) == len(results)


@given(scripts(max_tool_turns=3, max_parallel=3), hook_chains(max_size=4), st.integers(1, 12))
def test_every_run_over_a_random_script_keeps_the_protocol(script, chain, chunk_size):
    async def main() -> None:
        model = ScriptedModel(script, chunk_size=chunk_size)
        hooks, log = chain.build()
        agent = ReActAgent("p", "sys", model, tools=TOOLS, hooks=hooks)
        events = await run_events(agent, "go")
        assert_event_protocol(events)
        result = events[-1].result  # type: ignore[attr-defined]
        assert result.ok, result.error
        assert result.steps == len(script)
        assert memory_pairs_every_call(await agent.state_dict())
        # what the hook chain made of each request is exactly what the model received
        requests = [e for e in events if isinstance(e, PreReasoningEvent)]
        assert [r.messages for r in requests] == [q.messages for q in model.requests]
        modifiers = tuple(s.name for s in chain.run_order() if s.action != "observe")
        assert all(r.modified_by == modifiers for r in requests)
        assert log == chain.expected_log() * len(script)

    asyncio.run(main())


@settings(max_examples=40)
@given(scripts(max_tool_turns=3, max_parallel=2), st.data())
def test_an_interrupt_at_any_point_leaves_loadable_paired_state_and_resume_completes(script, data):
    async def main() -> None:
        agent = ReActAgent("p", "", ScriptedModel(script, chunk_size=3), tools=TOOLS)
        full = await run_events(
            ReActAgent("p", "", ScriptedModel(script, chunk_size=3), tools=TOOLS), "go"
        )
        at = data.draw(st.integers(0, len(full) - 2), label="interrupt after event")
        events: list[BaseEvent] = []
        async for event in agent.events("go", buffer=1):
            events.append(event)
            if len(events) == at + 1:
                agent.interrupt(msg="stop")
        assert_event_protocol(events)
        saved = await agent.state_dict()
        assert memory_pairs_every_call(saved)
        fresh = ReActAgent("p", "", ScriptedModel(["resumed"]), tools=TOOLS)
        await fresh.load_state_dict(saved)
        resumed = await fresh.call("continue")
        assert resumed.ok
        assert resumed.text == "resumed"
        assert memory_pairs_every_call(await fresh.state_dict())

    asyncio.run(main())


@settings(max_examples=40)
@given(scripts(max_tool_turns=2), scripts(max_tool_turns=2), st.integers(1, 8))
def test_save_load_continue_gives_the_same_events_as_an_uninterrupted_run(first, second, chunk):
    async def main() -> None:
        straight = ReActAgent(
            "p", "sys", ScriptedModel([*first, *second], chunk_size=chunk), tools=TOOLS
        )
        await straight.call("one")
        expected = await run_events(straight, "two")

        before = ReActAgent("p", "sys", ScriptedModel(first, chunk_size=chunk), tools=TOOLS)
        await before.call("one")
        saved = await before.state_dict()
        after = ReActAgent("p", "sys", ScriptedModel(second, chunk_size=chunk), tools=TOOLS)
        await after.load_state_dict(saved)
        resumed = await run_events(after, "two")

        assert comparable(resumed) == comparable(expected)

    asyncio.run(main())
