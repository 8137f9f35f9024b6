"""What a supervisor with two workers costs against calling the workers' runs by hand.

Run: `python bench/multiagent.py` (about half a minute; `--quick` for a smoke run, `--json FILE`
for the results).

One turn (scripted models, no network) is played three ways, the configurations taking turns
in one process so that the machine's load touches all alike:

- **supervisor**: `Supervisor(workers=[a, b])`; its model calls both workers in one response,
  so they run at once as nested runs whose events are forwarded into its stream, then it
  answers;
- **hand-written tools**: a `ReActAgent` with two plain tools that each `await worker.call()`
  (what one writes without `rxagent.multiagent`: the workers' events are lost);
- **runs by hand**: the two workers' `call()`s gathered, then the lead's answer, with no tool
  calls at all (the floor: three runs and three model calls, where the others make four).

The figure per configuration is the median time of one whole turn; the ratios say what the
supervisor costs over the other two.
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
from rxagent.multiagent import Supervisor
from rxagent.testing import ScriptedModel, tool_call

BATCH = [tool_call("alpha", input="part one"), tool_call("beta", input="part two")]
ANSWER = "Both parts are done."


def workers(runs: int) -> tuple[ReActAgent, ReActAgent]:
    """The two workers, each scripted for `runs` answers."""
    alpha = ReActAgent("alpha", "You do part one.", ScriptedModel(["one done"] * runs))
    beta = ReActAgent("beta", "You do part two.", ScriptedModel(["two done"] * runs))
    return alpha, beta


def supervisor(runs: int) -> Any:
    """One supervisor turn per call."""
    lead = Supervisor("lead", model=ScriptedModel([BATCH, ANSWER] * runs), workers=workers(runs))
    return lambda session: lead.call("Do both parts.", session_id=session)


def hand_written_tools(runs: int) -> Any:
    """The lead's tools call the workers themselves."""
    alpha, beta = workers(runs)

    @tool(name="alpha")
    async def ask_alpha(input: str) -> str:
        """Ask alpha.

        Args:
            input: The request.
        """
        return (await alpha.call(input, session_id=f"{time.perf_counter_ns()}")).text

    @tool(name="beta")
    async def ask_beta(input: str) -> str:
        """Ask beta.

        Args:
            input: The request.
        """
        return (await beta.call(input, session_id=f"{time.perf_counter_ns()}")).text

    lead = ReActAgent(
        "lead", "", ScriptedModel([BATCH, ANSWER] * runs), tools=[ask_alpha, ask_beta]
    )
    return lambda session: lead.call("Do both parts.", session_id=session)


def runs_by_hand(runs: int) -> Any:
    """The three runs, one after the other, with no tool calls."""
    alpha, beta = workers(runs)
    lead = ReActAgent("lead", "", ScriptedModel([ANSWER] * runs))

    async def turn(session: str) -> Any:
        await asyncio.gather(
            alpha.call("part one", session_id=session), beta.call("part two", session_id=session)
        )
        return await lead.call("Do both parts.", session_id=session)

    return turn


CONFIGS = {
    "supervisor": supervisor,
    "hand-written tools": hand_written_tools,
    "runs by hand": runs_by_hand,
}


async def time_turns(rounds: int, runs: int) -> dict[str, float]:
    """The median microseconds of one turn per configuration (the configurations take turns)."""
    samples: dict[str, list[float]] = {c: [] for c in CONFIGS}
    for config, make in CONFIGS.items():  # warm up, and check every turn answers
        result = await make(1)("warm-up")
        if not result.ok or result.text != ANSWER:
            raise SystemExit(f"{config}: the turn did not answer: {result.error}")
    for _ in range(rounds):
        for config, make in CONFIGS.items():
            turn = make(runs)
            start = time.perf_counter()
            for i in range(runs):
                await turn(f"s{i}")
            samples[config].append((time.perf_counter() - start) / runs * 1e6)
    return {c: statistics.median(s) for c, s in samples.items()}


def main(argv: list[str] | None = None) -> int:
    """Time the three configurations and print what the supervisor costs."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (few turns)")
    parser.add_argument("--json", metavar="FILE", help="also write the results to this file")
    args = parser.parse_args(argv)
    rounds, runs = (2, 3) if args.quick else (7, 300)
    medians = asyncio.run(time_turns(rounds, runs))
    lead = medians["supervisor"]
    results: dict[str, Any] = {"us_per_turn": {c: round(m, 1) for c, m in medians.items()}}
    for config, micros in medians.items():
        print(f"{config:<20} {micros:9.1f} µs per turn   supervisor x{lead / micros:.2f}")
    results["supervisor_ratio"] = {
        c: round(lead / m, 3) for c, m in medians.items() if c != "supervisor"
    }
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
