"""`HookChain`: ordering, dispatch, contract checks and isolation."""

from __future__ import annotations

import asyncio
import inspect
import logging
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, overload

from rxagent.errors import HookFailedError, Reject
from rxagent.events import EVENT_TYPES, BaseEvent
from rxagent.hooks._contract import accept
from rxagent.hooks._hook import FunctionHook, Hook, OnError, _as_hook
from rxagent.interceptors import InterceptorChain, ModelCall, ToolCall

__all__ = [
    "HookChain",
    "HookInfo",
    "HookReporter",
    "add_process_hook",
    "order_hooks",
    "remove_process_hook",
]

logger: Final = logging.getLogger("rxagent.hooks")

E = TypeVar("E", bound=BaseEvent)

HookReporter = Callable[[Hook, Exception], None]
"""Called with an isolated hook's exception (the agent turns it into an `ErrorEvent`)."""


def order_hooks(hooks: Iterable[Hook]) -> list[Hook]:
    """Return `hooks` in run order: by priority, ties in registration order.

    This is the whole ordering rule. `sorted` is stable, so sorting by priority alone keeps the
    registration order of equal priorities.

    Example:
        ```python
        from rxagent import hook
        from rxagent.hooks import order_hooks

        a, b, c = (hook(priority=p)(lambda e: None) for p in (50, 10, 50))
        assert order_hooks([a, b, c]) == [b, a, c]
        ```
    """
    return sorted(hooks, key=lambda h: h.priority)


_PROCESS_HOOKS: Final[list[Hook]] = []
"""Hooks every chain runs besides its own (`rxagent.telemetry.instrument()` adds one)."""

_CHAINS: Final[weakref.WeakSet[HookChain]] = weakref.WeakSet()
"""Every live chain, so a change to the process hooks resets their resolved entries."""


def add_process_hook(hook: object) -> Hook:
    """Register a hook that every agent's chain runs, as if each had it last; return it.

    For instrumentation that must see every run of every agent, existing or future. The hook
    takes its place in each chain by its priority, like the chain's own hooks.

    Example:
        ```python
        from rxagent import HookChain, PostCallEvent, hook
        from rxagent.hooks._chain import add_process_hook, remove_process_hook

        seen = add_process_hook(hook(PostCallEvent, name="everywhere")(lambda e: None))
        try:
            assert [i.name for i in HookChain().explain(PostCallEvent)] == ["everywhere"]
        finally:
            remove_process_hook(seen)
        assert HookChain().explain(PostCallEvent) == []
        ```
    """
    checked = _as_hook(hook)
    _PROCESS_HOOKS.append(checked)
    _reset_chains()
    return checked


def remove_process_hook(hook: Hook) -> None:
    """Unregister a hook `add_process_hook` registered (nothing if it is not registered)."""
    for i, registered in enumerate(_PROCESS_HOOKS):
        if registered is hook:
            del _PROCESS_HOOKS[i]
            _reset_chains()
            return


def _reset_chains() -> None:
    for chain in list(_CHAINS):  # a copy: a chain may be collected meanwhile
        chain._resolved.clear()


@dataclass(frozen=True, slots=True)
class HookInfo:
    """One entry of a resolved chain, as `HookChain.explain()` reports it."""

    position: int
    """Run order, from 0."""
    name: str
    """The hook's name."""
    priority: int
    """Its priority."""
    on_error: OnError
    """What its failure does."""
    can_modify: bool
    """True when the event type is modifiable, so this hook may change it."""

    def __str__(self) -> str:
        role = "modifies" if self.can_modify else "observes"
        return f"{self.position}. {self.name} (priority {self.priority}, {role}, {self.on_error})"


@dataclass(frozen=True, slots=True)
class _Entry:
    hook: Hook
    call: Callable[[Any], Any]
    is_async: bool
    name: str
    propagate: bool


def _entry(h: Hook) -> _Entry:
    if isinstance(h, FunctionHook):
        call: Callable[[Any], Any] = h.fn
        is_async = h.is_async
    else:
        call = h.on_event
        is_async = inspect.iscoroutinefunction(call)
    return _Entry(h, call, is_async, h.name, h.on_error == "propagate")


class HookChain:
    """The hooks of one agent, kept in run order.

    Example:
        ```python
        import asyncio
        from rxagent import HookChain, Msg, PreReasoningEvent, hook


        @hook(PreReasoningEvent, priority=10)
        def add_rules(event: PreReasoningEvent) -> PreReasoningEvent:
            return event.replace(messages=[*event.messages, Msg.system("Be brief.")])


        chain = HookChain([add_rules])
        out = asyncio.run(chain.dispatch(PreReasoningEvent(messages=[Msg.user("hi")])))
        assert out.modified_by == ("add_rules",) and len(out.messages) == 2
        ```
    """

    def __init__(
        self,
        hooks: Iterable[object] = (),
        interceptors: Iterable[object] = (),
        *,
        record_changes: bool = False,
    ) -> None:
        self.record_changes = record_changes
        """Record each field a hook changes in the event's `changes` (off: nothing is copied)."""
        self._hooks: list[Hook] = []
        self._resolved: dict[type[BaseEvent], tuple[_Entry, ...]] = {}
        self.interceptors = InterceptorChain(interceptors)
        """The agent's interceptors (`rxagent.interceptors`), around its model and tool calls."""
        self._nested: dict[type[BaseEvent], tuple[_Entry, ...]] = {}
        for h in hooks:
            self.add(h)
        _CHAINS.add(self)

    # -- registration ------------------------------------------------------------------------

    def add(self, hook: object) -> Hook:
        """Register a hook (validated now, not when called) and return it."""
        checked = _as_hook(hook)
        self._hooks.append(checked)
        self._resolved.clear()
        self._nested.clear()
        return checked

    def remove(self, hook: Hook) -> None:
        """Unregister a hook.

        Raises:
            ValueError: When the hook is not registered.
        """
        self._hooks.remove(hook)
        self._resolved.clear()
        self._nested.clear()

    def replace_where(self, predicate: Callable[[Hook], bool], hook: object) -> Hook:
        """Remove the hooks matching `predicate` and register `hook`."""
        self._hooks = [h for h in self._hooks if not predicate(h)]
        return self.add(hook)

    def __iter__(self) -> Iterator[Hook]:
        return iter(order_hooks(self._hooks))

    def __len__(self) -> int:
        return len(self._hooks)

    def __contains__(self, hook: object) -> bool:
        return any(h is hook for h in self._hooks)

    def for_event(self, event_type: type[BaseEvent]) -> tuple[Hook, ...]:
        """The hooks that see `event_type`, in run order."""
        return tuple(e.hook for e in self._entries(event_type))

    def has_hooks(self, event_type: type[BaseEvent]) -> bool:
        """Whether any hook sees `event_type` (a cached lookup, cheap enough per chunk)."""
        entries = self._resolved.get(event_type)
        return bool(entries if entries is not None else self._entries(event_type))

    @overload
    def explain(self) -> dict[str, list[HookInfo]]: ...

    @overload
    def explain(
        self, event_type: type[BaseEvent] | type[ModelCall] | type[ToolCall]
    ) -> list[HookInfo]: ...

    def explain(
        self, event_type: type[BaseEvent] | type[ModelCall] | type[ToolCall] | None = None
    ) -> list[HookInfo] | dict[str, list[HookInfo]]:
        """Describe the resolved chain for `event_type`: who runs, in which order, doing what.

        `explain(ModelCall)` and `explain(ToolCall)` list the interceptors around model and
        tool calls, outermost first (they may change the call, and fail the run when they raise).
        `explain()` gives the whole setup: each built-in event type that has hooks, by its class
        name, then `"ModelCall"` and `"ToolCall"` when there are interceptors.

        Example:
            ```python
            from rxagent import HookChain, PreReasoningEvent, hook
            from rxagent.interceptors import ModelCall, UsageLimits

            chain = HookChain([hook(PreReasoningEvent, priority=5, name="first")(lambda e: None)])
            assert [i.name for i in chain.explain(PreReasoningEvent)] == ["first"]
            chain.interceptors.add(UsageLimits(max_requests=5))
            assert [i.name for i in chain.explain(ModelCall)] == ["usage_limits"]
            whole = chain.explain()
            assert list(whole) == ["PreReasoningEvent", "ModelCall", "ToolCall"]
            ```
        """
        if event_type is None:
            kinds: list[type[BaseEvent] | type[ModelCall] | type[ToolCall]] = [*EVENT_TYPES]
            listed = {kind.__name__: self.explain(kind) for kind in [*kinds, ModelCall, ToolCall]}
            return {name: infos for name, infos in listed.items() if infos}
        if event_type is ModelCall or event_type is ToolCall:
            kind: Literal["model", "tool"] = "model" if event_type is ModelCall else "tool"
            return [
                HookInfo(i.position, i.name, i.priority, "propagate", True)
                for i in self.interceptors.explain(kind)
            ]
        assert issubclass(event_type, BaseEvent)
        modifiable = event_type.is_modifiable()
        return [
            HookInfo(i, e.name, e.hook.priority, e.hook.on_error, modifiable)
            for i, e in enumerate(self._entries(event_type))
        ]

    def _entries(self, event_type: type[BaseEvent]) -> tuple[_Entry, ...]:
        entries = self._resolved.get(event_type)
        if entries is None:
            entries = tuple(
                _entry(h)
                for h in order_hooks([*self._hooks, *_PROCESS_HOOKS])
                if h.events is None or any(issubclass(event_type, t) for t in h.events)
            )
            self._resolved[event_type] = entries
        return entries

    # -- dispatch ----------------------------------------------------------------------------

    async def dispatch(self, event: E, *, report: HookReporter | None = None) -> E:
        """Run `event` through its hooks in order and return the final event.

        For a modifiable event each hook receives the event the previous one returned, and each
        hook that returns an event is recorded in `modified_by`; with `record_changes`, each
        field it changed is recorded in `changes` with its value before (nothing when it
        returned equal values). For a notification event the hooks' return values are ignored.

        Args:
            event: The event.
            report: Receives isolated hook failures; they are logged when it is None.

        Raises:
            Reject: A hook refused the event.
            HookFailedError: A hook with `on_error="propagate"` failed.
        """
        entries = self._resolved.get(type(event))
        if entries is None:
            entries = self._entries(type(event))
        if not entries:
            return event
        modifiable = bool(event.MODIFIABLE)
        record = self.record_changes
        current = event
        for entry in entries:
            try:
                result = entry.call(current)
                if entry.is_async or (
                    result is not None
                    and not isinstance(result, BaseEvent)
                    and inspect.isawaitable(result)
                ):
                    result = await result
                if modifiable and result is not None and result is not current:
                    current = accept(current, result, entry.name, record)
            except Reject as reject:
                if reject.hook is None:
                    reject.hook = entry.name
                raise
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if entry.propagate:
                    raise HookFailedError(entry.name, exc) from exc
                if report is None:
                    logger.exception("hook %r failed; the chain goes on", entry.name)
                else:
                    report(entry.hook, exc)
        return current

    async def dispatch_nested(
        self, event: BaseEvent, *, report: HookReporter | None = None
    ) -> None:
        """Show a nested run's event to the hooks that asked for them (`nested=True`).

        The event is a notification here whatever its type: its own run dispatched it already,
        so return values are ignored. A hook failure is isolated (reported) unless the hook
        propagates.

        Raises:
            Reject: A hook refused the event.
            HookFailedError: A hook with `on_error="propagate"` failed.
        """
        entries = self._nested.get(type(event))
        if entries is None:
            entries = self._nested[type(event)] = tuple(
                e for e in self._entries(type(event)) if getattr(e.hook, "nested", False)
            )
        for entry in entries:
            try:
                result = entry.call(event)
                if entry.is_async or (
                    result is not None
                    and not isinstance(result, BaseEvent)
                    and inspect.isawaitable(result)
                ):
                    await result
            except asyncio.CancelledError:
                raise
            except Reject as reject:
                if reject.hook is None:
                    reject.hook = entry.name
                raise
            except Exception as exc:
                if entry.propagate:
                    raise HookFailedError(entry.name, exc) from exc
                if report is None:
                    logger.exception("hook %r failed on a nested event", entry.name)
                else:
                    report(entry.hook, exc)
