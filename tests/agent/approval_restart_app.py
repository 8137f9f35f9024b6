"""One process of the approval restart test (`test_approval_restart.py`), run as a script.

    python approval_restart_app.py DB LOG park
    python approval_restart_app.py DB LOG approve APPROVAL_ID
    python approval_restart_app.py DB LOG approve-and-crash APPROVAL_ID
    python approval_restart_app.py DB LOG continue

Each command builds a new agent named "writer" on the SQLite store `DB` and prints what happened
as one JSON object. The tool appends a line to `LOG` (its call's idempotency key), so the test
counts how often it really ran; `approve-and-crash` kills the process right after that line is
written, before the result can be saved.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from rxagent import ReActAgent, current_run, tool
from rxagent.errors import ApprovalError, SessionBusyError
from rxagent.result import AgentResult
from rxagent.state import SQLiteStore
from rxagent.testing import ScriptedModel, tool_call

SESSION = "s1"
LEASE_TTL = float(os.environ.get("APPROVAL_TEST_LEASE_TTL", "30"))
"""Seconds a session lease lives: a process that dies keeps its session until then."""


def make_tool(log: Path, *, crash: bool) -> Any:
    @tool(needs_approval=True)
    def append_line(text: str) -> str:
        """Append a line of text to the log.

        Args:
            text: The line.
        """
        with log.open("a") as out:
            out.write(f"{text} {current_run().idempotency_key}\n")
        if crash:
            os._exit(3)  # the process dies: the result is never saved
        return f"appended {text!r}"

    return append_line


async def run(agent: ReActAgent, command: str, approval_id: str | None) -> AgentResult[Any]:
    if command == "park":
        return await agent.call("write hello", session_id=SESSION)
    if command == "continue":
        return await agent.call(session_id=SESSION)
    assert approval_id is not None
    decided = await agent.approve(approval_id, session_id=SESSION)
    assert decided is not None
    return decided


async def until_free(attempt: Callable[[], Awaitable[AgentResult[Any]]]) -> AgentResult[Any]:
    """Retry while the session's lease is held by a process that died (it expires after its TTL)."""
    deadline = time.monotonic() + 20 * LEASE_TTL
    while True:
        try:
            return await attempt()
        except SessionBusyError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(LEASE_TTL / 10)


async def main(db: str, log: Path, command: str, approval_id: str | None) -> dict[str, Any]:
    scripts: dict[str, list[Any]] = {
        "park": [tool_call("append_line", text="hello")],
        "continue": ["Recovered."],
    }
    script = scripts.get(command, ["Wrote it."])
    async with SQLiteStore(db) as store:
        agent = ReActAgent(
            "writer",
            "",
            ScriptedModel(script),
            tools=[make_tool(log, crash=command == "approve-and-crash")],
            store=store,
            lease_ttl_s=LEASE_TTL,
        )
        try:
            result = await until_free(lambda: run(agent, command, approval_id))
        except ApprovalError as exc:
            return {"error": type(exc).__name__, "message": str(exc)}
        state = (await store.load("writer", SESSION)).state  # type: ignore[union-attr]
    return {
        "ok": result.ok,
        "text": result.text,
        "stop_reason": result.stop_reason,
        "pending_approvals": list(result.pending_approvals),
        "run_id": result.run_id,
        "keys": [p.idempotency_key for p in state.pending_approvals],
        "memory": [
            [m.role, m.text or "".join(r.text for r in m.tool_results)] for m in state.memory
        ],
    }


if __name__ == "__main__":
    db, log, command, *rest = sys.argv[1:]
    outcome = asyncio.run(main(db, Path(log), command, rest[0] if rest else None))
    print(json.dumps(outcome))
