"""A team served by `create_app`: SSE, the AI SDK UI stream, the OpenAI-compatible route."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from openai import AsyncOpenAI

from rxagent import EVENT_ADAPTER, AgentResult, ReActAgent
from rxagent.errors import ApprovalError, ConfigurationError
from rxagent.multiagent import SequentialPipeline, Supervisor
from rxagent.server import create_app
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call
from rxagent.tools import tool


def team() -> SequentialPipeline:
    writer = ReActAgent("writer", "", ScriptedModel(["a draft"] * 3, chunk_size=3))
    editor = ReActAgent("editor", "", ScriptedModel(["The final text."] * 3))
    return SequentialPipeline([writer, editor], name="desk")


def sse_events(body: str) -> list[Any]:
    found = []
    for block in body.split("\n\n"):
        data = [line[6:] for line in block.split("\n") if line.startswith("data: ")]
        if data:
            found.append(EVENT_ADAPTER.validate_json("\n".join(data)))
    return found


async def test_json_and_sse_runs_of_a_team() -> None:
    async with TestServer(create_app({"team": team()}), host="127.0.0.1") as server:
        import aiohttp

        async with aiohttp.ClientSession() as http:
            url = server.make_url("/v1/agents/team/runs")
            async with http.post(url, json={"input": "go"}) as response:
                assert response.status == 200
                result: AgentResult[Any] = AgentResult.model_validate(await response.json())
            assert result.text == "The final text."
            assert result.steps == 2
            async with http.post(
                server.make_url("/v1/agents/team/runs:stream"), json={"input": "go"}
            ) as response:
                events = sse_events(await response.text())
    assert_event_protocol(events)
    assert {e.path for e in events} == {("desk",), ("desk", "writer"), ("desk", "editor")}
    assert events[-1].path == ("desk",)


async def test_the_ui_stream_shows_nested_runs_as_data_parts() -> None:
    async with TestServer(create_app({"team": team()}), host="127.0.0.1") as server:
        import aiohttp

        message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]}
        body = {"id": "chat-1", "messages": [message], "trigger": "submit-message"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(server.make_url("/v1/agents/team/ui"), json=body) as response,
        ):
            text = await response.text()
    chunks = [
        json.loads(line[6:])
        for line in text.split("\n")
        if line.startswith("data: ") and line != "data: [DONE]"
    ]
    nested = [c for c in chunks if c["type"] == "data-nested"]
    assert {tuple(c["data"]["path"]) for c in nested} == {("desk", "writer"), ("desk", "editor")}
    assert all(c["transient"] for c in nested)
    texts = [c["delta"] for c in chunks if c["type"] == "text-delta"]
    assert "".join(texts) == "The final text."
    assert chunks[-1]["type"] == "finish"


@tool
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: One.
        b: Two.
    """
    return a + b


async def test_the_openai_route_streams_a_supervisor_and_its_workers() -> None:
    math = ReActAgent("math", "Adds.", ScriptedModel([tool_call("add", a=2, b=3), "5"]),
                      tools=[add])  # fmt: skip
    boss = Supervisor(
        "boss", model=ScriptedModel([tool_call("math", input="2+3"), "It is 5."]), workers=[math]
    )
    async with TestServer(create_app([boss]), host="127.0.0.1") as server:
        client = AsyncOpenAI(base_url=str(server.make_url("/v1")), api_key="x", max_retries=0)
        async with client:
            stream = await client.chat.completions.create(
                model="boss", messages=[{"role": "user", "content": "2+3?"}], stream=True
            )
            chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "It is 5."
    progress = [
        c.model_extra["rxagent"]["event"]
        for c in chunks
        if c.model_extra and "event" in c.model_extra.get("rxagent", {})
    ]
    paths = {tuple(e["path"]) for e in progress}
    assert ("boss",) in paths
    assert ("boss", "math") in paths


async def test_the_openai_route_answers_for_a_team() -> None:
    async with TestServer(create_app([team()]), host="127.0.0.1") as server:
        client = AsyncOpenAI(base_url=str(server.make_url("/v1")), api_key="x", max_retries=0)
        async with client:
            completion = await client.chat.completions.create(
                model="desk", messages=[{"role": "user", "content": "go"}]
            )
    assert completion.choices[0].message.content == "The final text."


async def test_team_server_helpers() -> None:
    desk = team()
    with pytest.raises(ConfigurationError, match="team"):
        create_app({"x": "not an agent"})  # type: ignore[dict-item]
    assert desk.interrupt_all() == 0
    assert await desk.wait_idle(timeout=1)
    with pytest.raises(ApprovalError):
        await desk.approve("ap_nope", session_id="s")
    with pytest.raises(ApprovalError):
        await desk.reject("ap_nope", "no", session_id="s")
    await desk.aclose()


@tool(needs_approval=True)
def pay(amount: int) -> str:
    """Pay.

    Args:
        amount: How much.
    """
    return f"paid {amount}"


async def test_a_member_waiting_for_approval_parks_the_team_and_the_team_approves() -> None:
    clerk = ReActAgent(
        "clerk", "", ScriptedModel([tool_call("pay", amount=3), "Paid."]), tools=[pay]
    )
    desk = SequentialPipeline([clerk, ReActAgent("notary", "", ScriptedModel(["Noted."]))])
    parked = await desk.call("pay 3", session_id="s")
    assert parked.ok
    assert parked.stop_reason == "approval_pending"
    assert len(parked.pending_approvals) == 1
    with pytest.raises(ApprovalError):
        await desk.approve(parked.pending_approvals[0], session_id="other")
    resumed = await desk.approve(parked.pending_approvals[0], session_id="s")
    assert resumed is not None
    assert resumed.text == "Noted."  # the clerk resumed, then the notary ran
    outer = SequentialPipeline([SequentialPipeline([ReActAgent(
        "clerk", "", ScriptedModel([tool_call("pay", amount=4), "Paid 4."]), tools=[pay]
    )], name="inner")], name="outer")  # fmt: skip
    waiting = await outer.call("pay 4", session_id="t")
    rejected = await outer.reject(waiting.pending_approvals[0], "too much", session_id="t")
    assert rejected is not None
    assert rejected.text == "Paid 4."
