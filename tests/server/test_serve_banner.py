"""`rxagent serve` says what it serves, `GET /` links the routes, Ctrl-C says what it saved."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp
import pytest
from server_helpers import serving, sse_until  # type: ignore[import-not-found]

from rxagent import ReActAgent
from rxagent.cli import main
from rxagent.server import create_app
from rxagent.testing import ScriptedModel

KEY = "rk-banner-0123456789abcdef"

APP = '''
import asyncio
from rxagent import Msg, ReActAgent, tool
from rxagent.testing import FunctionModel, tool_call


@tool
async def slow() -> str:
    """Run until the run is interrupted."""
    await asyncio.Event().wait()
    return "finally"


def respond(messages, tools, options):
    return tool_call("slow") if messages[-1].role == "user" else "done"


agents = [ReActAgent("helper", "", FunctionModel(respond), tools=[slow])]
'''


def test_serve_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]):
    assert main(["serve", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 127.0.0.1" in text
    assert "(default: 8000)" in text
    assert "(default: $RXAGENT_STORE, else sqlite:///.rxagent/sessions.db)" in text


async def _read_banner(stdout: asyncio.StreamReader) -> list[str]:
    lines: list[str] = []
    while not lines or not lines[-1].startswith("  stop:"):
        line = await stdout.readline()
        assert line, f"the server stopped before its banner ended: {lines}"
        lines.append(line.decode().rstrip("\n"))
    return lines


async def test_rxagent_serve_prints_what_it_serves_and_what_ctrl_c_saved(tmp_path: Path):
    (tmp_path / "served_app.py").write_text(APP)
    db = tmp_path / "sessions.db"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("RXAGENT_API_KEYS", None)
    args = [
        "serve",
        "served_app:agents",
        "--port",
        "0",
        "--api-key",
        KEY,
        "--store",
        f"sqlite:///{db}",
    ]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "rxagent.cli", *args,
        stdout=asyncio.subprocess.PIPE, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        banner = await _read_banner(process.stdout)
        url = banner[0].rsplit(" ", 1)[1]
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{url}/") as page:  # no token needed
                assert page.status == 200
                assert page.content_type == "text/html"
                html = await page.text()
            headers = {"Authorization": f"Bearer {KEY}"}
            body = {"input": "go", "session_id": "s1"}
            async with http.post(
                f"{url}/v1/agents/helper/runs:stream", json=body, headers=headers
            ) as stream:
                await sse_until(stream, "pre_acting")
                process.send_signal(signal.SIGINT)
                await sse_until(stream, "post_call")
        tail = (await process.stdout.read()).decode()
        assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    text = "\n".join(banner)
    assert banner[0].startswith("rxagent server listening on http://127.0.0.1:")
    assert "  agents: helper" in text
    assert "  auth: on (1 API key;" in text
    assert f"  store: SQLiteStore('{db}')" in text
    assert f"  metrics: {url}/metrics (bearer)" in text
    assert f"POST {url}/v1/chat/completions" in text
    assert KEY not in text
    assert "rxagent server stopped: 1 run was interrupted and saved" in tail
    for link in ("/openapi.json", "/healthz", "/metrics"):
        assert f'href="{link}"' in html
    for route in ("/v1/agents/{name}/runs", "/v1/chat/completions", "/v1/sessions/{id}"):
        assert route in html
    assert "<script" not in html
    assert "helper" not in html  # the page names no agent, key or store
    assert KEY not in html


async def test_the_page_is_in_the_openapi_document_and_says_when_auth_is_off():
    agent = ReActAgent("bot", "", ScriptedModel([]))
    async with serving(create_app(agent)) as client:
        document = await (await client.get("/openapi.json")).json()
        page = await (await client.get("/")).text()
    home = document["paths"]["/"]["get"]
    assert home["security"] == []
    assert "text/html" in home["responses"]["200"]["content"]
    assert "Auth is off" in page
    runs = document["paths"]["/v1/agents/{name}/runs"]["post"]["responses"]
    assert {"400", "415"} <= set(runs)


def test_the_stop_line_counts_runs_that_did_not_finish_saving():
    from rxagent.server import SERVER_KEY
    from rxagent.server._banner import describe, stopped

    app = create_app(ReActAgent("bot", "", ScriptedModel([])))
    ctx = app[SERVER_KEY]
    assert stopped(ctx) == "rxagent server stopped: no run was in progress\n"
    ctx.interrupted_at_shutdown, ctx.unfinished_at_shutdown = 3, 1
    assert stopped(ctx).startswith("rxagent server stopped: 3 runs interrupted; 1 did not finish")
    assert "auth: off" in describe(app, "http://127.0.0.1:1")
    from aiohttp import web

    assert describe(web.Application(), "http://127.0.0.1:1") == ""
