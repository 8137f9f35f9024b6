"""`POST /v1/agents/{name}/ui` through aiohttp's test client: headers, framing, bodies, errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from openapi_spec_validator import validate

from rxagent import PostReasoningEvent, ReActAgent, tool
from rxagent.messages import ImageBlock
from rxagent.server import ServerConfig, create_app
from rxagent.server._ui_chunks import UIMessageStreamTranslator
from rxagent.testing import ScriptedModel, text, tool_call

UI = "/v1/agents/bot/ui"


@tool
def weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


def chat_body(
    prompt: str = "Weather in Paris?", chat_id: str = "chat-1", **extra: Any
) -> dict[str, Any]:
    """What the AI SDK's useChat (DefaultChatTransport) posts."""
    message = {"id": "m-user-1", "role": "user", "parts": [{"type": "text", "text": prompt}]}
    return {"id": chat_id, "messages": [message], "trigger": "submit-message", **extra}


def weather_agent(**kwargs: Any) -> ReActAgent:
    model = ScriptedModel(
        [[text("Looking."), tool_call("weather", city="Paris")], "Sunny."], chunk_size=4
    )
    return ReActAgent("bot", "", model, tools=[weather], **kwargs)


async def client_for(agent: ReActAgent, **kwargs: Any) -> TestClient[Any, Any]:
    client = TestClient(TestServer(create_app(agent, **kwargs)))
    await client.start_server()
    return client


@pytest.fixture
async def client() -> AsyncIterator[TestClient[Any, Any]]:
    c = await client_for(weather_agent())
    yield c
    await c.close()


def frames(body: bytes) -> list[str]:
    """The SSE frames of a body, each checked to be one `data:` line."""
    assert body.endswith(b"\n\n")
    out = []
    for frame in body.decode().split("\n\n")[:-1]:
        if frame.startswith(":"):  # a keep-alive comment
            continue
        assert frame.startswith("data: ")
        assert "\n" not in frame
        out.append(frame.removeprefix("data: "))
    return out


def chunks_of(body: bytes) -> list[dict[str, Any]]:
    data = frames(body)
    assert data[-1] == "[DONE]"
    assert "[DONE]" not in data[:-1]
    return [json.loads(d) for d in data[:-1]]


async def test_the_stream_has_the_protocol_headers_frames_and_done(client):
    response = await client.post(UI, json=chat_body())
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["Cache-Control"] == "no-cache"
    assert response.headers["X-Session-Id"] == "chat-1"
    chunks = chunks_of(await response.read())
    types = [c["type"] for c in chunks]
    assert types[0] == "start"
    assert types[-2:] == ["finish-step", "finish"]
    assert chunks[0]["messageMetadata"]["sessionId"] == "chat-1"
    tool_chunks = [c for c in chunks if c["type"].startswith("tool-")]
    assert [c["type"] for c in tool_chunks] == [
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-output-available",
    ]
    assert tool_chunks[-1] == {
        "type": "tool-output-available",
        "toolCallId": "call_1",
        "output": "sunny in Paris",
    }
    said = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert said == "Looking.Sunny."


async def test_the_chat_id_is_the_session_and_only_the_last_message_is_new():
    model = ScriptedModel(["One.", "Two."])
    agent = ReActAgent("bot", "", model)
    client = await client_for(agent)
    try:
        first = await client.post(UI, json=chat_body("first", chat_id="chat-7"))
        chunks_of(await first.read())
        history = [
            {"id": "m-user-1", "role": "user", "parts": [{"type": "text", "text": "first"}]},
            {"id": "m-bot-1", "role": "assistant", "parts": [{"type": "text", "text": "One."}]},
            {
                "id": "m-user-2",
                "role": "user",
                "parts": [
                    {"type": "step-start"},
                    {"type": "text", "text": "sec"},
                    {"type": "text", "text": "ond"},
                ],
            },
        ]
        second = await client.post(
            UI, json={"id": "chat-7", "messages": history, "trigger": "submit-message"}
        )
        assert second.headers["X-Session-Id"] == "chat-7"
        chunks_of(await second.read())
        stored = await agent.store.load("bot", "chat-7")
        assert stored is not None
        users = [m for m in stored.state.memory if m.role == "user"]
        assert [(m.id, m.text) for m in users] == [("m-user-1", "first"), ("m-user-2", "second")]
        assert model.requests[1].messages[-1].text == "second"
    finally:
        await client.close()


async def test_an_image_file_part_becomes_an_image_block():
    agent = ReActAgent("bot", "", ScriptedModel(["A cat."]))
    client = await client_for(agent)
    try:
        parts = [
            {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,iVBORw0KGgo="},
            {"type": "text", "text": "What is it?"},
        ]
        body = {"id": "img", "messages": [{"id": "u1", "role": "user", "parts": parts}]}
        chunks_of(await (await client.post(UI, json=body)).read())
        stored = await agent.store.load("bot", "img")
        assert stored is not None
        first = stored.state.memory[0]
        assert isinstance(first.content, tuple)
        assert first.content[0] == ImageBlock(url=parts[0]["url"], media_type="image/png")
        assert first.text == "What is it?"
    finally:
        await client.close()


async def test_the_rxagent_run_body_works_too_and_null_gets_a_fresh_session(client):
    response = await client.post(UI, json={"input": "hi", "session_id": None})
    session_id = response.headers["X-Session-Id"]
    chunks = chunks_of(await response.read())
    assert session_id
    assert chunks[0]["messageMetadata"]["sessionId"] == session_id
    again = await client.post(
        UI, json={"input": [{"role": "user", "content": "hi"}], "session_id": "mine"}
    )
    assert again.headers["X-Session-Id"] == "mine"
    await again.read()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "messages"),
        ({"id": "c", "messages": []}, "messages"),
        ({"input": "hi", "messages": chat_body()["messages"]}, "input"),
        ({"id": "c", "messages": [{"role": "assistant", "parts": []}]}, "messages.0.role"),
        (
            {"id": "c", "messages": [{"role": "user", "parts": [{"type": "step-start"}]}]},
            "messages.0.parts",
        ),
        (
            {"id": "c", "messages": [{"role": "user", "parts": [{"type": "text"}]}]},
            "messages.0.parts.0.text",
        ),
        (
            {
                "id": "c",
                "messages": [
                    {"role": "user", "parts": [{"type": "file", "mediaType": "application/pdf"}]}
                ],
            },
            "messages.0.parts.0.mediaType",
        ),
        (
            {
                "id": "c",
                "messages": [
                    {"role": "user", "parts": [{"type": "file", "mediaType": "image/png"}]}
                ],
            },
            "messages.0.parts.0.url",
        ),
        (
            {"id": "c", "messages": [{"role": "user", "parts": [{"type": "tool-x"}]}]},
            "messages.0.parts.0.type",
        ),
        ({"id": "bad id!", "messages": chat_body()["messages"]}, "id"),
        ({"id": "c", "messages": [{"role": "robot", "parts": []}]}, "messages.0.role"),
        ({"input": 3}, "input"),
    ],
)
async def test_bad_bodies_get_a_typed_422_naming_the_field(client, body, field):
    response = await client.post(UI, json=body)
    assert response.status == 422
    error = (await response.json())["error"]
    assert error["code"] in ("invalid_body", "invalid_input")
    assert error["field"] == field
    assert error["message"]


async def test_unknown_agents_missing_tokens_and_busy_sessions_are_refused():
    release = asyncio.Event()
    started = asyncio.Event()

    @tool
    async def wait() -> str:
        """Waits until released."""
        started.set()
        await release.wait()
        return "done"

    model = ScriptedModel([tool_call("wait"), "ok"])
    agent = ReActAgent("bot", "", model, tools=[wait])
    client = await client_for(agent, auth=["k1"])
    auth = {"Authorization": "Bearer k1"}
    try:
        assert (await client.post(UI, json=chat_body())).status == 401
        missing = await client.post("/v1/agents/nobody/ui", json=chat_body(), headers=auth)
        assert missing.status == 404
        assert (await missing.json())["error"]["code"] == "agent_not_found"
        running = asyncio.ensure_future(
            client.post(UI, json=chat_body(chat_id="busy"), headers=auth)
        )
        await started.wait()
        busy = await client.post(UI, json=chat_body(chat_id="busy"), headers=auth)
        assert busy.status == 409
        assert (await busy.json())["error"]["code"] == "session_busy"
        release.set()
        response = await running
        chunks = chunks_of(await response.read())
        assert chunks[-1]["finishReason"] == "stop"
    finally:
        release.set()
        await client.close()


async def test_keep_alive_comments_flow_while_the_run_is_quiet():
    release = asyncio.Event()

    @tool
    async def wait() -> str:
        """Waits until released."""
        await release.wait()
        return "done"

    agent = ReActAgent("bot", "", ScriptedModel([tool_call("wait"), "ok"]), tools=[wait])
    client = await client_for(agent, config=ServerConfig(keepalive_s=0.01))
    try:
        response = await client.post(UI, json=chat_body())
        body = b""
        while True:  # read until the first keep-alive, then let the tool finish
            line = await response.content.readline()
            body += line
            if line == b": keep-alive\n":
                release.set()
                break
        body += await response.read()
        chunks = chunks_of(body)
        assert chunks[-1]["type"] == "finish"
    finally:
        release.set()
        await client.close()


async def test_a_client_that_disconnects_cancels_the_run():
    started = asyncio.Event()
    cancelled = asyncio.Event()

    @tool
    async def forever() -> str:
        """Never returns on its own."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "unreachable"

    agent = ReActAgent("bot", "", ScriptedModel([tool_call("forever"), "ok"]), tools=[forever])
    client = await client_for(agent, config=ServerConfig(keepalive_s=0.02))
    try:
        response = await client.post(UI, json=chat_body(chat_id="gone"))
        await started.wait()
        response.close()  # the client goes away mid-run
        await asyncio.wait_for(cancelled.wait(), 30)  # a hang guard, not a timing check
        assert await agent.wait_idle(30)
        assert not agent.is_running("gone")
        stored = await agent.store.load("bot", "gone")
        assert stored is not None
        results = [b for m in stored.state.memory for b in m.tool_results]
        assert len(results) == 1
        assert results[0].is_error
    finally:
        await client.close()


async def test_a_failure_inside_the_stream_still_ends_the_message(monkeypatch):
    original = UIMessageStreamTranslator.translate

    def failing(self: UIMessageStreamTranslator, event: Any) -> list[dict[str, Any]]:
        if isinstance(event, PostReasoningEvent):
            raise RuntimeError("boom")
        return original(self, event)

    monkeypatch.setattr(UIMessageStreamTranslator, "translate", failing)
    agent = ReActAgent("bot", "", ScriptedModel(["Hello"]))
    client = await client_for(agent)
    try:
        response = await client.post(UI, json=chat_body())
        chunks = chunks_of(await response.read())
        # what failed stays in the server's log: the client is told no internal detail
        assert chunks[-2] == {"type": "error", "errorText": "the server failed; see its log"}
        assert chunks[-1] == {"type": "finish", "finishReason": "error"}
        assert await agent.wait_idle(30)
    finally:
        await client.close()


async def test_the_openapi_document_describes_the_route(client):
    document = await (await client.get("/openapi.json")).json()
    validate(document)
    post = document["paths"]["/v1/agents/{name}/ui"]["post"]
    assert post["operationId"] == "uiMessageStream"
    assert set(post["responses"]) >= {"200", "401", "404", "409", "413", "422", "429"}
    assert "text/event-stream" in post["responses"]["200"]["content"]


def test_the_route_needs_no_server_to_describe_itself():
    from rxagent.server._ui import UI_PATH, openapi_paths

    assert UI_PATH == UI.replace("bot", "{name}")
    body = openapi_paths()[UI_PATH]["post"]["requestBody"]["content"]["application/json"]["schema"]
    run_body = body["oneOf"][1]
    assert run_body["required"] == ["input"]
    assert run_body["properties"]["input"] == {"$ref": "#/components/schemas/RunInput"}
