"""The worker threads that run sync tools off the event loop.

`run_in_thread(fn, *args)` does what `asyncio.to_thread` does (the call runs on a worker thread,
in a copy of the caller's context, so `current_run()` works inside it) with a lighter hand-off: one
queue put to start the call and one `call_soon_threadsafe` to deliver its result, instead of a
`concurrent.futures.Future` chained to an asyncio one. That is about a third less CPU per call,
which matters when a ReAct step's tool is a cheap function.

Workers are daemon threads, started on demand up to `MAX_WORKERS` and kept for reuse. A call
whose awaiting side was cancelled before a worker picked it up is not run at all.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MAX_WORKERS", "run_in_thread"]

T = TypeVar("T")

MAX_WORKERS: Final = min(32, (os.cpu_count() or 1) + 4)
"""The most worker threads (as for asyncio's default executor)."""

_Job = tuple[
    asyncio.AbstractEventLoop,
    "asyncio.Future[Any]",
    contextvars.Context,
    "Callable[..., Any]",
    tuple[Any, ...],
    dict[str, Any],
]


class _Pool:
    """Daemon worker threads fed by one queue."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.idle = 0  # workers waiting for a job that no submitter has claimed yet
        self.workers = 0

    def submit(self, job: _Job) -> None:
        with self.lock:
            if self.idle:  # a waiting worker takes it
                self.idle -= 1
                spawn = False
            else:
                spawn = self.workers < MAX_WORKERS
                self.workers += spawn
        self.jobs.put(job)
        if spawn:
            threading.Thread(target=self._work, name="rxagent-tool", daemon=True).start()

    def _work(self) -> None:
        jobs, lock = self.jobs, self.lock
        while True:
            loop, future, context, fn, args, kwargs = jobs.get()
            if not future.cancelled():  # a read of a flag: safe from this thread
                try:
                    value = context.run(fn, *args, **kwargs)
                except BaseException as exc:  # delivered to the awaiting task, as to_thread does
                    _post(loop, _fail, future, exc)
                else:
                    _post(loop, _succeed, future, value)
            del loop, future, context, fn, args, kwargs
            with lock:
                self.idle += 1


def _post(loop: asyncio.AbstractEventLoop, deliver: Callable[..., None], *args: Any) -> None:
    try:
        loop.call_soon_threadsafe(deliver, *args)
    except RuntimeError:  # the loop closed while the call ran: nobody is waiting
        pass


def _succeed(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


_pool = _Pool()


def _reset_after_fork() -> None:  # a forked child has none of its parent's threads
    global _pool
    _pool = _Pool()


os.register_at_fork(after_in_child=_reset_after_fork)


def run_in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> asyncio.Future[T]:
    """Run `fn(*args, **kwargs)` on a worker thread; await the returned future for its value.

    The call runs in a copy of the caller's `contextvars` context. Cancelling the future never
    interrupts a call that has started (threads cannot be interrupted); its result is dropped.

    Example:
        ```python
        import asyncio
        import threading

        from rxagent.tools._threads import run_in_thread


        async def main() -> str:
            return await run_in_thread(lambda: threading.current_thread().name)


        assert asyncio.run(main()) == "rxagent-tool"
        ```
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    _pool.submit((loop, future, contextvars.copy_context(), fn, args, kwargs))
    return future
