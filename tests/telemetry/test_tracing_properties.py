"""Properties of the spans of random scripted runs: every span ends; the tree mirrors the events."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from rxagent import PreActingEvent, PreReasoningEvent, ReActAgent
from rxagent.events import BaseEvent, ErrorEvent, PostCallEvent
from rxagent.telemetry import Tracing
from rxagent.testing import ScriptedModel, assert_event_protocol
from rxagent.testing.strategies import scripts
from rxagent.testing.tools import add, echo


class Ledger(SpanProcessor):
    """Counts the spans started and keeps those ended."""

    def __init__(self) -> None:
        self.started = 0
        self.ended: list[ReadableSpan] = []

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.started += 1

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


def attribute(span: ReadableSpan, key: str) -> object:
    assert span.attributes is not None
    return span.attributes[key]


async def _run(agent: ReActAgent) -> list[BaseEvent]:
    return [event async for event in agent.events("go")]


@settings(max_examples=30)
@given(
    scripts(tools=[add, echo], max_tool_turns=3, max_parallel=3),
    st.integers(min_value=0, max_value=4),
    st.booleans(),
)
def test_every_span_ends_and_the_tree_mirrors_the_events(
    script: list[Any], cut: int, parallel: bool
) -> None:
    ledger = Ledger()
    provider = TracerProvider()
    provider.add_span_processor(ledger)
    model = ScriptedModel(script[: max(cut, 1)] if cut < len(script) else script)  # may run out
    agent = ReActAgent(
        "prop",
        "",
        model,
        tools=[add, echo],
        parallel_tool_calls=parallel,
        hooks=[Tracing(provider)],
    )
    events = asyncio.run(_run(agent))
    assert_event_protocol(events)

    spans = ledger.ended
    assert ledger.started == len(spans)  # every span started was ended
    by_id = {s.context.span_id: s for s in spans if s.context is not None}

    def parent(span: ReadableSpan) -> ReadableSpan | None:
        return by_id.get(span.parent.span_id) if span.parent is not None else None

    [run] = [s for s in spans if s.name == "invoke_agent prop"]
    assert parent(run) is None
    steps = {attribute(s, "rxagent.step"): s for s in spans if s.name.startswith("step ")}
    assert all(parent(s) is run for s in steps.values())
    assert set(steps) == {
        e.step for e in events if isinstance(e, PreReasoningEvent | PreActingEvent)
    }

    chats = sorted((s for s in spans if s.name == "chat scripted"), key=lambda s: s.start_time or 0)
    pre_reasoning = [e for e in events if isinstance(e, PreReasoningEvent)]
    assert len(chats) == len(pre_reasoning)
    for chat, request in zip(chats, pre_reasoning, strict=True):
        assert parent(chat) is steps[request.step]

    tools = {
        attribute(s, "gen_ai.tool.call.id"): s for s in spans if s.name.startswith("execute_tool")
    }
    pre_acting = [e for e in events if isinstance(e, PreActingEvent)]
    assert set(tools) == {e.tool_call.id for e in pre_acting}
    for call in pre_acting:
        assert parent(tools[call.tool_call.id]) is steps[call.step]
        assert tools[call.tool_call.id].name == f"execute_tool {call.tool_call.name}"

    [post] = [e for e in events if isinstance(e, PostCallEvent)]
    failed = post.result.error is not None
    assert (run.attributes is not None and "error.type" in run.attributes) == failed
    if failed:
        assert any(isinstance(e, ErrorEvent) and e.source == "model" for e in events)
        assert run.attributes is not None
        assert run.attributes["error.type"] == post.result.error.code  # type: ignore[union-attr]
