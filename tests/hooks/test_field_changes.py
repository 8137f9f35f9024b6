"""Recording what hooks change: `FieldChange`s in `changes`, on only when asked."""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import (
    EVENT_ADAPTER,
    FieldChange,
    HookChain,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReActAgent,
    ToolResultBlock,
    ToolUseBlock,
    hook,
    tool,
)
from rxagent.errors import ConfigurationError, HookContractError
from rxagent.events import BaseEvent
from rxagent.testing import EventProtocolError, ScriptedModel, assert_event_protocol, tool_call
from rxagent.testing.strategies import HookChainSpec, hook_chains


def request() -> PreReasoningEvent:
    return PreReasoningEvent(messages=[Msg.user("hi", id="u1")], seq=1, run_id="r")


@hook(PreReasoningEvent, priority=10)
def add_rules(event: PreReasoningEvent) -> PreReasoningEvent:
    return event.replace(messages=[*event.messages, Msg.system("Be brief.", id="s1")])


@hook(PreReasoningEvent, priority=20)
def seed_and_rules(event: PreReasoningEvent) -> PreReasoningEvent:
    options = event.options.model_copy(update={"seed": 7})
    return event.replace(messages=event.messages[:1], options=options)


@hook(PreReasoningEvent, priority=30)
def same_values(event: PreReasoningEvent) -> PreReasoningEvent:
    return event.replace(messages=list(event.messages), options=event.options)


E = TypeVar("E", bound=BaseEvent)


def dispatch(chain: HookChain, event: E) -> E:
    return asyncio.run(chain.dispatch(event))


def before(change: FieldChange) -> Any:
    """The value before, as JSON data of any shape (a test knows which)."""
    return change.before


def test_each_changed_field_is_recorded_in_order_with_its_json_value_before():
    chain = HookChain([same_values, seed_and_rules, add_rules], record_changes=True)
    sent = request()
    out = dispatch(chain, sent)
    assert out.modified_by == ("add_rules", "seed_and_rules", "same_values")
    assert [(c.by, c.field) for c in out.changes] == [
        ("add_rules", "messages"),
        ("seed_and_rules", "messages"),
        ("seed_and_rules", "options"),
    ]  # same_values returned equal values: named in modified_by, no change recorded
    first, second, third = out.changes
    assert first.before == [m.model_dump(mode="json") for m in sent.messages]
    assert len(before(second)) == 2
    assert before(second)[1]["id"] == "s1"
    assert third.before == sent.options.model_dump(mode="json")
    assert third.before["seed"] is None
    assert out.undo_changes() == sent
    assert_event_protocol([PreCallEvent(input=[], run_id="r"), out], complete=False)


def test_recording_off_records_nothing_and_changes_stay_empty():
    chain = HookChain([seed_and_rules, add_rules])
    out = dispatch(chain, request())
    assert out.modified_by == ("add_rules", "seed_and_rules")
    assert out.changes == ()
    assert out.options.seed == 7


def test_the_switch_applies_to_the_next_dispatch():
    chain = HookChain([add_rules])
    assert dispatch(chain, request()).changes == ()
    chain.record_changes = True
    assert [c.by for c in dispatch(chain, request()).changes] == ["add_rules"]


def test_changes_travel_through_event_adapter_json():
    out = dispatch(HookChain([seed_and_rules, add_rules], record_changes=True), request())
    data = json.loads(EVENT_ADAPTER.dump_json(out))
    assert data["changes"][0] == {
        "by": "add_rules",
        "field": "messages",
        "before": data["changes"][1]["before"][:1],
    }
    assert data["changes"][2]["before"]["seed"] is None
    assert data["options"]["seed"] == 7
    again = EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(out))
    assert again == out
    assert again.undo_changes() == out.undo_changes()


def test_a_hook_cannot_forge_changes():
    @hook(PreReasoningEvent)
    def forge(event: PreReasoningEvent) -> PreReasoningEvent:
        fake = FieldChange(by="someone", field="messages", before=[])
        return event.model_copy(update={"changes": (fake,)})

    failures: list[Exception] = []
    chain = HookChain([forge], record_changes=True)
    sent = request()
    out = asyncio.run(chain.dispatch(sent, report=lambda _hook, exc: failures.append(exc)))
    assert out == sent  # the forged event is refused, the chain goes on without it
    [failure] = failures
    assert isinstance(failure, HookContractError)
    assert failure.field == "changes"


def test_tool_call_and_result_changes_keep_their_whole_value_before():
    call = ToolUseBlock(id="c1", name="search", input={"q": "cats"})

    @hook(PreActingEvent)
    def narrow(event: PreActingEvent) -> PreActingEvent:
        update = {"input": {**event.tool_call.input, "limit": 3}}
        return event.replace(tool_call=event.tool_call.model_copy(update=update))

    @hook(PostActingEvent)
    def redact(event: PostActingEvent) -> PostActingEvent:
        return event.replace(result=event.result.model_copy(update={"output": "[redacted]"}))

    chain = HookChain([narrow, redact], record_changes=True)
    pre = dispatch(chain, PreActingEvent(tool_call=call))
    assert pre.changes == (FieldChange(by="narrow", field="tool_call", before=call.model_dump()),)
    result = ToolResultBlock(id="c1", name="search", output="secret")
    post = dispatch(chain, PostActingEvent(tool_call=call, result=result))
    assert [(c.field, before(c)["output"]) for c in post.changes] == [("result", "secret")]
    assert post.undo_changes() == PostActingEvent(
        tool_call=call, result=result, timestamp=post.timestamp
    )


def test_undo_changes_keeps_an_unchanged_event_and_empties_modified_by():
    sent = request()
    assert sent.undo_changes() == sent
    named = sent.model_copy(update={"modified_by": ("interceptor",)})
    assert named.undo_changes() == sent


@tool
def lookup(city: str) -> str:
    """Look a city up.

    Args:
        city: The city.
    """
    return f"{city}: sunny"


@hook(PostCallEvent)
def sign(event: PostCallEvent) -> PostCallEvent:
    assert event.reply is not None
    return event.replace(reply=Msg.assistant(f"{event.reply.text} (checked)"))


def run_agent(*, record: bool) -> list[BaseEvent]:
    model = ScriptedModel([tool_call("lookup", city="Oslo"), "Sunny."])
    agent = ReActAgent(
        "w", "", model, tools=[lookup], hooks=[add_rules, sign], record_changes=record
    )

    async def collect() -> list[BaseEvent]:
        return [e async for e in agent.events("weather?")]

    return asyncio.run(collect())


def test_an_agent_records_changes_only_when_asked():
    events = run_agent(record=True)
    assert_event_protocol(events)
    changed = [(e.type, [(c.by, c.field) for c in e.changes]) for e in events if e.changes]
    assert changed == [
        ("pre_reasoning", [("add_rules", "messages")]),
        ("pre_reasoning", [("add_rules", "messages")]),
        ("post_call", [("sign", "reply")]),
    ]
    post = events[-1]
    assert isinstance(post, PostCallEvent)
    assert Msg.model_validate(post.changes[0].before).text == "Sunny."
    assert post.result.text == "Sunny. (checked)"
    assert all(e.changes == () for e in run_agent(record=False))


def test_the_agent_switch_is_the_chain_switch():
    agent = ReActAgent("a", "", ScriptedModel(["ok"]))
    assert agent.record_changes is False
    agent.record_changes = True
    assert agent.hooks.record_changes is True


def test_a_bad_switch_names_the_argument():
    with pytest.raises(ConfigurationError, match="record_changes must be True or False"):
        ReActAgent("a", "", ScriptedModel(["ok"]), record_changes="yes")  # type: ignore[arg-type]


def test_the_protocol_check_refuses_changes_that_do_not_match_their_event():
    sent = request()
    fixed = FieldChange(by="h", field="seq", before=0)
    with pytest.raises(EventProtocolError) as info:
        assert_event_protocol(
            [sent.model_copy(update={"modified_by": ("h",), "changes": (fixed,)})]
        )
    assert info.value.invariant == "changes name modifiable fields and their hooks"
    unnamed = FieldChange(by="ghost", field="messages", before=[])
    with pytest.raises(EventProtocolError, match="'ghost' changed 'messages'"):
        assert_event_protocol([sent.model_copy(update={"changes": (unnamed,)})], complete=False)
    a, b = (FieldChange(by=n, field="tools", before=[]) for n in "ab")
    out_of_order = sent.model_copy(update={"modified_by": ("a", "b"), "changes": (b, a)})
    with pytest.raises(EventProtocolError, match="'a' changed 'tools'"):
        assert_event_protocol([out_of_order], complete=False)


def _dedup_adjacent(names: list[str]) -> list[str]:
    return [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]


@given(hook_chains(max_size=6), st.booleans())
def test_undoing_the_recorded_changes_gives_back_the_event_before_the_hooks(
    spec: HookChainSpec, record: bool
) -> None:
    hooks, _ = spec.build()
    sent = request()
    out = dispatch(HookChain(hooks, record_changes=record), sent)
    assert out == spec.expected(sent).model_copy(update={"changes": out.changes})
    if not record:
        assert out.changes == ()
        return
    assert out.undo_changes() == sent
    # every spec'd hook that modifies changes one field: the `by` names are modified_by
    assert [c.by for c in out.changes] == list(out.modified_by)
    assert _dedup_adjacent([c.by for c in out.changes]) == _dedup_adjacent(list(out.modified_by))
    assert_event_protocol([PreCallEvent(input=[], run_id="r"), out], complete=False)
    # replaying one change at a time, newest first, walks back through each hook's input
    current = json.loads(EVENT_ADAPTER.dump_json(out))
    for change in reversed(out.changes):
        assert current[change.field] != change.before
        current[change.field] = change.before
    current.update(modified_by=[], changes=[])
    assert EVENT_ADAPTER.validate_python(current) == sent
