"""The framework's own cost, measured with a zero-latency in-process model.

Run: `python bench/overhead.py` (about a minute; `--quick` for a smoke run).

What it measures, side by side in one process, in interleaved rounds:

- **per-step time** of `ReActAgent.call()` in the default configuration with 0, 5 and 20 user
  hooks (no-op hooks that see every event), against a **raw loop**: the same `ScriptedModel`, the
  same `Toolkit` and the same memory handling, driven by a plain `async` loop with no events, no
  hooks and no Rx. The difference is the framework's per-step overhead.
- **ReasoningChunk throughput** (chunks/s) through the whole pipeline to a subscriber, with 0 and
  5 hooks, against draining the model's stream alone.

Times are the process's CPU time (`time.process_time`): the model has no latency, so a run is
pure CPU work, and CPU time is not inflated when other processes take the cores. Absolute numbers
still vary from machine to machine; the ratios measured in the same run are the point.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rxagent import Msg, ReActAgent, ReasoningChunkEvent, hook, tool
from rxagent.models import ModelOptions, ResponseBuilder
from rxagent.testing import ScriptedModel, tool_call
from rxagent.tools import Toolkit

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from rxagent.hooks import Hook


clock = time.process_time


@tool
async def lookup(key: int) -> int:
    """Return the key.

    Args:
        key: A number.
    """
    return key


def noop_hooks(count: int) -> list[Hook]:
    hooks: list[Hook] = []
    for i in range(count):

        @hook(priority=i, name=f"noop{i}")
        def observe(event: Any) -> None:
            return None

        hooks.append(observe)
    return hooks


def script(steps: int) -> list[Any]:
    return [tool_call("lookup", key=i) for i in range(steps - 1)] + ["done"]


async def raw_loop(model: ScriptedModel, toolkit: Toolkit, system: Msg) -> None:
    """The floor: the same model, tools and memory, with nothing in between."""
    memory = [Msg.user("go")]
    schemas = list(toolkit.schemas())
    options = ModelOptions()
    counter = 0

    def next_id() -> str:
        nonlocal counter
        counter += 1
        return f"call_{counter}"

    while True:
        builder = ResponseBuilder(id_factory=next_id)
        async for delta in model.stream([system, *memory], schemas, options):
            builder.add(delta)
        reply = builder.build()
        memory.append(reply)
        if not reply.tool_calls:
            return
        for call in reply.tool_calls:
            outcome = await toolkit.execute(call)
            memory.append(Msg.tool(outcome.result))


async def time_runs(runs: int, one_run: Callable[[int], Awaitable[None]]) -> list[float]:
    samples = []
    for i in range(runs):
        start = clock()
        await one_run(i)
        samples.append(clock() - start)
    return samples


async def per_step(steps: int, runs: int, rounds: int) -> dict[str, float]:
    """Median µs per step: rxagent with 0/5/20 hooks and the raw loop, interleaved."""
    toolkit = Toolkit([lookup])
    system = Msg.system("sys")
    models = {
        name: ScriptedModel(script(steps), chunk_size=1000) for name in ("raw", "0", "5", "20")
    }
    agents = {
        n: ReActAgent(
            "bench", "sys", models[n], tools=toolkit, hooks=noop_hooks(int(n)), max_iters=1000
        )
        for n in ("0", "5", "20")
    }

    async def run_raw(_: int) -> None:
        models["raw"].reset()
        await raw_loop(models["raw"], toolkit, system)

    def run_agent(n: str) -> Callable[[int], Awaitable[None]]:
        async def run(i: int) -> None:
            models[n].reset()
            result = await agents[n].call("go", session_id=f"s{i}")
            assert result.ok, result.error

        return run

    variants = [("raw", run_raw), *((n, run_agent(n)) for n in ("0", "5", "20"))]
    for _, runner in variants:  # warm up: first calls build caches and schemas
        await time_runs(2, runner)
    samples: dict[str, list[float]] = {k: [] for k, _ in variants}
    order = random.Random(7)
    for _ in range(rounds):
        order.shuffle(variants)  # no variant always runs first or last in a round
        for name, runner in variants:
            gc.collect()
            samples[name].extend(await time_runs(runs, runner))
    return {k: statistics.median(v) / steps * 1e6 for k, v in samples.items()}


async def chunk_throughput(chunks: int, rounds: int) -> dict[str, float]:
    """Median chunks/s: the model's stream alone, and through the pipeline with 0 and 5 hooks."""
    text = "x" * chunks

    async def model_only() -> float:
        model = ScriptedModel([text], chunk_size=1)
        start = clock()
        async for _ in model.stream([Msg.user("go")], [], ModelOptions()):
            pass
        return chunks / (clock() - start)

    async def pipeline(hooks: int) -> float:
        agent = ReActAgent(
            "bench", "", ScriptedModel([text], chunk_size=1), hooks=noop_hooks(hooks)
        )
        seen = 0
        done = asyncio.get_running_loop().create_future()

        def on_next(event: Any) -> None:
            nonlocal seen
            if type(event) is ReasoningChunkEvent:
                seen += 1

        start = clock()
        agent.stream("go").subscribe(on_next, done.set_exception, lambda: done.set_result(None))
        await done
        elapsed = clock() - start
        assert seen == chunks, seen
        return chunks / elapsed

    samples: dict[str, list[float]] = {"model": [], "0": [], "5": []}
    for _ in range(rounds):
        gc.collect()
        samples["model"].append(await model_only())
        samples["0"].append(await pipeline(0))
        samples["5"].append(await pipeline(5))
    return {k: statistics.median(v) for k, v in samples.items()}


def report(results: dict[str, Any]) -> str:
    step = results["per_step_us"]
    chunk = results["chunks_per_s"]
    lines = [
        f"rxagent overhead benchmark: Python {platform.python_version()}, {platform.machine()}",
        "",
        f"Per step (median µs, {results['steps']} steps per run, tool call every step):",
        f"  raw loop (floor)       {step['raw']:8.1f}",
    ]
    for n in ("0", "5", "20"):
        overhead = step[n] - step["raw"]
        lines.append(
            f"  rxagent, {n:>2} hooks      {step[n]:8.1f}   overhead {overhead:7.1f}"
            f"   x{step[n] / step['raw']:.2f} raw"
        )
    lines += [
        "",
        "ReasoningChunk throughput (median chunks/s, to a stream() subscriber):",
        f"  model stream alone     {chunk['model']:10.0f}",
        f"  rxagent, no hooks      {chunk['0']:10.0f}   x{chunk['0'] / chunk['model']:.3f}",
        f"  rxagent, 5 hooks       {chunk['5']:10.0f}   x{chunk['5'] / chunk['model']:.3f}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=40, help="runs per round per variant")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="a smoke run with tiny counts")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.rounds, args.chunks = 3, 1, 500
    results = asyncio.run(measure(args))
    print(report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "steps": args.steps,
        "per_step_us": await per_step(args.steps, args.runs, args.rounds),
        "chunks_per_s": await chunk_throughput(args.chunks, args.rounds),
    }


if __name__ == "__main__":
    sys.exit(main())
