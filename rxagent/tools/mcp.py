"""MCP toolsets: the tools of a Model Context Protocol server, as rxagent tools.

`MCPToolset.stdio(...)` runs a server as a subprocess; `MCPToolset.http(...)` connects to one
over streamable HTTP. Either is passed like a tool, `ReActAgent(tools=[toolset])`, and is an
async context manager. It lists the server's tools and offers them with the server's input
schemas; the model's arguments are checked against those schemas before a call, and results
are mapped (text, structured content as JSON, images as content blocks, `isError` as an error
result). It needs the official `mcp` SDK (v2): `pip install 'rxagent[mcp]'`.

Each connection lives in one task that owns the SDK's session (its anyio task groups must be
entered and exited by one task); calls reach it over a queue, so they may come from any task.
A call in flight when the connection fails (the server process exits) gets a `TOOL_ERROR`
result and the run goes on; the next call reconnects.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import typing
from typing import TYPE_CHECKING, Any, Final, Self, TextIO

from rxagent.errors import ConfigurationError
from rxagent.errors import MCPConnectionError as MCPConnectionError
from rxagent.tools._result import ToolResult
from rxagent.tools._tool import Tool, _check_timeout

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence
    from contextlib import AbstractAsyncContextManager
    from types import TracebackType

    import mcp.types as mcp_types
    from mcp.client._transport import TransportStreams

    from rxagent.tools._mcp_client import MCPClient

__all__ = ["MCPConnectionError", "MCPToolset"]

_INSTALL: Final = "pip install 'rxagent[mcp]'"
_CONNECT_TIMEOUT: Final = 30.0


@typing.final
class MCPToolset:
    """The tools of one MCP server; make one with `MCPToolset.stdio` or `MCPToolset.http`.

    Pass it like a tool (`ReActAgent(tools=[toolset])`): the agent connects at the start of
    its first run and disconnects in `agent.aclose()`. Or use it on its own with
    `async with toolset:` and `await toolset.list_tools()`.

    Attributes:
        name: How the server is named in errors (and in `repr`).
        allow: The server's tools to offer (None: all of them).
        deny: The server's tools never to offer.
        prefix: Put before each tool's name (`prefix_name`), to keep names from clashing.
        timeout: Seconds each call may take (None: the agent's `tool_timeout`); an expired call
            is cancelled on the server too, and gets a `TOOL_TIMEOUT` result.

    Example:
        ```python
        import sys

        from rxagent.tools import Toolset
        from rxagent.tools.mcp import MCPToolset

        time = MCPToolset.stdio(
            sys.executable, ["-m", "mcp_server_time"], name="time", prefix="time", timeout=10
        )
        assert isinstance(time, Toolset) and not time.connected
        assert repr(time) == "<MCPToolset 'time' (stdio)>"
        ```
    """

    __slots__ = ("_client", "_open", "allow", "deny", "name", "prefix", "timeout", "transport")

    def __init__(
        self,
        open_transport: typing.Callable[[], AbstractAsyncContextManager[TransportStreams]],
        *,
        name: str,
        transport: str = "custom",
        allow: Collection[str] | None = None,
        deny: Collection[str] = (),
        prefix: str | None = None,
        timeout: float | None = None,
        connect_timeout: float = _CONNECT_TIMEOUT,
    ) -> None:
        """A server reached through any transport of the `mcp` SDK (`stdio` and `http` use this).

        Args:
            open_transport: Called for each connection; returns an async context manager that
                yields the SDK's `(read_stream, write_stream)` pair (an `mcp.client.Transport`).
            name: How the server is named in errors.
            transport: What kind of transport it is, for `repr`.
            allow: Only these tools of the server are offered (by the server's names).
            deny: These tools of the server are not offered.
            prefix: Offer each tool as `prefix_name`, to keep names from clashing.
            timeout: Seconds each call may take; then it gets a `TOOL_TIMEOUT` result.
            connect_timeout: Seconds to connect and open the session.

        Raises:
            ConfigurationError: When the `mcp` SDK is not installed, or an option is wrong.
        """
        _require_mcp()
        from rxagent.tools._mcp_client import MCPClient

        self.name: str = name
        self.transport: str = transport
        """`"stdio"`, `"http"`, or what a custom transport is called."""
        self.allow: frozenset[str] | None = None if allow is None else _names("allow", allow)
        self.deny: frozenset[str] = _names("deny", deny)
        self.prefix: str | None = _check_prefix(prefix)
        self.timeout: float | None = _check_timeout(f"mcp:{name}", timeout)
        limit = _check_timeout(f"mcp:{name}", connect_timeout)
        self._client: MCPClient = MCPClient(
            f"MCP server {name!r}",
            open_transport,
            connect_timeout=_CONNECT_TIMEOUT if limit is None else limit,
        )

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        stderr: TextIO | None = None,
        name: str | None = None,
        allow: Collection[str] | None = None,
        deny: Collection[str] = (),
        prefix: str | None = None,
        timeout: float | None = None,
        connect_timeout: float = _CONNECT_TIMEOUT,
    ) -> MCPToolset:
        """A server run as a subprocess, spoken to over its stdin and stdout.

        The process starts when the toolset is entered and is stopped when it closes (stdin
        closed, then its whole process group terminated if it lingers). If it dies, the next
        call starts it again.

        Args:
            command: The program to run, e.g. `"mcp-server-time"` or `"npx"`.
            args: Its arguments.
            env: Environment variables for it, over a minimal inherited set (`PATH`, `HOME`...).
            cwd: Its working directory (default: ours).
            stderr: Where its stderr (its log) goes (default: our `sys.stderr`, or nowhere when
                that is not a real file).
            name: How the server is named in errors (default: the command's file name).
            allow: Only these tools of the server are offered (by the server's names).
            deny: These tools of the server are not offered.
            prefix: Offer each tool as `prefix_name`, to keep names from clashing.
            timeout: Seconds each call may take; then it gets a `TOOL_TIMEOUT` result.
            connect_timeout: Seconds to start the server and open the session.

        Raises:
            ConfigurationError: When the `mcp` SDK is not installed, or an option is wrong.

        Example:
            ```python
            from rxagent.tools.mcp import MCPToolset

            git = MCPToolset.stdio("mcp-server-git", ["--repository", "."], deny=["git_reset"])
            assert git.name == "mcp-server-git" and git.deny == {"git_reset"}
            ```
        """
        if not isinstance(command, str) or not command:
            raise ConfigurationError(
                f"MCPToolset.stdio: command must be a program, got {command!r}"
            )
        if isinstance(args, str):
            raise ConfigurationError(
                f"MCPToolset.stdio: args must be a list of strings, got the string {args!r}; "
                f"write args=[{args!r}]"
            )
        argv, environment = list(args), None if env is None else dict(env)
        where = None if cwd is None else os.fspath(cwd)

        def open_transport() -> AbstractAsyncContextManager[TransportStreams]:
            from mcp import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=command, args=argv, env=environment, cwd=where)
            return stdio_client(params, errlog=_errlog(stderr))

        return cls(
            open_transport,
            transport="stdio",
            name=name if name is not None else os.path.basename(command),
            allow=allow,
            deny=deny,
            prefix=prefix,
            timeout=timeout,
            connect_timeout=connect_timeout,
        )

    @classmethod
    def http(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        name: str | None = None,
        allow: Collection[str] | None = None,
        deny: Collection[str] = (),
        prefix: str | None = None,
        timeout: float | None = None,
        connect_timeout: float = _CONNECT_TIMEOUT,
    ) -> MCPToolset:
        """A server reached over streamable HTTP.

        Args:
            url: The server's MCP endpoint, e.g. `"http://127.0.0.1:8000/mcp"`.
            headers: Headers sent with every request (an `Authorization` header, say).
            name: How the server is named in errors (default: the URL).
            allow: Only these tools of the server are offered (by the server's names).
            deny: These tools of the server are not offered.
            prefix: Offer each tool as `prefix_name`, to keep names from clashing.
            timeout: Seconds each call may take; then it gets a `TOOL_TIMEOUT` result.
            connect_timeout: Seconds to reach the server and open the session.

        Raises:
            ConfigurationError: When the `mcp` SDK is not installed, or an option is wrong.

        Example:
            ```python
            from rxagent.tools.mcp import MCPToolset

            docs = MCPToolset.http(
                "http://127.0.0.1:8000/mcp", {"Authorization": "Bearer t0k3n"}, prefix="docs"
            )
            assert docs.transport == "http" and docs.prefix == "docs"
            ```
        """
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"MCPToolset.http: url must be an http:// or https:// URL, got {url!r}"
            )
        sent = dict(headers or {})

        def open_transport() -> AbstractAsyncContextManager[TransportStreams]:
            from rxagent.tools._mcp_transport import open_http

            return open_http(url, sent)

        return cls(
            open_transport,
            transport="http",
            name=name if name is not None else url,
            allow=allow,
            deny=deny,
            prefix=prefix,
            timeout=timeout,
            connect_timeout=connect_timeout,
        )

    @property
    def connected(self) -> bool:
        """True while a session with the server is open."""
        return self._client.connected

    async def __aenter__(self) -> Self:
        """Connect (start the server process, or reach the URL) and open the session.

        Raises:
            MCPConnectionError: When the server cannot be started or reached.
        """
        await self._client.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the session (and stop a stdio server); idempotent. The toolset may reopen."""
        await self._client.aclose()

    async def list_tools(self) -> Sequence[Tool[..., Any]]:
        """Ask the server for its tools and return the offered ones as rxagent tools.

        Raises:
            ConfigurationError: When the toolset is not open.
            ToolDefinitionError: When `allow` or `deny` names a tool the server does not have,
                or two tools would get the same name.
        """
        from rxagent.tools._mcp_convert import offered_names

        if not self._client.started:
            raise ConfigurationError(
                f"MCPToolset {self.name!r} is not open: use `async with toolset:` or pass it "
                "to an agent, which opens it"
            )
        listed = await self._client.list_tools()
        offered = offered_names(
            self._client.label, listed, allow=self.allow, deny=self.deny, prefix=self.prefix
        )
        return [self._tool(name, server_tool) for name, server_tool in offered.items()]

    def __repr__(self) -> str:
        return f"<MCPToolset {self.name!r} ({self.transport})>"

    def _tool(self, name: str, server_tool: mcp_types.Tool) -> Tool[..., Any]:
        from mcp import MCPError

        from rxagent.tools._mcp_convert import argument_checker, to_tool_result

        client, remote = self._client, server_tool.name
        check = argument_checker(server_tool.input_schema)

        async def call(arguments: dict[str, Any]) -> ToolResult:
            problems = check(arguments)
            if problems:
                text = f"Invalid arguments for tool '{name}': " + "; ".join(problems)
                return ToolResult(text, is_error=True)
            try:
                result = await client.call_tool(remote, arguments)
            except MCPError as exc:
                text = f"{client.label} refused the call to {remote!r}: {exc.message}"
                return ToolResult(text, is_error=True)
            return to_tool_result(result)

        description = server_tool.description or server_tool.title or ""
        return Tool.from_schema(
            name, description, server_tool.input_schema, call, timeout=self.timeout
        )


def _require_mcp() -> None:
    try:
        module = importlib.import_module("mcp.client.streamable_http")
        module.streamable_http_client  # noqa: B018 - absent before version 2
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(
            f"MCPToolset needs the official MCP SDK, version 2 or later: {_INSTALL}"
        ) from exc


def _names(option: str, names: Collection[str]) -> frozenset[str]:
    if isinstance(names, str):
        raise ConfigurationError(
            f"MCPToolset: {option}= takes a list of tool names, got the string {names!r}; "
            f"write {option}=[{names!r}]"
        )
    if not all(isinstance(n, str) for n in names):
        raise ConfigurationError(
            f"MCPToolset: {option}= takes a list of tool names (strings), got {names!r}"
        )
    return frozenset(names)


def _check_prefix(prefix: object) -> str | None:
    if prefix is None:
        return None
    if not isinstance(prefix, str) or not prefix:
        raise ConfigurationError(
            f"MCPToolset: prefix= must be a non-empty string or None, got {prefix!r}"
        )
    return prefix


def _errlog(stderr: TextIO | None) -> TextIO:
    """Where a stdio server's stderr goes: `stderr`, else ours if it is a real file."""
    if stderr is not None:
        return stderr
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        # e.g. a notebook's stderr: a subprocess cannot write to it
        return typing.cast("TextIO", subprocess.DEVNULL)
    return sys.stderr
