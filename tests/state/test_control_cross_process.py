"""Two OS processes: an interrupt published in this one stops a run in another.

Process B (`control_peer.py`) runs an agent whose model never answers, subscribed to the
channel with `serve_control`; this process (A) publishes the interrupt once B says its run has
started, and B's run must end interrupted.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import pytest

from rxagent.errors import ErrorCode
from rxagent.result import AgentResult
from rxagent.state import ControlMessage, PostgresControl, RedisControl, SQLiteControl

PEER = Path(__file__).with_name("control_peer.py")
ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 30.0  # a hang guard (process start-up included), never a speed check


@pytest.mark.parametrize("backend", ["postgres", "redis", "sqlite"])
async def test_an_interrupt_published_here_stops_a_run_in_another_process(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    channel: PostgresControl | RedisControl | SQLiteControl
    if backend == "postgres":
        address = request.getfixturevalue("postgres_dsn")
        name = f"rxt_xp_{uuid.uuid4().hex[:12]}"
        channel = PostgresControl(address, channel=name)
    elif backend == "sqlite":
        address = name = str(tmp_path / "shared.db")
        channel = SQLiteControl(address)
    else:
        address = request.getfixturevalue("redis_url")
        name = f"rxagent-test:xp:{uuid.uuid4().hex[:12]}"
        channel = RedisControl(address, channel=name)
    session_id = f"s-{uuid.uuid4().hex[:8]}"

    peer = await asyncio.create_subprocess_exec(
        sys.executable,
        str(PEER),
        backend,
        address,
        name,
        session_id,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert peer.stdout is not None
        async with asyncio.timeout(WAIT_S):
            started = await peer.stdout.readline()
        assert started == b"STARTED\n", started
        async with channel:
            await channel.publish(
                ControlMessage(agent="peer", session_id=session_id, reason="stopped by A")
            )
        async with asyncio.timeout(WAIT_S):
            out, err = await peer.communicate()
    finally:
        if peer.returncode is None:
            peer.kill()
            await peer.communicate()
    assert peer.returncode == 0, err.decode()
    (line,) = [line for line in out.decode().splitlines() if line.startswith("RESULT ")]
    result = AgentResult[object].model_validate_json(line.removeprefix("RESULT "))
    assert result.interrupted
    assert not result.ok
    assert result.stop_reason == "interrupted"
    assert result.error is not None
    assert result.error.code == ErrorCode.INTERRUPTED
    assert result.text == "stopped by A"
    assert result.session_id == session_id
