"""HookChain: registration checks, ordering, dispatch, contract, isolation."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import (
    BaseHook,
    ErrorEvent,
    HookChain,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
    Reject,
    ToolResultBlock,
    ToolUseBlock,
    hook,
)
from rxagent.errors import HookContractError, HookDefinitionError, HookFailedError
from rxagent.events import BaseEvent
from rxagent.hooks import Hook, order_hooks
from rxagent.models import TextDelta


def pre_reasoning() -> PreReasoningEvent:
    return PreReasoningEvent(messages=[Msg.user("hi")], seq=3, run_id="r")


def test_hook_decorator_validates_event_types_with_the_fix():
    with pytest.raises(HookDefinitionError, match="PreReasoningEvent"):
        hook("not_an_event")
    with pytest.raises(HookDefinitionError, match="event classes"):
        hook(int)  # type: ignore[arg-type]
    with pytest.raises(HookDefinitionError, match="priority"):
        hook(PreCallEvent, priority="high")  # type: ignore[call-overload]
    with pytest.raises(HookDefinitionError, match="on_error"):
        hook(PreCallEvent, on_error="ignore")  # type: ignore[call-overload]


def test_event_types_come_from_names_annotations_or_default_to_all():
    by_name = hook("pre_reasoning")(lambda e: None)
    assert by_name.events == frozenset({PreReasoningEvent})

    @hook
    def annotated(event: PreActingEvent | PostActingEvent) -> None:
        return None

    assert annotated.events == frozenset({PreActingEvent, PostActingEvent})

    @hook()
    def everything(event: BaseEvent) -> None:
        return None

    assert everything.events is None
    assert everything.name == "everything"
    assert everything.priority == 100


def test_plain_objects_are_checked_when_registered():
    chain = HookChain()
    with pytest.raises(HookDefinitionError, match="not a hook"):
        chain.add(42)

    class NoName:
        priority = 1
        on_error = "isolate"
        events = None
        name = None

        async def on_event(self, event: Any) -> None:
            return None

    with pytest.raises(HookDefinitionError, match="name"):
        chain.add(NoName())


def test_order_is_priority_then_registration():
    hooks = [
        hook(priority=p, name=n)(lambda e: None)
        for p, n in [(5, "a"), (1, "b"), (5, "c"), (0, "d")]
    ]
    assert [h.name for h in order_hooks(hooks)] == ["d", "b", "a", "c"]
    chain = HookChain(hooks)
    assert [i.name for i in chain.explain(PreCallEvent)] == ["d", "b", "a", "c"]
    assert str(chain.explain(PreCallEvent)[0]) == "0. d (priority 0, observes, isolate)"
    assert chain.explain(PreReasoningEvent)[0].can_modify


def test_events_filter_limits_who_sees_what():
    only_calls = hook(PreCallEvent, name="calls")(lambda e: None)
    everything = hook(name="all")(lambda e: None)
    chain = HookChain([only_calls, everything])
    assert [h.name for h in chain.for_event(PreCallEvent)] == ["calls", "all"]
    assert [h.name for h in chain.for_event(ReasoningChunkEvent)] == ["all"]


async def test_modifiable_chain_passes_each_hook_the_previous_result():
    seen: list[int] = []

    def appender(tag: str, priority: int) -> Hook:
        @hook(PreReasoningEvent, priority=priority, name=tag)
        def add(event: PreReasoningEvent) -> PreReasoningEvent:
            seen.append(len(event.messages))
            return event.replace(messages=[*event.messages, Msg.system(tag)])

        return add

    observer = hook(PreReasoningEvent, priority=3, name="observer")(lambda e: None)
    chain = HookChain([appender("second", 2), appender("first", 1), observer])
    out = await chain.dispatch(pre_reasoning())
    assert seen == [1, 2]
    assert [m.text for m in out.messages] == ["hi", "first", "second"]
    assert out.modified_by == ("first", "second")
    assert out.seq == 3
    assert out.run_id == "r"


async def test_async_and_class_hooks():
    class Upper(BaseHook):
        priority = 5
        events = frozenset({PostCallEvent})

        async def on_event(self, event: PostCallEvent) -> PostCallEvent:
            return event.replace(reply=Msg.assistant(event.reply.text.upper()))

    @hook(PostCallEvent, priority=9)
    async def exclaim(event: PostCallEvent) -> PostCallEvent:
        return event.replace(reply=Msg.assistant(event.reply.text + "!"))

    from rxagent import AgentResult

    reply = Msg.assistant("hey")
    event = PostCallEvent(reply=reply, result=AgentResult(reply=reply))
    out = await HookChain([exclaim, Upper()]).dispatch(event)
    assert out.reply.text == "HEY!"
    assert out.modified_by == ("Upper", "exclaim")


async def test_notification_events_ignore_returned_values_and_are_frozen():
    chunk = ReasoningChunkEvent(delta=TextDelta(text="x"))

    @hook(ReasoningChunkEvent)
    def tries_to_modify(event: ReasoningChunkEvent) -> ReasoningChunkEvent:
        return event.model_copy(update={"index": 9})

    out = await HookChain([tries_to_modify]).dispatch(chunk)
    assert out is chunk
    assert out.index == 0
    with pytest.raises(HookContractError, match="notification"):
        chunk.replace(index=1)
    with pytest.raises(Exception, match="frozen"):
        chunk.index = 3  # type: ignore[misc]


async def test_contract_wrong_type_and_fixed_fields_are_named():
    @hook(PreReasoningEvent, on_error="propagate")
    def wrong_type(event: PreReasoningEvent) -> Any:
        return PreCallEvent(input=())

    with pytest.raises(HookFailedError) as info:
        await HookChain([wrong_type]).dispatch(pre_reasoning())
    cause = info.value.__cause__
    assert isinstance(cause, HookContractError)
    assert cause.hook == "wrong_type"
    assert "returned PreCallEvent" in str(cause)

    @hook(PreReasoningEvent, on_error="propagate")
    def moves_seq(event: PreReasoningEvent) -> PreReasoningEvent:
        return event.model_copy(update={"seq": 99})

    with pytest.raises(HookFailedError) as info:
        await HookChain([moves_seq]).dispatch(pre_reasoning())
    cause = info.value.__cause__
    assert isinstance(cause, HookContractError)
    assert cause.field == "seq"
    assert "PreReasoningEvent.seq" in str(cause)
    assert "event.replace" in str(cause)

    with pytest.raises(HookContractError, match="modifiable fields are"):
        pre_reasoning().replace(seq=1)


async def test_pre_acting_may_change_only_the_input():
    call = ToolUseBlock(id="c1", name="add", input={"a": 1})

    @hook(PreActingEvent, on_error="propagate")
    def rename(event: PreActingEvent) -> PreActingEvent:
        return event.replace(tool_call=event.tool_call.model_copy(update={"name": "rm"}))

    with pytest.raises(HookFailedError) as info:
        await HookChain([rename]).dispatch(PreActingEvent(tool_call=call))
    assert isinstance(info.value.__cause__, HookContractError)
    assert info.value.__cause__.field == "tool_call.name"

    @hook(PreActingEvent)
    def change_input(event: PreActingEvent) -> PreActingEvent:
        return event.replace(tool_call=event.tool_call.model_copy(update={"input": {"a": 2}}))

    out = await HookChain([change_input]).dispatch(PreActingEvent(tool_call=call))
    assert out.tool_call.input == {"a": 2}


async def test_post_acting_result_must_keep_the_call_id():
    call = ToolUseBlock(id="c1", name="add")
    event = PostActingEvent(tool_call=call, result=ToolResultBlock(id="c1", name="add", output="1"))

    @hook(PostActingEvent, on_error="propagate")
    def other_id(event: PostActingEvent) -> PostActingEvent:
        return event.replace(result=ToolResultBlock(id="zz", name="add", output="x"))

    with pytest.raises(HookFailedError) as info:
        await HookChain([other_id]).dispatch(event)
    assert isinstance(info.value.__cause__, HookContractError)
    assert info.value.__cause__.field == "result.id"


async def test_isolated_failure_is_reported_and_the_chain_continues_with_last_good_event():
    reports: list[tuple[str, Exception]] = []

    @hook(PreReasoningEvent, priority=1)
    def first(event: PreReasoningEvent) -> PreReasoningEvent:
        return event.replace(messages=[*event.messages, Msg.system("first")])

    @hook(PreReasoningEvent, priority=2)
    def broken(event: PreReasoningEvent) -> PreReasoningEvent:
        raise KeyError("nope")

    @hook(PreReasoningEvent, priority=3)
    def third(event: PreReasoningEvent) -> PreReasoningEvent:
        return event.replace(messages=[*event.messages, Msg.system("third")])

    chain = HookChain([third, broken, first])
    out = await chain.dispatch(pre_reasoning(), report=lambda h, e: reports.append((h.name, e)))
    assert [m.text for m in out.messages] == ["hi", "first", "third"]
    assert out.modified_by == ("first", "third")
    assert [(name, type(e)) for name, e in reports] == [("broken", KeyError)]


async def test_isolated_failure_without_a_reporter_is_logged(caplog: pytest.LogCaptureFixture):
    @hook(PreCallEvent)
    def broken(event: PreCallEvent) -> None:
        raise ValueError("logged")

    await HookChain([broken]).dispatch(PreCallEvent(input=()))
    assert "broken" in caplog.text
    assert "logged" in caplog.text


async def test_reject_propagates_with_the_hook_name():
    @hook(PreCallEvent, name="bouncer")
    def bouncer(event: PreCallEvent) -> None:
        raise Reject("not today")

    with pytest.raises(Reject) as info:
        await HookChain([bouncer]).dispatch(PreCallEvent(input=()))
    assert info.value.hook == "bouncer"
    assert info.value.reason == "not today"


async def test_cancelled_error_is_never_swallowed():
    import asyncio

    @hook(PreCallEvent)
    def cancel(event: PreCallEvent) -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await HookChain([cancel]).dispatch(PreCallEvent(input=()))


async def test_agent_hooks_add_remove_and_error_events_reach_hooks():
    from rxagent import ReActAgent
    from rxagent.testing import ScriptedModel

    errors: list[ErrorEvent] = []

    @hook(ErrorEvent)
    def collect(event: ErrorEvent) -> None:
        errors.append(event)

    @hook(PreReasoningEvent)
    def broken(event: PreReasoningEvent) -> None:
        raise RuntimeError("bad hook")

    agent = ReActAgent("a", "", ScriptedModel(["x", "y"]), hooks=[collect])
    added = agent.hooks.add(broken)
    await agent.call("one")
    assert [e.source for e in errors] == ["hook:broken"]
    agent.hooks.remove(added)
    assert broken not in agent.hooks
    await agent.call("two")
    assert len(errors) == 1
