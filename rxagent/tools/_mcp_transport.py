"""Transport pieces for the MCP client: a read stream that reports its end, and HTTP."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final

import anyio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping
    from types import TracebackType

    from mcp.client._transport import TransportStreams
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.message import SessionMessage

__all__ = ["WatchedStream", "open_http"]

_HTTP_TIMEOUT: Final = 30.0  # connect, write, pool; as the SDK's own default client
_SSE_READ_TIMEOUT: Final = 300.0  # a server may hold a response stream open this long


class WatchedStream:
    """The transport's read stream, reporting when it ends (the server went away)."""

    __slots__ = ("_inner", "_on_end")

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception], on_end: Callable[[], None]
    ) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> object:
        """The sender's context of the last item, where the transport keeps one."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> WatchedStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@asynccontextmanager
async def open_http(url: str, headers: Mapping[str, str]) -> AsyncIterator[TransportStreams]:
    """Open a streamable HTTP transport whose HTTP client sends `headers` with every request."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(_HTTP_TIMEOUT, read=_SSE_READ_TIMEOUT)
    async with (
        httpx2.AsyncClient(headers=dict(headers), timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
