"""Seeing a store write through a cancellation of its caller."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Awaitable

__all__ = ["complete_despite_cancel"]

T = TypeVar("T")


async def complete_despite_cancel(operation: Awaitable[T]) -> T:
    """Await `operation` to its end even if the caller is cancelled meanwhile; then re-cancel.

    A write whose statement reached the database must not be reported as not done: a
    cancelled `save` that committed would leave its caller with the old version, and its next
    save would be refused. So the operation runs to completion in its own task, its result (or
    error) is returned to the caller, and a cancellation that arrived meanwhile is delivered at
    the caller's next `await` (the task's cancel count is kept, so `asyncio.timeout` still
    tells its own cancellation apart). A write either completes, with its result known to the
    caller, or does not happen.

    Example:
        ```python
        import asyncio
        from rxagent.state._shield import complete_despite_cancel

        async def main() -> None:
            written = asyncio.Event()
            release = asyncio.Event()
            seen: list[int] = []

            async def write() -> int:
                await release.wait()
                written.set()
                return 2

            async def caller() -> None:
                seen.append(await complete_despite_cancel(write()))
                await asyncio.sleep(3600)  # the cancellation arrives here

            task = asyncio.create_task(caller())
            await asyncio.sleep(0)
            task.cancel()  # while the write is in flight
            release.set()
            try:
                await task
            except asyncio.CancelledError:
                pass
            assert written.is_set() and seen == [2] and task.cancelled()

        asyncio.run(main())
        ```
    """
    inner = asyncio.ensure_future(operation)
    deferred = False
    try:
        while True:
            try:
                return await asyncio.shield(inner)
            except asyncio.CancelledError:
                if inner.cancelled():  # the operation itself was cancelled: nothing to wait for
                    deferred = False
                    raise
                deferred = True  # the caller was: finish the operation first
    finally:
        caller = asyncio.current_task()
        if deferred and caller is not None:
            caller.uncancel()  # the count stays as the cancel() calls left it
            caller.cancel()
