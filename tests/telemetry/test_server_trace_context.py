"""The server's run routes continue the caller's trace: W3C `traceparent` in, child spans out."""

from __future__ import annotations

import sys

import pytest
from aiohttp.test_utils import TestClient, TestServer
from opentelemetry import trace
from telemetry_helpers import memory_provider, one  # type: ignore[import-not-found]

from rxagent import ReActAgent
from rxagent.server import create_app
from rxagent.telemetry import TRACE_HEADERS, instrument, remote_parent
from rxagent.testing import ScriptedModel

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/agents/bot/runs", {"input": "hi"}),
        ("/v1/agents/bot/runs:stream", {"input": "hi"}),
        ("/v1/chat/completions", {"model": "bot", "messages": [{"role": "user", "content": "hi"}]}),
    ],
)
async def test_a_run_route_makes_the_run_a_child_of_the_callers_span(
    path: str, body: dict[str, object]
) -> None:
    provider, exporter = memory_provider()
    agent = ReActAgent("bot", "", ScriptedModel(["Hello!", "Again!"]))
    with instrument(provider):
        async with TestClient(TestServer(create_app(agent))) as client:
            traced = await client.post(path, json=body, headers={"traceparent": TRACEPARENT})
            assert traced.status == 200
            await traced.read()
            plain = await client.post(path, json=body)
            assert plain.status == 200
            await plain.read()
    first, second = sorted(
        (s for s in exporter.get_finished_spans() if s.name == "invoke_agent bot"),
        key=lambda s: s.start_time or 0,
    )
    assert first.context is not None
    assert first.parent is not None
    assert format(first.context.trace_id, "032x") == TRACE_ID
    assert format(first.parent.span_id, "016x") == PARENT_ID
    assert first.parent.is_remote
    assert second.parent is None  # no header: a trace of its own
    assert second.context is not None
    assert format(second.context.trace_id, "032x") != TRACE_ID


def test_remote_parent_is_a_no_op_without_a_traceparent() -> None:
    before = trace.get_current_span()
    with remote_parent({"tracestate": "x=1"}) as found:
        assert not found
        assert trace.get_current_span() is before
    with remote_parent({"traceparent": TRACEPARENT}) as found:
        assert found
        assert trace.get_current_span().get_span_context().is_remote
    assert trace.get_current_span() is before
    assert TRACE_HEADERS[0] == "traceparent"


def test_remote_parent_without_the_api_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with remote_parent({"traceparent": TRACEPARENT}) as found:
        assert not found


def test_a_span_of_the_app_and_the_run_share_the_trace() -> None:
    provider, exporter = memory_provider()
    agent = ReActAgent("bot", "", ScriptedModel(["Hello!"]))
    with instrument(provider), remote_parent({"traceparent": TRACEPARENT}):
        agent.call_sync("hi")
    run = one(exporter.get_finished_spans(), "invoke_agent bot")
    assert run.context is not None
    assert format(run.context.trace_id, "032x") == TRACE_ID
