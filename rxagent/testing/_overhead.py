"""The overhead benchmark: rxagent against a hand-written loop on a raw `aiohttp.ClientSession`.

The workload is the one of `shared/bench/peers`: a system and a user prompt, then K=3 model calls
that each return one `add(a, b)` tool call, then a final text answer: 4 model calls and 3 tool
calls per run, against the fake OpenAI server of `rxagent.testing._bench_server` (in its own
process). The variants:

- **raw aiohttp** (the floor): the identical requests on one `aiohttp.ClientSession`, stdlib
  `json`, hand-written SSE parsing, the tool called inline;
- **rxagent**: `ReActAgent` + `OpenAIChatModel`, 5 no-op hooks that see every event, the sync
  `add` tool, each run in a fresh session; `await agent.call(...)` non-streaming, every event of
  `agent.events(...)` consumed when streaming.

`measure_phase` times sequential runs, blocks of each variant alternating in a shuffled order;
`measure_concurrency` times batches of M concurrent runs (`asyncio.gather`) with a per-call server
latency, the variants' batches alternating. Every run is checked (its final text, the tool called
K times in all, the server's counters, and, for rxagent, that every hook saw every event).

This module imports only the standard library and aiohttp at module level (rxagent only inside
`rxagent_variant`), so that `child_main` can measure the peak RSS of the raw loop alone: the
child loads this file by its path, not as part of the `rxagent` package.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

import aiohttp

from rxagent.errors import BenchError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from rxagent.hooks import Hook

__all__ = [
    "RAW",
    "RXAGENT",
    "BenchError",
    "Variant",
    "measure_concurrency",
    "measure_phase",
    "raw_aiohttp",
    "rxagent_variant",
]

PROMPT = "What is 1 + 2? Use the add tool."
SYSTEM = "You are a helpful assistant. Use tools when asked."
MODEL = "gpt-4o-mini"
API_KEY = "x"
HOST = "127.0.0.1"  # the fake server binds loopback only
RAW = "raw-aiohttp"
RXAGENT = "rxagent"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers and return the sum.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    }
]
IMPORTS = {
    RAW: "import aiohttp",
    RXAGENT: "from rxagent import ReActAgent, tool; from rxagent.models import OpenAIChatModel",
}


class ToolCounter:
    """How many times `add` ran, in this process."""

    calls = 0


def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    ToolCounter.calls += 1
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    ToolCounter.calls += 1
    return a + b


@dataclass
class Variant:
    """One way of doing a run: `run()` returns the final text.

    `after` (untimed) runs after each sequential run and after each concurrent batch, `close` at
    the end; `checks` returns the variant's own checks over everything it ran.
    """

    name: str
    run: Callable[[], Awaitable[str]]
    after: Callable[[], Awaitable[None]] | None = None
    close: Callable[[], Awaitable[None]] | None = None
    checks: Callable[[], dict[str, bool]] | None = None
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Settings:
    """How much to measure (`rxagent bench`'s defaults).

    Attributes:
        n: Timed sequential runs of each variant in each phase.
        warmup: Untimed runs of each variant before a sequential phase.
        block: Runs of a variant in one block (the blocks of the variants alternate).
        k: Tool calls per run (K + 1 model calls).
        chunks: Text chunks of a streamed final answer.
        hooks: rxagent's no-op hooks.
        conc_m: Concurrent runs in one batch.
        conc_batches: Timed batches of each variant (0: no concurrency phase).
        latency_ms: The server's latency per model call in the concurrency phase.
        seed: The seed of the order of the blocks and the batches.
    """

    n: int = 100
    warmup: int = 10
    block: int = 10
    k: int = 3
    chunks: int = 20

    @property
    def steps(self) -> int:
        """Model calls per run: K with a tool call, and the final one."""
        return self.k + 1

    hooks: int = 5
    conc_m: int = 100
    conc_batches: int = 3
    latency_ms: float = 50.0
    seed: int = 7


def settings_of(namespace: object, **changes: Any) -> Settings:
    """The `Settings` that `namespace` (argparse's) has attributes for, with `changes`."""
    known = {f.name for f in fields(Settings)}
    given = {key: value for key, value in vars(namespace).items() if key in known}
    return Settings(**{**given, **changes})


# ------------------------------------------------------------------------------------------------
# The raw aiohttp loop


def exec_tool_calls(messages: list[dict[str, Any]], tool_calls: list[dict[str, Any]]) -> None:
    """Append the assistant's tool calls and `add`'s results to `messages`."""
    calls = [{"id": tc["id"], "type": "function", "function": tc["function"]} for tc in tool_calls]
    messages.append({"role": "assistant", "content": None, "tool_calls": calls})
    for tc in tool_calls:
        result = add(**json.loads(tc["function"]["arguments"]))
        messages.append({"role": "tool", "tool_call_id": tc["id"], "content": str(result)})


def first_messages() -> list[dict[str, Any]]:
    """The system and user messages every run starts with."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]


def accumulate(calls: dict[int, dict[str, Any]], delta: dict[str, Any]) -> None:
    """Fold a streamed delta's tool-call pieces into `calls` (by index)."""
    for tcd in delta.get("tool_calls") or ():
        acc = calls.setdefault(
            tcd["index"], {"id": None, "function": {"name": "", "arguments": ""}}
        )
        if tcd.get("id"):
            acc["id"] = tcd["id"]
        fn = tcd.get("function") or {}
        if fn.get("name"):
            acc["function"]["name"] += fn["name"]
        if fn.get("arguments"):
            acc["function"]["arguments"] += fn["arguments"]


def raw_aiohttp(base_url: str, stream: bool) -> Variant:
    """The floor: the identical requests on a raw aiohttp session (as `shared/bench/peers`)."""
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"},
    )
    url = base_url + "/chat/completions"
    dumps, loads = json.dumps, json.loads

    async def run_nonstream() -> str:
        messages = first_messages()
        while True:
            body = dumps({"model": MODEL, "messages": messages, "tools": TOOLS})
            async with session.post(url, data=body) as r:
                if r.status != 200:
                    raise BenchError(f"HTTP {r.status}")
                data = loads(await r.read())
            msg = data["choices"][0]["message"]
            if msg.get("tool_calls"):
                exec_tool_calls(messages, msg["tool_calls"])
                continue
            return str(msg["content"])

    async def run_stream() -> str:
        messages = first_messages()
        while True:
            request = {"model": MODEL, "messages": messages, "tools": TOOLS, "stream": True}
            request["stream_options"] = {"include_usage": True}
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            async with session.post(url, data=dumps(request)) as r:
                if r.status != 200:
                    raise BenchError(f"HTTP {r.status}")
                async for line in r.content:  # SSE: one event per `data:` line
                    if not line.startswith(b"data: "):
                        continue
                    payload = line[6:].strip()
                    if payload == b"[DONE]":
                        break
                    choices = loads(payload).get("choices")
                    if not choices:
                        continue
                    delta = choices[0].get("delta") or {}
                    if delta.get("content"):
                        text.append(delta["content"])
                    accumulate(calls, delta)
            if calls:
                exec_tool_calls(messages, [calls[i] for i in sorted(calls)])
                continue
            return "".join(text)

    return Variant(RAW, run_stream if stream else run_nonstream, close=session.close)


# ------------------------------------------------------------------------------------------------
# rxagent


def rxagent_variant(
    base_url: str, stream: bool, *, hooks: int = 5, async_tool: bool = False
) -> Variant:
    """rxagent: `ReActAgent` + `OpenAIChatModel`, `hooks` no-op hooks, a fresh session each run.

    Non-streaming a run is `await agent.call(...)`; streaming it consumes every event of
    `agent.events(...)`. Each hook counts the events it sees (and does nothing else), so that
    `checks()` can tell that every hook saw every event, and, streaming, as many as the consumer.
    """
    from rxagent.agent import ReActAgent
    from rxagent.events import PostCallEvent
    from rxagent.hooks import hook
    from rxagent.models import OpenAIChatModel
    from rxagent.tools import tool

    seen = [0] * hooks

    def counting(i: int) -> Hook:
        @hook(priority=i, name=f"noop{i}")
        def observe(event: Any) -> None:  # no event types: it sees every event
            seen[i] += 1

        return observe

    model = OpenAIChatModel(MODEL, base_url=base_url, api_key=API_KEY, max_retries=0, stream=stream)
    fn = add_async if async_tool else add
    agent = ReActAgent(
        "bench",
        SYSTEM,
        model,
        tools=[tool(fn, name="add")],
        hooks=[counting(i) for i in range(hooks)],
    )
    ids = itertools.count()
    pending: list[str] = []
    consumed = [0]

    async def run_call() -> str:
        session_id = f"s{next(ids)}"
        pending.append(session_id)
        result = await agent.call(PROMPT, session_id=session_id)
        if not result.ok:
            raise BenchError(f"rxagent run failed: {result.error}")
        return result.text

    async def run_events() -> str:
        session_id = f"s{next(ids)}"
        pending.append(session_id)
        text = None
        count = 0
        async for event in agent.events(PROMPT, session_id=session_id):
            count += 1
            if isinstance(event, PostCallEvent):
                if not event.result.ok:
                    raise BenchError(f"rxagent run failed: {event.result.error}")
                text = event.result.text
        consumed[0] += count
        if text is None:
            raise BenchError("rxagent run ended without a post_call event")
        return text

    async def after() -> None:  # untimed: keep the store as small as the raw loop's state
        while pending:
            await agent.store.delete(agent.name, pending.pop())

    def checks() -> dict[str, bool]:
        out = {"hooks_saw_events": all(n == seen[0] for n in seen) and (not seen or seen[0] > 0)}
        if stream and seen:
            out["hooks_saw_every_consumed_event"] = seen[0] == consumed[0]
        return out

    name = "rxagent-async-tool" if async_tool else RXAGENT
    run = run_events if stream else run_call
    return Variant(name, run, after=after, close=model.aclose, checks=checks)


def rxagent_builder(hooks: int) -> Callable[[str, bool], Variant]:
    """A builder of `rxagent_variant` with `hooks` no-op hooks."""
    return lambda base_url, stream: rxagent_variant(base_url, stream, hooks=hooks)


# ------------------------------------------------------------------------------------------------
# Measurement


async def server_stats(session: aiohttp.ClientSession, root: str, reset: bool = False) -> Any:
    """The fake server's counters (`reset`: and zero them)."""
    if reset:
        async with session.post(root + "/stats/reset") as r:
            return await r.json()
    async with session.get(root + "/stats") as r:
        return await r.json()


async def checked(variant: Variant, k: int) -> tuple[float, float]:
    """One run: (wall ms, CPU ms), after checking its text and its tool calls."""
    calls = ToolCounter.calls
    c0 = time.process_time_ns()
    t0 = time.perf_counter_ns()
    text = await variant.run()
    wall = (time.perf_counter_ns() - t0) / 1e6
    cpu = (time.process_time_ns() - c0) / 1e6
    if "done" not in text:
        raise BenchError(f"{variant.name}: unexpected final text {text!r}")
    if ToolCounter.calls - calls != k:
        raise BenchError(f"{variant.name}: {ToolCounter.calls - calls} tool calls, expected {k}")
    if variant.after is not None:
        await variant.after()
    return wall, cpu


def pct(xs: Sequence[float], q: float) -> float:
    """The `q` quantile of `xs` (nearest rank)."""
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _summary(v: Variant, steps: int) -> dict[str, Any]:
    med = statistics.median(v.wall_ms)
    cpu = statistics.median(v.cpu_ms)
    return {
        "runs": len(v.wall_ms),
        "run_ms_median": med,
        "run_ms_p90": pct(v.wall_ms, 0.9),
        "step_us_median": med / steps * 1e3,
        "step_us_p90": pct(v.wall_ms, 0.9) / steps * 1e3,
        "cpu_run_ms_median": cpu,
        "cpu_step_us_median": cpu / steps * 1e3,
    }


def _own_checks(variants: Sequence[Variant]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for v in variants:
        if v.checks is not None:
            out.update({f"{v.name}: {key}": ok for key, ok in v.checks().items()})
    return out


async def _close(variants: Sequence[Variant]) -> None:
    for variant in variants:
        if variant.close is not None:
            await variant.close()


async def measure_phase(
    builders: Sequence[Callable[[str, bool], Variant]],
    root: str,
    settings: Settings,
    *,
    stream: bool,
) -> dict[str, Any]:
    """Sequential runs: blocks of `settings.block` runs of each variant, shuffled per round.

    The first builder's variant is the reference: the others get `overhead_step_us`,
    `cpu_overhead_step_us` and `ratio` (median run time over the reference's) against it.
    """
    variants = [build(root + "/v1", stream) for build in builders]
    n, block, k, steps = settings.n, settings.block, settings.k, settings.steps
    async with aiohttp.ClientSession() as control:
        try:
            for variant in variants:  # warm-up: connections, caches, lazy imports
                for _ in range(settings.warmup):
                    await checked(variant, k)
            gc.collect()
            await server_stats(control, root, reset=True)
            tools0 = ToolCounter.calls
            order = random.Random(settings.seed)
            shuffled = list(variants)
            started = time.perf_counter()
            done = 0
            while done < n:
                count = min(block, n - done)
                order.shuffle(shuffled)
                for variant in shuffled:
                    for _ in range(count):
                        wall, cpu = await checked(variant, k)
                        variant.wall_ms.append(wall)
                        variant.cpu_ms.append(cpu)
                done += count
                gc.collect()  # between rounds of blocks, never inside a timed block
            wall_s = time.perf_counter() - started
            stats = await server_stats(control, root)
        finally:
            await _close(variants)
    runs = n * len(variants)
    verified = {
        "requests": stats["requests"] == runs * steps,
        "stream_requests": stats["stream_requests"] == (runs * steps if stream else 0),
        "tool_calls": ToolCounter.calls - tools0 == runs * k,
        "final_responses": stats["final_responses"] == runs,
        "no_bad_requests": stats["bad_requests"] == 0 and stats["other_paths"] == 0,
        **_own_checks(variants),
    }
    results = {v.name: _summary(v, steps) for v in variants}
    ref = results[variants[0].name]
    for r in results.values():
        if r is not ref:
            r["overhead_step_us"] = r["step_us_median"] - ref["step_us_median"]
            r["cpu_overhead_step_us"] = r["cpu_step_us_median"] - ref["cpu_step_us_median"]
            r["ratio"] = r["run_ms_median"] / ref["run_ms_median"]
            r["cpu_ratio"] = r["cpu_step_us_median"] / ref["cpu_step_us_median"]
    return {
        "variants": results,
        "server_stats": stats,
        "tool_calls": ToolCounter.calls - tools0,
        "checks": verified,
        "verified": all(verified.values()),
        "phase_wall_s": wall_s,
    }


async def _batch(variant: Variant, m: int, k: int) -> tuple[float, float]:
    """`m` concurrent runs: (wall s, CPU s), after checking every text and the tool calls."""
    tools0 = ToolCounter.calls
    c0 = time.process_time()
    t0 = time.perf_counter()
    texts = await asyncio.gather(*(variant.run() for _ in range(m)), return_exceptions=True)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    errors = [t for t in texts if isinstance(t, BaseException)]
    if errors:
        raise BenchError(f"{variant.name}: {len(errors)} of {m} runs failed: {errors[0]!r}")
    wrong = [t for t in texts if "done" not in str(t)]
    if wrong:
        raise BenchError(f"{variant.name}: unexpected final text {wrong[0]!r}")
    if ToolCounter.calls - tools0 != m * k:
        raise BenchError(f"{variant.name}: {ToolCounter.calls - tools0} tool calls, not {m * k}")
    if variant.after is not None:
        await variant.after()
    return wall, cpu


async def measure_concurrency(
    builders: Sequence[Callable[[str, bool], Variant]],
    root: str,
    settings: Settings,
) -> dict[str, Any]:
    """Batches of `settings.conc_m` concurrent non-streaming runs, with server latency.

    One untimed warm-up batch of each variant, then `settings.conc_batches` rounds in which each
    variant runs one batch, in a shuffled order per round. A variant's runs/s is M over its
    median batch wall time; the variants after the first get `ratio` (their runs/s over the
    first's).
    """
    m, batches, k, steps = settings.conc_m, settings.conc_batches, settings.k, settings.steps
    variants = [build(f"{root}/lat/{settings.latency_ms:g}/v1", False) for build in builders]
    walls: dict[str, list[float]] = {v.name: [] for v in variants}
    cpus: dict[str, list[float]] = {v.name: [] for v in variants}
    verified: dict[str, bool] = {}
    async with aiohttp.ClientSession() as control:
        try:
            for variant in variants:  # warm-up: opens the connection pools
                await _batch(variant, m, k)
            gc.collect()
            order = random.Random(settings.seed)
            shuffled = list(variants)
            for _ in range(batches):
                order.shuffle(shuffled)
                for variant in shuffled:
                    await server_stats(control, root, reset=True)
                    wall, cpu = await _batch(variant, m, k)
                    stats = await server_stats(control, root)
                    walls[variant.name].append(wall)
                    cpus[variant.name].append(cpu)
                    ok = stats["requests"] == m * steps and stats["final_responses"] == m
                    ok = ok and stats["bad_requests"] == 0 and stats["stream_requests"] == 0
                    key = f"{variant.name}: requests"
                    verified[key] = verified.get(key, True) and ok
                    gc.collect()
        finally:
            await _close(variants)
    verified.update(_own_checks(variants))
    results: dict[str, dict[str, Any]] = {}
    for v in variants:
        med = statistics.median(walls[v.name])
        results[v.name] = {
            "batch_wall_s": walls[v.name],
            "wall_s_median": med,
            "runs_per_s": m / med,
            "cpu_run_ms_median": statistics.median(cpus[v.name]) / m * 1e3,
        }
    ref = results[variants[0].name]
    for r in results.values():
        if r is not ref:
            r["ratio"] = r["runs_per_s"] / ref["runs_per_s"]
    return {
        "m": m,
        "batches": batches,
        "latency_ms": settings.latency_ms,
        "variants": results,
        "checks": verified,
        "verified": all(verified.values()),
    }


# ------------------------------------------------------------------------------------------------
# One variant alone in a child process (peak RSS), and import time


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB.

    On Linux it is `VmHWM` of `/proc/self/status`: the peak of this program's own memory.
    `ru_maxrss` would not do in a child: it starts from its parent's RSS at the moment of the
    `vfork` that `subprocess` uses. Elsewhere it is `ru_maxrss` (KiB; bytes on macOS).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


# the child loads this file by its path, so that `import rxagent` is not part of the raw loop's RSS
_CHILD = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('_rxagent_bench_child', sys.argv[1])\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "sys.modules[spec.name] = module\n"
    "spec.loader.exec_module(module)\n"
    "sys.exit(module.child_main(sys.argv[2:]))\n"
)


def builders_of(names: Sequence[str], hooks: int) -> list[Callable[[str, bool], Variant]]:
    """The builders of the variants named `RAW` and `RXAGENT` (with `hooks` no-op hooks)."""
    known: dict[str, Callable[[str, bool], Variant]] = {
        RAW: raw_aiohttp,
        RXAGENT: rxagent_builder(hooks),
    }
    unknown = [name for name in names if name not in known]
    if unknown:
        raise BenchError(f"unknown variant(s) {unknown}; known: {sorted(known)}")
    return [known[name] for name in names]


async def measure_round(
    builders: Sequence[Callable[[str, bool], Variant]],
    root: str,
    settings: Settings,
    modes: Sequence[str] = ("nonstream", "stream"),
) -> dict[str, Any]:
    """Every phase once: the sequential `modes`, then the concurrency phase (unless no batches).

    The first builder's variant is the reference of the ratios.
    """
    out: dict[str, Any] = {}
    for mode in modes:
        out[mode] = await measure_phase(builders, root, settings, stream=mode == "stream")
    if settings.conc_batches:
        out["concurrency"] = await measure_concurrency(builders, root, settings)
    return out


def child_main(argv: list[str]) -> int:
    """The child's entry point: `VARIANT PORT SETTINGS_JSON`; prints its results as JSON."""
    name, port, given = argv
    settings = Settings(**json.loads(given))
    builders = builders_of([name], settings.hooks)
    root = f"http://{HOST}:{int(port)}"
    result: dict[str, Any] = asyncio.run(measure_round(builders, root, settings, modes=()))[
        "concurrency"
    ]
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result), flush=True)
    return 0


def measure_child(
    name: str, port: int, settings: Settings, timeout_s: float = 600.0
) -> dict[str, Any]:
    """Run variant `name` alone in a child process: its import and the concurrency phase.

    Returns the child's concurrency results with its `peak_rss_mb`.

    Raises:
        BenchError: When the child fails.
    """
    cmd = [sys.executable, "-c", _CHILD, __file__, name, str(port), json.dumps(asdict(settings))]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise BenchError(f"the {name} child failed (exit {proc.returncode}): {tail}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def machine() -> dict[str, Any]:
    """The date, Python, CPU, core count and load average, for a benchmark's report."""
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu
            )
    except OSError:
        pass
    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0),
    }


_TIMED = "import time; t = time.perf_counter(); {imports}; print((time.perf_counter() - t) * 1e3)"


def import_times(
    reps: int = 5, names: Sequence[str] = (RAW, RXAGENT), *, warm: bool = True
) -> dict[str, list[float]]:
    """Milliseconds to import what a run of each variant needs, in `reps` fresh processes each.

    The interpreter's start-up is not counted (perf_counter around the imports only). With
    `warm`, one untimed process of each first warms the disk and `.pyc` caches. The processes
    of the variants alternate.
    """
    out: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(0 if warm else 1, reps + 1):
        for name in names:
            cmd = [sys.executable, "-c", _TIMED.format(imports=IMPORTS[name])]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
            if proc.returncode != 0:
                raise BenchError(f"import of {name} failed: {proc.stderr.strip()[-300:]}")
            if rep:
                out[name].append(float(proc.stdout.strip().splitlines()[-1]))
    return out
