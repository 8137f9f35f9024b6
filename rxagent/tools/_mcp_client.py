"""One MCP client connection, owned by one task that connects, serves requests and reconnects.

The mcp SDK opens anyio task groups (in the transport and in `ClientSession`) that must be
entered and exited by the same task. So one *owner task* per client holds the transport and
the session for their whole life, and every other task talks to it through a queue: a request
carries its own future, which the owner settles. Calls run concurrently, each in a child task of
a task group the owner entered, inside its own cancel scope; a caller that gives up (a timeout,
an interrupt) cancels its future, and that cancels the request's scope, so the SDK tells the
server the request was cancelled.

A connection that fails (the server process exits, the HTTP transport breaks) fails the calls
in flight with `MCPConnectionError`; the owner then tears the connection down and waits: the next
request connects again. `aclose()` ends the owner task: the transport's own shutdown runs (stdio
closes the server's stdin, waits, then kills its process group), so no process or task is left.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
import mcp.types as mcp_types
from mcp import ClientSession, MCPError

from rxagent.errors import MCPConnectionError
from rxagent.tools._mcp_transport import WatchedStream

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractAsyncContextManager

    from mcp.client._transport import TransportStreams

__all__ = ["MCPClient"]

_LOST: Final = "Session terminated"  # the HTTP transport's word for a session the server forgot
_TRANSPORT_ERRORS: Final = (
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
    OSError,
)


@dataclass(eq=False, slots=True)
class _Request:
    kind: Literal["list", "call"]
    future: asyncio.Future[Any]
    name: str = ""
    arguments: dict[str, Any] | None = None
    scope: anyio.CancelScope | None = None


@dataclass(frozen=True, slots=True)
class _Broken:
    """The connection of this generation ended; a stale one (older generation) is ignored."""

    generation: int


class _Close:
    """Ask the owner task to disconnect and end."""


_CLOSE: Final = _Close()
_Item = _Request | _Broken | _Close


class MCPClient:
    """A reconnecting MCP client whose session lives in one owner task.

    Args:
        label: How the server is named in errors (`MCP server 'time'`).
        open_transport: Opens the transport: `stdio_client(...)` or `streamable_http_client(...)`.
        connect_timeout: Seconds to connect and initialise the session.
    """

    def __init__(
        self,
        label: str,
        open_transport: Callable[[], AbstractAsyncContextManager[TransportStreams]],
        *,
        connect_timeout: float,
    ) -> None:
        self.label = label
        self._open_transport = open_transport
        self._connect_timeout = connect_timeout
        self._queue: asyncio.Queue[_Item] | None = None
        self._task: asyncio.Task[None] | None = None
        self._generation = 0
        self._closing = False
        self.connected = False
        """True while a session is open."""

    @property
    def started(self) -> bool:
        """True between a successful `start()` and `aclose()` (while the owner task runs)."""
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Start the owner task and wait until it is connected.

        Raises:
            MCPConnectionError: When the server cannot be reached or the session not initialised.
        """
        if self.started:
            return
        loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        self._closing = False
        ready: asyncio.Future[None] = loop.create_future()
        self._task = loop.create_task(self._own(ready), name=f"mcp-client:{self.label}")
        try:
            await ready
        except BaseException:
            await self.aclose()
            raise

    async def list_tools(self) -> list[mcp_types.Tool]:
        """Return every tool the server lists (all pages)."""
        tools: list[mcp_types.Tool] = await self._request(_Request("list", self._future()))
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call a tool and return the server's result.

        Raises:
            MCPConnectionError: When the connection fails before or during the call.
            mcp.MCPError: When the server answers with a JSON-RPC error.
        """
        result: mcp_types.CallToolResult = await self._request(
            _Request("call", self._future(), name, arguments)
        )
        return result

    async def aclose(self) -> None:
        """End the owner task: disconnect (stopping a stdio server) and fail what is queued."""
        task, queue = self._task, self._queue
        if task is None or queue is None:
            return
        if task.done():  # it ended on its own (its loop was shut down, say): nothing to stop
            self._task = self._queue = None
            return
        self._closing = True
        queue.put_nowait(_CLOSE)
        if not self.connected:  # connecting or idle: nothing to finish, stop at once
            task.cancel()
        # `wait`, not `await task`: a caller cancelled meanwhile does not cancel the shutdown
        await asyncio.wait({task})
        self._task = None
        self._queue = None
        if not task.cancelled():
            task.result()  # a bug in the owner task surfaces here

    # -- the caller's side ----------------------------------------------------------------------

    def _future(self) -> asyncio.Future[Any]:
        return asyncio.get_running_loop().create_future()

    async def _request(self, request: _Request) -> Any:
        task = self._task
        if task is not None and task.done() and not self._closing:
            # the owner was cancelled with the loop it ran on (`asyncio.run` returned, say):
            # connect again, on this loop
            self._task = self._queue = None
            if not task.cancelled():
                task.result()  # a bug in the owner task surfaces here
            await self.start()
        if self._queue is None or self._closing or not self.started:
            raise MCPConnectionError(f"{self.label} is closed; enter the toolset first")
        request.future.add_done_callback(lambda fut: _abandon(request, fut))
        self._queue.put_nowait(request)
        return await request.future

    # -- the owner task -------------------------------------------------------------------------

    async def _own(self, ready: asyncio.Future[None]) -> None:
        assert self._queue is not None
        queue = self._queue
        waiting: list[_Request] = []
        try:
            while True:
                try:
                    if await self._connection(waiting, ready):
                        return
                except Exception as exc:
                    error = _connect_error(self.label, exc, self.connected)
                    if not ready.done():  # the first connection failed: `start()` raises
                        ready.set_exception(error)
                        return
                    for request in waiting:
                        _settle(request, error)
                finally:
                    self.connected = False
                waiting = []
                item = await queue.get()  # idle and disconnected: the next request reconnects
                while not isinstance(item, _Request):
                    if isinstance(item, _Close):
                        return
                    item = await queue.get()
                waiting.append(item)
        finally:
            closed = MCPConnectionError(f"{self.label} was closed")
            if not ready.done():
                ready.set_exception(closed)
            for request in waiting:
                _settle(request, closed)
            while not queue.empty():
                item = queue.get_nowait()
                if isinstance(item, _Request):
                    _settle(item, closed)

    async def _connection(self, waiting: list[_Request], ready: asyncio.Future[None]) -> bool:
        """Connect, then serve requests until the connection breaks (False) or closes (True)."""
        assert self._queue is not None
        queue = self._queue
        self._generation += 1
        generation = self._generation

        def on_end() -> None:
            queue.put_nowait(_Broken(generation))

        deadline = anyio.current_time() + self._connect_timeout
        with anyio.CancelScope(deadline=deadline) as connecting:
            async with self._open_transport() as (read, write):
                watched = WatchedStream(read, on_end)
                async with ClientSession(watched, write) as session:
                    await session.initialize()
                    connecting.deadline = math.inf
                    self.connected = True
                    if not ready.done():
                        ready.set_result(None)
                    return await self._serve(session, generation, waiting)
        if connecting.cancelled_caught:
            raise TimeoutError(f"no answer within {self._connect_timeout:g}s")
        return self._closing  # pragma: no cover - the transport swallowed our own cancellation

    async def _serve(
        self, session: ClientSession, generation: int, waiting: list[_Request]
    ) -> bool:
        assert self._queue is not None
        queue = self._queue
        closing = False
        async with anyio.create_task_group() as group:
            for request in waiting:
                group.start_soon(self._handle, session, generation, request)
            waiting.clear()
            while True:
                item = await queue.get()
                if isinstance(item, _Close):
                    closing = True
                    break
                if isinstance(item, _Broken):
                    if item.generation == generation:
                        break
                    continue
                group.start_soon(self._handle, session, generation, item)
            group.cancel_scope.cancel()  # calls still in flight end with MCPConnectionError
        return closing

    async def _handle(self, session: ClientSession, generation: int, request: _Request) -> None:
        """Run one request in its own cancel scope and settle its future."""
        if request.future.done():  # the caller gave up before the request started
            return
        try:
            with anyio.CancelScope() as scope:
                request.scope = scope
                value = await self._send(session, request)
                _settle(request, value)
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED or exc.message == _LOST:
                self._break(generation)
                _settle(request, self._lost(exc))
            else:
                _settle(request, exc)
        except _TRANSPORT_ERRORS as exc:  # the connection broke: reconnect for the next call
            self._break(generation)
            _settle(request, self._lost(exc))
        except Exception as exc:  # e.g. a result that does not fit the tool's output schema
            _settle(request, exc)
        finally:
            request.scope = None
            reason = "was closed" if self._closing else "disconnected"
            _settle(request, MCPConnectionError(f"{self.label} {reason} during the call"))

    async def _send(self, session: ClientSession, request: _Request) -> Any:
        if request.kind == "call":
            return await session.call_tool(request.name, request.arguments)
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    def _break(self, generation: int) -> None:
        if self._queue is not None:
            self._queue.put_nowait(_Broken(generation))

    def _lost(self, exc: BaseException) -> MCPConnectionError:
        error = MCPConnectionError(
            f"{self.label} disconnected during the call ({_describe(exc)}); "
            "the next call reconnects"
        )
        error.__cause__ = exc
        return error


def _abandon(request: _Request, future: asyncio.Future[Any]) -> None:
    """The caller cancelled: cancel the request's scope (the SDK tells the server)."""
    if future.cancelled() and request.scope is not None:
        request.scope.cancel()


def _settle(request: _Request, outcome: object) -> None:
    future = request.future
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    leaf = _leaf(exc)
    text = str(leaf)
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def _connect_error(label: str, exc: Exception, was_connected: bool) -> MCPConnectionError:
    what = "lost its connection" if was_connected else "could not connect"
    error = MCPConnectionError(f"{label} {what}: {_describe(exc)}")
    error.__cause__ = _leaf(exc)
    return error
