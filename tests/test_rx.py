"""rxagent.rx: typed operators over a run's events, on real runs and on plain observables."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any, assert_type

import pytest
import reactivex
from reactivex import Observable
from reactivex import operators as ops
from reactivex.subject import Subject

import rxagent
from rxagent import (
    ErrorCode,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PreActingEvent,
    ReActAgent,
    ReasoningChunkEvent,
    Reject,
    ToolResultBlock,
    ToolUseBlock,
    hook,
    rx,
)
from rxagent.events import BaseEvent, CustomEvent, ErrorEvent, PreCallEvent
from rxagent.messages import Block
from rxagent.models import TextDelta, ToolCallDelta
from rxagent.result import AgentResult
from rxagent.testing import ScriptedModel, text, thinking, tool_call
from rxagent.testing.tools import add, echo


async def collect(source: Observable[Any]) -> list[Any]:
    result: list[Any] = await source.pipe(ops.to_list())
    return result


# -- a real run where a tool call streams -------------------------------------------------------


def streaming_agent(**kwargs: Any) -> tuple[ReActAgent, ScriptedModel]:
    first: list[str | Block] = [
        thinking("I should add."),
        text("Let me add."),
        tool_call("add", a=20, b=22),
    ]
    model = ScriptedModel([first, "The answer is 42."], chunk_size=3)
    return ReActAgent("calc", "You add.", model, tools=[add, echo], **kwargs), model


async def test_text_skips_thinking_and_tool_call_fragments_in_a_real_run() -> None:
    agent, model = streaming_agent()
    events = await collect(agent.stream("20 + 22?"))
    deltas = [e.delta for e in events if isinstance(e, ReasoningChunkEvent)]
    assert any(isinstance(d, ToolCallDelta) for d in deltas)  # the case a plain map breaks on
    with pytest.raises(AttributeError, match="text"):
        [d.text for d in deltas]  # type: ignore[union-attr]

    model.reset()
    pieces = await collect(agent.stream("20 + 22?").pipe(rx.text()))
    assert "".join(pieces) == "Let me add.The answer is 42."
    assert pieces[:4] == ["Let", " me", " ad", "d."]
    model.reset()
    assert "".join(await collect(agent.stream("again").pipe(rx.thinking()))) == "I should add."


async def test_tool_calls_results_and_final_result_of_a_real_run() -> None:
    agent, model = streaming_agent()
    calls = await collect(agent.stream("20 + 22?").pipe(rx.tool_calls()))
    assert calls == [ToolUseBlock(id="call_1", name="add", input={"a": 20, "b": 22})]
    model.reset()
    results = await collect(agent.stream("20 + 22?").pipe(rx.results()))
    assert results == [ToolResultBlock(id="call_2", name="add", output="42")]
    model.reset()
    [result] = await collect(agent.stream("20 + 22?").pipe(rx.final_result()))
    assert result.ok
    assert result.text == "The answer is 42."
    assert result.tools_used == ("add",)


async def test_tool_calls_and_results_are_the_versions_after_the_hooks() -> None:
    @hook(PreActingEvent)
    def double_b(event: PreActingEvent) -> PreActingEvent:
        call = event.tool_call
        return event.replace(
            tool_call=call.model_copy(update={"input": {**call.input, "b": call.input["b"] * 2}})
        )

    @hook(PostActingEvent)
    def shout(event: PostActingEvent) -> PostActingEvent:
        return event.replace(result=event.result.model_copy(update={"output": "SIXTY-FOUR"}))

    agent, _model = streaming_agent(hooks=[double_b, shout])
    events = await collect(agent.stream("20 + 22?"))
    source = reactivex.from_iterable(events)
    [call] = await collect(source.pipe(rx.tool_calls()))
    assert call.input == {"a": 20, "b": 44}  # what the tool received
    [result] = await collect(source.pipe(rx.results()))
    assert result.output == "SIXTY-FOUR"  # what memory stores
    memory = (await agent.state_dict())["memory"]
    assert memory[2]["content"][0]["output"] == "SIXTY-FOUR"


async def test_a_rejected_call_is_yielded_as_made_and_its_result_is_an_error() -> None:
    @hook(PreActingEvent)
    def refuse(event: PreActingEvent) -> None:
        raise Reject("no adding today")

    agent, _ = streaming_agent(hooks=[refuse])
    events = await collect(agent.stream("20 + 22?"))
    source = reactivex.from_iterable(events)
    [call] = await collect(source.pipe(rx.tool_calls()))
    assert call.input == {"a": 20, "b": 22}
    [result] = await collect(source.pipe(rx.results()))
    assert result.id == call.id
    assert result.is_error
    assert "no adding today" in result.text


async def test_errors_and_the_final_result_of_a_failing_run() -> None:
    model = ScriptedModel([tool_call("missing")])  # then the script runs out
    agent = ReActAgent("a", "", model)
    events = await collect(agent.stream("go"))
    source = reactivex.from_iterable(events)
    errors = await collect(source.pipe(rx.errors()))
    assert [(e.source, e.recoverable) for e in errors] == [("tool:missing", True), ("model", False)]
    [result] = await collect(source.pipe(rx.final_result()))
    assert not result.ok
    assert result.error is not None
    assert result.error.code == ErrorCode.PROVIDER_ERROR


# -- of_type ------------------------------------------------------------------------------------


class AuditEvent(CustomEvent):
    """A user's own event type (a subclass of a built-in one)."""


def test_of_type_keeps_subclasses_of_the_types_given() -> None:
    events: list[BaseEvent] = [
        CustomEvent(name="plain", seq=0),
        AuditEvent(name="audit", seq=1),
        PreCallEvent(input=[Msg.user("hi")], seq=2),
    ]
    source = reactivex.from_iterable(events)
    assert source.pipe(rx.of_type(CustomEvent), ops.to_list()).run() == events[:2]
    assert source.pipe(rx.of_type(AuditEvent), ops.to_list()).run() == [events[1]]


@pytest.mark.parametrize(
    ("argument", "named"),
    [
        ("PreCallEvent", "'PreCallEvent'"),
        (Msg, "Msg"),
        (PreCallEvent(input=[Msg.user("hi")]), "PreCallEvent("),
        (int, "int"),
    ],
)
def test_of_type_refuses_what_is_not_an_event_class(argument: Any, named: str) -> None:
    with pytest.raises(TypeError, match="of_type\\(\\) takes event classes") as caught:
        rx.of_type(PreCallEvent, argument)
    assert named in str(caught.value)


def test_of_type_needs_a_type() -> None:
    with pytest.raises(TypeError, match="at least one event class"):
        rx.of_type()


def test_operators_are_typed() -> None:
    source: Observable[BaseEvent] = reactivex.empty()
    assert_type(source.pipe(rx.of_type(PostActingEvent)), Observable[PostActingEvent])
    assert_type(
        source.pipe(rx.of_type(PreActingEvent, PostActingEvent)),
        Observable[PreActingEvent | PostActingEvent],
    )
    assert_type(
        source.pipe(rx.of_type(PreActingEvent, PostActingEvent, ErrorEvent)),
        Observable[PreActingEvent | PostActingEvent | ErrorEvent],
    )
    assert_type(
        source.pipe(rx.of_type(PreActingEvent, PostActingEvent, ErrorEvent, PostCallEvent)),
        Observable[BaseEvent],
    )
    assert_type(source.pipe(rx.text()), Observable[str])
    assert_type(source.pipe(rx.thinking()), Observable[str])
    assert_type(source.pipe(rx.tool_calls()), Observable[ToolUseBlock])
    assert_type(source.pipe(rx.results()), Observable[ToolResultBlock])
    assert_type(source.pipe(rx.final_result()), Observable[AgentResult[Any]])
    assert_type(source.pipe(rx.errors()), Observable[ErrorEvent])


# -- Rx behaviour: errors, completion, disposal ---------------------------------------------------


def test_errors_and_completion_pass_through() -> None:
    subject: Subject[BaseEvent] = Subject()
    seen: list[tuple[str, Any]] = []
    subject.pipe(rx.text()).subscribe(
        on_next=lambda v: seen.append(("next", v)),
        on_error=lambda e: seen.append(("error", e)),
        on_completed=lambda: seen.append(("completed", None)),
    )
    boom = RuntimeError("boom")
    subject.on_next(ReasoningChunkEvent(delta=TextDelta(index=0, text="hi")))
    subject.on_next(ReasoningChunkEvent(delta=ToolCallDelta(index=1, name="add")))
    subject.on_error(boom)
    assert seen == [("next", "hi"), ("error", boom)]

    done: list[str] = []
    reactivex.empty().pipe(rx.tool_calls()).subscribe(on_completed=lambda: done.append("done"))
    assert done == ["done"]


def test_disposing_the_operator_unsubscribes_from_the_source() -> None:
    subject: Subject[BaseEvent] = Subject()
    seen: list[str] = []
    subscription = subject.pipe(rx.text()).subscribe(seen.append)
    assert subject.observers
    subscription.dispose()
    assert not subject.observers
    subject.on_next(ReasoningChunkEvent(delta=TextDelta(index=0, text="late")))
    assert seen == []


async def test_disposing_a_piped_run_cancels_the_run() -> None:
    agent = ReActAgent("a", "", ScriptedModel(["x" * 50], chunk_size=1, delay=0.001))
    first: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_piece(piece: str) -> None:
        if not first.done():
            first.set_result(piece)

    subscription = agent.stream("go").pipe(rx.text()).subscribe(on_piece)
    assert await first == "x"
    assert agent.is_running()
    subscription.dispose()
    while agent.is_running():
        await asyncio.sleep(0)
    memory = (await agent.state_dict())["memory"]
    assert [m["role"] for m in memory] == ["user"]


# -- the module -----------------------------------------------------------------------------------


def test_rx_is_a_module_not_a_top_level_name() -> None:
    assert "rx" not in rxagent.__all__
    from rxagent import rx as imported
    from rxagent.rx import text as text_operator

    assert imported is rx
    assert text_operator is rx.text


def test_rxagent_never_imports_a_top_level_rx() -> None:
    """`rxagent.rx` is not RxPY: rxagent's modules import `reactivex`, never `rx`."""
    package = Path(rxagent.__file__).parent
    offenders: list[str] = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            offenders += [f"{path.name}: {n}" for n in names if n == "rx" or n.startswith("rx.")]
    assert offenders == []
