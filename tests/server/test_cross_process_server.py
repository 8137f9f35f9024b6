"""Two server processes sharing a store: an interrupt sent to A stops a run in B."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from server_helpers import server_process, sse_until  # type: ignore[import-not-found]
from service_helpers import (  # type: ignore[import-not-found]
    drop_pg_tables,
    unique_table_prefix,
)

from rxagent import AgentResult
from rxagent.state import PostgresStore, SQLiteStore


@pytest.mark.parametrize("kind", ["postgres", "sqlite"])
async def test_an_interrupt_sent_to_one_server_stops_a_run_in_another(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
):
    prefix = unique_table_prefix()
    store: PostgresStore | SQLiteStore
    where: tuple[str, ...]
    if kind == "postgres":
        postgres_dsn = request.getfixturevalue("postgres_dsn")
        where, store = (postgres_dsn, prefix), PostgresStore(postgres_dsn, table_prefix=prefix)
    else:
        path = tmp_path / "shared.db"
        where, store = (f"sqlite:{path}",), SQLiteStore(path)
    try:
        async with (
            server_process(*where) as (proc_a, url_a),
            server_process(*where) as (proc_b, url_b),
            aiohttp.ClientSession() as http,
        ):
            body = {"input": "slow", "session_id": "s1"}
            async with http.post(f"{url_b}/v1/agents/bot/runs:stream", json=body) as stream:
                await sse_until(stream, "pre_acting")
                # the session runs in B; a second run of it in A is refused
                async with http.post(f"{url_a}/v1/agents/bot/runs", json=body) as busy:
                    assert busy.status == 409
                    assert (await busy.json())["error"]["code"] == "session_busy"
                info_url = f"{url_a}/v1/sessions/s1/interrupt"
                async with http.post(info_url, json={"reason": "stopped from A"}) as response:
                    assert response.status == 202
                    assert await response.json() == {"interrupted": True, "where": "remote"}
                frames = await sse_until(stream, "post_call")
            async with http.get(f"{url_a}/v1/sessions/s1") as shown:
                info = await shown.json()
            for process in (proc_a, proc_b):
                process.send_signal(signal.SIGTERM)
                assert await process.wait() == 0
        result = AgentResult[Any].model_validate(frames[-1][1]["result"])
        assert result.interrupted
        assert result.text == "stopped from A"
        assert info["running"] is False
        try:
            stored = await store.load("bot", "s1")
        finally:
            await store.aclose()
        assert stored is not None
        assert [m.role for m in stored.state.memory] == ["user", "assistant", "tool"]
    finally:
        if kind == "postgres":
            await drop_pg_tables(where[0], prefix)
