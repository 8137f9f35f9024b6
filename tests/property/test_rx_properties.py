"""Properties of rxagent.rx over generated event sequences and over whole runs of random scripts."""

from __future__ import annotations

import asyncio
from typing import Any

import reactivex
from hypothesis import given
from hypothesis import strategies as st
from reactivex import Observable
from reactivex import operators as ops

from rxagent import ReActAgent, rx
from rxagent.events import (
    EVENT_TYPES,
    BaseEvent,
    ErrorEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    ReasoningChunkEvent,
)
from rxagent.messages import TextBlock, ThinkingBlock
from rxagent.models import TextDelta, ThinkingDelta, ToolCallDelta
from rxagent.testing import ScriptedModel, assert_event_protocol
from rxagent.testing import strategies as rst
from rxagent.testing.tools import add, echo

event_lists = st.lists(rst.events(), max_size=25)
event_type_sets = st.lists(st.sampled_from(EVENT_TYPES), min_size=1, max_size=4, unique=True)


def values(events: list[BaseEvent], operator: Any) -> list[Any]:
    """Everything `operator` yields for `events`, in order."""
    out: list[Any] = reactivex.from_iterable(events).pipe(operator, ops.to_list()).run()
    return out


@given(event_lists, event_type_sets)
def test_of_type_keeps_exactly_the_matching_events_in_order(
    events: list[BaseEvent], types: list[type[BaseEvent]]
) -> None:
    kept = values(events, rx.of_type(*types))
    expected = [e for e in events if isinstance(e, tuple(types))]
    assert len(kept) == len(expected)
    assert all(a is b for a, b in zip(kept, expected, strict=True))  # the events themselves


@given(event_lists)
def test_text_and_thinking_are_the_deltas_texts_and_nothing_else(events: list[BaseEvent]) -> None:
    deltas = [e.delta for e in events if isinstance(e, ReasoningChunkEvent)]
    texts = values(events, rx.text())
    thoughts = values(events, rx.thinking())
    assert texts == [d.text for d in deltas if isinstance(d, TextDelta)]
    assert thoughts == [d.text for d in deltas if isinstance(d, ThinkingDelta)]
    # text, thinking and tool-call fragments split the chunks between them
    fragments = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert len(texts) + len(thoughts) + len(fragments) == len(deltas)


@given(event_lists)
def test_payload_operators_yield_each_matching_events_payload(events: list[BaseEvent]) -> None:
    assert values(events, rx.tool_calls()) == [
        e.tool_call for e in events if isinstance(e, PreActingEvent)
    ]
    assert values(events, rx.results()) == [
        e.result for e in events if isinstance(e, PostActingEvent)
    ]
    assert values(events, rx.final_result()) == [
        e.result for e in events if isinstance(e, PostCallEvent)
    ]
    assert values(events, rx.errors()) == [e for e in events if isinstance(e, ErrorEvent)]


@given(event_lists, st.sampled_from([rx.text, rx.tool_calls, rx.results, rx.errors]))
def test_an_error_after_any_events_reaches_the_subscriber_after_their_values(
    events: list[BaseEvent], make: Any
) -> None:
    boom = RuntimeError("boom")
    source: Observable[BaseEvent] = reactivex.concat(
        reactivex.from_iterable(events), reactivex.throw(boom)
    )
    seen: list[Any] = []
    errors: list[Exception] = []
    source.pipe(make()).subscribe(seen.append, errors.append)
    assert seen == values(events, make())
    assert errors == [boom]


# -- whole runs -------------------------------------------------------------------------------


@given(rst.scripts(tools=[add, echo]), st.integers(min_value=1, max_value=6))
def test_operators_over_a_real_run_agree_with_its_responses_and_results(
    script: list[Any], chunk_size: int
) -> None:
    async def main() -> list[BaseEvent]:
        agent = ReActAgent("a", "", ScriptedModel(script, chunk_size=chunk_size), tools=[add, echo])
        events: list[BaseEvent] = await agent.stream("go").pipe(ops.to_list())
        return events

    events = asyncio.run(main())
    assert_event_protocol(events)
    responses = [e.response for e in events if isinstance(e, PostReasoningEvent)]
    blocks = [b for r in responses for b in r.blocks]

    # the streamed pieces rebuild each response's text and thinking
    assert "".join(values(events, rx.text())) == "".join(
        b.text for b in blocks if isinstance(b, TextBlock)
    )
    assert "".join(values(events, rx.thinking())) == "".join(
        b.thinking for b in blocks if isinstance(b, ThinkingBlock)
    )
    # every call the model made runs once, in order, and gets exactly one result
    calls = values(events, rx.tool_calls())
    assert calls == [c for r in responses for c in r.tool_calls]
    assert [r.id for r in values(events, rx.results())] == [c.id for c in calls]
    assert not any(r.is_error for r in values(events, rx.results()))
    [result] = values(events, rx.final_result())
    assert result.ok
    assert result.reply == responses[-1]
    assert values(events, rx.errors()) == []
