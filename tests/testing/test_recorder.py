from __future__ import annotations

import asyncio

from rxagent.events import (
    PostReasoningEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
)
from rxagent.hooks import Hook, HookChain, hook
from rxagent.messages import Msg
from rxagent.models import TextDelta
from rxagent.testing import EventRecorder


def dispatch(chain: HookChain, *events: object) -> None:
    async def run() -> None:
        for event in events:
            await chain.dispatch(event)  # type: ignore[type-var]

    asyncio.run(run())


def test_records_every_event_in_order() -> None:
    recorder = EventRecorder()
    assert isinstance(recorder, Hook)
    chain = HookChain([recorder])
    dispatch(
        chain,
        PreCallEvent(input=[Msg.user("hi")]),
        PreReasoningEvent(messages=[]),
        ReasoningChunkEvent(delta=TextDelta(text="x")),
    )
    assert recorder.types() == ["pre_call", "pre_reasoning", "reasoning_chunk"]
    assert len(recorder) == 3
    assert list(recorder) == recorder.recorded
    assert [type(e) for e in recorder.of_type(PreReasoningEvent)] == [PreReasoningEvent]
    recorder.clear()
    assert recorder.recorded == []
    assert "recorded=0" in repr(recorder)


def test_filters_by_event_type() -> None:
    recorder = EventRecorder(PreReasoningEvent, "post_reasoning")
    assert recorder.events is not None
    assert sorted(e.__name__ for e in recorder.events) == [
        "PostReasoningEvent",
        "PreReasoningEvent",
    ]
    dispatch(
        HookChain([recorder]),
        PreCallEvent(input=[Msg.user("hi")]),
        PreReasoningEvent(messages=[]),
        PostReasoningEvent(response=Msg.assistant("ok")),
    )
    assert recorder.types() == ["pre_reasoning", "post_reasoning"]


def test_runs_late_and_sees_the_edited_event() -> None:
    def add_rules(event: PreReasoningEvent) -> PreReasoningEvent:
        return event.replace(messages=[*event.messages, Msg.system("rules")])

    recorder = EventRecorder()
    chain = HookChain([recorder, hook(PreReasoningEvent, priority=50)(add_rules)])
    assert [h.name for h in chain.for_event(PreReasoningEvent)] == ["add_rules", "event_recorder"]
    dispatch(chain, PreReasoningEvent(messages=[]))
    (seen,) = recorder.of_type(PreReasoningEvent)
    assert seen.modified_by == ("add_rules",)
    assert seen.messages[-1].text == "rules"


def test_never_changes_events() -> None:
    recorder = EventRecorder()
    event = PreReasoningEvent(messages=[])
    out = asyncio.run(HookChain([recorder]).dispatch(event))
    assert out is event
    assert out.modified_by == ()
