"""One asynchronous face over Qdrant's two clients: a server's, and local mode's.

For a server (`url=`) it is `AsyncQdrantClient`, which speaks HTTP without blocking the loop.
Local mode (a folder, or `":memory:"`) is different: qdrant-client's `AsyncQdrantClient` accepts
a `path`, but its local engine is the synchronous one behind `async def`s, so every search would
block the event loop for as long as it scans. Local mode therefore runs the synchronous
`QdrantClient` in a worker thread, one call at a time (the local engine is not thread-safe).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from qdrant_client import AsyncQdrantClient, QdrantClient

from rxagent.errors import ConfigurationError

__all__ = ["MEMORY", "QdrantBackend"]

MEMORY: Final = ":memory:"


class QdrantBackend:
    """Calls a Qdrant client's methods by name, awaiting either kind of client.

    Args:
        path: A local-mode folder, or `":memory:"`; None with `url`.
        url: A Qdrant server's URL; None for local mode.
        api_key: The server's API key.
    """

    def __init__(self, *, path: str | None, url: str | None, api_key: str | None) -> None:
        self.path = path
        self.url = url
        self._api_key = api_key
        self._local: QdrantClient | None = None
        self._remote: AsyncQdrantClient | None = None
        self._lock = asyncio.Lock()

    @property
    def is_local(self) -> bool:
        """True for local mode (a folder or in memory)."""
        return self.url is None

    def _open_local(self) -> QdrantClient:
        if self.path == MEMORY:
            return QdrantClient(location=MEMORY)
        # Calls come from worker threads, one at a time under the lock: the sqlite connection of
        # the local storage may be used by a thread other than the one that opened it.
        try:
            return QdrantClient(path=self.path, force_disable_check_same_thread=True)
        except RuntimeError as exc:
            if "already accessed" not in str(exc):
                raise
            raise ConfigurationError(
                f"the folder {self.path!r} is open in another KnowledgeBase or process "
                "(qdrant-client's local mode locks it until aclose()); close that one first "
                "(async with KnowledgeBase(...) as kb: closes it), or use a Qdrant server "
                "(url=) for shared access"
            ) from exc

    async def call(self, method: str, /, **kwargs: Any) -> Any:
        """Call the client's `method` with keyword arguments, opening the client on first use."""
        if self.url is not None:
            if self._remote is None:
                self._remote = AsyncQdrantClient(url=self.url, api_key=self._api_key)
            return await getattr(self._remote, method)(**kwargs)
        async with self._lock:
            if self._local is None:
                self._local = await asyncio.to_thread(self._open_local)
            return await asyncio.to_thread(getattr(self._local, method), **kwargs)

    async def aclose(self) -> None:
        """Close the client (local mode releases its folder's lock); idempotent."""
        if self._remote is not None:
            remote, self._remote = self._remote, None
            await remote.close()
        async with self._lock:
            if self._local is not None:
                local, self._local = self._local, None
                await asyncio.to_thread(local.close)
