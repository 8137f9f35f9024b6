"""`serve` keeps its start-up heap out of the GC's full collections while it serves, only then."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from rxagent import ReActAgent
from rxagent.server import ServerMetrics, create_app, serve
from rxagent.testing import ScriptedModel


async def test_serve_freezes_the_startup_heap_while_serving_and_unfreezes_after():
    app = create_app(ReActAgent("bot", "", ScriptedModel(["hi"])))
    stop = asyncio.Event()
    seen: dict[str, Any] = {}

    def listening(url: str) -> None:
        seen["url"] = url
        seen["frozen"] = gc.get_freeze_count()
        seen["app_walked"] = any(o is app for o in gc.get_objects())  # frozen: not walked

    server = asyncio.create_task(
        serve(app, port=0, print_url=False, stop=stop, on_listening=listening)
    )
    while "url" not in seen:
        await asyncio.sleep(0.01)
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{seen['url']}/v1/agents/bot/runs", json={"input": "x"}) as response,
    ):
        assert response.status == 200  # serving with a frozen heap works as before
        assert (await response.json())["ok"]
    stop.set()
    await server
    assert seen["frozen"] > 1000  # modules, schemas, the agent: thousands of objects
    assert not seen["app_walked"]
    assert gc.get_freeze_count() == 0  # given back to the collector when the server stopped


async def test_serve_passes_its_backlog_to_the_listening_socket(monkeypatch: pytest.MonkeyPatch):
    backlogs: list[int] = []
    original = web.TCPSite.__init__

    def site(self: web.TCPSite, *args: Any, **kwargs: Any) -> None:
        backlogs.append(kwargs["backlog"])
        original(self, *args, **kwargs)

    monkeypatch.setattr(web.TCPSite, "__init__", site)
    app = create_app(ReActAgent("bot", "", ScriptedModel([])))
    stop = asyncio.Event()
    await serve(app, port=0, print_url=False, stop=stop, on_listening=lambda _: stop.set(),
                backlog=2048)  # fmt: skip
    assert backlogs == [2048]


def test_a_metric_child_is_looked_up_once_and_is_the_labels_child():
    metrics = ServerMetrics()
    child = metrics.child(metrics.runs, "bot", "ok")
    assert child is metrics.runs.labels(agent="bot", outcome="ok")
    assert metrics.child(metrics.runs, "bot", "ok") is child
    child.inc()
    metrics.child(metrics.runs, "bot", "error").inc(2)
    text = metrics.render().decode()
    assert 'rxagent_runs_total{agent="bot",outcome="ok"} 1.0' in text
    assert 'rxagent_runs_total{agent="bot",outcome="error"} 2.0' in text
