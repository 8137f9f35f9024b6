"""Soak: many runs in one process, through the server and the library; nothing may grow.

Run: `python bench/soak.py` (10,000 runs, about a minute), `--runs N`, `--quick` (600 runs),
`--concurrency C` (runs in flight at once, default 8), `--samples S` (default 20),
`--tracemalloc` (the top allocation sites that grew, to hunt a leak), `--json FILE`.

One agent (`FunctionModel`: a tool call, then an answer streamed in chunks; no latency), served
by `create_app` on 127.0.0.1 (a free port) with an aiohttp client in the same process. The runs
go round nine kinds, `--concurrency` at a time:

- **server stream**: `POST /v1/agents/soak/runs:stream` on a fresh session, read to the end,
  then `DELETE /v1/sessions/{id}`;
- **server chat**: `POST /v1/chat/completions` without a session (stateless: its throw-away
  session is deleted by the server), streamed and not, in turn;
- **server runs**: `POST /v1/agents/soak/runs` twice on a session the client names (the second
  run continues it), then `DELETE`;
- **server ui**: `POST /v1/agents/soak/ui` (the AI SDK UI message stream) on a named session,
  then `DELETE`;
- **server leaves**: `runs:stream` of a slow run (the model waits 20 ms) whose client reads the
  first frame and closes the connection: the server cancels the run; then `DELETE`;
- **library call / events / stream**: `agent.call`, `agent.events` and `agent.stream` (the Rx
  Observable) on a session of their own, which is then deleted from the store;
- **library leaves**: `agent.events` of a slow run, left at its first event (the run is
  cancelled), then deleted.

So every run's session is gone afterwards, and what is left must be what was there at the start.
Sampled after warm-up (the first `--warmup` fraction of runs), after `gc.collect()`: the
process's resident memory (RSS, from `/proc/self/statm`), its open file descriptors, the event
loop's tasks, and the bookkeeping that holds a run or a session: the store's sessions and
leases, `agent._runs` (its tails, running runs, background tasks), the server's `ServerContext`
(runs in progress, runs by key, cleanups), and the `Run`s, `RunContext`s and `Msg`s alive.
Reported: each quantity's least-squares slope per 1,000 runs over the samples after warm-up,
runs/s, and the checks: every run answered, the bookkeeping is back to its starting size (no
run, run context or message alive), tasks and descriptors stay within what the client's
keep-alive pool accounts for (`--concurrency` + 1 connections: a client fd, a server fd and a
server task each), and the RSS slope is under `--max-rss-slope-kib` KiB per 1,000 runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

from rxagent import PostCallEvent, ReActAgent, RunContext, tool
from rxagent.agent._run import Run
from rxagent.messages import Msg
from rxagent.server import SERVER_KEY, ServerConfig, create_app
from rxagent.state import InMemoryStore
from rxagent.testing import FunctionModel, tool_call

if TYPE_CHECKING:
    from rxagent.events import BaseEvent
    from rxagent.models import ModelOptions, ToolSchema

HOST = "127.0.0.1"
AGENT = "soak"
ANSWER = "The sum of 2 and 3 is 5. " * 4
SLOW = "slowly, 2+3?"
"""An input the model answers after `SLOW_S`: a client leaves such a run while it goes on."""
SLOW_S = 0.02
KINDS = ("server stream", "server chat", "server runs", "server ui", "server leaves",
         "library call", "library events", "library stream", "library leaves")  # fmt: skip
PAGE = os.sysconf("SC_PAGE_SIZE")


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


async def _respond(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Any:
    if messages[-1].role == "user":
        if messages[-1].text == SLOW:
            await asyncio.sleep(SLOW_S)
        return tool_call("add", a=2, b=3)
    return ANSWER


def build_agent() -> tuple[ReActAgent, FunctionModel]:
    """The agent under soak and its model (a tool call, then a streamed answer)."""
    model = FunctionModel(_respond, chunk_size=12)
    return ReActAgent(AGENT, "You add.", model, tools=[add], store=InMemoryStore()), model


# -- what is sampled -------------------------------------------------------------------------------


def rss_bytes() -> int:
    """The process's resident memory now (not its peak)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def open_fds() -> int:
    """The process's open file descriptors."""
    return len(os.listdir("/proc/self/fd"))


def bookkeeping(agent: ReActAgent, app: web.Application) -> dict[str, int]:
    """The sizes of everything that holds a run or a session."""
    store = agent.store
    assert isinstance(store, InMemoryStore)
    runs = agent._runs
    ctx = app[SERVER_KEY]
    return {
        "store sessions": len(store._states),
        "store leases": len(store._leases),
        "agent tails": len(runs.tails),
        "agent running": len(runs.running),
        "agent background": len(runs.background),
        "server active": len(ctx._active),
        "server runs_by_key": len(ctx._runs_by_key),
        "server cleanups": len(ctx._cleanups),
    }


def live_objects() -> dict[str, int]:
    """How many runs, run contexts and messages are alive (after `gc.collect()`)."""
    counts = {"live runs": 0, "live run contexts": 0, "live messages": 0}
    for obj in gc.get_objects():
        if isinstance(obj, Run):
            counts["live runs"] += 1
        elif isinstance(obj, RunContext):
            counts["live run contexts"] += 1
        elif isinstance(obj, Msg):
            counts["live messages"] += 1
    return counts


@dataclass
class Sample:
    """One look at the process."""

    runs: int
    rss: int
    fds: int
    tasks: int
    held: dict[str, int]


@dataclass
class Soak:
    """The run's counters and samples."""

    ok: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    failed: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)


# -- one run of each kind --------------------------------------------------------------------------


def _post_call(body: bytes) -> dict[str, Any] | None:
    for frame in body.decode().split("\n\n"):
        lines = frame.splitlines()
        if "event: post_call" in lines:
            data = "".join(line[6:] for line in lines if line.startswith("data: "))
            return dict(json.loads(data))
    return None


def _text(result: dict[str, Any]) -> str:
    """The text of an `AgentResult`'s JSON (its reply's text blocks)."""
    blocks = result["reply"]["content"]
    if isinstance(blocks, str):
        return blocks
    return "".join(b["text"] for b in blocks if b.get("type") == "text")


async def server_stream(http: aiohttp.ClientSession, base: str, n: int) -> bool:
    url = f"{base}/v1/agents/{AGENT}/runs:stream"
    async with http.post(url, json={"input": "2+3?", "session_id": None}) as response:
        body = await response.read()
    post = _post_call(body)
    if post is None or not post["result"]["ok"] or _text(post["result"]) != ANSWER:
        return False
    async with http.delete(f"{base}/v1/sessions/{post['result']['session_id']}") as response:
        return response.status == 200


async def server_chat(http: aiohttp.ClientSession, base: str, n: int) -> bool:
    stream = n % 2 == 0
    body = {"model": AGENT, "messages": [{"role": "user", "content": "2+3?"}], "stream": stream}
    async with http.post(f"{base}/v1/chat/completions", json=body) as response:
        if response.status != 200:
            return False
        if not stream:
            data = await response.json()
            return bool(data["choices"][0]["message"]["content"] == ANSWER)
        raw = (await response.read()).decode()
    return raw.endswith("data: [DONE]\n\n") and "The sum" in raw


async def server_runs(http: aiohttp.ClientSession, base: str, n: int) -> bool:
    session_id = f"runs-{n}"
    for text in ("2+3?", "and again?"):
        body = {"input": text, "session_id": session_id}
        async with http.post(f"{base}/v1/agents/{AGENT}/runs", json=body) as response:
            if response.status != 200 or _text(await response.json()) != ANSWER:
                return False
    async with http.delete(f"{base}/v1/sessions/{session_id}") as response:
        return response.status == 200


async def server_ui(http: aiohttp.ClientSession, base: str, n: int) -> bool:
    session_id = f"ui-{n}"
    body = {"input": "2+3?", "session_id": session_id}
    async with http.post(f"{base}/v1/agents/{AGENT}/ui", json=body) as response:
        raw = (await response.read()).decode()
    if response.status != 200 or not raw.endswith("data: [DONE]\n\n") or "The sum" not in raw:
        return False
    async with http.delete(f"{base}/v1/sessions/{session_id}") as response:
        return response.status == 200


async def server_leaves(http: aiohttp.ClientSession, base: str, n: int, agent: ReActAgent) -> bool:
    """The client reads the first frame of a slow run and closes the connection."""
    session_id = f"leaves-{n}"
    url = f"{base}/v1/agents/{AGENT}/runs:stream"
    async with http.post(url, json={"input": SLOW, "session_id": session_id}) as response:
        first = await response.content.readuntil(b"\n\n")
        response.close()  # the connection goes: the server cancels the run
    if not first.startswith(b"event: pre_call"):
        return False
    if not await agent.wait_idle(5, session_id=session_id):  # cancelled, saved, released
        return False
    async with http.delete(f"{base}/v1/sessions/{session_id}") as response:
        return response.status == 200


async def library_call(agent: ReActAgent, n: int) -> bool:
    session_id = f"call-{n}"
    result = await agent.call("2+3?", session_id=session_id)
    deleted = await agent.store.delete(AGENT, session_id)
    return result.ok and result.text == ANSWER and deleted


async def library_events(agent: ReActAgent, n: int) -> bool:
    session_id = f"events-{n}"
    text = None
    chunks = 0
    async for event in agent.events("2+3?", session_id=session_id):
        chunks += event.type == "reasoning_chunk"
        if isinstance(event, PostCallEvent):
            text = event.result.text
    deleted = await agent.store.delete(AGENT, session_id)
    return text == ANSWER and chunks > 1 and deleted


async def library_stream(agent: ReActAgent, n: int) -> bool:
    session_id = f"stream-{n}"
    done: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    seen: list[BaseEvent] = []

    def on_completed() -> None:
        post = seen[-1] if seen else None
        done.set_result(post.result.text if isinstance(post, PostCallEvent) else None)

    subscription = agent.stream("2+3?", session_id=session_id).subscribe(
        on_next=seen.append, on_error=done.set_exception, on_completed=on_completed
    )
    try:
        text = await done
    finally:
        subscription.dispose()
    await agent.wait_idle(session_id=session_id)  # the run has saved and let go of its session
    deleted = await agent.store.delete(AGENT, session_id)
    return text == ANSWER and deleted


async def library_leaves(agent: ReActAgent, n: int) -> bool:
    """The consumer leaves `agent.events` at the first event of a slow run."""
    session_id = f"lib-leaves-{n}"
    events = agent.events(SLOW, session_id=session_id)
    async for event in events:
        if event.type != "pre_call":
            return False
        break
    await events.aclose()  # type: ignore[attr-defined]  # an async generator
    if not await agent.wait_idle(5, session_id=session_id):
        return False
    await agent.store.delete(AGENT, session_id)
    return True


# -- the soak --------------------------------------------------------------------------------------


async def _one(
    kind: str, n: int, agent: ReActAgent, http: aiohttp.ClientSession, base: str, soak: Soak
) -> None:
    try:
        if kind == "server stream":
            ok = await server_stream(http, base, n)
        elif kind == "server chat":
            ok = await server_chat(http, base, n)
        elif kind == "server runs":
            ok = await server_runs(http, base, n)
        elif kind == "server ui":
            ok = await server_ui(http, base, n)
        elif kind == "server leaves":
            ok = await server_leaves(http, base, n, agent)
        elif kind == "library leaves":
            ok = await library_leaves(agent, n)
        elif kind == "library call":
            ok = await library_call(agent, n)
        elif kind == "library events":
            ok = await library_events(agent, n)
        else:
            ok = await library_stream(agent, n)
    except Exception as exc:  # counted and shown: a soak reports every failure
        soak.failed.append(f"{kind} #{n}: {type(exc).__name__}: {exc}")
        return
    if ok:
        soak.ok[kind] += 1
    else:
        soak.failed.append(f"{kind} #{n}: wrong answer")


async def _sample(
    runs: int, agent: ReActAgent, model: FunctionModel, app: web.Application
) -> Sample:
    model.requests.clear()  # the test model's record of every request, by design
    await asyncio.sleep(0)  # done callbacks run
    gc.collect()
    tasks = len(asyncio.all_tasks()) - 1  # not this one
    held = {**bookkeeping(agent, app), **live_objects()}
    return Sample(runs, rss_bytes(), open_fds(), tasks, held)


async def soak(runs: int, concurrency: int, samples: int, trace: bool) -> tuple[Soak, float, Any]:
    """Run `runs` runs, `concurrency` at a time; sample `samples + 1` times."""
    agent, model = build_agent()
    config = ServerConfig(max_runs_per_key=max(16, concurrency * 2))
    app = create_app(agent, config=config)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, HOST, 0)
    await site.start()
    port = runner.addresses[0][1]
    base = f"http://{HOST}:{port}"
    result = Soak()
    every = max(1, runs // samples)
    snapshot = None
    try:
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as http:
            result.samples.append(await _sample(0, agent, model, app))
            started = time.perf_counter()
            n = 0
            while n < runs:
                batch = min(concurrency, runs - n)
                await asyncio.gather(
                    *(
                        _one(KINDS[(n + i) % len(KINDS)], n + i, agent, http, base, result)
                        for i in range(batch)
                    )
                )
                before = n
                n += batch
                if n // every != before // every or n == runs:
                    result.samples.append(await _sample(n, agent, model, app))
                    if trace and snapshot is None and n >= runs // 5:
                        tracemalloc.start(10)
                        snapshot = tracemalloc.take_snapshot()
            elapsed = time.perf_counter() - started
            # What finishes just after the last run (a connection's close, a timer that fires)
            # may hold a run for a moment: sample the end again while it settles, up to 3 s. A
            # leak does not settle, so the check still catches it.
            for _ in range(15):
                if result.samples[-1].held == result.samples[0].held:
                    break
                await asyncio.sleep(0.2)
                result.samples[-1] = await _sample(runs, agent, model, app)
        grown = None
        if snapshot is not None:
            gc.collect()
            grown = tracemalloc.take_snapshot().compare_to(snapshot, "traceback")
            tracemalloc.stop()
    finally:
        await runner.cleanup()
        await agent.aclose()
    return result, elapsed, grown


def slope_per_1000(points: list[tuple[int, float]]) -> float:
    """The least-squares slope of `value` over `runs`, per 1,000 runs (0 for fewer than 2)."""
    if len(points) < 2:
        return 0.0
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    var = sum((x - mean_x) ** 2 for x, _ in points)
    if var == 0:
        return 0.0
    cov = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return 1000 * cov / var


def report(args: argparse.Namespace, result: Soak, elapsed: float, grown: Any) -> dict[str, Any]:
    """Print the table and return the JSON report."""
    warm = [s for s in result.samples if s.runs >= args.runs * args.warmup]
    first, last = result.samples[0], result.samples[-1]
    slopes = {
        "rss_kib": slope_per_1000([(s.runs, s.rss / 1024) for s in warm]),
        "fds": slope_per_1000([(s.runs, s.fds) for s in warm]),
        "tasks": slope_per_1000([(s.runs, s.tasks) for s in warm]),
    }
    completed = sum(result.ok.values())
    held_after = last.held
    pool = args.concurrency + 1  # keep-alive connections: a client and a server fd, a task
    checks = {
        "every run answered": completed == args.runs and not result.failed,
        "bookkeeping back to its start": held_after == first.held,
        "tasks within the connection pool": max(s.tasks for s in warm) <= first.tasks + pool,
        "fds within the connection pool": max(s.fds for s in warm)
        <= first.fds + 2 * pool + args.fd_slack,
        "rss slope bounded": slopes["rss_kib"] <= args.max_rss_slope_kib,
    }
    verified = all(checks.values())
    print(
        f"soak: {args.runs} runs, {args.concurrency} at a time, {len(KINDS)} kinds in turn; "
        f"{elapsed:.1f} s, {args.runs / elapsed:.0f} runs/s"
    )
    print(f"{'runs':>8}{'RSS MiB':>10}{'fds':>6}{'tasks':>7}  held (sessions, leases, runs...)")
    for s in result.samples:
        held = sum(s.held.values())
        mark = "" if s in warm else "  (warm-up)"
        print(f"{s.runs:>8}{s.rss / 2**20:>10.1f}{s.fds:>6}{s.tasks:>7}  {held}{mark}")
    print(
        f"slope per 1,000 runs after warm-up: RSS {slopes['rss_kib']:+.1f} KiB, "
        f"fds {slopes['fds']:+.2f}, tasks {slopes['tasks']:+.2f}"
    )
    print("held at the end: " + ", ".join(f"{k} {v}" for k, v in held_after.items()))
    print("runs answered: " + ", ".join(f"{k} {v}" for k, v in result.ok.items()))
    for line in result.failed[:10]:
        print(f"  failed: {line}")
    if grown is not None:
        total = sum(stat.size_diff for stat in grown) / 1024
        print(f"Python heap since warm-up (tracemalloc): {total:+.1f} KiB; grown most:")
        for stat in grown[:5]:
            print(f"  {stat.size_diff / 1024:+.1f} KiB in {stat.count_diff:+d} blocks")
            for frame in stat.traceback.format()[-6:]:
                print(f"    {frame}")
    print(
        "checks: "
        + ", ".join(f"{name} {'ok' if good else 'FAILED'}" for name, good in checks.items())
    )
    return {
        "settings": {
            "runs": args.runs,
            "concurrency": args.concurrency,
            "warmup": args.warmup,
            "python": sys.version.split()[0],
        },
        "elapsed_s": elapsed,
        "runs_per_s": args.runs / elapsed,
        "slopes_per_1000_runs": slopes,
        "answered": result.ok,
        "failed": result.failed,
        "held_start": first.held,
        "held_end": held_after,
        "samples": [
            {"runs": s.runs, "rss": s.rss, "fds": s.fds, "tasks": s.tasks, "held": s.held}
            for s in result.samples
        ],
        "checks": checks,
        "verified": verified,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the soak; 0 when every check passed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None, help="default 10,000")
    parser.add_argument("--quick", action="store_true", help="600 runs (by default)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--warmup", type=float, default=0.2, help="fraction of runs, default 0.2")
    parser.add_argument("--max-rss-slope-kib", type=float, default=512.0)
    parser.add_argument("--fd-slack", type=int, default=0, help="fds allowed beyond the pool's")
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)
    args.runs = args.runs or (600 if args.quick else 10_000)
    if args.runs < 1 or args.concurrency < 1 or args.samples < 2:
        parser.error("--runs and --concurrency must be at least 1, --samples at least 2")
    result, elapsed, grown = asyncio.run(
        soak(args.runs, args.concurrency, args.samples, args.tracemalloc)
    )
    out = report(args, result, elapsed, grown)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(out, indent=2))
    return 0 if out["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())
