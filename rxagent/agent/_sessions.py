"""The runs of one agent, by session: queues, the runs in progress, slots and waiting for idle."""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING, Any

from rxagent.agent._support import running_loop
from rxagent.messages import Msg

if TYPE_CHECKING:
    from rxagent.agent._run import Run

__all__ = ["SessionRuns"]


class SessionRuns:
    """The bookkeeping of one agent's runs (`ReActAgent._runs`).

    A session's *tail* is its newest run, which may still wait behind an earlier one
    (`queue=True`); its *running* run has stopped waiting, and `interrupt()` reaches it even while
    it waits for one of the agent's slots (`max_concurrent_runs`, per event loop).
    """

    __slots__ = ("background", "running", "slots", "tails")

    def __init__(self) -> None:
        self.tails: dict[str, Run] = {}
        """Each session's newest run, from when it is made until it ends."""
        self.running: dict[str, Run] = {}
        """Each session's run past its predecessor, until it ends."""
        self.slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        """The concurrency slots, per event loop."""
        self.background: set[asyncio.Task[Any]] = set()
        """Cleanup tasks of disposed runs, kept until they end."""

    async def acquire_slot(self, run: Run, limit: int | None) -> None:
        """Wait for the session's earlier runs, then for one of `limit` slots (None: no limit)."""
        previous = run.predecessor
        while previous is not None:  # a queued run that gave up hands on its own predecessor
            await asyncio.shield(previous.done)
            previous = previous.predecessor
        run.predecessor = None
        # the session's run from here on: interrupt() reaches it even while it waits for a slot
        self.running[run.ctx.session_id] = run
        if limit is not None:
            semaphore = self.slots.get(run.ctx.loop)
            if semaphore is None:
                semaphore = self.slots[run.ctx.loop] = asyncio.Semaphore(limit)
            await semaphore.acquire()
            run.holds_slot = True

    def end(self, run: Run) -> None:
        """Forget a run that ended, and give back its slot."""
        session_id = run.ctx.session_id
        if self.running.get(session_id) is run:
            del self.running[session_id]
        if self.tails.get(session_id) is run:
            del self.tails[session_id]
        if run.holds_slot:
            run.holds_slot = False
            self.slots[run.ctx.loop].release()

    def track(self, task: asyncio.Task[Any]) -> None:
        """Keep `task` referenced until it is done."""
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    def interrupt(self, session_id: str, msg: str | Msg | None) -> bool:
        """Ask the session's running run to stop (from any thread); False when there is none."""
        run = self.running.get(session_id)
        if run is None:  # a run made a moment ago, whose task has not started yet, is reached
            tail = self.tails.get(session_id)
            if tail is None or tail.predecessor is not None or tail.task is None:
                return False
            run = tail
        reason = Msg.assistant(msg) if isinstance(msg, str) else msg
        if run.ctx.loop is running_loop():
            return run.request_interrupt(reason)
        run.ctx.loop.call_soon_threadsafe(run.request_interrupt, reason)
        return True

    async def wait_idle(
        self,
        timeout: float | None,  # noqa: ASYNC109 - a bool, not a raise
        session_id: str | None = None,
    ) -> bool:
        """Wait until no run (of `session_id`, or any) is in progress or queued on this loop.

        A run counts until its cleanup is done. Returns False after `timeout` seconds.
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            runs = [
                r
                for r in {*self.running.values(), *self.tails.values()}
                if r.ctx.loop is loop and (session_id is None or r.ctx.session_id == session_id)
            ]
            if not runs:
                return True
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return False
            await asyncio.wait([r.done for r in runs], timeout=remaining)  # never cancels them
