"""`run_server` in a real process: it serves, and SIGTERM shuts it down gracefully (exit 0)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from server_helpers import server_process, sse_until  # type: ignore[import-not-found]

from rxagent import AgentResult, ReActAgent
from rxagent.errors import ConfigurationError
from rxagent.server import create_app, run_server
from rxagent.state import SQLiteStore
from rxagent.testing import ScriptedModel


async def test_run_server_serves_and_a_sigterm_saves_the_interrupted_run(tmp_path: Path):
    db = tmp_path / "sessions.db"
    async with server_process(f"sqlite:{db}") as (process, url), aiohttp.ClientSession() as http:
        async with http.post(f"{url}/v1/agents/bot/runs", json={"input": "ping"}) as response:
            assert response.status == 200
            assert AgentResult[Any].model_validate(await response.json()).text == "pong"
        body = {"input": "slow", "session_id": "s1"}
        async with http.post(f"{url}/v1/agents/bot/runs:stream", json=body) as stream:
            await sse_until(stream, "pre_acting")
            process.send_signal(signal.SIGTERM)
            frames = await sse_until(stream, "post_call")
        assert await process.wait() == 0
    assert frames[-1][0] == "post_call"
    result = AgentResult[Any].model_validate(frames[-1][1]["result"])
    assert result.interrupted
    assert result.text == "the server is shutting down"
    store = SQLiteStore(db)
    try:
        stored = await store.load("bot", "s1")
        assert await store.lease_holder("bot", "s1") is None
    finally:
        await store.aclose()
    assert stored is not None
    roles = [m.role for m in stored.state.memory]
    assert roles == ["user", "assistant", "tool"]  # the call was paired with its interruption
    (interrupted,) = stored.state.memory[2].tool_results
    assert interrupted.is_error
    assert "interrupted" in interrupted.text


def test_run_server_takes_store_auth_and_config_only_with_agents():
    app = create_app(ReActAgent("bot", "", ScriptedModel([])))
    with pytest.raises(ConfigurationError, match="create_app"):
        run_server(app, auth=["k"])
