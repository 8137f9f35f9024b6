"""Approval across processes: park in one, approve in another, from the SQLite store.

Each step is a new Python process running `approval_restart_app.py` with a new agent object of
the same name on the same database file. The tool appends a line to a log file per real run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

APP = Path(__file__).with_name("approval_restart_app.py")


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "sessions.db", tmp_path / "tool.log"


def step(files: tuple[Path, Path], *args: str, exit_code: int = 0) -> dict[str, Any]:
    db, log = files
    # a process that dies keeps its session lease until the lease's TTL: keep it short here
    env = {**os.environ, "APPROVAL_TEST_LEASE_TTL": "0.3"}
    done = subprocess.run(
        [sys.executable, str(APP), str(db), str(log), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert done.returncode == exit_code, done.stderr
    return json.loads(done.stdout) if exit_code == 0 else {}


def lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_park_restart_approve_runs_the_tool_exactly_once(files: tuple[Path, Path]) -> None:
    parked = step(files, "park")
    assert parked["ok"]
    assert parked["stop_reason"] == "approval_pending"
    assert parked["memory"] == [["user", "write hello"]]
    assert lines(files[1]) == []
    (approval_id,) = parked["pending_approvals"]
    (key,) = parked["keys"]
    assert key.startswith(parked["run_id"])

    resumed = step(files, "approve", approval_id)  # another process, another agent object
    assert resumed["ok"]
    assert resumed["text"] == "Wrote it."
    assert resumed["memory"] == [
        ["user", "write hello"],
        ["assistant", ""],
        ["tool", "appended 'hello'"],
        ["assistant", "Wrote it."],
    ]
    assert lines(files[1]) == [f"hello {key}"]

    again = step(files, "approve", approval_id)
    assert again["error"] == "ApprovalError"
    assert lines(files[1]) == [f"hello {key}"]  # nothing ran twice


def test_a_process_dying_inside_the_approved_tool_never_runs_it_twice(
    files: tuple[Path, Path],
) -> None:
    parked = step(files, "park")
    (approval_id,) = parked["pending_approvals"]
    (key,) = parked["keys"]
    step(files, "approve-and-crash", approval_id, exit_code=3)
    assert lines(files[1]) == [f"hello {key}"]

    used = step(files, "approve", approval_id)  # the decision was saved before the tool ran
    assert used["error"] == "ApprovalError"
    recovered = step(files, "continue")
    assert recovered["text"] == "Recovered."
    tool_result = recovered["memory"][2]
    assert tool_result[0] == "tool"
    assert tool_result[1].startswith("not run again")
    assert key in tool_result[1]
    assert lines(files[1]) == [f"hello {key}"]
