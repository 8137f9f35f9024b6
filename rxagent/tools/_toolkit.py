"""`Toolkit`: the tools an agent offers, and `execute`, which runs one tool call safely.

`execute` never raises for a tool's failure: unknown tools, invalid JSON, invalid arguments,
missing injections, timeouts and exceptions all become an error `ToolResultBlock` the model can
read, with an `ErrorCode` for the agent. Only `asyncio.CancelledError` (and other
`BaseException`s) propagate.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import typing
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, overload

from pydantic import ValidationError

from rxagent.errors import ErrorCode, ToolDefinitionError
from rxagent.messages import ToolResultBlock, ToolUseBlock, thaw
from rxagent.tools._execute import ProgressSink, invoke, run_progress
from rxagent.tools._groups import GROUP_TOOL_NAME, GroupedTools, run_group_tool
from rxagent.tools._inject import _MissingInjection
from rxagent.tools._jsonargs import _InvalidArguments
from rxagent.tools._outcome import (
    ToolOutcome,
    describe,
    failed,
    finish,
    invalid_arguments,
    invalid_json,
    problems,
)
from rxagent.tools._tool import Tool, tool
from rxagent.tools._toolsets import ToolsetSlots

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Mapping

    from rxagent.models.base import ToolSchema
    from rxagent.tools._toolset import Toolset

__all__ = ["Toolkit"]

log = logging.getLogger("rxagent.tools")

_NOTHING_INJECTED: Final[Mapping[type[Any], object]] = MappingProxyType({})


class Toolkit(GroupedTools, ToolsetSlots):
    """The set of tools an agent offers the model, by name, with tool groups and toolsets.

    Plain functions are wrapped with `tool(...)`; toolsets (see `Toolset`) provide their tools
    when the toolkit is opened. `schemas()` is what the model is told; `execute()` runs one call.

    A tool with a `group` is offered only while its group is active. Which groups are active is
    per session (the agent keeps it in `AgentState.active_groups`); `active_groups` here is the
    default. With `group_tool=True` the model also gets `manage_tool_groups` to switch groups.

    Args:
        tools: Tools, functions to make tools of, and toolsets.
        groups: A description of each tool group, by name, for the model (groups of tools not
            listed here are known too, without a description).
        active_groups: The groups active by default; None (the default): all of them.
        group_tool: Offer the model `manage_tool_groups`, to activate and deactivate groups.

    Raises:
        ToolDefinitionError: When two tools share a name, a function cannot be a tool, or a
            default active group is unknown.

    Example:
        ```python
        import asyncio

        from rxagent.messages import ToolUseBlock
        from rxagent.tools import Toolkit


        def shout(text: str) -> str:
            \"\"\"Repeat text loudly.\"\"\"
            return text.upper() + "!"


        kit = Toolkit([shout])
        assert "shout" in kit and kit.names() == ("shout",)
        outcome = asyncio.run(kit.execute(ToolUseBlock(id="1", name="shout", input={"text": "hi"})))
        assert outcome.ok and outcome.result.output == "HI!"
        ```
    """

    __slots__ = (
        "_default_groups",
        "_group_info",
        "_group_tool",
        "_known_groups",
        "_schemas",
        "_tools",
    )

    def __init__(
        self,
        tools: Iterable[Tool[..., Any] | Callable[..., Any] | Toolset] = (),
        *,
        groups: Mapping[str, str] | None = None,
        active_groups: Iterable[str] | None = None,
        group_tool: bool = False,
    ) -> None:
        super().__init__()
        self._tools: dict[str, Tool[..., Any]] = {}
        self._schemas: dict[tuple[str, ...], tuple[ToolSchema, ...]] = {}
        self._group_info: dict[str, str] = dict(groups or {})
        self._known_groups: Mapping[str, str] = MappingProxyType(dict(self._group_info))
        self._group_tool = group_tool
        for item in tools:
            self.add(item)
        self._default_groups: tuple[str, ...] | None = None
        if active_groups is not None:
            wanted = tuple(dict.fromkeys(active_groups))
            unknown = [g for g in wanted if g not in self.groups()]
            if unknown:
                raise ToolDefinitionError(
                    f"active_groups names unknown tool group {', '.join(map(repr, unknown))}; "
                    f"known groups: {', '.join(self.groups()) or 'none'} (declare a group with "
                    "Toolkit(groups={name: description}) or @tool(group=name))"
                )
            self._default_groups = wanted

    @overload
    def add(self, item: Toolset) -> Toolset: ...

    @overload
    def add(
        self, item: Tool[..., Any] | Callable[..., Any], *, preset: Mapping[str, Any] | None = None
    ) -> Tool[..., Any]: ...

    def add(
        self,
        item: Tool[..., Any] | Callable[..., Any] | Toolset,
        *,
        preset: Mapping[str, Any] | None = None,
    ) -> Tool[..., Any] | Toolset:
        """Add a tool (a plain function is wrapped with `tool(...)`) and return it.

        A toolset is added too (its tools arrive when the toolkit is opened), and returned.

        Args:
            item: The tool, function or toolset.
            preset: Hidden argument values, by parameter name: see `Tool.with_preset`.

        Raises:
            ToolDefinitionError: When a tool of that name is already here.

        Example:
            ```python
            from rxagent.tools import Toolkit


            def ping(token: str) -> str:
                \"\"\"Answer pong.\"\"\"
                return "pong"


            kit = Toolkit()
            added = kit.add(ping, preset={"token": "secret"})
            assert added.name == "ping" and len(kit) == 1
            assert added.schema.parameters["properties"] == {}
            ```
        """
        if self._add_toolset(item):
            return typing.cast("Toolset", item)
        added = item if isinstance(item, Tool) else tool(typing.cast("Callable[..., Any]", item))
        if preset:
            added = added.with_preset(preset)
        if added.name in self._tools or (self._group_tool and added.name == GROUP_TOOL_NAME):
            raise ToolDefinitionError(
                f"a tool named '{added.name}' is already in this toolkit; give one of them "
                f"another name with @tool(name=...), or remove the old one first with "
                f"toolkit.remove('{added.name}')"
            )
        self._tools[added.name] = added
        self._changed()
        return added

    def remove(self, name: str) -> Tool[..., Any]:
        """Remove the tool called `name` and return it.

        Raises:
            KeyError: When there is no such tool.

        Example:
            ```python
            from rxagent.tools import Toolkit


            def ping() -> str:
                \"\"\"Answer pong.\"\"\"
                return "pong"


            kit = Toolkit([ping])
            kit.remove("ping")
            assert "ping" not in kit
            ```
        """
        try:
            removed = self._tools.pop(name)
        except KeyError:
            raise KeyError(f"no tool named '{name}'; tools: {self._available(None)}") from None
        self._changed()
        return removed

    def get(self, name: str) -> Tool[..., Any] | None:
        """Return the tool called `name`, or None."""
        return self._tools.get(name)

    def names(self) -> tuple[str, ...]:
        """Return the tools' names, in the order they were added (all groups)."""
        return tuple(self._tools)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, Tool):
            return self._tools.get(item.name) is item
        return item in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool[..., Any]]:
        return iter(tuple(self._tools.values()))

    def __repr__(self) -> str:
        return f"Toolkit([{', '.join(self._tools)}])"

    # -- toolsets (ToolsetSlots) ---------------------------------------------------------------

    def _add_listed(self, listed: Iterable[Tool[..., Any]]) -> tuple[str, ...]:
        added: list[str] = []
        try:
            added.extend(self.add(item).name for item in listed)
        except BaseException:
            self._drop(added)
            raise
        return tuple(added)

    def _drop(self, names: Iterable[str]) -> None:
        for name in names:
            self._tools.pop(name, None)
        self._changed()

    def _changed(self) -> None:
        self._schemas.clear()
        self._known_groups = self._collect_groups()

    # -- running a call ------------------------------------------------------------------------

    async def execute(
        self,
        call: ToolUseBlock,
        *,
        inject: Mapping[type[Any], object] = _NOTHING_INJECTED,
        timeout: float | None = None,  # noqa: ASYNC109 - the default for tools without their own
        progress: Callable[[Any], None] | None = None,
        active_groups: Iterable[str] | None = None,
        offered: Collection[str] | None = None,
    ) -> ToolOutcome:
        """Run one tool call and return its outcome; a failure is an error result, never raised.

        Sync tools run in a worker thread (inline on the loop when declared `blocking=False`),
        async tools on the loop. On timeout an async tool is
        cancelled, a sync generator stops at its next `yield`; a plain sync tool's thread cannot
        be stopped, so its result is dropped when it ends. An exception becomes an error result
        with its type and message; its traceback goes to the `rxagent.tools` logger.

        Args:
            call: The model's tool call.
            inject: Values for injected parameters, by type. A parameter gets the value whose
                key is its type or a subclass of it, else the first value that is an instance.
            timeout: Seconds the call may take, for tools without their own `timeout`.
            progress: Called on the loop with each progress value of a generator tool, in
                order, until the call has its result. Default: with a `RunContext` in `inject`,
                each value is emitted as an `ActingChunkEvent` of this call.
            active_groups: The session's active tool groups (None: the defaults); a call to a
                tool of another group is an error result.
            offered: The names of the tools offered to the model in the request that made this
                call (None: every tool); a call to another tool is an error result, so a hook
                that removed a tool from a request also keeps it from running.

        Raises:
            asyncio.CancelledError: When the surrounding task is cancelled.

        Example:
            ```python
            import asyncio

            from rxagent.messages import ToolUseBlock
            from rxagent.tools import Toolkit, tool


            @tool
            def add(a: int, b: int) -> int:
                \"\"\"Add two numbers.\"\"\"
                return a + b


            kit = Toolkit([add])
            ok = asyncio.run(kit.execute(ToolUseBlock(id="1", name="add", input={"a": 1, "b": 2})))
            assert ok.result.output == "3" and not ok.result.is_error
            bad = asyncio.run(kit.execute(ToolUseBlock(id="2", name="add", input={"a": "x"})))
            assert bad.result.text.startswith("Invalid arguments for tool 'add': a: ")
            ```
        """
        start = time.perf_counter()
        found = self._tools.get(call.name)
        if found is None or (
            found.group is not None and found.group not in self.active(active_groups)
        ):
            return self._unavailable(call, start, found, active_groups, offered)
        if offered is not None and call.name not in offered:
            return self._not_offered(call, start, offered)
        if call.raw_input is not None:
            return failed(call, start, invalid_json(call), ran=False)
        try:
            args, kwargs = found._binder.bind(thaw(call.input), inject)
        except ValidationError as exc:
            return failed(call, start, invalid_arguments(call.name, problems(exc)), ran=False)
        except _InvalidArguments as exc:
            return failed(call, start, invalid_arguments(call.name, exc.problems), ran=False)
        except _MissingInjection as exc:
            return failed(call, start, f"Tool '{call.name}' cannot run: {exc}", ran=False)
        limit = found.timeout if found.timeout is not None else timeout
        scope: asyncio.Timeout | None = None
        sink = ProgressSink(progress if progress is not None else run_progress(call, inject))
        try:
            if limit is None:  # no timer, no scope
                value = await invoke(found, args, kwargs, sink)
            else:
                scope = asyncio.timeout(None)
                async with scope:
                    _start_timeout(scope, limit)
                    value = await invoke(found, args, kwargs, sink)
        except Exception as exc:
            if isinstance(exc, TimeoutError) and scope is not None and scope.expired():
                message = f"Tool '{call.name}' timed out after {limit:g}s"
                log.info("%s (call %s); it was cancelled", message, call.id)
                return failed(call, start, message, code=ErrorCode.TOOL_TIMEOUT)
            log.warning("tool %r (call %s) raised", call.name, call.id, exc_info=exc)
            return failed(call, start, describe(exc), exception=type(exc).__name__)
        finally:
            sink.close()
        return finish(call, start, value)

    def _unavailable(
        self,
        call: ToolUseBlock,
        start: float,
        found: Tool[..., Any] | None,
        active_groups: Iterable[str] | None,
        offered: Collection[str] | None,
    ) -> ToolOutcome:
        active = self.active(active_groups)
        if found is None and self._group_tool and call.name == GROUP_TOOL_NAME:
            if offered is not None and call.name not in offered:
                return self._not_offered(call, start, offered)
            groups = tuple(self.groups())
            tools_of = {g: [n for n, t in self._tools.items() if t.group == g] for g in groups}
            text, change = run_group_tool(thaw(call.input), groups, active, tools_of)
            if change is None:
                return failed(call, start, text)
            result = ToolResultBlock(id=call.id, name=call.name, output=text)
            duration = (time.perf_counter() - start) * 1000
            return ToolOutcome(result=result, duration_ms=duration, group_change=change)
        if found is None:
            message = f"Tool '{call.name}' not found. Available tools: {self._available(active)}."
            return failed(call, start, message, ran=False)
        how = (
            f"activate it with {GROUP_TOOL_NAME} first"
            if self._group_tool
            else f"available tools: {self._available(active)}"
        )
        message = f"Tool '{call.name}' is in tool group '{found.group}', not active now; {how}."
        return failed(call, start, message, ran=False)

    def _not_offered(
        self, call: ToolUseBlock, start: float, offered: Collection[str]
    ) -> ToolOutcome:
        names = ", ".join(sorted(offered)) or "none"
        message = (
            f"Tool '{call.name}' is not available in this step (it was not offered in this "
            f"request); available tools: {names}."
        )
        return failed(call, start, message, ran=False)


def _start_timeout(scope: asyncio.Timeout, limit: float) -> None:
    """Start `scope`'s timer, in a context of its own.

    A cancelled timer stays on the loop until it is due; in the tool call's context it would
    keep the run (its `RunContext`, and so its memory and events) alive that long.
    """
    when = asyncio.get_running_loop().time() + limit
    contextvars.Context().run(scope.reschedule, when)
