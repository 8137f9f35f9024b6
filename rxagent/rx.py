"""Typed Rx operators over a run's events: `agent.stream(...).pipe(rx.text())`.

Each function returns an Rx operator, a function from the run's event stream to the values you
want, typed so that mypy knows what comes out:

- `of_type(*types)`: the events of those types, as they are;
- `text()`: each streamed piece of the reply's text (`str`, from `TextDelta` chunks);
- `thinking()`: each streamed piece of the model's thinking (`str`, from `ThinkingDelta` chunks);
- `tool_calls()`: each tool call about to run (`ToolUseBlock`, from `PreActingEvent`);
- `results()`: each tool result (`ToolResultBlock`, from `PostActingEvent`);
- `final_result()`: the run's result, once, at the end (`AgentResult`, from `PostCallEvent`);
- `errors()`: each failure, recoverable or not (`ErrorEvent`).

The stream carries each event after the hooks: a modifiable event is delivered as the last hook
returned it (the same value the run goes on with), so `tool_calls()` yields the arguments that
are executed and `results()` the results memory stores. Values come in the order the events do,
and nothing is buffered: an operator passes each value on as its event arrives.

The operators look only at each event's type and payload, so they work on any stream of events:
a run's (`stream()`), a recorded list (`reactivex.from_iterable(events)`), or a team's, where
nested agents' events (a longer `path`) are included.

Example:
    ```python
    import asyncio
    from reactivex import operators as ops
    from rxagent import ReActAgent, rx, tool
    from rxagent.testing import ScriptedModel, tool_call


    @tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b


    async def main() -> None:
        model = ScriptedModel([tool_call("add", a=2, b=3), "2 + 3 = 5"], chunk_size=3)
        agent = ReActAgent("calc", "You add numbers.", model, tools=[add])
        run = agent.stream("2 + 3?")  # cold: each await below is a run of its own
        assert "".join(await run.pipe(rx.text(), ops.to_list())) == "2 + 3 = 5"
        model.reset()
        [call] = await run.pipe(rx.tool_calls(), ops.to_list())
        assert (call.name, call.input) == ("add", {"a": 2, "b": 3})
        model.reset()
        result = await run.pipe(rx.final_result())
        assert result.ok and result.text == "2 + 3 = 5"


    asyncio.run(main())
    ```
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, overload

from reactivex import Observable

from rxagent.events import (
    BaseEvent,
    ErrorEvent,
    PostActingEvent,
    PostCallEvent,
    PreActingEvent,
    ReasoningChunkEvent,
)
from rxagent.models.base import TextDelta, ThinkingDelta

if TYPE_CHECKING:
    from reactivex import abc

    from rxagent.messages import ToolResultBlock, ToolUseBlock
    from rxagent.result import AgentResult

__all__ = [
    "EventOperator",
    "errors",
    "final_result",
    "of_type",
    "results",
    "text",
    "thinking",
    "tool_calls",
]

T = TypeVar("T")
E1 = TypeVar("E1", bound=BaseEvent)
E2 = TypeVar("E2", bound=BaseEvent)
E3 = TypeVar("E3", bound=BaseEvent)

EventOperator: TypeAlias = Callable[[Observable[BaseEvent]], Observable[T]]
"""An Rx operator from a stream of events to a stream of `T`s (what every function here returns)."""


def _pick(select: Callable[[BaseEvent], T | None]) -> EventOperator[T]:
    """The operator that passes on `select(event)` for each event where it is not None.

    One subscription to the source and no intermediate observable: `select` decides and extracts
    in one call. Errors and completion pass through unchanged.
    """

    def operator(source: Observable[BaseEvent]) -> Observable[T]:
        def subscribe(
            observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            def on_next(event: BaseEvent) -> None:
                value = select(event)
                if value is not None:
                    observer.on_next(value)

            return source.subscribe(
                on_next, observer.on_error, observer.on_completed, scheduler=scheduler
            )

        return Observable(subscribe)

    return operator


@overload
def of_type(event_type: type[E1], /) -> EventOperator[E1]: ...


@overload
def of_type(event_type: type[E1], other: type[E2], /) -> EventOperator[E1 | E2]: ...


@overload
def of_type(
    event_type: type[E1], other: type[E2], third: type[E3], /
) -> EventOperator[E1 | E2 | E3]: ...


@overload
def of_type(*event_types: type[BaseEvent]) -> EventOperator[BaseEvent]: ...


def of_type(*event_types: type[BaseEvent]) -> EventOperator[Any]:
    """Keep only the events of the given types (subclasses included), in order.

    The result is typed as the union of the types given (up to three; with more, `BaseEvent`),
    so `stream.pipe(rx.of_type(PostActingEvent))` is an `Observable[PostActingEvent]`.

    Args:
        *event_types: Event classes: the built-in ones (`rxagent.events.EVENT_TYPES`) or your own
            subclasses of `BaseEvent`.

    Raises:
        TypeError: When no type is given, or an argument is not a subclass of `BaseEvent`
            (an instance, a string, a message class, ...); the message names it.

    Example:
        ```python
        import reactivex
        from reactivex import operators as ops
        from rxagent import rx
        from rxagent.events import ErrorEvent, PostCallEvent, PreCallEvent
        from rxagent.messages import Msg

        events = [PreCallEvent(input=[Msg.user("hi")]), ErrorEvent(code="UNKNOWN", message="x")]
        errors = reactivex.from_iterable(events).pipe(rx.of_type(ErrorEvent, PostCallEvent))
        assert errors.pipe(ops.to_list()).run() == [events[1]]
        ```
    """
    if not event_types:
        raise TypeError("of_type() needs at least one event class, e.g. of_type(PostActingEvent)")
    for event_type in event_types:
        if not (isinstance(event_type, type) and issubclass(event_type, BaseEvent)):
            raise TypeError(
                f"of_type() takes event classes (subclasses of rxagent.events.BaseEvent); "
                f"got {event_type!r}"
            )
    wanted = tuple(event_types)
    return _pick(lambda event: event if isinstance(event, wanted) else None)


def _text_of(event: BaseEvent) -> str | None:
    if isinstance(event, ReasoningChunkEvent) and isinstance(event.delta, TextDelta):
        return event.delta.text
    return None


def text() -> EventOperator[str]:
    """Yield the reply's text as it streams: the text of each `TextDelta` chunk.

    Only text: thinking (`ThinkingDelta`) and tool-call argument fragments (`ToolCallDelta`) are
    left out, so joining the pieces of one model call gives that response's text. A run with
    tool calls has a model call per step, and the pieces of every step come in order. Chunks are
    not hookable, so this is exactly what the model streamed; a PostReasoning hook's edit shows in
    the final reply (`final_result()`), not here.

    Example:
        ```python
        import asyncio
        from reactivex import operators as ops
        from rxagent import ReActAgent, rx
        from rxagent.testing import ScriptedModel, text, thinking


        async def main() -> None:
            model = ScriptedModel([[thinking("Say hi."), text("Hello there!")]], chunk_size=5)
            agent = ReActAgent("a", "", model)
            pieces = await agent.stream("hi").pipe(rx.text(), ops.to_list())
            assert pieces == ["Hello", " ther", "e!"]


        asyncio.run(main())
        ```
    """
    return _pick(_text_of)


def _thinking_of(event: BaseEvent) -> str | None:
    if isinstance(event, ReasoningChunkEvent) and isinstance(event.delta, ThinkingDelta):
        return event.delta.text
    return None


def thinking() -> EventOperator[str]:
    """Yield the model's thinking as it streams: the text of each `ThinkingDelta` chunk.

    Models that reason before answering (and whose provider streams it) send it; for the others
    this yields nothing. The signature of a thinking block is on its last delta, not here.

    Example:
        ```python
        import asyncio
        from reactivex import operators as ops
        from rxagent import ReActAgent, rx
        from rxagent.testing import ScriptedModel, text, thinking


        async def main() -> None:
            model = ScriptedModel([[thinking("Greet back."), text("Hi!")]], chunk_size=4)
            agent = ReActAgent("a", "", model)
            pieces = await agent.stream("hi").pipe(rx.thinking(), ops.to_list())
            assert "".join(pieces) == "Greet back."


        asyncio.run(main())
        ```
    """
    return _pick(_thinking_of)


def _tool_call_of(event: BaseEvent) -> ToolUseBlock | None:
    return event.tool_call if isinstance(event, PreActingEvent) else None


def tool_calls() -> EventOperator[ToolUseBlock]:
    """Yield each tool call as it is about to run: `PreActingEvent.tool_call`.

    The call is the one the PreActing hooks returned, so its `input` is what the tool receives.
    A call comes once, before its tool runs (parallel calls in the order they are started).
    Some calls have no PreActing, so they are not yielded: calls cut by `max_tool_calls` (an
    `ErrorEvent` says so) and calls waiting for approval (an `ApprovalRequestedEvent`; the call
    is yielded in the run that resumes it). A call a PreActing hook rejects with `Reject` is
    yielded as it was before the hooks, and its result (from `results()`) is an error.

    Example:
        ```python
        import asyncio
        from reactivex import operators as ops
        from rxagent import ReActAgent, rx, tool
        from rxagent.testing import ScriptedModel, tool_call


        @tool
        def echo(text: str) -> str:
            \"\"\"Echo the text back.\"\"\"
            return text


        async def main() -> None:
            model = ScriptedModel([tool_call("echo", text="hi"), "done"])
            agent = ReActAgent("a", "", model, tools=[echo])
            [call] = await agent.stream("go").pipe(rx.tool_calls(), ops.to_list())
            assert (call.id, call.name, call.input) == ("call_1", "echo", {"text": "hi"})


        asyncio.run(main())
        ```
    """
    return _pick(_tool_call_of)


def _result_of(event: BaseEvent) -> ToolResultBlock | None:
    return event.result if isinstance(event, PostActingEvent) else None


def results() -> EventOperator[ToolResultBlock]:
    """Yield each tool result: `PostActingEvent.result`, as the PostActing hooks left it.

    This is the result memory stores and the model sees. Its `id` is the call's id and
    `is_error` is True for a failed, timed-out, rejected or interrupted call. Every call from
    `tool_calls()` gets exactly one result here, once its tool has finished.

    Example:
        ```python
        import asyncio
        from reactivex import operators as ops
        from rxagent import ReActAgent, rx, tool
        from rxagent.testing import ScriptedModel, tool_call


        @tool
        def add(a: int, b: int) -> int:
            \"\"\"Add two numbers.\"\"\"
            return a + b


        async def main() -> None:
            model = ScriptedModel([tool_call("add", a=1, b=2), "3"])
            agent = ReActAgent("a", "", model, tools=[add])
            [result] = await agent.stream("1 + 2?").pipe(rx.results(), ops.to_list())
            assert (result.id, result.output, result.is_error) == ("call_1", "3", False)


        asyncio.run(main())
        ```
    """
    return _pick(_result_of)


def _final_result_of(event: BaseEvent) -> AgentResult[Any] | None:
    return event.result if isinstance(event, PostCallEvent) else None


def final_result() -> EventOperator[AgentResult[Any]]:
    """Yield the run's result, `PostCallEvent.result`: once, as the run's last value.

    A failed run has a result too (`ok=False`, with its `error`), since a run failure is data.
    A run whose subscription is disposed early delivers no PostCall, so nothing is yielded. The
    result's `reply` is the reply after the PostCall hooks.

    Example:
        ```python
        import asyncio
        from rxagent import ReActAgent, rx
        from rxagent.testing import ScriptedModel


        async def main() -> None:
            agent = ReActAgent("a", "", ScriptedModel(["Hi!"]))
            result = await agent.stream("hello").pipe(rx.final_result())
            assert result.ok and result.text == "Hi!" and result.stop_reason == "no_tool_calls"


        asyncio.run(main())
        ```
    """
    return _pick(_final_result_of)


def _error_of(event: BaseEvent) -> ErrorEvent | None:
    return event if isinstance(event, ErrorEvent) else None


def errors() -> EventOperator[ErrorEvent]:
    """Yield each `ErrorEvent`: recoverable ones (a tool failed, a hook raised) and the run's own.

    A run failure is data: its `ErrorEvent` comes here, and the run still ends with a result
    (see `final_result()`). `on_error` is left for bugs. Filter on `recoverable` or `source`
    (`"model"`, `"tool:<name>"`, `"hook:<name>"`, `"guard:<stage>"`, ...) for the ones you want.

    Example:
        ```python
        import asyncio
        from reactivex import operators as ops
        from rxagent import ReActAgent, rx
        from rxagent.testing import ScriptedModel, tool_call


        async def main() -> None:
            agent = ReActAgent("a", "", ScriptedModel([tool_call("nope"), "Sorry."]))
            [error] = await agent.stream("go").pipe(rx.errors(), ops.to_list())
            assert error.source == "tool:nope" and error.recoverable


        asyncio.run(main())
        ```
    """
    return _pick(_error_of)
