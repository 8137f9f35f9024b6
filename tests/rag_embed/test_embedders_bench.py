"""bench/embedders.py still runs (a smoke run: it asserts the vector check, never a speed)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from service_helpers import require_minilm  # type: ignore[import-not-found]

require_minilm()

BENCH = Path(__file__).resolve().parents[2] / "bench" / "embedders.py"


def test_embedders_benchmark_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    spec = importlib.util.spec_from_file_location("bench_embedders", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_embedders"] = module
    spec.loader.exec_module(module)
    out = tmp_path / "embedders.json"
    assert module.main(["--quick", "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["check"]["ok"]
    assert results["check"]["paraphrase"] > results["check"]["unrelated"] + 0.5
    assert set(results["local"]) == {
        f"{kind} batch={size}" for kind in ("sentences", "chunks") for size in (8, 32, 64)
    } | {"sentences batch=32 threads=2", "chunks batch=32 threads=2"}
    assert all(rate["texts_per_s"] > 0 for rate in results["local"].values())
    assert all(rate["texts_per_cpu_s"] > 0 for rate in results["local"].values())
    assert "texts/s" in capsys.readouterr().out
