"""An agent whose tools come from an MCP server: results reach memory paired, failures are data."""

from __future__ import annotations

from mcp_helpers import demo_stdio  # type: ignore[import-not-found]

from rxagent import ReActAgent
from rxagent.errors import ErrorCode
from rxagent.events import ErrorEvent, PostActingEvent
from rxagent.testing import EventRecorder, ScriptedModel, assert_event_protocol, tool_call


async def test_agent_runs_mcp_tools_and_survives_a_server_crash():
    toolset = demo_stdio(prefix="demo")
    model = ScriptedModel(
        [
            [tool_call("demo_echo", text="a"), tool_call("demo_forecast", city="Rome")],
            tool_call("demo_crash"),  # the server process exits in the middle of this call
            tool_call("demo_echo", text="back again"),  # so this one starts it again
            "done",
        ]
    )
    recorder = EventRecorder()
    agent = ReActAgent("mcp", "", model, tools=[toolset], hooks=[recorder])
    try:
        result = await agent.call("go")
    finally:
        await agent.toolkit.aclose()
        await agent.aclose()
    assert not toolset.connected
    assert result.ok
    assert result.text == "done"
    assert result.tools_used == ("demo_echo", "demo_forecast", "demo_crash", "demo_echo")
    assert_event_protocol(recorder.recorded)

    (error,) = recorder.of_type(ErrorEvent)
    assert error.code is ErrorCode.TOOL_ERROR
    assert error.source == "tool:demo_crash"
    assert error.recoverable
    assert error.exception == "MCPConnectionError"
    results = [e.result for e in recorder.of_type(PostActingEvent)]
    assert [r.is_error for r in results] == [False, False, True, False]
    assert results[0].output == "a"
    assert '"city":"Rome"' in results[1].text.replace(" ", "")
    assert "disconnected during the call" in results[2].text
    assert results[3].output == "back again"

    memory = (await agent.state_dict())["memory"]
    calls = [
        b
        for m in memory
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    answers = [b for m in memory if m["role"] == "tool" for b in m["content"]]
    assert [c["id"] for c in calls] == [a["id"] for a in answers]  # paired, in call order
    assert [a["is_error"] for a in answers] == [False, False, True, False]
