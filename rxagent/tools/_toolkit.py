"""`Toolkit`: the tools an agent offers, and `execute`, which runs one tool call safely.

`execute` never raises for a tool's failure: unknown tools, invalid JSON, invalid arguments,
missing injections, timeouts and exceptions all become an error `ToolResultBlock` the model can
read, with an `ErrorCode` for the agent. Only `asyncio.CancelledError` (and other
`BaseException`s) propagate.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_json

from rxagent.errors import ErrorCode, ToolDefinitionError
from rxagent.messages import (
    Block,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    thaw,
)
from rxagent.tools._inject import MissingInjection
from rxagent.tools._threads import run_in_thread
from rxagent.tools._tool import Tool, tool

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from rxagent.models.base import ToolSchema

__all__ = ["ToolOutcome", "Toolkit"]

_NOTHING_INJECTED: Final[Mapping[type[Any], object]] = MappingProxyType({})
_BLOCK_TYPES: Final = (TextBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock, ImageBlock)
_RAW_SHOWN: Final = 200  # characters of invalid argument JSON echoed back to the model


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call produced: the result for the model, and how the call went.

    Example:
        ```python
        import asyncio

        from rxagent.errors import ErrorCode
        from rxagent.messages import ToolUseBlock
        from rxagent.tools import Toolkit, tool


        @tool
        def divide(a: float, b: float) -> float:
            \"\"\"Divide a by b.\"\"\"
            return a / b


        kit = Toolkit([divide])
        call = ToolUseBlock(id="call_1", name="divide", input={"a": 1, "b": 0})
        outcome = asyncio.run(kit.execute(call))
        assert not outcome.ok and outcome.error_code is ErrorCode.TOOL_ERROR
        assert outcome.exception == "ZeroDivisionError"
        assert outcome.result.is_error
        assert outcome.result.text == "ZeroDivisionError: float division by zero"
        ```
    """

    result: ToolResultBlock
    """The result to give the model; `is_error` is True when the call failed."""
    error_code: ErrorCode | None = None
    """`TOOL_ERROR` or `TOOL_TIMEOUT` when the call failed, None on success."""
    error_message: str | None = None
    """What went wrong (the same text as the error result), None on success."""
    exception: str | None = None
    """The type name of the exception the tool raised, if it raised one."""
    duration_ms: float = 0.0
    """How long the call took, validation included, in milliseconds."""

    @property
    def ok(self) -> bool:
        """True when the call succeeded."""
        return self.error_code is None


class Toolkit:
    """The set of tools an agent offers the model, by name.

    Plain functions are wrapped with `tool(...)`. `schemas()` is what the model is told;
    `execute()` runs one call.

    Args:
        tools: Tools, or functions to make tools of.

    Raises:
        ToolDefinitionError: When two tools share a name, or a function cannot be a tool.

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

    __slots__ = ("_schemas", "_tools")

    def __init__(self, tools: Iterable[Tool[..., Any] | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool[..., Any]] = {}
        self._schemas: tuple[ToolSchema, ...] | None = None
        for item in tools:
            self.add(item)

    def add(self, item: Tool[..., Any] | Callable[..., Any]) -> Tool[..., Any]:
        """Add a tool (a plain function is wrapped with `tool(...)`) and return it.

        Raises:
            ToolDefinitionError: When a tool of that name is already here.

        Example:
            ```python
            from rxagent.tools import Toolkit


            def ping() -> str:
                \"\"\"Answer pong.\"\"\"
                return "pong"


            kit = Toolkit()
            assert kit.add(ping).name == "ping" and len(kit) == 1
            ```
        """
        added = item if isinstance(item, Tool) else tool(item)
        if added.name in self._tools:
            raise ToolDefinitionError(
                f"a tool named '{added.name}' is already in this toolkit; give one of them "
                f"another name with @tool(name=...), or remove the old one first with "
                f"toolkit.remove('{added.name}')"
            )
        self._tools[added.name] = added
        self._schemas = None
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
            raise KeyError(f"no tool named '{name}'; tools: {self._available()}") from None
        self._schemas = None
        return removed

    def get(self, name: str) -> Tool[..., Any] | None:
        """Return the tool called `name`, or None."""
        return self._tools.get(name)

    def names(self) -> tuple[str, ...]:
        """Return the tools' names, in the order they were added."""
        return tuple(self._tools)

    def schemas(self) -> tuple[ToolSchema, ...]:
        """Return what the model is told about each tool, in the order they were added.

        Example:
            ```python
            from rxagent.tools import Toolkit


            def ping() -> str:
                \"\"\"Answer pong.\"\"\"
                return "pong"


            (schema,) = Toolkit([ping]).schemas()
            assert schema.name == "ping" and schema.description == "Answer pong."
            ```
        """
        if self._schemas is None:
            self._schemas = tuple(t.schema for t in self._tools.values())
        return self._schemas

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

    def _available(self) -> str:
        return ", ".join(self._tools) or "none"

    async def execute(
        self,
        call: ToolUseBlock,
        *,
        inject: Mapping[type[Any], object] = _NOTHING_INJECTED,
        timeout: float | None = None,  # noqa: ASYNC109 - the default for tools without their own
    ) -> ToolOutcome:
        """Run one tool call and return its outcome; a failure is an error result, never raised.

        Sync tools run in a worker thread, async tools on the loop. On timeout an async tool is
        cancelled; a sync tool's thread cannot be stopped, so its result is dropped when it ends.

        Args:
            call: The model's tool call.
            inject: Values for injected parameters, by type. A parameter gets the value whose
                key is its type or a subclass of it, else the first value that is an instance.
            timeout: Seconds the call may take, for tools without their own `timeout`.

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
        if found is None:
            message = f"Tool '{call.name}' not found. Available tools: {self._available()}."
            return _failed(call, start, message)
        if call.raw_input is not None:
            return _failed(call, start, _invalid_json(call))
        try:
            args, kwargs = found._binder.bind(thaw(call.input), inject)
        except ValidationError as exc:
            return _failed(call, start, _invalid_arguments(call.name, exc))
        except MissingInjection as exc:
            return _failed(call, start, f"Tool '{call.name}' cannot run: {exc}")
        limit = found.timeout if found.timeout is not None else timeout
        scope = asyncio.timeout(limit)
        try:
            async with scope:
                value = await _invoke(found, args, kwargs)
        except Exception as exc:
            if isinstance(exc, TimeoutError) and scope.expired():
                message = f"Tool '{call.name}' timed out after {limit:g}s"
                return _failed(call, start, message, code=ErrorCode.TOOL_TIMEOUT)
            return _failed(call, start, _describe(exc), exception=type(exc).__name__)
        output = _to_output(value)
        if output is None:
            message = (
                f"Tool '{call.name}' returned a {type(value).__name__}, which cannot be converted "
                "to JSON; the tool should return a str, content blocks or JSON-compatible data"
            )
            return _failed(call, start, message)
        result = ToolResultBlock(id=call.id, name=call.name, output=output)
        return ToolOutcome(result=result, duration_ms=(time.perf_counter() - start) * 1000)


async def _invoke(found: Tool[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    if found.is_async:
        value = await found.fn(*args, **kwargs)
    else:
        value = await run_in_thread(found.fn, *args, **kwargs)
    if inspect.isawaitable(value):  # a sync callable that returned a coroutine
        value = await value
    return value


def _to_output(value: object) -> str | tuple[Block, ...] | None:
    """Return a tool's value as result output (None when it cannot be converted).

    Text as is, `None` as `""`, content blocks as blocks, anything else as JSON (`3` -> `"3"`).
    """
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, _BLOCK_TYPES):
        return (value,)
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(v, _BLOCK_TYPES) for v in value)
    ):
        return tuple(value)
    try:
        return to_json(value).decode()
    except PydanticSerializationError:
        return None


def _describe(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _invalid_json(call: ToolUseBlock) -> str:
    raw = call.raw_input or ""
    shown = raw if len(raw) <= _RAW_SHOWN else raw[:_RAW_SHOWN] + "... (truncated)"
    return (
        f"Invalid arguments for tool '{call.name}': they must be one JSON object, "
        f"but this is not valid JSON: {shown}"
    )


def _invalid_arguments(name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        problems.append(f"{where}: {error['msg']}")
    return f"Invalid arguments for tool '{name}': " + "; ".join(problems)


def _failed(
    call: ToolUseBlock,
    start: float,
    message: str,
    *,
    code: ErrorCode = ErrorCode.TOOL_ERROR,
    exception: str | None = None,
) -> ToolOutcome:
    return ToolOutcome(
        result=ToolResultBlock(id=call.id, name=call.name, output=message, is_error=True),
        error_code=code,
        error_message=message,
        exception=exception,
        duration_ms=(time.perf_counter() - start) * 1000,
    )
