"""Properties of hook chains: ordering, composition, notifications."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rxagent import (
    EVENT_ADAPTER,
    ErrorCode,
    ErrorEvent,
    HookChain,
    Msg,
    PreReasoningEvent,
    ReasoningChunkEvent,
    hook,
)
from rxagent.errors import HookContractError
from rxagent.events import BaseEvent
from rxagent.hooks import order_hooks
from rxagent.models import TextDelta

priorities = st.lists(st.integers(min_value=-5, max_value=5), min_size=0, max_size=12)


@given(priorities)
def test_order_is_a_stable_sort_by_priority(prios: list[int]):
    hooks = [hook(priority=p, name=f"h{i}")(lambda e: None) for i, p in enumerate(prios)]
    ordered = order_hooks(hooks)
    # a permutation
    assert sorted(h.name for h in ordered) == sorted(h.name for h in hooks)
    # respects priority
    assert [h.priority for h in ordered] == sorted(prios)
    # stable: equal priorities keep registration order
    positions = {h.name: i for i, h in enumerate(hooks)}
    for a, b in itertools.pairwise(ordered):
        if a.priority == b.priority:
            assert positions[a.name] < positions[b.name]
    # the chain resolves the same order for every event type
    chain = HookChain(hooks)
    assert [i.name for i in chain.explain(PreReasoningEvent)] == [h.name for h in ordered]


def _suffix_hook(tag: str, priority: int) -> Any:
    @hook(PreReasoningEvent, priority=priority, name=tag)
    def add(event: PreReasoningEvent) -> PreReasoningEvent:
        return event.replace(messages=[*event.messages, Msg.system(tag)])

    return add


@given(st.lists(st.tuples(st.integers(-3, 3), st.booleans()), max_size=10))
def test_pure_modifying_hooks_compose_in_order(spec: list[tuple[int, bool]]):
    """A chain of pure edits equals applying the edit functions in run order."""
    hooks = []
    for i, (priority, modifies) in enumerate(spec):
        if modifies:
            hooks.append(_suffix_hook(f"m{i}", priority))
        else:
            hooks.append(hook(PreReasoningEvent, priority=priority, name=f"o{i}")(lambda e: None))
    start = PreReasoningEvent(messages=[Msg.user("q")])
    out = asyncio.run(HookChain(hooks).dispatch(start))
    expected = [h.name for h in order_hooks(hooks) if h.name.startswith("m")]
    assert [m.text for m in out.messages] == ["q", *expected]
    assert out.modified_by == tuple(expected)
    assert start.messages == (start.messages[0],)  # the input event is untouched


notification_events = st.one_of(
    st.builds(ReasoningChunkEvent, delta=st.builds(TextDelta, text=st.text(max_size=5))),
    st.builds(
        ErrorEvent,
        code=st.sampled_from(ErrorCode),
        message=st.text(max_size=10),
        recoverable=st.booleans(),
    ),
)


@given(notification_events, st.integers(0, 4))
def test_notification_events_cannot_be_modified(event: BaseEvent, n_hooks: int):
    def tamper(ev: Any) -> Any:
        return ev.model_copy(update={"step": ev.step + 1})

    hooks = [hook(type(event), name=f"t{i}")(tamper) for i in range(n_hooks)]
    out = asyncio.run(HookChain(hooks).dispatch(event))
    assert out is event
    assert out.modified_by == ()
    for field in type(event).model_fields:
        try:
            event.replace(**{field: getattr(event, field)})
        except HookContractError:
            continue
        raise AssertionError(f"{type(event).__name__}.{field} was accepted by replace()")
    assert EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(out)) == event  # type: ignore[arg-type]
