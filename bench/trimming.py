"""The cost of a step as the session's history grows: trimming must stay linear.

Run: `python bench/trimming.py` (about a minute; `--quick` for a smoke run,
`--plot docs/img/trimming.png` to redraw the figure in docs/performance.md; plotting needs
matplotlib, listed in bench/requirements.txt).

For each history size N (10 to 10,000 messages: user turns with a tool pair each), a session is
loaded with that history and one step runs through `ReActAgent.call()` with a `ContextWindow`:

- **fits**: the window is large, so the hook takes its fast path (count, compare, no change);
- **trims**: the window holds about 2,000 tokens, so phase 1 drops almost all of the history.

Each figure is the median CPU time of one step. Linear means time per message stays flat as N
grows; the report prints it, and the log-log slope of time against N, which is 1 for linear and
2 for quadratic growth.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rxagent import AgentState, Msg, ReActAgent, TextBlock, ToolResultBlock, ToolUseBlock
from rxagent.hooks.builtin import ContextWindow
from rxagent.testing import ScriptedModel

clock = time.process_time
SIZES = (10, 30, 100, 300, 1000, 3000, 10_000)


def history(messages: int) -> tuple[Msg, ...]:
    """A valid history of about `messages` messages: user, assistant(call), tool, assistant."""
    out: list[Msg] = []
    turn = 0
    while len(out) < messages:
        call = ToolUseBlock(id=f"call_{turn}", name="lookup", input={"key": turn})
        out += [
            Msg.user(f"question {turn}: what is stored under key {turn}?"),
            Msg.assistant([TextBlock(text="Looking it up."), call]),
            Msg.tool(ToolResultBlock(id=call.id, name="lookup", output=f"value {turn} " * 8)),
            Msg.assistant(f"Key {turn} holds value {turn}."),
        ]
        turn += 1
    return tuple(out)


async def step_time(size: int, window: int, repeats: int) -> float:
    """Median CPU seconds of one step (one model call) with `size` messages of history."""
    memory = history(size)
    model = ScriptedModel(["ok"])
    agent = ReActAgent("bench", "sys", model, hooks=[ContextWindow(context_window=window)])
    await agent.call("warm up", session_id="warm-up")  # first-call caches of this agent
    samples = []
    for i in range(repeats):
        model.reset()
        await agent.load_state_dict(AgentState(memory=memory), session_id=f"s{i}")
        start = clock()
        result = await agent.call("next question", session_id=f"s{i}")
        samples.append(clock() - start)
        assert result.ok, result.error
    return statistics.median(samples)


async def measure(sizes: tuple[int, ...], repeats: int) -> dict[str, dict[int, float]]:
    results: dict[str, dict[int, float]] = {"fits": {}, "trims": {}}
    await step_time(sizes[0], 10_000, 2)  # warm up: load the tokenizer, build schemas
    for size in sizes:
        results["fits"][size] = await step_time(size, 10_000_000, repeats)
        results["trims"][size] = await step_time(size, 2_000 + 4_096, repeats)
    return results


def slope(points: dict[int, float]) -> float:
    """Least-squares slope of log(time) against log(N) over the larger half of the sizes."""
    sizes = sorted(points)[len(points) // 2 :]
    xs = [math.log(n) for n in sizes]
    ys = [math.log(points[n]) for n in sizes]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def report(results: dict[str, dict[int, float]]) -> str:
    lines = ["Step time as history grows (median CPU time of one step):", ""]
    lines.append(
        f"{'messages':>9} | {'fits: ms':>9} {'µs/msg':>7} | {'trims: ms':>9} {'µs/msg':>7}"
    )
    for size in sorted(results["fits"]):
        fits, trims = results["fits"][size], results["trims"][size]
        lines.append(
            f"{size:>9} | {fits * 1e3:>9.2f} {fits / size * 1e6:>7.2f} |"
            f" {trims * 1e3:>9.2f} {trims / size * 1e6:>7.2f}"
        )
    lines += [
        "",
        f"log-log slope (1 = linear, 2 = quadratic): fits {slope(results['fits']):.2f},"
        f" trims {slope(results['trims']):.2f}",
    ]
    return "\n".join(lines)


def plot(results: dict[str, dict[int, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for name, label in (("fits", "fits (fast path)"), ("trims", "trims to ~2,000 tokens")):
        sizes = sorted(results[name])
        ax.loglog(sizes, [results[name][n] * 1e3 for n in sizes], marker="o", label=label)
    sizes = sorted(results["trims"])
    base = results["trims"][sizes[-1]] * 1e3 / sizes[-1]
    ax.loglog(sizes, [base * n for n in sizes], linestyle=":", color="gray", label="linear")
    ax.set_xlabel("messages in the session's history")
    ax.set_ylabel("one step (ms of CPU time)")
    ax.set_title("rxagent: step cost with ContextWindow as history grows")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a smoke run with small sizes")
    parser.add_argument("--plot", metavar="PNG", help="also draw the curves to this file")
    args = parser.parse_args(argv)
    sizes = (10, 30, 100) if args.quick else SIZES
    repeats = 2 if args.quick else args.repeats
    results: dict[str, Any] = asyncio.run(measure(sizes, repeats))
    print(report(results))
    if args.plot:
        plot(results, Path(args.plot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
