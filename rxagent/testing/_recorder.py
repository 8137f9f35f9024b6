"""`EventRecorder`: a hook that keeps every event it sees, for assertions in tests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, final

from rxagent.events import BaseEvent
from rxagent.hooks._hook import _resolve_event_types

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rxagent.hooks import OnError

__all__ = ["EventRecorder"]

E = TypeVar("E", bound=BaseEvent)


@final
class EventRecorder:
    """A hook that records the events it sees, in order, and never changes them.

    It runs late (priority 10 000) so it records modifiable events as the other hooks left them.
    The recorded events are `recorded` (the hook attribute `events` is, as for every hook, the
    filter of event types it sees).

    Args:
        *event_types: The event classes (or `type` names) to record; none means every event.
        priority: Its place in the chain (lower runs first).
        name: The hook's name.

    Example:
        ```python
        import asyncio
        from rxagent.events import PostActingEvent, PreCallEvent
        from rxagent.hooks import HookChain
        from rxagent.messages import Msg
        from rxagent.testing import EventRecorder

        recorder = EventRecorder()
        chain = HookChain([recorder])
        asyncio.run(chain.dispatch(PreCallEvent(input=[Msg.user("hi")])))
        assert recorder.types() == ["pre_call"] and len(recorder) == 1
        assert recorder.of_type(PreCallEvent)[0].input[0].text == "hi"
        assert recorder.of_type(PostActingEvent) == []
        ```
    """

    __slots__ = ("events", "name", "on_error", "priority", "recorded")

    def __init__(
        self,
        *event_types: type[BaseEvent] | str,
        priority: int = 10_000,
        name: str = "event_recorder",
    ) -> None:
        self.priority = priority
        self.name = name
        self.on_error: OnError = "isolate"
        self.events: frozenset[type[BaseEvent]] | None = _resolve_event_types(event_types)
        self.recorded: list[BaseEvent] = []
        """The events seen, in order."""

    async def on_event(self, event: Any) -> BaseEvent | None:
        """Record `event`; never change it."""
        self.recorded.append(event)
        return None

    def types(self) -> list[str]:
        """The `type` of each recorded event, in order (`"pre_call"`, `"pre_reasoning"`, ...)."""
        return [e.type for e in self.recorded]

    def of_type(self, event_type: type[E]) -> list[E]:
        """The recorded events of one class, in order."""
        return [e for e in self.recorded if isinstance(e, event_type)]

    def clear(self) -> None:
        """Forget the recorded events."""
        self.recorded.clear()

    def __iter__(self) -> Iterator[BaseEvent]:
        return iter(self.recorded)

    def __len__(self) -> int:
        return len(self.recorded)

    def __repr__(self) -> str:
        return f"EventRecorder(name={self.name!r}, recorded={len(self.recorded)})"
