"""What the guard pipeline adds to a run when every stage passes.

Run: `python bench/guard_pipeline.py` (about half a minute; `--quick` for a smoke run, `--json
FILE` for the results).

The same agent answers the same question with a scripted model (no network), with and without
guards, the configurations taking turns in one process so that the machine's load touches all
alike:

- **answer, default pipeline** against **answer, no guards**: one model call;
  `guards=default_guards(rate=...)` is `RateLimit` (in process), `InputValidation`,
  `InjectionDetection`, `PIIRedaction` and `SystemPromptLeak`;
- **tool call, every stage** against **tool call, no guards**: a tool call, then the answer;
  the default pipeline plus `Classification` (keywords), `Permission`, and
  `InjectionDetection(scan_tool_results=True)` on the tool's result.

The figure per configuration is the median time of one run (`agent.call`); the added cost is
the difference to its unguarded twin, in microseconds and as a ratio. The question and the reply
are each about 600 characters of ordinary prose, so every stage has text to read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rxagent import ReActAgent, tool
from rxagent.guards import (
    Classification,
    InjectionDetection,
    Permission,
    default_guards,
)
from rxagent.testing import ScriptedModel, tool_call

QUESTION = (
    "Our team is planning the quarterly review. Could you summarise the budget discussion, the "
    "hiring plan and the roadmap for the next release in a few sentences? The launch moved by "
    "two weeks so that the documentation can catch up with the new features, and we agreed to "
    "run a beta with ten customers first. Please keep it short and friendly, and mention the "
    "open questions about the support rota and the conference budget if there is room. "
) * 2
REPLY = (
    "The review covered three topics. The budget stays flat, with a small increase for the "
    "conference. Hiring adds two engineers and one writer this quarter. The release moves by "
    "two weeks so the documentation can catch up, and a beta with ten customers comes first. "
    "Open questions: who covers the support rota during the launch, and whether the "
    "conference budget includes travel. "
) * 2
SYSTEM = "You are the planning assistant of a small software team. Answer briefly and kindly."
RATE = "1000000/second"  # never reached here: the stage's own work is what is timed


@tool
def calendar(month: str) -> str:
    """The team's calendar for a month.

    Args:
        month: The month.
    """
    return f"{month}: review on the 12th, beta starts on the 20th, launch on the 3rd."


def build(config: str) -> tuple[ReActAgent, list[Any]]:
    """The agent of one configuration, and the script of one run."""
    guards: list[Any] | None = None
    if config == "answer, default pipeline":
        guards = default_guards(rate=RATE)
    elif config == "tool call, every stage":
        guards = [
            *default_guards(rate=RATE),
            Classification(deny={"weapons": ["gun", "rifle", "explosive"]}),
            Permission({"*": ["calendar"]}),
            InjectionDetection(scan_tool_results=True, action="flag"),
        ]
    if config.startswith("answer"):
        return ReActAgent("bench", SYSTEM, ScriptedModel([]), guards=guards), [REPLY]
    agent = ReActAgent("bench", SYSTEM, ScriptedModel([]), tools=[calendar], guards=guards)
    return agent, [tool_call("calendar", month="May"), REPLY]


PAIRS = {
    "answer, default pipeline": "answer, no guards",
    "tool call, every stage": "tool call, no guards",
}
"""Each guarded configuration, and the unguarded one it is compared with."""
CONFIGS = (*PAIRS.values(), *PAIRS)


async def time_runs(rounds: int, runs: int) -> dict[str, float]:
    """The median microseconds of one run per configuration (the configurations take turns)."""
    samples: dict[str, list[float]] = {c: [] for c in CONFIGS}
    agents = {c: build(c) for c in CONFIGS}
    for config, (agent, script) in agents.items():  # warm up, and check every run passes
        agent.model = ScriptedModel(script)
        result = await agent.call(QUESTION, session_id="warm-up")
        if not result.ok or result.text != REPLY:
            raise SystemExit(f"{config}: the run did not pass its guards: {result.error}")
    for _ in range(rounds):
        for config, (agent, script) in agents.items():
            agent.model = ScriptedModel(script * runs)
            start = time.perf_counter()
            for i in range(runs):
                await agent.call(QUESTION, session_id=f"s{i}")
            samples[config].append((time.perf_counter() - start) / runs * 1e6)
    return {c: statistics.median(s) for c, s in samples.items()}


def main(argv: list[str] | None = None) -> int:
    """Time the three configurations and print the added cost of the guards."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (few runs)")
    parser.add_argument("--json", metavar="FILE", help="also write the results to this file")
    args = parser.parse_args(argv)
    rounds, runs = (2, 3) if args.quick else (9, 200)
    medians = asyncio.run(time_runs(rounds, runs))
    results: dict[str, dict[str, float]] = {}
    for guarded, plain in PAIRS.items():
        micros, base = medians[guarded], medians[plain]
        added = micros - base
        results[guarded] = {
            "us_per_run": round(micros, 1),
            "unguarded_us_per_run": round(base, 1),
            "added_us": round(added, 1),
            "ratio": round(micros / base, 3),
        }
        print(f"{plain:<26} {base:9.1f} µs per run")
        print(f"{guarded:<26} {micros:9.1f} µs per run   {added:+8.1f} µs   x{micros / base:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
