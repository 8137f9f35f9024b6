"""How a `Toolkit` holds toolsets: entering them lazily, listing their tools, closing them.

The contract is in `rxagent.tools._toolset`. `ToolsetSlots` is the part of `Toolkit` that keeps
it; the toolkit supplies `_add_listed` (add a toolset's tools, all or none) and `_drop`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

from rxagent.errors import RxAgentError, ToolExecutionError
from rxagent.tools._toolset import is_toolset

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rxagent.tools._tool import Tool
    from rxagent.tools._toolset import Toolset

__all__ = ["ToolsetSlots"]

log = logging.getLogger("rxagent.tools")


@dataclass(slots=True)
class _Slot:
    toolset: Toolset
    entered: bool = False
    names: tuple[str, ...] = field(default=())


class ToolsetSlots:
    """The toolsets of a toolkit: `open()`, `refresh()`, `aclose()` and `async with`."""

    __slots__ = ("_opening", "_toolsets")

    def __init__(self) -> None:
        self._toolsets: list[_Slot] = []
        self._opening: asyncio.Task[None] | None = None

    def _add_listed(self, listed: Iterable[Tool[..., Any]]) -> tuple[str, ...]:
        raise NotImplementedError  # pragma: no cover - Toolkit defines it

    def _drop(self, names: Iterable[str]) -> None:
        raise NotImplementedError  # pragma: no cover - Toolkit defines it

    def _add_toolset(self, item: object) -> bool:
        """Hold `item` when it is a toolset (once); return whether it was one."""
        if not is_toolset(item):
            return False
        if not any(slot.toolset is item for slot in self._toolsets):
            self._toolsets.append(_Slot(item))  # type: ignore[arg-type] # checked just above
        return True

    @property
    def toolsets(self) -> tuple[Toolset, ...]:
        """The toolsets added, in order (open or not)."""
        return tuple(slot.toolset for slot in self._toolsets)

    @property
    def is_open(self) -> bool:
        """True when every toolset is entered and its tools are here (no toolsets: True)."""
        return all(slot.entered for slot in self._toolsets)

    async def open(self) -> None:
        """Enter the toolsets not entered yet and add their tools; nothing to do when all are.

        Concurrent calls share one opening. The agent calls it when a run starts.

        Raises:
            ToolExecutionError: A toolset's `__aenter__` or `list_tools` failed (the message
                names the toolset and the exception, which is the `__cause__`); that toolset is
                closed again, and a later `open()` retries it.
            ToolDefinitionError: A toolset's tool has the name of a tool already here.
        """
        if self.is_open:
            return
        loop = asyncio.get_running_loop()
        task = self._opening
        if task is None or task.done() or task.get_loop() is not loop:
            task = self._opening = loop.create_task(self._open_all())
        await asyncio.shield(task)

    async def _open_all(self) -> None:
        for slot in list(self._toolsets):
            if not slot.entered:
                await self._enter(slot)

    async def _enter(self, slot: _Slot) -> None:
        toolset = slot.toolset
        try:
            await toolset.__aenter__()
        except RxAgentError:
            raise
        except Exception as exc:
            raise _open_failed(toolset, exc) from exc
        try:
            slot.names = self._add_listed(await toolset.list_tools())
        except BaseException as exc:
            try:
                await toolset.aclose()
            except Exception as close_exc:  # the listing failure is the one to report
                log.warning("closing toolset %r failed", toolset, exc_info=close_exc)
            if isinstance(exc, RxAgentError) or not isinstance(exc, Exception):
                raise
            raise _open_failed(toolset, exc) from exc
        slot.entered = True

    async def refresh(self) -> None:
        """List the tools of every open toolset again, replacing its tools.

        Raises:
            Exception: What a toolset's `list_tools` raised (its old tools are kept).
        """
        for slot in self._toolsets:
            if slot.entered:
                listed = await slot.toolset.list_tools()
                self._drop(slot.names)
                slot.names = ()
                slot.names = self._add_listed(listed)

    async def aclose(self) -> None:
        """Close every entered toolset, newest first, and remove their tools.

        The toolkit can be opened again afterwards. Every toolset is closed even when one
        fails to; then the first failure is raised.
        """
        task, self._opening = self._opening, None
        if task is not None and not task.done():
            await asyncio.gather(task, return_exceptions=True)
        first: Exception | None = None
        for slot in reversed(self._toolsets):
            if not slot.entered:
                continue
            self._drop(slot.names)
            slot.entered, slot.names = False, ()
            try:
                await slot.toolset.aclose()
            except Exception as exc:
                log.warning("closing toolset %r failed", slot.toolset, exc_info=exc)
                first = first or exc
        if first is not None:
            raise first

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _open_failed(toolset: object, exc: Exception) -> ToolExecutionError:
    """The error for a toolset that could not be opened."""
    text = str(exc)
    what = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return ToolExecutionError(f"toolset {toolset!r} could not be opened: {what}")
