"""Descriptions of random hooks whose combined effect a test can predict.

`rxagent.testing.strategies.hook_specs()` and `hook_chains()` draw these; they are plain data, so
this module does not need hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from rxagent.events import PreReasoningEvent
from rxagent.hooks import FunctionHook, hook
from rxagent.messages import Msg
from rxagent.models.base import ToolSchema

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["HookAction", "HookChainSpec", "HookSpec"]

HookAction: TypeAlias = Literal["append_system", "append_tool", "observe"]
"""What a spec'd hook does to a `PreReasoningEvent`."""


@dataclass(frozen=True, slots=True)
class HookSpec:
    """A PreReasoning hook described as data: its name, priority and one pure action.

    Actions:
        - `"append_system"`: append `Msg.system(...)` naming the hook (its id is `msg-<tag>`);
        - `"append_tool"`: append `ToolSchema(name="tool_<tag>")`;
        - `"observe"`: return None (no change).

    Example:
        ```python
        from rxagent.events import PreReasoningEvent
        from rxagent.testing.strategies import HookSpec

        spec = HookSpec(name="rules", priority=10, action="append_system", is_async=False, tag="h0")
        out = spec.apply(PreReasoningEvent(messages=[]))
        assert out is not None and out.messages[-1].id == "msg-h0"
        ```
    """

    name: str
    """The hook's name (names need not be unique)."""
    priority: int
    """Its priority (lower runs first)."""
    action: HookAction
    """What it does."""
    is_async: bool
    """Whether the built hook is an `async def`."""
    tag: str
    """Unique within a chain: labels what the hook adds and what it logs."""

    @property
    def modifies(self) -> bool:
        """True when the hook returns a changed event."""
        return self.action != "observe"

    def apply(self, event: PreReasoningEvent) -> PreReasoningEvent | None:
        """Return the changed event (None when the hook only observes). Pure and deterministic."""
        if self.action == "append_system":
            added = Msg(role="system", content=f"added by {self.name} ({self.tag})", id=self.msg_id)
            return event.replace(messages=(*event.messages, added))
        if self.action == "append_tool":
            return event.replace(tools=(*event.tools, ToolSchema(name=f"tool_{self.tag}")))
        return None

    @property
    def msg_id(self) -> str:
        """The id of the system message an `"append_system"` hook adds."""
        return f"msg-{self.tag}"

    def build(self, log: list[str] | None = None) -> FunctionHook:
        """Return the hook: it appends `tag` to `log` (when given), then applies the action."""
        apply = self.apply
        tag = self.tag
        fn: Callable[[PreReasoningEvent], Any]

        if self.is_async:

            async def run_async(event: PreReasoningEvent) -> PreReasoningEvent | None:
                if log is not None:
                    log.append(tag)
                return apply(event)

            fn = run_async
        else:

            def run_sync(event: PreReasoningEvent) -> PreReasoningEvent | None:
                if log is not None:
                    log.append(tag)
                return apply(event)

            fn = run_sync
        built: FunctionHook = hook(PreReasoningEvent, priority=self.priority, name=self.name)(fn)
        return built


@dataclass(frozen=True, slots=True)
class HookChainSpec:
    """Hooks in registration order, and what running them must give.

    `expected()` is an independent model of the chain: run order is by priority, ties in
    registration order; each modifying hook sees the previous hook's event and is recorded in
    `modified_by`.

    Example:
        ```python
        import asyncio
        from rxagent.events import PreReasoningEvent
        from rxagent.hooks import HookChain
        from rxagent.messages import Msg
        from rxagent.testing.strategies import HookChainSpec, HookSpec

        spec = HookChainSpec((
            HookSpec(name="late", priority=50, action="append_system", is_async=True, tag="h0"),
            HookSpec(name="early", priority=10, action="append_tool", is_async=False, tag="h1"),
        ))
        hooks, log = spec.build()
        event = PreReasoningEvent(messages=[Msg.user("hi")])
        out = asyncio.run(HookChain(hooks).dispatch(event))
        assert out == spec.expected(event) and log == spec.expected_log()
        assert out.modified_by == ("early", "late")
        ```
    """

    specs: tuple[HookSpec, ...]
    """The hooks, in registration order."""

    def run_order(self) -> list[HookSpec]:
        """The specs in the order the hooks must run."""
        return sorted(self.specs, key=lambda s: s.priority)

    def build(self) -> tuple[list[FunctionHook], list[str]]:
        """Return fresh hooks in registration order, and the log they append their tags to."""
        log: list[str] = []
        return [s.build(log) for s in self.specs], log

    def expected_log(self) -> list[str]:
        """The tags the hooks must log, in run order (one dispatch)."""
        return [s.tag for s in self.run_order()]

    def expected(self, event: PreReasoningEvent) -> PreReasoningEvent:
        """The event that dispatching `event` through the hooks must return."""
        current = event
        for spec in self.run_order():
            changed = spec.apply(current)
            if changed is not None:
                modified_by = (*current.modified_by, spec.name)
                current = changed.model_copy(update={"modified_by": modified_by})
        return current
