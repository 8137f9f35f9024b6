"""Memory per idle session and per active run of one `ReActAgent`, and whether it stays flat.

Run: `python bench/sessions_memory.py` (N = 100, 1k, 10k idle sessions and M = 10, 100, 1000
active runs; a few minutes), `--quick` for a smoke run (N = 200, 2k; M = 10, 100; tracemalloc
only), `--json FILE` for the results. Run it with `PYTHONPATH=<checkout>` to measure that checkout.

**Idle sessions.** One agent with the default store (`ReActAgent(...)` without `store=`, an
`InMemoryStore`) and a `FunctionModel` that answers every request with one short text reply. One run
in each of N sessions (the user's message, the reply: two messages in each session's state); then,
after `gc.collect()`, the bytes the N sessions hold are the traced memory (`tracemalloc`) minus the
traced memory before the runs, divided by N, and the same for the process's resident set
(`/proc/self/statm`; Linux) measured in a second process without tracemalloc. Each N runs in a fresh
process, so one N's arenas do not flatter the next. The test model's own record of requests
(`FunctionModel.requests`, and its per-message character counts) is cleared, since an
application's model keeps none.

It also checks that what the agent keeps while a session runs is released when the session goes
idle: the session's entries in the agent's run registry (`agent._runs`: tails, running runs,
cleanup tasks) and in the store's leases must be gone, and identity caches keyed by messages
(`rxagent.tokens._bound.message_bound`, `rxagent.formatters._openai_style._arguments`) must not
grow with the number of idle sessions.

**Active runs.** M runs at once, each in its own session, held open inside the model call (the
model awaits an event). Bytes per active run is the traced memory (and resident set) with the M
runs open, minus before, divided by M. Then the runs are let go, all must finish, and the memory
they held must be given back (within a few percent).

**Flat** means: bytes per idle session at the largest N is within 1.5x of that at the smallest N,
and the same for bytes per active run. The last lines of the report say whether it is.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tracemalloc
from typing import TYPE_CHECKING, Any

import rxagent
from rxagent import ReActAgent
from rxagent.testing import FunctionModel

if TYPE_CHECKING:
    from rxagent.messages import Msg
    from rxagent.models import ModelOptions, ToolSchema

IDLE_NS = (100, 1_000, 10_000)
ACTIVE_MS = (10, 100, 1_000)
QUICK_IDLE_NS = (200, 2_000)
QUICK_ACTIVE_MS = (10, 100)
BATCH = 100  # idle phase: runs at once, so 10k sessions take seconds
FLAT_RATIO = 1.5


def _rss_bytes() -> int:
    """The process's resident set now (not the peak), in bytes; 0 where /proc is missing."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


async def _settle() -> None:
    """Let finished tasks' callbacks run (they hold results a moment longer), then collect."""
    for _ in range(5):
        await asyncio.sleep(0)
    for _ in range(3):
        gc.collect()


def _caches() -> dict[str, int]:
    """Entries in the process-wide identity caches keyed by messages (-1: not a cache)."""
    from rxagent.formatters import _openai_style
    from rxagent.tokens import _bound

    caches = {"message_bound": _bound.message_bound, "arguments": _openai_style._arguments}
    return {name: len(c) if hasattr(c, "__len__") else -1 for name, c in caches.items()}


def _forget_test_model_records(model: FunctionModel) -> None:
    """Drop what the test model keeps and an application's model would not.

    `FunctionModel.requests` records every request, and the test models' usage estimate caches
    a character count per message (`rxagent.testing._builders._cached_chars`).
    """
    from rxagent.testing import _builders

    model.requests.clear()
    _builders._cached_chars._entries.clear()


def _bookkeeping(agent: ReActAgent) -> dict[str, int]:
    """What the agent and its store keep per session beyond the session's state."""
    runs = agent._runs
    store: Any = agent.store
    return {
        "tails": len(runs.tails),
        "running": len(runs.running),
        "background": len(runs.background),
        "leases": len(getattr(store, "_leases", ())),
        "states": len(getattr(store, "_states", ())),
    }


def _reply(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
    return "Hello! How can I help?"


async def _idle(n: int, traced: bool) -> dict[str, Any]:
    model = FunctionModel(_reply)
    agent = ReActAgent("mem", "You are brief.", model)
    await agent.call("warm up", session_id="warm")  # first-use imports and caches
    _forget_test_model_records(model)
    await _settle()
    traced0 = tracemalloc.get_traced_memory()[0] if traced else 0
    rss0 = _rss_bytes()
    for start in range(0, n, BATCH):
        ids = range(start, min(n, start + BATCH))
        results = await asyncio.gather(*(agent.call("Hi there", session_id=f"s{i}") for i in ids))
        if not all(r.ok and r.text for r in results):
            raise RuntimeError("a run failed")
        _forget_test_model_records(model)
    del results
    await _settle()
    out: dict[str, Any] = {"n": n, "bookkeeping": _bookkeeping(agent), "caches": _caches()}
    if traced:
        out["traced_per_session"] = (tracemalloc.get_traced_memory()[0] - traced0) / n
    else:
        out["rss_per_session"] = (_rss_bytes() - rss0) / n
    states = await agent.store.list_sessions(agent.name)
    if len(states) != n + 1:
        raise RuntimeError(f"expected {n + 1} sessions in the store, found {len(states)}")
    return out


async def _active(m: int, traced: bool) -> dict[str, Any]:
    gate = asyncio.Event()
    arrived = 0
    all_in = asyncio.Event()

    async def held(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
        nonlocal arrived
        arrived += 1
        if arrived == m:
            all_in.set()
        await gate.wait()
        return "Done."

    model = FunctionModel(held)
    agent = ReActAgent("mem", "You are brief.", model)
    gate.set()
    await agent.call("warm up", session_id="warm")
    arrived = 0
    gate.clear()
    _forget_test_model_records(model)
    await _settle()
    traced0 = tracemalloc.get_traced_memory()[0] if traced else 0
    rss0 = _rss_bytes()
    tasks = [asyncio.ensure_future(agent.call("Hi there", session_id=f"a{i}")) for i in range(m)]
    await asyncio.wait_for(all_in.wait(), timeout=300)
    _forget_test_model_records(model)
    await _settle()
    out: dict[str, Any] = {"m": m, "open": len(agent._runs.running)}
    if traced:
        out["traced_per_run"] = (tracemalloc.get_traced_memory()[0] - traced0) / m
    else:
        out["rss_per_run"] = (_rss_bytes() - rss0) / m
    gate.set()
    results = await asyncio.gather(*tasks)
    if not all(r.ok and r.text == "Done." for r in results):
        raise RuntimeError("an active run failed")
    del results, tasks
    # the sessions' states stay (they are idle sessions now): delete them to see what runs kept
    for i in range(m):
        await agent.store.delete(agent.name, f"a{i}")
    _forget_test_model_records(model)
    await _settle()
    if traced:
        out["traced_left_per_run"] = (tracemalloc.get_traced_memory()[0] - traced0) / m
    out["bookkeeping"] = _bookkeeping(agent)
    return out


def child(kind: str, size: int, traced: bool) -> dict[str, Any]:
    """Measure one phase at one size in this process."""
    if traced:
        tracemalloc.start()
    if kind == "idle":
        return asyncio.run(_idle(size, traced))
    return asyncio.run(_active(size, traced))


def _spawn(kind: str, size: int, traced: bool) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, str(size)]
    if traced:
        cmd.append("--traced")
    # the child measures the rxagent this process imported
    root = os.path.dirname(os.path.dirname(os.path.abspath(rxagent.__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path)
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} {size} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _measure(kind: str, size: int, reps: int, with_rss: bool) -> dict[str, Any]:
    traced = [_spawn(kind, size, True) for _ in range(reps)]
    rss = [_spawn(kind, size, False) for _ in range(reps)] if with_rss else []
    per = "per_session" if kind == "idle" else "per_run"
    row = dict(traced[0])
    row[f"traced_{per}"] = statistics.median(t[f"traced_{per}"] for t in traced)
    row[f"rss_{per}"] = statistics.median(r[f"rss_{per}"] for r in rss) if rss else float("nan")
    if kind == "active":
        row["traced_left_per_run"] = statistics.median(t["traced_left_per_run"] for t in traced)
    return row


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report; 0 when both figures are flat."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, one repetition, no RSS processes"
    )
    parser.add_argument("--reps", type=int, default=None, help="processes per size (median)")
    parser.add_argument("--json", default=None, help="write the results to this file")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.traced)))
        return 0
    reps = args.reps or (1 if args.quick else 3)
    idle_ns = QUICK_IDLE_NS if args.quick else IDLE_NS
    active_ms = QUICK_ACTIVE_MS if args.quick else ACTIVE_MS
    with_rss = not args.quick
    idle = [_measure("idle", n, reps, with_rss) for n in idle_ns]
    active = [_measure("active", m, reps, with_rss) for m in active_ms]
    print(f"# Memory per session (median of {reps} processes per size)")
    print("idle sessions       N   traced B/session   RSS B/session   caches (bound, args)")
    for row in idle:
        caches = row["caches"]
        print(
            f"{row['n']:>20,} {row['traced_per_session']:>18,.0f} {row['rss_per_session']:>15,.0f}"
            f"   {caches['message_bound']:,}, {caches['arguments']:,}"
        )
    print("active runs         M   traced B/run       RSS B/run       traced B/run left after")
    for row in active:
        print(
            f"{row['m']:>20,} {row['traced_per_run']:>18,.0f} {row['rss_per_run']:>15,.0f}"
            f"   {row['traced_left_per_run']:,.0f}"
        )
    leftovers = [
        (row.get("n", row.get("m")), key, value)
        for row in idle + active
        for key, value in row["bookkeeping"].items()
        if key not in ("states",) and value
    ]
    idle_ratio = idle[-1]["traced_per_session"] / idle[0]["traced_per_session"]
    active_ratio = active[-1]["traced_per_run"] / active[0]["traced_per_run"]
    flat = idle_ratio <= FLAT_RATIO and active_ratio <= FLAT_RATIO and not leftovers
    first, last = idle[0]["n"], idle[-1]["n"]
    print(f"idle: bytes per session at N={last:,} / at N={first:,} = {idle_ratio:.2f}")
    first, last = active[0]["m"], active[-1]["m"]
    print(f"active: bytes per run at M={last:,} / at M={first:,} = {active_ratio:.2f}")
    print(f"bookkeeping left after the runs: {leftovers or 'none'}")
    print(f"flat (ratios <= {FLAT_RATIO}, nothing left): {'yes' if flat else 'NO'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"idle": idle, "active": active, "flat": flat}, f, indent=2)
    return 0 if flat else 1


if __name__ == "__main__":
    raise SystemExit(main())
