"""The benchmarks still run (smoke runs; they assert no timings)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).parent.parent / "bench"


def load_bench(name: str) -> Any:
    """Import `bench/<name>.py` as the module `bench_<name>`."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"bench_{name}"] = module
    spec.loader.exec_module(module)
    return module


def test_overhead_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    module = load_bench("overhead")
    out = tmp_path / "results.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "raw loop (floor)" in text
    assert "ReasoningChunk throughput" in text
    assert out.read_text().startswith("{")


def test_trimming_benchmark_runs(capsys: pytest.CaptureFixture[str]):
    module = load_bench("trimming")
    assert module.main(["--quick"]) == 0
    text = capsys.readouterr().out
    assert "log-log slope" in text
    assert "fits" in text


def test_http_overhead_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """rxagent and the raw aiohttp loop against the fake server: the checks pass (no speed)."""
    module = load_bench("http_overhead")
    out = tmp_path / "results.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    (process,) = results["processes"]
    runs = results["settings"]["n"] * 2  # two variants, each n timed runs
    for mode in ("nonstream", "stream"):
        phase = process[mode]
        assert phase["verified"], phase["checks"]
        assert set(phase["variants"]) == {"raw-aiohttp", "rxagent"}
        assert phase["tool_calls"] == runs * 3
        assert phase["server_stats"]["requests"] == runs * 4
        assert phase["server_stats"]["stream_requests"] == (runs * 4 if mode == "stream" else 0)
        assert "overhead_step_us" in phase["variants"]["rxagent"]
    assert "| rxagent |" in capsys.readouterr().out


def test_server_load_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """Both servers in their own processes, the load client here: every check passes (no speed)."""
    module = load_bench("server_load")
    out = tmp_path / "load.json"
    assert module.main(["--quick", "--concurrency", "20", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["verified"]
    assert results["summary"]["rxagent"]["completed"] == 20
    assert results["checks"][0]["sessions_complete"] == 20
    for kind in ("rxagent", "null"):  # each server's own CPU over the round was read
        summary = results["summary"][kind]
        assert summary["cpu_per_run_min_ms"] <= summary["cpu_per_run_ms"]
        assert summary["cpu_per_run_ms"] <= summary["cpu_per_run_max_ms"]
    assert results["summary"]["rxagent"]["cpu_per_run_ms"] > 0
    assert "added latency" in capsys.readouterr().out


def test_guards_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """Every workload is timed and the attack is flagged (no speed asserted)."""
    module = load_bench("guards")
    out = tmp_path / "guards.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert set(results) == set(module.workloads())
    assert results["attack"]["flagged"]
    assert not results["benign prose"]["flagged"]
    assert "the 1,000 µs goal" in capsys.readouterr().out


def test_tool_selection_benchmark_runs(capsys: pytest.CaptureFixture[str]):
    module = load_bench("tool_selection")
    assert module.main(["--quick"]) == 0
    text = capsys.readouterr().out
    assert "KeywordSelector                      shared words  100% / 100% / 100%" in text
    assert "40 tools:" in text


def test_tracing_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    module = load_bench("tracing")
    out = tmp_path / "results.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    assert "API only" in capsys.readouterr().out
    results = json.loads(out.read_text())["results"]
    assert set(results) == {"untraced", "API only", "SDK"}


def test_interceptors_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """Every variant completes its runs (no speed asserted)."""
    module = load_bench("interceptors")
    out = tmp_path / "interceptors.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert set(results["per_step_us"]) == {"none", "1 pass-through", "5 pass-through", "built-ins"}
    assert "vs none" in capsys.readouterr().out


def test_multiagent_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """A supervisor, hand-written tools and runs by hand all answer (no speed asserted)."""
    module = load_bench("multiagent")
    out = tmp_path / "results.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "supervisor" in text
    assert "runs by hand" in text
    results = json.loads(out.read_text())
    assert set(results["supervisor_ratio"]) == {"hand-written tools", "runs by hand"}


def test_changes_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """Recording off and on both complete their runs (no speed asserted)."""
    module = load_bench("changes")
    out = tmp_path / "changes.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert set(results["per_step_us"]) == set(module.VARIANTS)
    assert "vs no hooks" in capsys.readouterr().out


def test_soak_benchmark_leaves_nothing_behind(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """A short soak: every run answers; sessions, runs, tasks and fds do not grow; RSS is flat.

    The RSS bound is loose (a short run is noisy) but well below what a leak of the messages of
    every run gave: about 7 MiB per 1,000 runs.
    """
    module = load_bench("soak")
    out = tmp_path / "soak.json"
    argv = ["--runs", "450", "--warmup", "0.34", "--samples", "9", "--json", str(out)]
    assert module.main([*argv, "--max-rss-slope-kib", "3072"]) == 0
    results = json.loads(out.read_text())
    assert results["verified"], results["checks"]
    assert sum(results["answered"].values()) == 450
    assert set(results["answered"]) == set(module.KINDS)
    assert results["held_end"] == results["held_start"]
    assert results["held_start"]["store sessions"] == 0
    bookkeeping = {k: v for k, v in results["held_end"].items() if not k.startswith("live ")}
    assert set(bookkeeping.values()) == {0}  # live objects: other tests' may be about
    assert results["slopes_per_1000_runs"]["rss_kib"] < 3072
    assert "slope per 1,000 runs after warm-up" in capsys.readouterr().out


def test_parts_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    module = load_bench("parts")
    out = tmp_path / "parts.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert set(results) >= {
        "thread hop (sync tool call)",
        "inline sync tool call (blocking=False)",
        "request building (3-call history)",
        "whole response (one tool call)",
        "streamed answer (20 chunks)",
    }
    assert all(r["rxagent_us"] > 0 and r["by_hand_us"] > 0 for r in results.values())
    assert "| thread hop (sync tool call) |" in capsys.readouterr().out


def test_sessions_memory_benchmark_is_flat(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    module = load_bench("sessions_memory")
    out = tmp_path / "memory.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    assert "flat (ratios <= 1.5, nothing left): yes" in capsys.readouterr().out
    results = json.loads(out.read_text())
    small, large = results["idle"]
    assert (small["n"], large["n"]) == (200, 2_000)
    # bytes per idle session do not grow with the number of sessions
    assert large["traced_per_session"] <= 1.5 * small["traced_per_session"]
    assert 0 < large["traced_per_session"] < 4_000
    # an idle session keeps nothing in the agent's run registry or the store's leases
    assert large["bookkeeping"] == {
        "tails": 0,
        "running": 0,
        "background": 0,
        "leases": 0,
        "states": 2_001,
    }
    few, many = results["active"]
    assert many["traced_per_run"] <= 1.5 * few["traced_per_run"]
    # what finished runs leave behind is tables that do not shrink, far less than a run
    assert many["traced_left_per_run"] < 0.1 * many["traced_per_run"]
