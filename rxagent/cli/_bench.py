"""`rxagent bench`: rxagent against a raw aiohttp loop, on this machine, in one command.

The measurement lives in `rxagent.testing._overhead` (shared with `bench/http_overhead.py`), the
fake OpenAI server in `rxagent.testing._bench_server`; this module runs them and prints the table
of issue 21: each figure for the raw loop and rxagent, their ratio, and the goal, met or not.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from rxagent.cli._common import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["GOALS", "Goal", "Row", "add_bench_parser", "bench_command", "build_rows", "table"]

TIMES: Final = "\N{MULTIPLICATION SIGN}"
"""The sign after a ratio in the table."""

QUICK: Final = {
    "n": 20,
    "warmup": 2,
    "block": 5,
    "rounds": 1,
    "conc_m": 20,
    "conc_batches": 1,
    "import_reps": 1,
}
"""The settings `--quick` uses: a smoke run (its figures mean little)."""


@dataclass(frozen=True)
class Goal:
    """A figure's goal: a bound on rxagent's ratio to the raw loop, or on rxagent's own value.

    It is judged on the value as the table shows it (a ratio to 2 decimals, a value to 1), so
    that a row never reads `1.30x` and fails a goal of `≤ 1.3x`.
    """

    kind: Literal["ratio_at_most", "ratio_at_least", "value_at_most"]
    bound: float
    unit: str = ""

    def text(self) -> str:
        """The goal as the table shows it: `≤ 1.3x`, `≥ 0.8x`, `≤ 60 MB` (with `TIMES`, not x)."""
        sign = "≥" if self.kind == "ratio_at_least" else "≤"
        if self.kind == "value_at_most":
            return f"{sign} {self.bound:g} {self.unit}".rstrip()
        return f"{sign} {self.bound:g}{TIMES}"

    def met(self, ratio: float, value: float) -> bool:
        """Whether rxagent's `ratio` (to the raw loop) and its own `value` meet the goal."""
        if self.kind == "value_at_most":
            return float(format_value(value)) <= self.bound
        shown = float(format_ratio(ratio).removesuffix(TIMES))
        return shown >= self.bound if self.kind == "ratio_at_least" else shown <= self.bound


GOALS: Final = {
    "nonstream": Goal("ratio_at_most", 1.3),
    "stream": Goal("ratio_at_most", 1.3),
    "cpu": Goal("ratio_at_most", 1.3),
    "concurrency": Goal("ratio_at_least", 0.8),
    "rss": Goal("value_at_most", 60, "MB"),
    "import": Goal("ratio_at_most", 1.3),
}
"""Issue 21's goals, one per figure."""


def format_ratio(ratio: float) -> str:
    """A ratio as the table shows it: two decimals and `TIMES` (`2.456` → `2.46` + `TIMES`).

    Example:
        ```python
        from rxagent.cli._bench import TIMES, format_ratio

        assert format_ratio(2.456) == "2.46" + TIMES and format_ratio(1.0) == "1.00" + TIMES
        ```
    """
    return f"{ratio:.2f}{TIMES}"


def format_value(value: float) -> str:
    """A value as the table shows it: one decimal (`58.34` → `58.3`)."""
    return f"{value:.1f}"


@dataclass(frozen=True)
class Row:
    """One figure: the raw loop's value, rxagent's, their ratio, its range, and the goal.

    `ratios` are the ratios of every round (or of every pair of processes); they give the range.
    """

    key: str
    figure: str
    unit: str
    raw: float
    rxagent: float
    ratios: tuple[float, ...]
    goal: Goal

    @property
    def ratio(self) -> float:
        """The ratio: rxagent's value over the raw loop's."""
        return self.rxagent / self.raw

    @property
    def met(self) -> bool:
        """Whether the goal is met."""
        return self.goal.met(self.ratio, self.rxagent)

    def cells(self) -> list[str]:
        """The row's cells: figure, raw, rxagent, ratio [min..max], goal, met."""
        ratio = format_ratio(self.ratio)
        if len(self.ratios) > 1:
            low, high = format_ratio(min(self.ratios)), format_ratio(max(self.ratios))
            ratio += f" [{low.removesuffix(TIMES)}..{high}]"
        return [
            self.figure,
            f"{format_value(self.raw)} {self.unit}",
            f"{format_value(self.rxagent)} {self.unit}",
            ratio,
            self.goal.text(),
            "pass" if self.met else "FAIL",
        ]

    def as_json(self) -> dict[str, Any]:
        """The row as JSON."""
        return {
            "figure": self.figure,
            "unit": self.unit,
            "raw": self.raw,
            "rxagent": self.rxagent,
            "ratio": self.ratio,
            "ratios": list(self.ratios),
            "goal": self.goal.text(),
            "met": self.met,
        }


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def build_rows(results: dict[str, Any]) -> list[Row]:
    """The table's rows from the results of `measure`.

    A figure measured in rounds shows the round whose ratio is the median (the lower middle one
    of an even number): its two values and their ratio, with the range of every round's ratio.
    Import times show the median of each variant's processes.
    """
    from rxagent.testing._overhead import RAW, RXAGENT

    rounds = results["rounds"]
    settings = results["settings"]

    def paired(
        key: str, figure: str, unit: str, phase: str, value: str, ratio: str = "ratio"
    ) -> Row:
        per = [r[phase]["variants"] for r in rounds]
        ratios = tuple(v[RXAGENT][ratio] for v in per)
        middle = per[ratios.index(statistics.median_low(ratios))]
        raw, rx = middle[RAW][value], middle[RXAGENT][value]
        return Row(key, figure, unit, raw, rx, ratios, GOALS[key])

    hooks = settings["hooks"]
    conc = f"{settings['conc_m']} runs, {settings['latency_ms']:g} ms per model call"
    rows = [
        paired(
            "nonstream",
            f"per run, non-streaming, {hooks} no-op hooks, sync `add` tool",
            "ms",
            "nonstream",
            "run_ms_median",
        ),
        paired("stream", "per run, streaming", "ms", "stream", "run_ms_median"),
        paired(
            "cpu",
            "client CPU per model call",
            "µs",
            "nonstream",
            "cpu_step_us_median",
            "cpu_ratio",
        ),
        paired("concurrency", f"concurrent runs/s ({conc})", "runs/s", "concurrency", "runs_per_s"),
    ]
    rss = results["rss"]
    raw_mb, rx_mb = rss[RAW]["peak_rss_mb"], rss[RXAGENT]["peak_rss_mb"]
    figure = "peak RSS of a process running one variant (import + concurrency)"
    rows.append(Row("rss", figure, "MB", raw_mb, rx_mb, (rx_mb / raw_mb,), GOALS["rss"]))
    imports = results["import_ms"]
    pairs = tuple(b / a for a, b in zip(imports[RAW], imports[RXAGENT], strict=True))
    raw_ms, rx_ms = _median(imports[RAW]), _median(imports[RXAGENT])
    figure = "`import` of what a run needs"
    rows.append(Row("import", figure, "ms", raw_ms, rx_ms, pairs, GOALS["import"]))
    return rows


def table(rows: Sequence[Row]) -> list[str]:
    """The rows as a Markdown table (the ratio is rxagent over the raw loop)."""
    lines = [
        "| figure | raw aiohttp loop | rxagent | ratio | goal | |",
        "|---|---:|---:|---:|---:|---|",
    ]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return lines


def report(results: dict[str, Any]) -> list[str]:
    """The printed report: a header, the table, and the checks."""
    s, m = results["settings"], results["machine"]
    lines = [
        f"rxagent {results['versions']['rxagent']} against a raw aiohttp loop"
        f" (aiohttp {results['versions']['aiohttp']}), {m['date_utc']}, Python {m['python']},"
        f" {m['cores']} cores, load {m['loadavg'][0]:.2f}",
        f"K={s['k']} tool calls, {s['k'] + 1} model calls per run, fake OpenAI server on"
        f" 127.0.0.1; n={s['n']} runs per variant per phase, {s['rounds']} round(s); concurrency:"
        f" {s['conc_batches']} batch(es) of {s['conc_m']} runs per variant a round;"
        f" import: {s['import_reps']} processes each",
        "raw and rxagent alternate in one process; cells: the round with the median ratio,"
        " ratio: rxagent / raw [min..max over rounds]",
        "",
        *table(results["rows"]),
        "",
    ]
    failed = [name for name, ok in results["checks"].items() if not ok]
    runs = results["verified_runs"]
    if failed:
        lines.append(f"checks FAILED: {', '.join(failed)}")
    else:
        lines.append(
            f"checks: all {len(results['checks'])} passed ({runs} runs verified: final text,"
            " tool calls, server requests, hooks saw every event)"
        )
    met = sum(row.met for row in results["rows"])
    lines.append(f"goals met: {met}/{len(results['rows'])}")
    return lines


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Run every phase against a fake server of its own; return the results (rows included)."""
    from importlib.metadata import version

    from rxagent._version import __version__
    from rxagent.testing._bench_server import ServerProcess
    from rxagent.testing._overhead import (
        RAW,
        RXAGENT,
        builders_of,
        import_times,
        machine,
        measure_child,
        measure_round,
        settings_of,
    )

    rounds: list[dict[str, Any]] = []
    rss: dict[str, Any] = {}
    with ServerProcess(args.k, args.chunks) as server:
        for i in range(args.rounds):
            _progress(f"round {i + 1}/{args.rounds}: sequential runs and concurrency")
            settings = settings_of(args, seed=args.seed + i)
            builders = builders_of((RAW, RXAGENT), args.hooks)
            rounds.append(asyncio.run(measure_round(builders, server.root, settings)))
        for name in (RAW, RXAGENT):
            _progress(f"peak RSS: {name} alone in a child process")
            rss[name] = measure_child(name, server.port, settings_of(args))
    _progress(f"import time: {args.import_reps} fresh processes each")
    imports = import_times(args.import_reps, warm=not args.quick)
    checks: dict[str, bool] = {}
    for i, r in enumerate(rounds, 1):
        for phase in ("nonstream", "stream", "concurrency"):
            checks.update({f"round {i} {phase}: {k}": ok for k, ok in r[phase]["checks"].items()})
    for name, child in rss.items():
        checks.update({f"{name} child: {k}": ok for k, ok in child["checks"].items()})
    variants = 2
    per_round = variants * (2 * (args.n + args.warmup) + (args.conc_batches + 1) * args.conc_m)
    results: dict[str, Any] = {
        "machine": machine(),
        "settings": {
            **asdict(settings_of(args)),
            "rounds": args.rounds,
            "import_reps": args.import_reps,
        },
        "versions": {"rxagent": __version__, "aiohttp": version("aiohttp")},
        "rounds": rounds,
        "rss": rss,
        "import_ms": imports,
        "checks": checks,
        "verified": all(checks.values()),
        "verified_runs": per_round * args.rounds + 2 * (args.conc_batches + 1) * args.conc_m,
    }
    results["rows"] = build_rows(results)
    return results


def _in_range(low: float, high: float, cast: Callable[[str], float] = int) -> Callable[[str], Any]:
    """An argparse `type`: a number (an int, or what `cast` makes of the text) in [low, high]."""

    def parse(text: str) -> float:
        number = math.nan
        with contextlib.suppress(ValueError):
            number = cast(text)
        if low <= number <= high:
            return number
        raise argparse.ArgumentTypeError(
            f"expected a number in [{low:,.12g}, {high:,.12g}], got {text!r}"
        )

    return parse


_COUNT: Final = _in_range(1, 1_000_000)


def add_bench_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the `bench` command to the `commands` subparsers."""
    bench = commands.add_parser(
        "bench",
        parents=parents,
        help="measure rxagent against a raw aiohttp loop on this machine",
        description=(
            "Measure rxagent against a hand-written loop on a raw aiohttp session, both talking "
            "to a fake OpenAI server on 127.0.0.1 (K=3 tool calls, 4 model calls per run): time "
            "per run non-streaming and streaming, client CPU per model call, concurrent runs/s, "
            "peak RSS and import time, each with its goal. --quick: a smoke run. "
            "Exit code 1 when a run check fails (a goal not met is not a failure)."
        ),
    )
    bench.add_argument(
        "--quick", action="store_true", help="a smoke run: tiny counts, figures not meaningful"
    )
    bench.add_argument("--json", metavar="FILE", help="also write every result to FILE")
    bench.add_argument("--n", type=_COUNT, default=100, help="timed runs a variant a phase")
    bench.add_argument("--rounds", type=_COUNT, default=3, help="rounds of every phase")
    bench.add_argument("--warmup", type=_COUNT, default=10, help=argparse.SUPPRESS)
    bench.add_argument("--block", type=_COUNT, default=10, help=argparse.SUPPRESS)
    bench.add_argument("--hooks", type=int, default=5, help=argparse.SUPPRESS)
    bench.add_argument("--k", type=_COUNT, default=3, help=argparse.SUPPRESS)
    bench.add_argument("--chunks", type=_COUNT, default=20, help=argparse.SUPPRESS)
    bench.add_argument("--seed", type=int, default=7, help=argparse.SUPPRESS)
    bench.add_argument(
        "--conc-m", type=_COUNT, default=100, help="concurrent runs a batch (default 100)"
    )
    bench.add_argument(
        "--conc-batches", type=_COUNT, default=3, help="timed batches a variant a round"
    )
    bench.add_argument(
        "--latency-ms",
        type=_in_range(0, 10_000, float),
        default=50.0,
        help="server latency a model call (50)",
    )
    bench.add_argument(
        "--import-reps", type=_COUNT, default=3, help="fresh processes a variant, import time"
    )
    bench.set_defaults(handler=bench_command)


def bench_command(args: argparse.Namespace) -> int:
    """Measure, print the table (and write `--json`); return the exit code."""
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
    results = measure(args)
    print("\n".join(report(results)))
    if args.json:
        data = {**results, "rows": [row.as_json() for row in results["rows"]]}
        Path(args.json).write_text(json.dumps(data, indent=2), encoding="utf-8")
    return EXIT_OK if results["verified"] else EXIT_FAILED
