"""`rxagent chat --web`: a local server with the chosen agent, and the playground opened."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from rxagent.cli._web import playground_url
from rxagent.demo import DEMO_QUESTION
from rxagent.server import PLAYGROUND_CSP

_CLI = (sys.executable, "-m", "rxagent.cli")

RECORDER = """
import sys
from pathlib import Path

Path(sys.argv[1]).write_text(sys.argv[2])
"""


def test_the_deep_link_names_the_agent_and_the_session() -> None:
    assert playground_url("http://h:1", "demo") == "http://h:1/playground?agent=demo"
    assert playground_url("http://h:1", "a.b", "s/1") == (
        "http://h:1/playground?agent=a.b&session=s%2F1"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("chat", "--port", "9000"), "--port and --no-open go with --web"),
        (("chat", "--no-open"), "--port and --no-open go with --web"),
        (("chat", "--web", "--port", "70000"), "--port 70000: a port is a number from 0 to 65535"),
    ],
)
def test_web_options_are_checked(cli: Any, argv: tuple[str, ...], message: str) -> None:
    done = cli(*argv, stdin="")
    assert done.code == 2
    assert message in done.err


async def _use(page: str, base: str) -> tuple[aiohttp.ClientResponse, str, list[dict[str, Any]]]:
    async with aiohttp.ClientSession() as session:
        async with session.get(page) as response:
            html = await response.text()
        body = {"input": DEMO_QUESTION, "session_id": "web-1"}
        async with session.post(f"{base}/v1/agents/demo/runs:stream", json=body) as streamed:
            text = await streamed.text()
    frames = [
        json.loads(line.removeprefix("data: "))
        for line in text.splitlines()
        if line.startswith("data: ")
    ]
    return response, html, frames


def test_chat_web_serves_the_agent_and_opens_the_playground(workdir: Path) -> None:
    recorder = workdir / "browser.py"
    recorder.write_text(RECORDER)
    opened = workdir / "opened.txt"
    env = {**os.environ, "BROWSER": f"{sys.executable} {recorder} {opened} %s"}
    argv = [*_CLI, "chat", "--web", "--store", "sqlite:///web.db", "--session", "web-1"]
    with subprocess.Popen(
        argv, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        try:
            lines: list[str] = []
            while not lines or not lines[-1].startswith("playground: "):
                line = proc.stdout.readline()
                assert line, proc.stderr.read()
                lines.append(line)
            link = lines[-1].split()[-1]
            base = link.split("/playground")[0]
            assert link == f"{base}/playground?agent=demo&session=web-1"
            assert base.startswith("http://127.0.0.1:")
            deadline = time.monotonic() + 20
            while not opened.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert opened.read_text() == link  # $BROWSER was given the deep link
            response, html, frames = asyncio.run(_use(link, base))
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        stderr = proc.stderr.read()
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert response.status == 200
    assert response.headers["Content-Security-Policy"] == PLAYGROUND_CSP
    assert '<script type="module"' in html
    assert frames[-1]["type"] == "post_call"
    changed = [f for f in frames if f["changes"]]
    assert changed  # the served demo agent records what its hook changes
    assert {c["by"] for f in changed for c in f["changes"]} == {"cite_tool_results"}
