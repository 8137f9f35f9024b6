"""Strategies for tool schemas, options, usages and events (see `strategies`)."""

from __future__ import annotations

import functools
import typing
from typing import TYPE_CHECKING, Any, Final, get_args

from hypothesis import strategies as st

from rxagent.errors import ErrorCode
from rxagent.events import (
    ActingChunkEvent,
    AgentEvent,
    ApprovalRequestedEvent,
    BaseEvent,
    ContextTrimmedEvent,
    CustomEvent,
    ErrorEvent,
    FallbackEvent,
    GuardAction,
    GuardEvent,
    GuardTarget,
    GuardVerdict,
    HandoffEvent,
    Hit,
    InterruptedEvent,
    OutputChunkEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
    RetrievalEvent,
    RetryEvent,
)
from rxagent.models.base import (
    ModelOptions,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSchema,
    Usage,
)
from rxagent.result import AgentResult, ErrorInfo, StopReason
from rxagent.testing._strategies_messages import (
    Draw,
    SearchStrategy,
    hex_ids,
    idents,
    json_values,
    messages,
    messages_of,
    result_for,
    small_ints,
    tool_use_blocks,
    words,
)
from rxagent.testing.tools import add, echo

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rxagent.messages import Msg

__all__ = ["events", "model_options", "tool_schemas", "usages"]

_HOOK_NAMES: Final = ("alpha", "beta", "gamma", "delta")


@functools.cache
def _parameters(name: str) -> SearchStrategy[dict[str, Any]]:
    kit = {"add": add.schema, "echo": echo.schema}.get(name)
    if kit is not None:  # the kit's own tools, as the default scripts call them
        return st.just(dict(kit.parameters))
    kinds = st.sampled_from(("string", "integer", "number", "boolean"))
    return st.dictionaries(idents, kinds.map(lambda k: {"type": k}), max_size=3).map(
        lambda props: {"type": "object", "properties": props}
    )


def tool_schemas(names: Sequence[str] | None = None) -> SearchStrategy[ToolSchema]:
    """Draw tool schemas: a name, a description and an object schema for the arguments.

    Args:
        names: The names to draw from; `add` and `echo` get the schemas of the kit's tools
            (`rxagent.testing.tools`). None draws random identifiers.

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent.testing.strategies import tool_schemas


        @settings(max_examples=5)
        @given(tool_schemas(names=["add"]))
        def test_schema(schema) -> None:
            assert schema.name == "add" and schema.parameters["required"] == ("a", "b")


        test_schema()
        ```
    """
    if not names:  # random names with random parameters
        return _schemas_named(None)
    return st.one_of(*(_schemas_named(n) for n in dict.fromkeys(names)))


@functools.cache
def _schemas_named(name: str | None) -> SearchStrategy[ToolSchema]:
    return st.builds(
        ToolSchema,
        name=idents if name is None else st.just(name),
        description=st.text(max_size=40),
        parameters=_parameters(name or ""),
    )


def model_options() -> SearchStrategy[ModelOptions]:
    """Draw generation options, each field set or left unset.

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent.models import ModelOptions
        from rxagent.testing.strategies import model_options


        @settings(max_examples=5)
        @given(model_options())
        def test_options(options) -> None:
            assert ModelOptions.model_validate_json(options.model_dump_json()) == options


        test_options()
        ```
    """
    return _model_options()


@functools.cache
def _model_options() -> SearchStrategy[ModelOptions]:
    return st.builds(
        ModelOptions,
        temperature=st.none() | st.floats(min_value=0, max_value=2),
        max_output_tokens=st.none() | st.integers(min_value=1, max_value=8192),
        tool_choice=st.none() | st.sampled_from(("auto", "none", "required")) | idents,
        parallel_tool_calls=st.none() | st.booleans(),
        response_format=st.none() | st.just({"type": "json_object"}),
        stop=st.none() | st.lists(words, max_size=2).map(tuple),
        seed=st.none() | small_ints,
        extra=st.dictionaries(idents, json_values(), max_size=2),
    )


def usages() -> SearchStrategy[Usage]:
    """Draw token usages.

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent.testing.strategies import usages


        @settings(max_examples=5)
        @given(usages(), usages())
        def test_usage_adds(a, b) -> None:
            assert (a + b).total_tokens == a.total_tokens + b.total_tokens


        test_usage_adds()
        ```
    """
    return _usages()


@functools.cache
def _usages() -> SearchStrategy[Usage]:
    return st.builds(
        Usage,
        input_tokens=small_ints,
        output_tokens=small_ints,
        cache_read_tokens=small_ints,
        cache_write_tokens=small_ints,
        requests=st.integers(min_value=0, max_value=50),
    )


# -- events --------------------------------------------------------------------------------


def _assistant_messages() -> SearchStrategy[Msg]:
    return messages_of("assistant")


@functools.cache
def _result_fields() -> SearchStrategy[dict[str, Any]]:
    error = st.builds(ErrorInfo, code=st.sampled_from(ErrorCode), message=words, source=idents)
    return st.fixed_dictionaries(
        {
            "output": st.none() | json_values(),
            "error": st.none() | error,
            "usage": usages(),
            "tools_used": st.lists(idents, max_size=3).map(tuple),
            "stop_reason": st.sampled_from(typing.get_args(StopReason)),
            "pending_approvals": st.lists(hex_ids, max_size=2).map(tuple),
            "interrupted": st.booleans(),
            "steps": st.integers(min_value=0, max_value=20),
            "duration_ms": st.floats(min_value=0, max_value=1e6),
            "run_id": hex_ids,
            "session_id": idents,
        }
    )


@functools.cache
def _chunk_deltas() -> SearchStrategy[TextDelta | ThinkingDelta | ToolCallDelta]:
    index = st.integers(min_value=0, max_value=5)
    return st.one_of(
        st.builds(TextDelta, index=index, text=st.text(max_size=8)),
        st.builds(
            ThinkingDelta, index=index, text=st.text(max_size=8), signature=st.none() | hex_ids
        ),
        st.builds(
            ToolCallDelta,
            index=index,
            id=st.none() | hex_ids,
            name=st.none() | idents,
            args=st.text(max_size=8),
        ),
    )


@st.composite
def _post_acting(draw: Draw) -> dict[str, Any]:
    call = draw(tool_use_blocks())
    return {
        "tool_call": call,
        "result": result_for(draw, call),
        "stop": draw(st.booleans()),
        "duration_ms": draw(st.floats(min_value=0, max_value=1e5)),
    }


@st.composite
def _post_call(draw: Draw) -> dict[str, Any]:
    reply = draw(_assistant_messages())
    fields = draw(_result_fields())
    result = AgentResult[Any](reply=reply, ok=fields["error"] is None, **fields)
    return {"reply": reply, "result": result}


_PAYLOADS: Final[dict[type[BaseEvent], Callable[[], SearchStrategy[dict[str, Any]]]]] = {
    PreCallEvent: lambda: st.fixed_dictionaries(
        {"input": st.lists(messages(("user",)), min_size=1, max_size=2)}
    ),
    PreReasoningEvent: lambda: st.fixed_dictionaries(
        {
            "messages": st.lists(messages(), max_size=3),
            "tools": st.lists(tool_schemas(), max_size=2),
            "options": model_options(),
            "model": idents,
        }
    ),
    ReasoningChunkEvent: lambda: _chunk_deltas().map(lambda d: {"delta": d, "index": d.index}),
    PostReasoningEvent: lambda: st.fixed_dictionaries(
        {
            "response": _assistant_messages(),
            "usage": usages(),
            "stop": st.booleans(),
            "finish_reason": st.sampled_from(
                [None, "stop", "length", "tool_calls", "content_filter", "pause"]
            ),
        }
    ),
    PreActingEvent: lambda: st.fixed_dictionaries({"tool_call": tool_use_blocks()}),
    ActingChunkEvent: lambda: st.fixed_dictionaries(
        {"tool_call_id": hex_ids, "tool_name": idents, "chunk": json_values()}
    ),
    PostActingEvent: _post_acting,
    PostCallEvent: _post_call,
    ErrorEvent: lambda: st.fixed_dictionaries(
        {
            "code": st.sampled_from(ErrorCode),
            "message": words,
            "source": st.sampled_from(
                ("model", "agent", "output", "tool:add", "hook:alpha", "guard:rate")
            ),
            "recoverable": st.booleans(),
            "exception": st.none() | idents,
        }
    ),
    InterruptedEvent: lambda: st.fixed_dictionaries(
        {
            "checkpoint": st.sampled_from(
                ("before_reasoning", "chunk", "before_acting", "after_tool")
            ),
            "reason": st.text(max_size=20),
        }
    ),
    ContextTrimmedEvent: lambda: st.fixed_dictionaries(
        {
            "dropped": st.lists(hex_ids, max_size=4).map(tuple),
            "truncated": st.lists(hex_ids, max_size=2).map(tuple),
            "summarized": st.lists(hex_ids, max_size=2).map(tuple),
            "tokens_before": st.integers(min_value=0, max_value=1_000_000),
            "tokens_after": st.integers(min_value=0, max_value=1_000_000),
            "budget": st.integers(min_value=1, max_value=1_000_000),
            "strategy": st.sampled_from(("drop", "summarize")),
        }
    ),
    RetryEvent: lambda: st.fixed_dictionaries(
        {
            "attempt": st.integers(min_value=2, max_value=6),
            "delay_s": st.floats(min_value=0, max_value=60),
            "code": st.sampled_from(ErrorCode),
            "message": st.text(max_size=20),
        }
    ),
    FallbackEvent: lambda: st.fixed_dictionaries(
        {
            "from_model": idents,
            "to_model": idents,
            "code": st.sampled_from(ErrorCode),
            "message": st.text(max_size=20),
        }
    ),
    CustomEvent: lambda: st.fixed_dictionaries({"name": idents, "data": json_values()}),
    OutputChunkEvent: lambda: st.fixed_dictionaries(
        {"partial": json_values(), "index": small_ints}
    ),
    ApprovalRequestedEvent: lambda: st.fixed_dictionaries(
        {"approval_id": hex_ids, "tool_call": tool_use_blocks(), "reason": st.text(max_size=20)}
    ),
    GuardEvent: lambda: st.fixed_dictionaries(
        {
            "stage": idents,
            "verdict": st.builds(
                GuardVerdict,
                flagged=st.booleans(),
                score=st.floats(min_value=0, max_value=1),
                reasons=st.lists(st.text(max_size=20), max_size=3).map(tuple),
                stage=idents,
                retry_after=st.none() | st.floats(min_value=0, max_value=3600),
            ),
            "action": st.sampled_from(get_args(GuardAction)),
            "target": st.sampled_from(get_args(GuardTarget)),
            "tool_call_id": st.none() | hex_ids,
        }
    ),
    RetrievalEvent: lambda: st.fixed_dictionaries(
        {
            "query": st.text(max_size=20),
            "hits": st.lists(
                st.builds(
                    Hit,
                    id=hex_ids,
                    text=st.text(max_size=20),
                    score=st.floats(min_value=-1, max_value=1),
                    metadata=st.dictionaries(idents, json_values(), max_size=2),
                ),
                max_size=3,
            ).map(tuple),
            "tokens": st.integers(min_value=0, max_value=10_000),
            "dropped": st.lists(hex_ids, max_size=2).map(tuple),
        }
    ),
    HandoffEvent: lambda: st.fixed_dictionaries(
        {
            "from_agent": idents,
            "to_agent": idents,
            "reason": st.text(max_size=20),
            "tool_call_id": st.none() | hex_ids,
        }
    ),
}


@functools.cache
def _common_fields() -> SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "run_id": hex_ids,
            "session_id": idents,
            "agent": idents,
            "path": st.lists(idents, max_size=2).map(tuple),
            "step": st.integers(min_value=0, max_value=50),
            "seq": st.integers(min_value=0, max_value=10_000),
            "timestamp": st.floats(min_value=0, max_value=4e9),
            "modified_by": st.lists(st.sampled_from(_HOOK_NAMES), max_size=2).map(tuple),
        }
    )


@functools.cache
def _event_of(cls: type[BaseEvent]) -> SearchStrategy[AgentEvent]:
    return st.tuples(_common_fields(), _PAYLOADS[cls]()).map(
        lambda parts: typing.cast("AgentEvent", cls(**parts[0], **parts[1]))
    )


def events(types: Sequence[type[BaseEvent]] | None = None) -> SearchStrategy[AgentEvent]:
    """Draw built-in events with valid payloads (one event; not a run, see `scripts()` for that).

    Args:
        types: The event classes to draw from (default: every built-in event).

    Raises:
        ValueError: For a class that is not a built-in event.

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent.events import EVENT_ADAPTER, PostCallEvent
        from rxagent.testing.strategies import events


        @settings(max_examples=10)
        @given(events(types=[PostCallEvent]))
        def test_post_call(event) -> None:
            assert event.result.reply == event.reply
            assert EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event)) == event


        test_post_call()
        ```
    """
    chosen = tuple(_PAYLOADS) if types is None else tuple(types)
    unknown = [t.__name__ for t in chosen if t not in _PAYLOADS]
    if unknown or not chosen:
        raise ValueError(f"events() draws built-in events only; cannot draw {unknown or 'nothing'}")
    return st.one_of(*(_event_of(cls) for cls in chosen))
