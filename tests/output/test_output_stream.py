"""`OutputStream`: the partial output of one response, from text or a final-answer call."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rxagent.formatters.openai import OpenAIFormatter
from rxagent.models import TextDelta, ThinkingDelta, ToolCallDelta
from rxagent.output import NO_PARTIAL, OutputStream, resolve_output


class Trip(BaseModel):
    city: str
    days: list[int] = []


def feed_all(stream: OutputStream, deltas: list[Any]) -> list[Any]:
    out = [stream.feed(d) for d in deltas]
    return [p for p in out if p is not NO_PARTIAL]


def test_text_streams_into_partials_that_grow():
    stream = OutputStream(resolve_output(Trip))
    parts = feed_all(
        stream,
        [TextDelta(text=t) for t in ['{"ci', 'ty": "Pa', 'ris", "da', 'ys": [1', ", 2", "]}"]],
    )
    assert [(p.city, p.days) for p in parts] == [
        (None, None),
        ("Pa", None),
        ("Paris", None),
        ("Paris", []),
        ("Paris", [1]),
        ("Paris", [1, 2]),
    ]
    assert stream.close() is NO_PARTIAL  # the object was complete already


def test_other_deltas_are_ignored_and_prose_ends_the_partials():
    stream = OutputStream(resolve_output(Trip))
    assert stream.feed(ThinkingDelta(text="{")) is NO_PARTIAL
    assert stream.feed(TextDelta(text="")) is NO_PARTIAL
    assert stream.feed(TextDelta(text="Sure, here")) is NO_PARTIAL
    assert stream.feed(TextDelta(text='{"city": "x"}')) is NO_PARTIAL
    assert stream.close() is NO_PARTIAL


def test_a_top_level_number_completes_on_close():
    stream = OutputStream(resolve_output(int))
    assert stream.feed(TextDelta(text="4")) is NO_PARTIAL
    assert stream.feed(TextDelta(text="2")) is NO_PARTIAL
    assert stream.close() == 42
    broken = OutputStream(resolve_output(int))
    broken.feed(TextDelta(text="[1"))
    assert broken.close() is NO_PARTIAL


def test_wrapped_native_text_is_unwrapped():
    plan = resolve_output(list[int], capabilities=OpenAIFormatter.capabilities)
    stream = OutputStream(plan)
    assert stream.feed(TextDelta(text='{"val')) is NO_PARTIAL
    assert stream.feed(TextDelta(text='ue": [4')) == []
    assert stream.feed(TextDelta(text=", 5]}")) == [4, 5]


def test_tool_strategy_follows_the_first_final_answer_call():
    stream = OutputStream(resolve_output(Trip, strategy="tool"))
    deltas = [
        TextDelta(text='{"city": "no"}'),
        ToolCallDelta(index=1, id="a", name="lookup", args='{"q": 1}'),
        ToolCallDelta(index=2, id="b", name="final_answer", args='{"city": "Ro'),
        ToolCallDelta(index=1, args="ignored"),
        ToolCallDelta(index=2, args='me"}'),
        ToolCallDelta(index=3, id="c", name="final_answer", args='{"city": "Oslo"}'),
    ]
    parts = feed_all(stream, deltas)
    assert [p.city for p in parts] == ["Ro", "Rome"]


def test_unchanged_partials_are_not_repeated():
    stream = OutputStream(resolve_output(Trip))
    assert stream.feed(TextDelta(text='{"city": "A"')).city == "A"
    assert stream.feed(TextDelta(text=" ")) is NO_PARTIAL  # the same value
    assert stream.feed(TextDelta(text=', "days": [')).days == []


def test_invalid_partials_are_skipped():
    stream = OutputStream(resolve_output(list[int]))
    assert stream.feed(TextDelta(text='{"a": 1')) is NO_PARTIAL  # not a list at all


def test_long_answers_space_their_partials_out():
    text = Trip(city="x" * 200, days=list(range(300))).model_dump_json()
    stream = OutputStream(resolve_output(Trip))
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    parts = feed_all(stream, [TextDelta(text=c) for c in chunks])
    assert 64 < len(parts) < len(chunks) // 2
    assert parts[-1].days == list(range(300))  # the completed JSON always gives one
