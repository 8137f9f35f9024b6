"""`ToolResult`, and how a tool's value becomes the output the model reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from pydantic_core import PydanticSerializationError, to_json

from rxagent.messages import Block, ImageBlock, TextBlock

__all__ = ["ToolResult", "to_output"]

_BLOCK_TYPES: Final = (TextBlock, ImageBlock)  # what every provider takes in a tool result


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's result, said explicitly: the value, and whether it is an error.

    Return one to give the model an error result without raising (`is_error=True`; the agent
    reports it as a `TOOL_ERROR`), and yield one from a generator tool to end it with that
    result (everything yielded before it is progress). `output` is converted like any return
    value: a `str` as is, content blocks as they are, anything else as JSON.

    Example:
        ```python
        import asyncio

        from rxagent.errors import ErrorCode
        from rxagent.messages import ToolUseBlock
        from rxagent.tools import Toolkit, ToolResult, tool


        @tool
        def lookup(key: str) -> ToolResult:
            \"\"\"Look a key up.\"\"\"
            if key != "a":
                return ToolResult(f"no key {key!r}; known keys: a", is_error=True)
            return ToolResult({"a": 1})


        kit = Toolkit([lookup])
        found = asyncio.run(kit.execute(ToolUseBlock(id="1", name="lookup", input={"key": "a"})))
        assert found.ok and found.result.output == '{"a":1}'
        missing = asyncio.run(kit.execute(ToolUseBlock(id="2", name="lookup", input={"key": "b"})))
        assert missing.error_code is ErrorCode.TOOL_ERROR and missing.result.is_error
        assert missing.result.text == "no key 'b'; known keys: a"
        ```
    """

    output: Any = ""
    """The result: a `str`, content blocks, or JSON-compatible data."""
    is_error: bool = False
    """True when the result reports a failure the model should see as one."""


def to_output(value: object) -> str | tuple[Block, ...] | None:
    """Return a tool's value as result output (None when it cannot be converted).

    Text as is, `None` as `""`, a `TextBlock`/`ImageBlock` or a non-empty list of them as blocks,
    anything else as JSON (`3` -> `"3"`; other blocks, such as a `ToolUseBlock`, as their JSON).

    Example:
        ```python
        from rxagent.messages import TextBlock
        from rxagent.tools._result import to_output

        assert to_output("hi") == "hi" and to_output(None) == ""
        assert to_output({"n": 3}) == '{"n":3}'
        assert to_output([TextBlock(text="a")]) == (TextBlock(text="a"),)
        assert to_output(object()) is None
        ```
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
