"""The `Hook` protocol, the `@hook` decorator and `BaseHook`."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final, Literal, Protocol, TypeAlias, Union, overload, runtime_checkable

from rxagent.errors import HookDefinitionError
from rxagent.events import EVENT_TYPES, BaseEvent

__all__ = [
    "DEFAULT_PRIORITY",
    "BaseHook",
    "FunctionHook",
    "Hook",
    "HookFunction",
    "OnError",
    "hook",
]

DEFAULT_PRIORITY: Final = 100
"""The priority of a hook that does not say (lower runs first)."""

OnError: TypeAlias = Literal["isolate", "propagate"]
"""What a hook's exception does: `"isolate"` reports it as an `ErrorEvent` and the chain goes on;
`"propagate"` fails the run."""

HookFunction: TypeAlias = Callable[[Any], "BaseEvent | Awaitable[BaseEvent | None] | None"]
"""A function hook: takes an event and returns a changed event or None, sync or async."""

_BY_NAME: Final[dict[str, type[BaseEvent]]] = {
    cls.model_fields["type"].default: cls for cls in EVENT_TYPES
}


@runtime_checkable
class Hook(Protocol):
    """What the agent needs of a hook.

    Attributes:
        priority: Lower runs first (default 100). Ties keep registration order.
        name: Recorded in `modified_by` and in `ErrorEvent.source` (`"hook:<name>"`).
        on_error: `"isolate"` (default) or `"propagate"`.
        events: The event types this hook sees; None means every event.

    A hook may also have `nested: bool` (False when absent): True lets it see the events of
    nested runs too (agents called as tools, a team's members), as notifications: what it
    returns for them is ignored, since their own run has dispatched them already.
    """

    priority: int
    name: str
    on_error: OnError
    events: frozenset[type[BaseEvent]] | None

    async def on_event(self, event: Any) -> BaseEvent | None:
        """Observe `event`; for a modifiable event, return a changed copy or None."""
        ...


class BaseHook:
    """A convenient base class for hooks written as classes.

    Override `on_event` (sync or async) and set the class attributes you need.

    Example:
        ```python
        from rxagent import BaseHook, ErrorEvent


        class CountErrors(BaseHook):
            events = frozenset({ErrorEvent})

            def __init__(self) -> None:
                self.count = 0

            async def on_event(self, event: ErrorEvent) -> None:
                self.count += 1
        ```
    """

    priority: int = DEFAULT_PRIORITY
    on_error: OnError = "isolate"
    events: frozenset[type[BaseEvent]] | None = None
    nested: bool = False

    @property
    def name(self) -> str:
        """The hook's name: the class name unless set."""
        return self.__dict__.get("_name") or type(self).__name__

    @name.setter
    def name(self, value: str) -> None:
        self.__dict__["_name"] = value

    async def on_event(self, event: Any) -> BaseEvent | None:
        """Observe `event`; return a changed copy of a modifiable event, or None."""
        return None


class FunctionHook:
    """A hook made from a function by `@hook`. Calling it calls the function."""

    __slots__ = (
        "__wrapped__",
        "events",
        "fn",
        "is_async",
        "name",
        "nested",
        "on_error",
        "priority",
    )

    def __init__(
        self,
        fn: HookFunction,
        *,
        events: frozenset[type[BaseEvent]] | None,
        priority: int,
        on_error: OnError,
        name: str,
        nested: bool = False,
    ) -> None:
        self.fn = fn
        self.nested = nested
        self.__wrapped__ = fn
        self.events = events
        self.priority = priority
        self.on_error = on_error
        self.name = name
        self.is_async = inspect.iscoroutinefunction(fn)

    async def on_event(self, event: Any) -> BaseEvent | None:
        """Call the function with `event` (awaiting it if it is async)."""
        result = self.fn(event)
        if inspect.isawaitable(result):
            result = await result
        return result

    def __call__(self, event: Any) -> Any:
        return self.fn(event)

    def __repr__(self) -> str:
        kinds = "all" if self.events is None else ",".join(sorted(e.__name__ for e in self.events))
        return f"<hook {self.name} priority={self.priority} events={kinds}>"


def _event_class(item: object) -> type[BaseEvent]:
    if isinstance(item, str):
        found = _BY_NAME.get(item)
        if found is None:
            raise HookDefinitionError(
                f"unknown event type {item!r} in @hook; use an event class such as "
                f"PreReasoningEvent or one of the type names: {', '.join(sorted(_BY_NAME))}"
            )
        return found
    if isinstance(item, type) and issubclass(item, BaseEvent) and item is not BaseEvent:
        return item
    raise HookDefinitionError(
        f"unknown event type {item!r} in @hook; pass event classes from rxagent.events, "
        "for example @hook(PreReasoningEvent, priority=10)"
    )


def _resolve_event_types(items: Iterable[object]) -> frozenset[type[BaseEvent]] | None:
    """Validate hook event filters: event classes or their `type` names. Empty means all."""
    resolved = frozenset(_event_class(item) for item in items)
    return resolved or None


def _types_from_annotation(fn: Callable[..., Any]) -> frozenset[type[BaseEvent]] | None:
    """Read the event types from the annotation of `fn`'s first parameter, if it names any."""
    try:
        params = list(inspect.signature(fn).parameters.values())
        hints = typing.get_type_hints(fn)
    except (TypeError, ValueError, NameError):
        return None
    if not params or params[0].name not in hints:
        return None
    annotation = hints[params[0].name]
    origin = typing.get_origin(annotation)
    members = typing.get_args(annotation) if origin in (Union, types.UnionType) else (annotation,)
    found = [m for m in members if isinstance(m, type) and issubclass(m, BaseEvent)]
    if not found or BaseEvent in found:
        return None
    return frozenset(found)


def _check_options(priority: object, on_error: object) -> None:
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise HookDefinitionError(
            f"hook priority must be an int (lower runs first), got {priority!r}"
        )
    if on_error not in ("isolate", "propagate"):
        raise HookDefinitionError(f"on_error must be 'isolate' or 'propagate', got {on_error!r}")


@overload
def hook(fn: HookFunction, /) -> FunctionHook: ...


@overload
def hook(
    *event_types: type[BaseEvent] | str,
    priority: int = DEFAULT_PRIORITY,
    on_error: OnError = "isolate",
    name: str | None = None,
    nested: bool = False,
) -> Callable[[HookFunction], FunctionHook]: ...


def hook(
    *event_types: type[BaseEvent] | str | HookFunction,
    priority: int = DEFAULT_PRIORITY,
    on_error: OnError = "isolate",
    name: str | None = None,
    nested: bool = False,
) -> FunctionHook | Callable[[HookFunction], FunctionHook]:
    """Turn a function (sync or async) into a hook.

    With no event types, the types come from the annotation of the function's parameter, or the
    hook sees every event.

    Args:
        *event_types: The event classes (or `type` names) the hook sees.
        priority: Lower runs first; ties keep registration order.
        on_error: `"isolate"` reports a failure as an `ErrorEvent`; `"propagate"` fails the run.
        name: The hook's name (default: the function's `__name__`).
        nested: Also see the events of nested runs (agents called as tools, a team's
            members), as notifications; by default a hook sees only its own agent's run.

    Raises:
        HookDefinitionError: For an unknown event type or a bad option.

    Example:
        ```python
        from rxagent import Msg, PreReasoningEvent, hook


        @hook(PreReasoningEvent, priority=10)
        def add_rules(event: PreReasoningEvent) -> PreReasoningEvent:
            return event.replace(messages=[*event.messages, Msg.system("Answer in French.")])
        ```
    """
    if len(event_types) == 1 and callable(event_types[0]) and not isinstance(event_types[0], type):
        bare = _as_hook(event_types[0])  # bare @hook
        assert isinstance(bare, FunctionHook)
        return bare
    events = _resolve_event_types(event_types)
    _check_options(priority, on_error)

    def decorate(fn: HookFunction) -> FunctionHook:
        if not callable(fn):
            raise HookDefinitionError(f"@hook decorates a function, got {fn!r}")
        return FunctionHook(
            fn,
            events=events if events is not None else _types_from_annotation(fn),
            priority=priority,
            on_error=on_error,
            name=name or str(getattr(fn, "__name__", type(fn).__name__)),
            nested=nested,
        )

    return decorate


def _as_hook(obj: object) -> Hook:
    """Return `obj` as a validated `Hook`: hooks as they are, plain functions wrapped.

    Raises:
        HookDefinitionError: When `obj` is neither a hook nor a callable.
    """
    if isinstance(obj, FunctionHook):
        return obj
    if callable(getattr(obj, "on_event", None)):
        priority = getattr(obj, "priority", DEFAULT_PRIORITY)
        on_error = getattr(obj, "on_error", "isolate")
        _check_options(priority, on_error)
        events = getattr(obj, "events", None)
        if events is not None:
            resolved = _resolve_event_types(events)
            if resolved != events:
                try:
                    obj.events = resolved  # type: ignore[attr-defined]
                except AttributeError:  # pragma: no cover - read-only attribute
                    pass
        if not isinstance(getattr(obj, "name", None), str):
            raise HookDefinitionError(f"hook {obj!r} needs a str `name` attribute")
        return typing.cast("Hook", obj)
    if callable(obj):
        fn = typing.cast("HookFunction", obj)
        return FunctionHook(
            fn,
            events=_types_from_annotation(fn),
            priority=DEFAULT_PRIORITY,
            on_error="isolate",
            name=getattr(fn, "__name__", type(fn).__name__),
        )
    raise HookDefinitionError(
        f"{obj!r} is not a hook: pass a function decorated with @hook, an object with "
        "on_event/priority/name/on_error/events, or a plain function taking an event"
    )
