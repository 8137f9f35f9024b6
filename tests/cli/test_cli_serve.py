"""`rxagent serve MODULE:ATTR`: what it accepts, the app it builds, and a real server process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from rxagent.server import SERVER_KEY

_CLI = (sys.executable, "-m", "rxagent.cli")

AGENTS = """
from aiohttp import web

from rxagent import ReActAgent
from rxagent.testing import ScriptedModel


def _bot(name: str = "bot") -> ReActAgent:
    return ReActAgent(name, "", ScriptedModel(["Hi!"] * 5))


bot = _bot()
bots = [_bot("one"), _bot("two")]
by_route = {"helper": _bot("helper")}


def make() -> ReActAgent:
    return _bot("made")


async def make_later() -> ReActAgent:
    return _bot("later")


def make_nothing() -> None:
    return None


def make_for(name: str) -> ReActAgent:
    return _bot(name)


def make_broken() -> ReActAgent:
    raise RuntimeError("no model configured")


def make_app() -> web.Application:
    return web.Application()


app = web.Application()
empty: list[ReActAgent] = []
mixed = [bot, 3]
mixed_dict = {"x": "not an agent"}
"""


@pytest.fixture
def agents(module):
    return module(AGENTS)


@pytest.fixture
def served(monkeypatch) -> list[dict[str, Any]]:
    """Capture `run_server`'s arguments instead of serving."""
    calls: list[dict[str, Any]] = []

    def fake_run_server(app: web.Application, **kwargs: Any) -> None:
        calls.append({"app": app, **kwargs})

    monkeypatch.setattr("rxagent.server.run_server", fake_run_server)
    return calls


async def _post_runs(
    app: web.Application, agent: str, *headers: dict[str, str]
) -> list[tuple[int, Any]]:
    """POST a run (session `s<i>`) with each of `headers`; then close the agents' stores."""
    answers = []
    async with TestClient(TestServer(app)) as client:
        for i, sent in enumerate(headers):
            body = {"input": "hello", "session_id": f"s{i}"}
            response = await client.post(f"/v1/agents/{agent}/runs", json=body, headers=sent)
            answers.append((response.status, await response.json()))
    ctx = app[SERVER_KEY]
    for closing in {id(a.store): a.store for a in ctx.agents.values()}.values():
        await closing.aclose()
    return answers


@pytest.mark.parametrize(
    ("attr", "names"),
    [
        ("bot", ["bot"]),
        ("bots", ["one", "two"]),
        ("by_route", ["helper"]),
        ("make", ["made"]),
    ],
)
def test_agents_are_served_with_create_app(
    attr: str, names: list[str], cli, agents: str, served
) -> None:
    done = cli("serve", f"{agents}:{attr}", "--host", "127.0.0.2", "--port", "9123")
    assert (done.code, done.err) == (0, "")
    (call,) = served
    assert (call["host"], call["port"]) == ("127.0.0.2", 9123)
    ctx = call["app"][SERVER_KEY]
    assert sorted(ctx.agents) == names
    ((status, body),) = asyncio.run(_post_runs(call["app"], names[0], {}))
    assert status == 200
    assert body["reply"]["content"][0]["text"] == "Hi!"


def test_the_store_and_api_keys_apply(cli, agents: str, served, monkeypatch) -> None:
    monkeypatch.setenv("RXAGENT_API_KEYS", "k2, k3")
    done = cli("serve", f"{agents}:bot", "--store", "sqlite:///served.db", "--api-key", "k1")
    assert done.code == 0, done.err
    app = served[0]["app"]
    answers = asyncio.run(
        _post_runs(app, "bot", {"Authorization": "Bearer k1"}, {"Authorization": "Bearer k3"}, {})
    )
    assert [status for status, _ in answers] == [200, 200, 401]
    listed = cli("sessions", "list", "--store", "sqlite:///served.db", "--json")
    assert [s["session_id"] for s in json.loads(listed.out)] == ["s0", "s1"]


def test_the_default_store_is_the_sqlite_file(cli, agents: str, served) -> None:
    assert cli("serve", f"{agents}:bot").code == 0
    assert asyncio.run(_post_runs(served[0]["app"], "bot", {}))[0][0] == 200
    assert Path(".rxagent/sessions.db").is_file()


@pytest.mark.parametrize("attr", ["app", "make_app"])
def test_an_application_is_served_as_it_is(attr: str, cli, agents: str, served) -> None:
    assert cli("serve", f"{agents}:{attr}", "--port", "0").code == 0
    assert isinstance(served[0]["app"], web.Application)
    assert SERVER_KEY not in served[0]["app"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["{m}:app", "--api-key", "k"], "error: serve '{m}:app' is an application already built"),
        (["{m}:empty"], "error: serve '{m}:empty': expected an aiohttp.web.Application, a ReAct"),
        (["{m}:make_nothing"], "error: serve '{m}:make_nothing': expected an aiohttp.web.Appl"),
        (["{m}:mixed"], "error: serve '{m}:mixed': every item must be a ReActAgent, got int"),
        (["{m}:mixed_dict"], "error: serve '{m}:mixed_dict': every value must be a ReActAgent"),
        (["{m}:make_later"], "error: serve '{m}:make_later': expected an aiohttp.web.Applicati"),
        (["{m}:make_for"], "error: serve '{m}:make_for': the factory needs name, but it is call"),
        (["{m}:make_broken"], "error: serve '{m}:make_broken': calling the factory failed with"),
        (["{m}:bot", "--port", "70000"], "error: --port 70000: a port is a number from 0 to"),
        (["{m}:nope"], "error: serve '{m}:nope': module '{m}' has no attribute 'nope'"),
        (["{m}:bot", "--store", "bogus://"], "error: --store 'bogus://': "),
    ],
)
def test_serve_errors(argv: list[str], expected: str, cli, agents: str, served) -> None:
    done = cli("serve", *(a.format(m=agents) for a in argv))
    assert done.code == 2
    assert done.err.startswith(expected.format(m=agents)), done.err
    assert done.err.count("\n") == 1
    assert served == []


def test_blank_api_keys_are_ignored(cli, agents: str, served) -> None:
    done = cli("serve", f"{agents}:bot", "--api-key", " ")
    assert done.code == 0  # blank keys are ignored: no keys means no auth
    assert asyncio.run(_post_runs(served[0]["app"], "bot", {}))[0][0] == 200


def test_a_port_in_use_is_a_failure(cli, agents: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = cli("serve", f"{agents}:bot", "--port", str(port), "--store", "memory://")
    assert done.code == 1
    assert done.err.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")
    assert done.err.rstrip().endswith("pick another --port or --host")


def test_a_store_whose_server_is_down_is_one_line_naming_the_store(cli, agents: str) -> None:
    # port 1 on loopback: nothing listens there; the server cannot subscribe to its channel
    store = "postgresql://app:s3cret@127.0.0.1:1/db"
    done = cli("serve", f"{agents}:bot", "--port", "0", "--store", store)
    assert done.code == 1
    assert done.err.count("\n") == 1
    assert "Traceback" not in done.err
    assert done.err.startswith("error: PostgresControl('postgresql://app:***@127.0.0.1:1/db'")
    assert "is unavailable" in done.err
    assert "s3cret" not in done.err


def test_a_server_process_answers_a_run_then_stops_on_sigterm(workdir: Path, agents: str) -> None:
    env = {**os.environ, "RXAGENT_API_KEYS": "secret"}
    argv = [*_CLI, "serve", f"{agents}:bot", "--port", "0"]
    argv += ["--store", "sqlite:///served.db"]
    with subprocess.Popen(
        argv, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        try:
            line = proc.stdout.readline()
            assert line.startswith("rxagent server listening on http://127.0.0.1:"), (
                line + proc.stderr.read()
            )
            url = line.split()[-1]
            status, body = asyncio.run(_request(f"{url}/v1/agents/bot/runs"))
            assert status == 200
            assert body["reply"]["content"][0]["text"] == "Hi!"
            assert body["session_id"] == "from-test"
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        stderr = proc.stderr.read()
    assert code == 0, stderr
    assert "Traceback" not in stderr
    shown = subprocess.run(
        [*_CLI, "sessions", "show", "from-test", "--store", "sqlite:///served.db", "--json"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    )
    assert [m["role"] for m in json.loads(shown.stdout)["memory"]] == ["user", "assistant"]


async def _request(url: str) -> tuple[int, Any]:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.post(
            url,
            json={"input": "hello", "session_id": "from-test"},
            headers={"Authorization": "Bearer secret"},
        ) as response:
            return response.status, await response.json()


TROUBLE = """
from rxagent import ReActAgent
from rxagent.testing import ScriptedModel

twins = [ReActAgent("x", "", ScriptedModel([])), ReActAgent("x", "", ScriptedModel([]))]


def make_nameless() -> ReActAgent:
    return ReActAgent("", "", ScriptedModel([]))
"""


@pytest.mark.parametrize(
    ("attr", "expected"),
    [
        ("twins", "error: serve '{m}:twins': "),
        ("make_nameless", "error: serve '{m}:make_nameless'"),
    ],
)
def test_configuration_errors_of_the_agents(attr: str, expected: str, cli, module, served) -> None:
    mod = module(TROUBLE)
    done = cli("serve", f"{mod}:{attr}", "--store", "memory://")
    assert done.code == 2
    assert done.err.startswith(expected.format(m=mod))
    assert done.err.count("\n") == 1
