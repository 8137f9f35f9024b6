"""The worker threads of sync tools: context, errors, cancellation, concurrency."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any

import pytest

from rxagent.tools import _threads
from rxagent.tools._threads import MAX_WORKERS, run_in_thread

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


async def test_runs_on_a_worker_thread_in_a_copy_of_the_context() -> None:
    VAR.set("caller")

    def probe() -> tuple[str, bool]:
        seen = VAR.get()
        VAR.set("changed in the worker")  # a copy: the caller's value stays
        return seen, threading.current_thread() is threading.main_thread()

    assert await run_in_thread(probe) == ("caller", False)
    assert VAR.get() == "caller"


async def test_arguments_and_exceptions_reach_the_caller() -> None:
    assert await run_in_thread(lambda a, b=0: a + b, 2, b=3) == 5

    def boom() -> None:
        raise KeyError("nope")

    with pytest.raises(KeyError, match="nope"):
        await run_in_thread(boom)


async def test_blocking_calls_run_in_parallel() -> None:
    barrier = threading.Barrier(4, timeout=5)

    def meet() -> int:
        return barrier.wait()  # deadlocks unless four workers run at once

    results = await asyncio.gather(*(run_in_thread(meet) for _ in range(4)))
    assert sorted(results) == [0, 1, 2, 3]
    assert MAX_WORKERS >= 5


async def test_a_call_cancelled_before_it_starts_is_not_run() -> None:
    release = threading.Event()
    busy = threading.Barrier(MAX_WORKERS + 1, timeout=5)  # every worker, and this test
    ran: list[int] = []

    def block() -> None:
        busy.wait()
        release.wait(5)

    blockers = [run_in_thread(block) for _ in range(MAX_WORKERS)]
    await asyncio.to_thread(busy.wait)  # every worker is busy now
    late = run_in_thread(ran.append, 1)
    late.cancel()
    release.set()
    await asyncio.gather(*blockers)
    await run_in_thread(lambda: None)  # the queue has moved past the cancelled call
    assert ran == []
    with pytest.raises(asyncio.CancelledError):
        await late


async def test_a_cancelled_running_call_finishes_and_its_result_is_dropped() -> None:
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(5)
        finished.set()
        return "late"

    future = run_in_thread(slow)
    await asyncio.to_thread(started.wait, 5)
    future.cancel()
    release.set()
    assert await asyncio.to_thread(finished.wait, 5)
    assert future.cancelled()


def test_a_result_for_a_closed_loop_is_dropped_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = _threads._Pool()  # its own worker, to see it take the next call
    monkeypatch.setattr(_threads, "_pool", pool)
    posted = threading.Event()
    post = _threads._post

    def recording_post(loop: asyncio.AbstractEventLoop, *args: Any) -> None:
        try:
            post(loop, *args)
        finally:
            if loop.is_closed():
                posted.set()

    monkeypatch.setattr(_threads, "_post", recording_post)
    release = threading.Event()
    worker: list[threading.Thread] = []

    def wait_for_release() -> None:
        worker.append(threading.current_thread())
        release.wait(5)

    async def start() -> None:
        run_in_thread(wait_for_release)  # never awaited: the loop ends first

    asyncio.run(start())
    release.set()
    assert posted.wait(5)  # the worker posted its result to the closed loop
    deadline = time.monotonic() + 5
    while not pool.idle and worker[0].is_alive():  # a thread's state: nothing to await
        assert time.monotonic() < deadline, "the worker neither returned to the pool nor died"
        time.sleep(0)
    assert worker[0].is_alive(), "an error ended the worker"
    assert asyncio.run(_current_thread()) is worker[0]  # it takes the next call
    assert pool.workers == 1


async def _current_thread() -> threading.Thread:
    return await run_in_thread(threading.current_thread)


async def _ping() -> str:
    return await run_in_thread(lambda: "pong")


def test_the_pool_is_fresh_after_a_fork() -> None:
    before = _threads._pool
    _threads._reset_after_fork()
    assert _threads._pool is not before
    assert _threads._pool.workers == 0
    assert asyncio.run(_ping()) == "pong"
