"""kill -9 of the server during concurrent streaming runs: nothing finished is lost, nothing twice.

For each store, a server runs many `work:3` sessions at once (streamed replies, tools that take
time) while parked approvals wait and others are being approved. It is killed with SIGKILL once a
random number of the runs' steps have ended (as their clients saw them), and a new server is
started on the same store. Then:

- a run whose client saw its `post_call` is stored complete;
- any other run is absent, or stored paired (every tool call has its result) up to its last
  completed step, and continuing its session completes;
- no tool started twice under one idempotency key (the tools log each start);
- the approvals parked before the kill are still pending, and approving them runs their tool;
  an approval decided just before the kill completes when its session goes on.

The next kill point kills the restarted server, and so on.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from fault_helpers import (  # type: ignore[import-not-found]
    Matrix,
    Seen,
    StoreTarget,
    approve_stream,
    fault_server,
    load_state,
    reply_text,
    session_shape,
    started_twice,
    stream_run,
    until_free,
)


@dataclass(frozen=True)
class Size:
    runs: int
    kill_points: int
    approvals: int


SIZES = {"short": Size(runs=10, kill_points=1, approvals=2), "full": Size(50, 6, 6)}
STEPS = 3
TAKEOVER_S = 15.0
"""How long a restarted server may take to get the sessions of a killed one (lease: 1 s)."""


async def while_busy(call: Callable[[], Awaitable[tuple[int, Any]]], bound_s: float) -> Any:
    """Call until the answer is not 409 (the dead server's lease still holds the session)."""
    deadline = time.monotonic() + bound_s
    while True:
        status, payload = await call()
        if status != 409:
            assert status == 200, payload
            return payload
        assert time.monotonic() < deadline, payload
        await asyncio.sleep(0.1)  # polling: the lease expires on the store's clock


async def approve(http: aiohttp.ClientSession, url: str, session: str, approval: str) -> Any:
    async def call() -> tuple[int, Any]:
        route = f"{url}/v1/sessions/{session}/approvals/{approval}"
        async with http.post(route, json={"approved": True}) as answer:
            return answer.status, await answer.json()

    return await while_busy(call, TAKEOVER_S)


@pytest.mark.timeout(900)
async def test_kill_9_mid_run_loses_nothing_finished_and_runs_no_tool_twice(
    fault_store: StoreTarget, size: str, matrix: Matrix, tmp_path: Path
):
    plan = SIZES[size]
    row = matrix.row("kill -9 server", fault_store.kind, size)
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    row.notes = f"{plan.kill_points} kill points, seed {seed}"
    tool_log, stderr = tmp_path / "tools.log", tmp_path / "server.log"
    store = fault_store.open()
    problems: list[str] = []
    landed: Counter[str] = Counter()  # where the kills caught the runs
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        try:
            for point in range(plan.kill_points):
                async with fault_server(fault_store, tool_log, stderr) as victim:
                    url = victim.url
                    parked: dict[str, str] = {}
                    for j in range(plan.approvals):
                        session = f"p{point}-{j}"
                        result = await until_free(http, url, session, "pay", TAKEOVER_S)
                        assert result["stop_reason"] == "approval_pending", result
                        parked[session] = result["pending_approvals"][0]
                    approving = dict(list(parked.items())[: plan.approvals // 2])
                    waiting = {s: a for s, a in parked.items() if s not in approving}
                    runs = [Seen(f"r{point}-{i}") for i in range(plan.runs)]
                    decided = {s: Seen(s) for s in approving}
                    tasks = [
                        asyncio.ensure_future(stream_run(http, url, s.session, f"work:{STEPS}", s))
                        for s in runs
                    ] + [
                        asyncio.ensure_future(approve_stream(http, url, s, a, decided[s]))
                        for s, a in approving.items()
                    ]
                    # the kill lands after a random number of the runs' steps (as their clients
                    # saw them), so it catches the runs at a different point each time
                    target = rng.randint(0, plan.runs * STEPS - 1)
                    deadline = time.monotonic() + 30
                    while steps_seen(runs) < target and time.monotonic() < deadline:
                        await asyncio.sleep(0.005)  # polling what the client tasks record
                    await asyncio.sleep(rng.uniform(0, 0.1))  # not synchronisation: jitter
                    await victim.kill()
                    await asyncio.wait_for(asyncio.gather(*tasks), 30)
                row.runs += plan.runs + plan.approvals
                async with fault_server(fault_store, tool_log, stderr) as server:
                    url = server.url
                    for seen in runs:
                        shape = session_shape(await load_state(store, seen.session), STEPS)
                        landed[shape.split(":")[0]] += 1
                        finished = seen.post_call is not None
                        if (finished and shape != "complete") or shape.startswith("broken"):
                            row.lost += 1
                            problems.append(f"{seen.session}: saw post_call={finished}, {shape}")
                        if shape != "complete":  # cut off by the kill: the session goes on
                            row.to_recover += 1
                            result = await until_free(http, url, seen.session, "work:1", 15)
                            state = await load_state(store, seen.session)
                            if result["ok"] and reply_text(result) == "finished 1":
                                row.recovered += 1
                            assert state is not None
                            assert session_shape_ok(state), seen.session
                    for session, approval in waiting.items():
                        state = await load_state(store, session)
                        pending = [p.approval_id for p in state.pending_approvals] if state else []
                        if approval not in pending:
                            row.lost += 1
                            problems.append(f"{session}: approval {approval} lost: {pending}")
                            continue
                        answer = await approve(http, url, session, approval)
                        assert reply_text(answer["result"]) == "paid", answer
                    for session, seen in decided.items():
                        state = await load_state(store, session)
                        assert state is not None
                        if seen.post_call is not None and (state.parked is not None):
                            row.lost += 1
                            problems.append(f"{session}: approved run finished, still parked")
                        if state.parked is not None:  # cut off by the kill: the session goes on
                            row.to_recover += 1
                            result = await until_free(http, url, session, "go on", 15)
                            state = await load_state(store, session)
                            if result["ok"] and state is not None and state.parked is None:
                                row.recovered += 1
                        assert state is not None
                        assert session_shape_ok(state), session
                    assert await server.terminate() == 0
                twice = started_twice(tool_log)
                row.duplicated = len(twice)
                problems.extend(f"started twice: {key}" for key in twice)
        finally:
            await store.aclose()
    row.notes += "; runs found " + ", ".join(f"{k} {n}" for k, n in sorted(landed.items()))
    assert not problems, f"seed {seed}: {problems}"
    assert row.recovered == row.to_recover, f"seed {seed}"


def steps_seen(runs: list[Seen]) -> int:
    """How many tool steps the clients saw end (`post_acting` frames), over all runs."""
    return sum(seen.kinds.count("post_acting") for seen in runs)


def session_shape_ok(state: Any) -> bool:
    """Whether every tool call of a session has its result and nothing is parked half-way."""
    calls = [c.id for m in state.memory if m.role == "assistant" for c in m.tool_calls]
    results = [r.id for m in state.memory if m.role == "tool" for r in m.tool_results]
    return sorted(calls) == sorted(results)
