"""What tracing costs a run: the `Tracing` hook's time per run, step and span.

Run: `python bench/tracing.py` (a few seconds; `--quick` for a smoke run, `--json FILE` for the
results).

One run is three steps under a `ScriptedModel` (two tool steps with two parallel calls each, then
the answer): 11 spans (one run, three steps, three model calls, four tool calls). The same runs
are timed in three variants, interleaved round by round:

- **untraced**: no tracing hook;
- **API only**: `Tracing()` without an SDK (the OpenTelemetry API's no-op tracer: what a library
  user who has not configured OpenTelemetry pays);
- **SDK**: `Tracing(provider)` with the SDK's `TracerProvider` and a span processor that drops
  each ended span (what recording spans costs, without an exporter's I/O).

The figure is the median, over rounds, of the CPU time of one run (`time.process_time` over a
batch of runs, divided by the batch: CPU time, because the event loop does all the work on one
thread and CPU time is far less disturbed than wall time by other processes on the machine;
garbage collection on). The overhead per run and per span is the difference from the untraced
median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

from rxagent import ReActAgent, tool
from rxagent.telemetry import Tracing
from rxagent.testing import ScriptedModel, Turn, tool_call

SPANS_PER_RUN = 11


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


class Drop(SpanProcessor):
    """Receives every ended span and keeps nothing."""

    def on_end(self, span: ReadableSpan) -> None:
        del span


def script() -> list[Turn]:
    return [
        [tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)],
        [tool_call("add", a=5, b=6), tool_call("add", a=7, b=8)],
        "The sums are 3, 7, 11 and 15.",
    ]


def agent_for(variant: str, runs: int) -> ReActAgent:
    hooks: list[object] = []
    if variant == "API only":
        hooks.append(Tracing())
    elif variant == "SDK":
        provider = TracerProvider()
        provider.add_span_processor(Drop())
        hooks.append(Tracing(provider))
    model = ScriptedModel(script() * runs)
    return ReActAgent("bench", "", model, tools=[add], hooks=hooks)


async def time_runs(agent: ReActAgent, runs: int) -> float:
    """CPU time of one run in microseconds, over a batch of `runs` (each on a new session)."""
    start = time.process_time()
    for i in range(runs):
        result = await agent.call("sums?", session_id=f"s{i}")
        assert result.ok, result.error
        assert result.steps == 3
    return (time.process_time() - start) * 1e6 / runs


async def measure(rounds: int, runs: int) -> dict[str, float]:
    variants = ("untraced", "API only", "SDK")
    samples: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(rounds):
        for variant in variants:  # interleaved: drift hits every variant alike
            agent = agent_for(variant, runs)
            samples[variant].append(await time_runs(agent, runs))
    return {v: statistics.median(samples[v]) for v in variants}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    rounds, runs = (2, 5) if args.quick else (15, 100)
    medians = asyncio.run(measure(rounds, runs))
    base = medians["untraced"]
    print(f"{'variant':<10} {'µs/run':>9} {'overhead µs/run':>16} {'µs/span':>8}")
    results = {}
    for variant, median in medians.items():
        extra = median - base
        per_span = extra / SPANS_PER_RUN
        print(f"{variant:<10} {median:9.0f} {extra:16.0f} {per_span:8.1f}")
        results[variant] = {"us_per_run": median, "overhead_us": extra, "us_per_span": per_span}
    if args.json is not None:
        settings = {"rounds": rounds, "runs": runs, "spans_per_run": SPANS_PER_RUN}
        args.json.write_text(json.dumps({"settings": settings, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
