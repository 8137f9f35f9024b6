"""SIGTERM during concurrent streaming runs: every stream ends with its post_call, state saved.

The single-run version on SQLite is `tests/server/test_run_server.py`; this row runs many
`work:3` sessions at once on each store, sends SIGTERM at a random moment once all have
started, and checks: every stream ends with `post_call` (interrupted or complete), the server
exits 0, every session is stored paired with no lease left, and a new server continues each
interrupted session to its end (the full size; the short one stops after the checks).
"""

from __future__ import annotations

import asyncio
import os
import random
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from fault_helpers import (  # type: ignore[import-not-found]
    AGENT,
    Matrix,
    Seen,
    StoreTarget,
    fault_server,
    reply_text,
    session_shape,
    stream_run,
    until_free,
)

from rxagent import AgentResult


@dataclass(frozen=True)
class Size:
    runs: int
    rounds: int


SIZES = {"short": Size(runs=8, rounds=1), "full": Size(runs=50, rounds=3)}
STEPS = 3
RUN_S = 1.0


async def started(seen: Seen) -> None:
    """Wait until the client saw its run's pre_call (or the stream ended)."""
    while "pre_call" not in seen.kinds and seen.broke is None and seen.status in (None, 200):
        await asyncio.sleep(0.01)  # polling what another task records


@pytest.mark.timeout(600)
async def test_sigterm_ends_every_stream_with_its_post_call_and_saves_state(
    fault_store: StoreTarget, size: str, matrix: Matrix, tmp_path: Path
):
    plan = SIZES[size]
    row = matrix.row("SIGTERM server", fault_store.kind, size)
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    row.notes = f"{plan.rounds} signal points, seed {seed}"
    tool_log, stderr = tmp_path / "tools.log", tmp_path / "server.log"
    store = fault_store.open()
    problems: list[str] = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        try:
            for round_ in range(plan.rounds):
                runs = [Seen(f"t{round_}-{i}") for i in range(plan.runs)]
                async with fault_server(fault_store, tool_log, stderr) as server:
                    tasks = [
                        asyncio.ensure_future(
                            stream_run(http, server.url, s.session, f"work:{STEPS}", s)
                        )
                        for s in runs
                    ]
                    await asyncio.wait_for(asyncio.gather(*(started(s) for s in runs)), 30)
                    # not synchronisation: this picks the random moment of the signal
                    await asyncio.sleep(rng.uniform(0, RUN_S / 2))
                    code = await server.terminate()
                    await asyncio.wait_for(asyncio.gather(*tasks), 30)
                assert code == 0, stderr.read_text()[-3000:]
                row.runs += plan.runs
                interrupted = []
                for seen in runs:
                    loaded = await store.load(AGENT, seen.session)
                    holder = await store.lease_holder(AGENT, seen.session)
                    state = None if loaded is None else loaded.state
                    shape = session_shape(state, STEPS)
                    if seen.post_call is None or state is None or holder is not None:
                        row.lost += 1
                        problems.append(f"{seen.session}: {seen.kinds[-3:]} {shape} {holder}")
                        continue
                    result = AgentResult[object].model_validate(seen.post_call)
                    paired = shape == "complete" or "unpaired" not in shape
                    if not paired or (not result.interrupted and shape != "complete"):
                        row.lost += 1
                        problems.append(f"{seen.session}: {result.stop_reason}, {shape}")
                    if result.interrupted:
                        interrupted.append(seen.session)
                if size == "short":
                    row.notes += f"; {len(interrupted)} interrupted (continued in the full size)"
                    continue  # the full size also continues the interrupted sessions
                row.to_recover += len(interrupted)
                async with fault_server(fault_store, tool_log, stderr) as server:
                    for session in interrupted:
                        answer = await until_free(http, server.url, session, "work:1", 15)
                        if reply_text(answer) == "finished 1":
                            row.recovered += 1
                    assert await server.terminate() == 0
        finally:
            await store.aclose()
    assert not problems, f"seed {seed}: {problems}"
    if size == "full":
        assert row.recovered == row.to_recover
