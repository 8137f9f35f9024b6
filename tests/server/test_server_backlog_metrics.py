"""`serve` passes its backlog to the socket, and metric series are looked up once per label set."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web

from rxagent import ReActAgent
from rxagent.server import ServerMetrics, create_app, serve
from rxagent.testing import ScriptedModel


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
