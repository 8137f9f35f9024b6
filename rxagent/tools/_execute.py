"""Running one tool's function: async, sync (on a worker thread) or a generator, with progress.

A sync tool declared non-blocking (`@tool(blocking=False)`) runs inline on the loop instead: no
worker thread, no hand-off.

A generator tool (async or sync) streams progress: each value it yields goes to the progress
callback in order, except a `ToolResult`, which ends the tool with that result. A generator that
ends without yielding a `ToolResult` has the last value it yielded as its result (`""` if it
yielded nothing). A sync generator runs on one worker thread from start to end; when the call is
cancelled (a timeout, an interrupt) it stops at its next `yield` and is closed.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from typing import TYPE_CHECKING, Any, Final

from rxagent.context import RunContext
from rxagent.events import ActingChunkEvent
from rxagent.tools._result import ToolResult
from rxagent.tools._threads import run_in_thread

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Callable, Generator, Mapping

    from rxagent.messages import ToolUseBlock
    from rxagent.tools._tool import Tool

__all__ = ["ProgressSink", "invoke", "run_progress"]

_NOTHING: Final = object()


class _Never:
    """A stop flag that is never set: a generator run inline is never stopped between yields."""

    __slots__ = ()

    def is_set(self) -> bool:
        return False


_NEVER: Final = _Never()


class ProgressSink:
    """Passes a call's progress to a callback, on the loop, until the call has its result.

    Progress that arrives after `close()` (from a worker thread that outlived a timeout) is
    dropped, so no progress is ever reported for a call that has its result.
    """

    __slots__ = ("_callback", "closed")

    def __init__(self, callback: Callable[[Any], None] | None) -> None:
        self._callback = callback
        self.closed = callback is None

    def __call__(self, chunk: Any) -> None:
        if not self.closed:
            assert self._callback is not None
            self._callback(chunk)

    def close(self) -> None:
        self.closed = True


def run_progress(
    call: ToolUseBlock, inject: Mapping[type[Any], object]
) -> Callable[[Any], None] | None:
    """Emit progress as `ActingChunkEvent`s of `call`, when a RunContext is injected."""
    if not inject:
        return None
    ctx = inject.get(RunContext)
    if not isinstance(ctx, RunContext):
        return None
    emit = ctx.emit

    def report(chunk: Any) -> None:
        emit(ActingChunkEvent, tool_call_id=call.id, tool_name=call.name, chunk=chunk)

    return report


async def invoke(
    found: Tool[..., Any], args: list[Any], kwargs: dict[str, Any], sink: ProgressSink
) -> Any:
    """Run the tool's function and return its value (for a generator: its result)."""
    if found.is_async:
        value = found.fn(*args, **kwargs)
        if inspect.isawaitable(value):
            value = await value
    elif not found.blocking:  # declared non-blocking: inline, on the loop
        value = found.fn(*args, **kwargs)
        if inspect.isgenerator(value):
            value = _drain_sync(value, sink, _NEVER)
    elif found.is_generator:  # progress crosses back to the loop, and a cancel stops it
        value = await _in_thread(found.fn, args, kwargs, sink)
    else:  # the plain hand-off: one queue put there, one call_soon_threadsafe back
        value = await run_in_thread(found.fn, *args, **kwargs)
        if inspect.isgenerator(value):  # a plain function that returned a generator
            value = await _in_thread(lambda: value, [], {}, sink)
    if inspect.isawaitable(value):  # a sync callable that returned a coroutine
        value = await value
    if inspect.isasyncgen(value):
        value = await _drain_async(value, sink)
    elif inspect.isgenerator(value):  # an async callable returned a sync generator: rare
        value = _drain_sync(value, sink, _NEVER)
    return value


async def _drain_async(gen: AsyncGenerator[Any, Any], sink: ProgressSink) -> Any:
    last: Any = _NOTHING
    try:
        async for item in gen:
            if isinstance(item, ToolResult):
                return item
            sink(item)
            last = item
    finally:
        await gen.aclose()  # runs its `finally` blocks now, also after a ToolResult
    return "" if last is _NOTHING else last


async def _in_thread(
    fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], sink: ProgressSink
) -> Any:
    loop = asyncio.get_running_loop()
    stop = threading.Event()

    def post(chunk: Any) -> None:  # on the worker thread: deliver on the loop, in order
        try:
            loop.call_soon_threadsafe(sink, chunk)
        except RuntimeError:  # pragma: no cover - the loop closed under a running thread
            stop.set()

    try:
        return await run_in_thread(_call_sync, fn, args, kwargs, post, stop)
    finally:
        stop.set()  # a sync generator still running stops at its next yield


def _call_sync(
    fn: Callable[..., Any],
    args: list[Any],
    kwargs: dict[str, Any],
    post: Callable[[Any], None],
    stop: threading.Event,
) -> Any:
    value = fn(*args, **kwargs)
    if inspect.isgenerator(value):
        return _drain_sync(value, post, stop)
    return value


class _Stopped(Exception):
    """The call was cancelled while its sync generator ran."""


def _drain_sync(
    gen: Generator[Any, Any, Any], post: Callable[[Any], None], stop: threading.Event | _Never
) -> Any:
    last: Any = _NOTHING
    try:
        for item in gen:
            if isinstance(item, ToolResult):
                return item
            if stop.is_set():
                raise _Stopped
            post(item)
            last = item
    finally:
        gen.close()
    return "" if last is _NOTHING else last
