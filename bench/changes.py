"""What recording hook changes costs: per-step time with `record_changes` off and on.

Run: `python bench/changes.py` (about half a minute; `--quick` for a smoke run).

Each variant runs the same 20-step script (a tool call every step) through `ReActAgent.call()`
with a zero-latency `ScriptedModel`, in interleaved rounds, timed in process CPU time:

- **no hooks**: the engine alone;
- **5 editing hooks, off**: five hooks that change a field of every PreReasoning (the options)
  and PostActing (the result), with `record_changes=False` (the default);
- **5 editing hooks, on**: the same hooks with `record_changes=True`: each change is compared
  and its old value dumped to JSON.

"off" minus "no hooks" is what the edits cost; "on" minus "off" is the price of recording them.
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

from rxagent import PostActingEvent, PreReasoningEvent, ReActAgent, hook, tool
from rxagent.testing import ScriptedModel, tool_call

clock = time.process_time


@tool
async def lookup(key: int) -> int:
    """Return the key.

    Args:
        key: A number.
    """
    return key


def editing_hooks(count: int) -> list[Any]:
    made: list[Any] = []
    for i in range(count):

        def reseed(event: PreReasoningEvent, seed: int = i) -> PreReasoningEvent:
            return event.replace(options=event.options.model_copy(update={"seed": seed}))

        def tag(event: PostActingEvent, mark: str = f" [{i}]") -> PostActingEvent:
            output = f"{event.result.text}{mark}"
            return event.replace(result=event.result.model_copy(update={"output": output}))

        made.append(hook(PreReasoningEvent, name=f"reseed{i}")(reseed))
        made.append(hook(PostActingEvent, name=f"tag{i}")(tag))
    return made


VARIANTS: dict[str, tuple[int, bool]] = {
    "no hooks": (0, False),
    "5 editing hooks, off": (5, False),
    "5 editing hooks, on": (5, True),
}


async def per_step(steps: int, runs: int, rounds: int) -> dict[str, float]:
    """Median µs per step of each variant, interleaved."""
    script = [tool_call("lookup", key=i) for i in range(steps - 1)] + ["done"]
    models = {name: ScriptedModel(script, chunk_size=1000) for name in VARIANTS}
    agents = {
        name: ReActAgent(
            "bench",
            "sys",
            models[name],
            tools=[lookup],
            hooks=editing_hooks(count),
            max_iters=1000,
            record_changes=record,
        )
        for name, (count, record) in VARIANTS.items()
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
    base = results["no hooks"]
    print(f"rxagent record_changes benchmark: Python {platform.python_version()}")
    print(f"Per step (median µs, {steps} steps per run, 5 edits of 2 events per step):")
    for name, value in results.items():
        print(f"  {name:<22} {value:8.1f}   {value - base:+8.1f} vs no hooks")
    if args.json:
        args.json.write_text(json.dumps({"per_step_us": results, "steps": steps}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
