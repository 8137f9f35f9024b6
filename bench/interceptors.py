"""What interceptors cost: per-step time with none, with pass-through ones, and with the built-ins.

Run: `python bench/interceptors.py` (about half a minute; `--quick` for a smoke run).

Each variant runs the same 20-step script (a tool call every step) through `ReActAgent.call()`
with a zero-latency `ScriptedModel`, in interleaved rounds, timed in process CPU time:

- **none**: no interceptors (the plain calls: the engine's hot path);
- **1 pass-through**: one model and one tool interceptor that only `await call_next(call)`;
- **5 pass-through**: five of each;
- **built-ins**: `UsageLimits` (no limit reached) and `CircuitBreaker` (closed).

The difference to "none" is the price of the onion per step (one model call and one tool call).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rxagent import ReActAgent, tool
from rxagent.interceptors import CircuitBreaker, UsageLimits, around_model_call, around_tool_call
from rxagent.testing import ScriptedModel, tool_call

clock = time.process_time


@tool
async def lookup(key: int) -> int:
    """Return the key.

    Args:
        key: A number.
    """
    return key


def passthrough(count: int) -> list[Any]:
    made: list[Any] = []
    for i in range(count):

        async def wrap(call: Any, call_next: Any) -> Any:
            return await call_next(call)

        made.append(around_model_call(wrap, priority=i, name=f"m{i}"))
        made.append(around_tool_call(wrap, priority=i, name=f"t{i}"))
    return made


VARIANTS: dict[str, Any] = {
    "none": list,
    "1 pass-through": lambda: passthrough(1),
    "5 pass-through": lambda: passthrough(5),
    "built-ins": lambda: [UsageLimits(max_requests=10_000), CircuitBreaker()],
}


async def per_step(steps: int, runs: int, rounds: int) -> dict[str, float]:
    """Median µs per step of each variant, interleaved."""
    script = [tool_call("lookup", key=i) for i in range(steps - 1)] + ["done"]
    models = {name: ScriptedModel(script, chunk_size=1000) for name in VARIANTS}
    agents = {
        name: ReActAgent(
            "bench", "sys", models[name], tools=[lookup], interceptors=make(), max_iters=1000
        )
        for name, make in VARIANTS.items()
    }

    async def one(name: str, i: int) -> float:
        models[name].reset()
        start = clock()
        result = await agents[name].call("go", session_id=f"s{i}")
        elapsed = clock() - start
        assert result.ok, result.error
        return elapsed

    names = list(VARIANTS)
    for name in names:  # warm up
        await one(name, -1)
    samples: dict[str, list[float]] = {n: [] for n in names}
    order = random.Random(7)
    for r in range(rounds):
        order.shuffle(names)
        for name in names:
            for i in range(runs):
                samples[name].append(await one(name, r * runs + i))
    return {n: statistics.median(s) / steps * 1e6 for n, s in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: few samples")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    steps, runs, rounds = (5, 2, 2) if args.quick else (20, 10, 15)
    results = asyncio.run(per_step(steps, runs, rounds))
    base = results["none"]
    print(f"rxagent interceptors benchmark: Python {platform.python_version()}")
    print(f"Per step (median µs, {steps} steps per run, a model and a tool call per step):")
    for name, value in results.items():
        print(f"  {name:<16} {value:8.1f}   {value - base:+8.1f} vs none")
    if args.json:
        args.json.write_text(json.dumps({"per_step_us": results, "steps": steps}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
