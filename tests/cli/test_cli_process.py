"""The installed `rxagent` console script in a real process: a run, and Ctrl-C during it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rxagent import EVENT_ADAPTER
from rxagent.testing import tool_call

_SCRIPT = Path(sys.executable).parent / "rxagent"

SLOW_TOOL = '''
import asyncio


async def slow() -> str:
    """Run until interrupted."""
    await asyncio.Event().wait()
    return "done"
'''


@pytest.fixture
def script() -> str:
    if not _SCRIPT.exists():
        pytest.skip(f"the rxagent console script is not installed next to {sys.executable}")
    return str(_SCRIPT)


def test_ctrl_c_in_a_real_process_interrupts_and_saves(
    script: str, workdir: Path, openai_server, module
) -> None:
    mod = module(SLOW_TOOL)
    openai_server([tool_call("slow"), "unreachable"])
    argv = [script, "run", "wait", "--model", "openai:m", "--tools", f"{mod}:slow", "--json"]
    argv += ["--store", "sqlite:///p.db", "--session", "p"]
    with subprocess.Popen(
        argv, cwd=workdir, env=dict(os.environ), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, encoding="utf-8",
    ) as proc:  # fmt: skip
        assert proc.stdout is not None
        assert proc.stderr is not None
        lines: list[str] = []
        try:
            for line in proc.stdout:
                lines.append(line)
                if EVENT_ADAPTER.validate_json(line).type == "pre_acting":
                    proc.send_signal(signal.SIGINT)
                    break
            lines += proc.stdout.readlines()
            code = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        stderr = proc.stderr.read()
    assert code == 130, stderr
    assert stderr == "interrupted: the state of session 'p' was saved\n"
    last = EVENT_ADAPTER.validate_json(lines[-1])
    assert last.type == "post_call"
    assert last.result.interrupted
    shown = subprocess.run(
        [script, "sessions", "show", "p", "--store", "sqlite:///p.db", "--json"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    )
    memory = json.loads(shown.stdout)["memory"]
    assert [m["role"] for m in memory][:3] == ["user", "assistant", "tool"]
    assert memory[2]["content"][0]["is_error"] is True
