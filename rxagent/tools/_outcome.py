"""`ToolOutcome`, and the error results `Toolkit.execute` gives for calls that fail."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rxagent.errors import ErrorCode
from rxagent.messages import Block, ToolResultBlock, ToolUseBlock
from rxagent.tools._result import ToolResult, to_output

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic import ValidationError

    from rxagent.tools._groups import GroupChange

__all__ = [
    "ToolOutcome",
    "describe",
    "failed",
    "finish",
    "invalid_arguments",
    "invalid_json",
    "problems",
]

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
    group_change: GroupChange | None = None
    """The tool groups to switch, when the call was `manage_tool_groups`; the agent applies it
    to the session with `Toolkit.switch_groups`."""
    ran: bool = True
    """False when the tool was never invoked: an unknown or unavailable tool, or arguments that
    did not validate. `AgentResult.tools_used` lists only calls that ran."""
    modified_by: tuple[str, ...] = ()
    """The tool interceptors that changed the call or the result (`PostActingEvent.modified_by`
    starts with them)."""

    @property
    def ok(self) -> bool:
        """True when the call succeeded."""
        return self.error_code is None


def failed(
    call: ToolUseBlock,
    start: float,
    message: str,
    *,
    code: ErrorCode = ErrorCode.TOOL_ERROR,
    exception: str | None = None,
    output: str | tuple[Block, ...] | None = None,
    ran: bool = True,
) -> ToolOutcome:
    """An error outcome: `output` (default: `message`) as an error result."""
    result = ToolResultBlock(
        id=call.id, name=call.name, output=message if output is None else output, is_error=True
    )
    return ToolOutcome(
        result=result,
        error_code=code,
        error_message=message,
        exception=exception,
        duration_ms=(time.perf_counter() - start) * 1000,
        ran=ran,
    )


def describe(exc: BaseException) -> str:
    """`Type: message`, or the type alone when the message is empty."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def invalid_json(call: ToolUseBlock) -> str:
    """Say that the call's arguments are not JSON, showing the start of them."""
    raw = call.raw_input or ""
    shown = raw if len(raw) <= _RAW_SHOWN else raw[:_RAW_SHOWN] + "... (truncated)"
    return (
        f"Invalid arguments for tool '{call.name}': they must be one JSON object, "
        f"but this is not valid JSON: {shown}"
    )


def invalid_arguments(name: str, problems: Sequence[str]) -> str:
    """List the fields the model got wrong, one `field: problem` each."""
    return f"Invalid arguments for tool '{name}': " + "; ".join(problems)


def finish(call: ToolUseBlock, start: float, value: object) -> ToolOutcome:
    """The outcome of a call whose tool returned `value` (a `ToolResult` may make it an error)."""
    is_error = False
    if isinstance(value, ToolResult):
        is_error = value.is_error
        value = value.output
    output = to_output(value)
    if output is None:
        message = (
            f"Tool '{call.name}' returned a {type(value).__name__}, which cannot be converted "
            "to JSON; the tool should return a str, content blocks or JSON-compatible data"
        )
        return failed(call, start, message)
    if is_error:
        text = ToolResultBlock(id=call.id, name=call.name, output=output).text
        return failed(call, start, text or f"Tool '{call.name}' failed", output=output)
    result = ToolResultBlock(id=call.id, name=call.name, output=output)
    return ToolOutcome(result=result, duration_ms=(time.perf_counter() - start) * 1000)


def problems(exc: ValidationError) -> list[str]:
    """Pydantic's errors as `field: problem` lines."""
    found = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        found.append(f"{where}: {error['msg']}")
    return found
