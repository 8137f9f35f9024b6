"""Server load: many concurrent SSE runs against one rxagent server process.

Run: `python bench/server_load.py` (500 concurrent runs, 3 rounds, about 30 s), `--quick` for a
smoke run, `--concurrency N`, `--rounds R`, `--store sqlite|memory`, `--json FILE`, and
`--baseline DIR` to serve a second rxagent, imported from the source tree DIR (a checkout of
main, say), in the same rounds: before and after side by side on a machine whose load changes.

Each run is `POST /v1/agents/bench/runs:stream` with `session_id: null` (a fresh session), read
to the end of its SSE stream. The agent's model is a `FunctionModel` with 20 ms of latency per
call; a run makes two calls (a tool call, the tool runs, then a streamed answer), so 40 ms of
every run is the model's.

Two servers, each in its own process, are measured against the same load client, in alternating
rounds:

- **rxagent**: `create_app(agent, store=SQLiteStore(...))` served by `rxagent.server.serve`, the
  real thing (as `run_server` and `rxagent serve` do): auth off, sessions persisted, leases,
  metrics, checkpoints, log redaction, the start-up heap frozen for the garbage collector.
- **null**: an aiohttp server that waits the same 2 x 20 ms and answers with the bytes of a
  recorded rxagent stream for the same run: the floor (the HTTP stack, the client, the machine).

The load client runs in this process (a third one), opens all connections at once and measures,
per request, the time from sending it to the last byte. Reported: completed runs, p50/p99/max
latency for both servers, the **added latency** (rxagent minus null at the same percentile), the
ratio rxagent/null, and the **server CPU per run**: the server process's CPU time (user + system,
all threads, from `/proc/<pid>/stat`) over a round, divided by the round's runs (median of the
rounds, with the range). The checks: every run of every round completed with an ok PostCall, every
session is in the store afterwards with its four messages (no state lost), and the server's
`/metrics` counted every run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

HOST = "127.0.0.1"
AGENT = "bench"
MODEL_LATENCY_S = 0.02
ANSWER = "The sum of 2 and 3 is 5. " * 4


# -- the servers (each runs in its own process: `--serve rxagent|null`) --------------------------


def _build_agent(store: Any) -> Any:
    from rxagent import ReActAgent, tool
    from rxagent.testing import FunctionModel, tool_call

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first.
            b: The second.
        """
        return a + b

    async def model(messages: Any, tools: Any, options: Any) -> Any:
        # A FunctionModel records every request it gets (for tests); a real model keeps none,
        # and 1,500 runs of records would grow the heap that the server's GC walks.
        del model_.requests[:-1]
        await asyncio.sleep(MODEL_LATENCY_S)
        if messages[-1].role == "user":
            return tool_call("add", a=2, b=3)
        return ANSWER

    model_ = FunctionModel(model, chunk_size=12)
    return ReActAgent(AGENT, "You add.", model_, tools=[add], store=store)


async def _recorded_stream() -> bytes:
    """The SSE bytes rxagent sends for one run (the null server replays them)."""
    from aiohttp.test_utils import TestClient, TestServer

    from rxagent.server import create_app
    from rxagent.state import InMemoryStore

    app = create_app(_build_agent(InMemoryStore()))
    async with TestClient(TestServer(app, host=HOST)) as client:
        response = await client.post(f"/v1/agents/{AGENT}/runs:stream", json={"input": "2+3?"})
        return await response.read()


async def _serve(kind: str, store_kind: str, port_file: str) -> None:
    from aiohttp import web

    if kind == "rxagent":
        import inspect

        from rxagent.server import ServerConfig, create_app, serve
        from rxagent.state import InMemoryStore, SQLiteStore

        folder = tempfile.mkdtemp(prefix="rxagent-load-")
        store = (
            SQLiteStore(os.path.join(folder, "sessions.db"))
            if store_kind == "sqlite"
            else InMemoryStore()
        )
        app = create_app(_build_agent(store), config=ServerConfig(max_runs_per_key=100_000))
        if "backlog" in inspect.signature(serve).parameters:  # `rxagent serve`'s own path
            await serve(
                app,
                host=HOST,
                port=0,
                print_url=False,
                on_listening=lambda url: Path(port_file).write_text(url.rsplit(":", 1)[1]),
                backlog=4096,
            )
            return
        # an older tree (--baseline): its serve() has no backlog, so serve the app plainly
    else:
        body = await _recorded_stream()

        async def stream(request: web.Request) -> web.StreamResponse:
            await request.read()
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await asyncio.sleep(MODEL_LATENCY_S)
            await asyncio.sleep(MODEL_LATENCY_S)
            await response.write(body)
            await response.write_eof()
            return response

        app = web.Application()
        app.router.add_post(f"/v1/agents/{AGENT}/runs:stream", stream)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, HOST, 0, backlog=4096)
    await site.start()
    port = runner.addresses[0][1]
    Path(port_file).write_text(str(port))  # noqa: ASYNC240 - once, before serving
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(15, stop.set)
    await stop.wait()
    await runner.cleanup()


# -- the load client -------------------------------------------------------------------------------


async def _one_run(session: aiohttp.ClientSession, url: str) -> tuple[float, dict[str, Any] | None]:
    started = time.perf_counter()
    async with session.post(url, json={"input": "2+3?", "session_id": None}) as response:
        response.raise_for_status()
        body = await response.read()
    elapsed = time.perf_counter() - started
    last = None
    for frame in body.decode().split("\n\n"):
        lines = frame.splitlines()
        if "event: post_call" in lines:
            data = "".join(line[6:] for line in lines if line.startswith("data: "))
            last = json.loads(data)
    return elapsed, last


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SETTLE_S = 0.2  # after the last byte, before reading the server's CPU (its last saves)


def server_cpu_s(pid: int) -> float:
    """CPU time (user + system, all threads) the process `pid` has used so far, in seconds.

    Read from `/proc/<pid>/stat` (fields 14 and 15, `utime` and `stime`, in clock ticks: 10 ms
    on Linux, so a round's total is exact to 10 ms).
    """
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "; field 3 is fields[0]
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


async def _load(port: int, concurrency: int, pid: int) -> dict[str, Any]:
    url = f"http://{HOST}:{port}/v1/agents/{AGENT}/runs:stream"
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await _one_run(session, url)  # warm up: imports, first connection
        await asyncio.sleep(SETTLE_S)
        cpu_started = server_cpu_s(pid)
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(_one_run(session, url) for _ in range(concurrency)))
        wall = time.perf_counter() - started
        await asyncio.sleep(SETTLE_S)
        cpu = server_cpu_s(pid) - cpu_started
    latencies = sorted(o[0] for o in outcomes)
    post_calls = [o[1] for o in outcomes]
    ok = [p for p in post_calls if p is not None and p["result"]["ok"]]
    return {
        "latencies": latencies,
        "completed": len(ok),
        "sessions": [p["result"]["session_id"] for p in ok],
        "wall_s": wall,
        "server_cpu_s": cpu,
    }


def _percentile(values: list[float], q: float) -> float:
    index = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[index]


def _start_server(
    kind: str, store: str, pythonpath: str | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    port_file = tempfile.mktemp(prefix="rxagent-load-port-")
    env = None if pythonpath is None else {**os.environ, "PYTHONPATH": pythonpath}
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind, "--store", store, "--port-file", port_file],
        env=env,
    )
    deadline = time.monotonic() + 60
    while not os.path.exists(port_file) or not Path(port_file).read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the {kind} server did not start")
        time.sleep(0.05)
    time.sleep(0.05)
    port = int(Path(port_file).read_text())
    os.unlink(port_file)
    return process, port


def _stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
        process.kill()
        process.wait()


async def _check_rxagent(port: int, sessions: list[str]) -> dict[str, Any]:
    """Every session is in the store with its four messages; /metrics counted every run."""
    base = f"http://{HOST}:{port}"
    async with aiohttp.ClientSession() as session:
        semaphore = asyncio.Semaphore(50)

        async def messages(session_id: str) -> int:
            async with semaphore, session.get(f"{base}/v1/sessions/{session_id}") as response:
                if response.status != 200:
                    return -1
                data = await response.json()
                return len(data["state"]["memory"])

        counts = await asyncio.gather(*(messages(s) for s in sessions))
        async with session.get(f"{base}/metrics") as response:
            metrics = await response.text()
    from prometheus_client.parser import text_string_to_metric_families

    runs = 0.0
    for family in text_string_to_metric_families(metrics):
        if family.name == "rxagent_runs":
            runs = sum(s.value for s in family.samples if s.name == "rxagent_runs_total")
    return {
        "sessions_complete": sum(1 for c in counts if c == 4),
        "sessions_checked": len(counts),
        "metrics_runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (or, with `--serve`, one of its servers)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=("rxagent", "null"))
    parser.add_argument("--port-file")
    parser.add_argument("--store", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--concurrency", type=int, default=None, help="default 500")
    parser.add_argument("--rounds", type=int, default=None, help="default 3")
    parser.add_argument("--quick", action="store_true", help="50 runs, one round (by default)")
    parser.add_argument("--json", dest="json_out")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="also serve rxagent imported from the source tree DIR (e.g. a checkout of main), "
        "as `baseline`, in the same rounds: before and after side by side",
    )
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(_serve(args.serve, args.store, args.port_file))
        return 0
    quick = (50, 1) if args.quick else (500, 3)
    args.concurrency = args.concurrency or quick[0]
    args.rounds = args.rounds or quick[1]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))

    kinds = ("null", "rxagent", "baseline") if args.baseline else ("null", "rxagent")
    servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    checks: list[dict[str, Any]] = []
    baseline_checks: list[dict[str, Any]] = []
    expected_runs = 0
    try:
        for kind in kinds:
            served = "rxagent" if kind == "baseline" else kind
            pythonpath = args.baseline if kind == "baseline" else None
            servers[kind] = _start_server(served, args.store, pythonpath)
        for round_ in range(args.rounds):
            shift = round_ % len(kinds)  # each server goes first in turn
            for kind in kinds[shift:] + kinds[:shift]:
                process, port = servers[kind]
                results[kind].append(asyncio.run(_load(port, args.concurrency, process.pid)))
            expected_runs += args.concurrency + 1
            for kind, kept in (("rxagent", checks), ("baseline", baseline_checks)):
                if kind in servers:
                    sessions = results[kind][-1]["sessions"]
                    kept.append(asyncio.run(_check_rxagent(servers[kind][1], sessions)))
    finally:
        for process, _ in servers.values():
            _stop_server(process)
    report = _report(args, results, checks, expected_runs)
    if baseline_checks:
        report["baseline_checks"] = baseline_checks
        report["verified"] = report["verified"] and _verified(
            args, results["baseline"], baseline_checks, expected_runs
        )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2))
    return 0 if report["verified"] else 1


def _verified(
    args: argparse.Namespace,
    rounds: list[dict[str, Any]],
    checks: list[dict[str, Any]],
    expected_runs: int,
) -> bool:
    """Every run of every round completed, every session is stored whole, /metrics counted all."""
    n = args.concurrency
    return (
        sum(r["completed"] for r in rounds) == n * args.rounds
        and all(c["sessions_complete"] == c["sessions_checked"] == n for c in checks)
        and checks[-1]["metrics_runs"] == expected_runs
    )


def _report(
    args: argparse.Namespace,
    results: dict[str, list[dict[str, Any]]],
    checks: list[dict[str, Any]],
    expected_runs: int,
) -> dict[str, Any]:
    n = args.concurrency
    summary: dict[str, dict[str, float]] = {}
    for kind, rounds in results.items():
        latencies = sorted(x for r in rounds for x in r["latencies"])
        cpu = [1000 * r["server_cpu_s"] / n for r in rounds]
        summary[kind] = {
            "completed": sum(r["completed"] for r in rounds),
            "p50_ms": 1000 * _percentile(latencies, 0.50),
            "p99_ms": 1000 * _percentile(latencies, 0.99),
            "max_ms": 1000 * latencies[-1],
            "wall_s": statistics.median(r["wall_s"] for r in rounds),
            # the server process's CPU over a round (user + system), per run: median of rounds
            "cpu_per_run_ms": statistics.median(cpu),
            "cpu_per_run_min_ms": min(cpu),
            "cpu_per_run_max_ms": max(cpu),
        }
    rx, null = summary["rxagent"], summary["null"]
    verified = null["completed"] == n * args.rounds and _verified(
        args, results["rxagent"], checks, expected_runs
    )
    print(f"server load: {n} concurrent SSE runs x {args.rounds} rounds, model 2 x 20 ms per run")
    print(
        f"{'server':<10}{'completed':>10}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}{'wall s':>9}"
        f"{'CPU/run ms (range)':>24}"
    )
    for kind in summary:
        s = summary[kind]
        cpu_range = f"({s['cpu_per_run_min_ms']:.2f}-{s['cpu_per_run_max_ms']:.2f})"
        print(
            f"{kind:<10}{s['completed']:>10.0f}{s['p50_ms']:>10.1f}{s['p99_ms']:>10.1f}"
            f"{s['max_ms']:>10.1f}{s['wall_s']:>9.2f}{s['cpu_per_run_ms']:>11.2f} {cpu_range:>12}"
        )
    added = {q: rx[f"{q}_ms"] - null[f"{q}_ms"] for q in ("p50", "p99")}
    ratio = {q: rx[f"{q}_ms"] / null[f"{q}_ms"] for q in ("p50", "p99")}
    print(
        f"added latency: p50 {added['p50']:+.1f} ms, p99 {added['p99']:+.1f} ms; "
        f"ratio rxagent/null: p50 {ratio['p50']:.2f}x, p99 {ratio['p99']:.2f}x"
    )
    report: dict[str, Any] = {
        "settings": {"concurrency": n, "rounds": args.rounds, "store": args.store},
        "summary": summary,
        "added_ms": added,
        "ratio": ratio,
        "checks": checks,
        "verified": verified,
    }
    if "baseline" in summary:
        base = summary["baseline"]
        report["baseline_ratio"] = {q: base[f"{q}_ms"] / null[f"{q}_ms"] for q in ("p50", "p99")}
        report["cpu_vs_baseline"] = rx["cpu_per_run_ms"] / base["cpu_per_run_ms"]
        print(
            f"baseline ({args.baseline}): ratio baseline/null p99 "
            f"{report['baseline_ratio']['p99']:.2f}x; server CPU per run rxagent/baseline "
            f"{report['cpu_vs_baseline']:.2f}x"
        )
    print(
        f"checks: sessions stored with 4 messages {[c['sessions_complete'] for c in checks]}, "
        f"metrics runs {checks[-1]['metrics_runs']:.0f}/{expected_runs}: "
        f"{'ok' if verified else 'FAILED'}"
    )
    return report


if __name__ == "__main__":
    sys.exit(main())
