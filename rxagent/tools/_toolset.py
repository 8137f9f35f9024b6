"""`Toolset`: an object that provides tools, possibly asynchronously, with a lifecycle.

A toolset is passed like a tool: `ReActAgent(tools=[toolset, add])` or `Toolkit([toolset])`.
`rxagent.tools.mcp.MCPToolset` is one; any object with these four methods is another.

The contract (what a `Toolkit` does with a toolset, and what the toolset promises):

- **Entering.** The toolkit enters a toolset lazily, with `await toolset.__aenter__()`, the first
  time it is opened: `await toolkit.open()`, which the agent calls at the start of each run (it
  does nothing once every toolset is open). `async with toolkit:` also opens it. A toolset is
  entered at most once until it is closed. `__aenter__` connects (starts a process, opens a
  session...); if it raises, the toolset stays closed and `open()` raises: an rxagent error as
  it is, any other exception as a `ToolExecutionError` naming the toolset, with the exception as
  its `__cause__` (a run that opens the toolkit fails with `TOOL_ERROR`). A later `open()` tries
  again.
- **Listing.** Right after entering, the toolkit calls `await toolset.list_tools()` once and adds
  the returned `Tool`s like any others (a name already in the toolkit is a `ToolDefinitionError`).
  Build them with `Tool.from_schema(name, description, parameters, fn)` when the schema comes
  from elsewhere (a server), or with `@tool` for Python functions. A tool's `group` is kept.
  `await toolkit.refresh()` lists the tools of every open toolset again (after a server said its
  tools changed, say), replacing that toolset's tools.
- **Calling.** A listed tool is run by `Toolkit.execute` like any tool: validation, preset
  arguments, timeout, and results, where a returned `ToolResult(..., is_error=True)` is an error
  result the model sees (`TOOL_ERROR`) and a raised exception becomes one too. A toolset that
  reconnects does it inside its tools' functions; the toolkit never re-enters an open toolset.
- **Closing.** `await toolkit.aclose()` (called by `agent.aclose()`, so also by
  `async with agent:` and at the end of `agent.call_sync(...)`) calls `await toolset.aclose()` on
  every toolset it entered, newest first, and removes their tools; a later `open()` enters them
  again (on the loop running then). `aclose()` must be idempotent and safe on a toolset that was
  never entered. `__aexit__` must do what `aclose()` does, so a toolset also works on its own:
  `async with toolset: tools = await toolset.list_tools()`.
- **Loops and tasks.** Enter, list, call and close happen on the same event loop; they may run
  on different tasks (the run's task, tool tasks, the task calling `agent.aclose()`), so a
  toolset whose client needs one owning task (anyio cancel scopes) keeps that task itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import TracebackType

    from rxagent.tools._tool import Tool

__all__ = ["Toolset", "is_toolset"]


@runtime_checkable
class Toolset(Protocol):
    """An object that provides tools, with a lifecycle: see the module docstring for the contract.

    Example:
        ```python
        import asyncio
        from collections.abc import Sequence
        from typing import Any

        from rxagent.messages import ToolUseBlock
        from rxagent.tools import Tool, Toolkit, Toolset


        class Echoes:
            \"\"\"A toolset of one tool whose schema comes from elsewhere.\"\"\"

            def __init__(self) -> None:
                self.open = False

            async def __aenter__(self) -> "Echoes":
                self.open = True
                return self

            async def __aexit__(self, *exc: object) -> None:
                await self.aclose()

            async def aclose(self) -> None:
                self.open = False

            async def list_tools(self) -> Sequence[Tool[..., Any]]:
                async def echo(arguments: dict[str, Any]) -> str:
                    return arguments["text"]

                schema = {"type": "object", "properties": {"text": {"type": "string"}},
                          "required": ["text"]}
                return [Tool.from_schema("echo", "Echo the text.", schema, echo)]


        async def main() -> None:
            echoes = Echoes()
            assert isinstance(echoes, Toolset)
            kit = Toolkit([echoes])
            async with kit:  # enters the toolset and lists its tools
                assert echoes.open and kit.names() == ("echo",)
                call = ToolUseBlock(id="1", name="echo", input={"text": "hi"})
                assert (await kit.execute(call)).result.output == "hi"
            assert not echoes.open and kit.names() == ()


        asyncio.run(main())
        ```
    """

    async def __aenter__(self) -> object:
        """Connect; the toolkit calls it once, before `list_tools()` (it ignores the value)."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> bool | None:
        """Do what `aclose()` does."""
        ...

    async def list_tools(self) -> Sequence[Tool[..., Any]]:
        """Return the tools this toolset provides now (it is entered)."""
        ...

    async def aclose(self) -> None:
        """Disconnect; idempotent, and safe when never entered."""
        ...


def is_toolset(item: object) -> bool:
    """True when `item` is a toolset (and not a tool or a plain function).

    Example:
        ```python
        from rxagent.tools._toolset import is_toolset

        assert not is_toolset(print)
        ```
    """
    from rxagent.tools._tool import Tool  # _tool imports nothing from here

    return not isinstance(item, Tool | type) and isinstance(item, Toolset)
