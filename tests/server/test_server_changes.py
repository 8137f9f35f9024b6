"""What hooks changed reaches clients: `changes` in SSE frames, and the UI stream unaffected."""

from __future__ import annotations

import json
from typing import Any

from server_helpers import parse_sse, serving  # type: ignore[import-not-found]

from rxagent import EVENT_ADAPTER, Msg, PreActingEvent, PreReasoningEvent, ReActAgent, hook, tool
from rxagent.server import ServerConfig, create_app
from rxagent.testing import ScriptedModel, tool_call


@tool
def search(q: str, limit: int = 10) -> str:
    """Search.

    Args:
        q: The query.
        limit: The most hits.
    """
    return f"{limit} hits for {q}"


@hook(PreReasoningEvent)
def add_rules(event: PreReasoningEvent) -> PreReasoningEvent:
    return event.replace(messages=[*event.messages, Msg.system("Cite sources.")])


@hook(PreActingEvent)
def narrow(event: PreActingEvent) -> PreActingEvent:
    call = event.tool_call
    return event.replace(tool_call=call.model_copy(update={"input": {**call.input, "limit": 3}}))


def agent(*, record: bool) -> ReActAgent:
    model = ScriptedModel([tool_call("search", q="cats"), "Found."])
    hooks = [add_rules, narrow]
    return ReActAgent("bot", "", model, tools=[search], hooks=hooks, record_changes=record)


async def stream(
    served: ReActAgent, config: ServerConfig | None = None
) -> list[tuple[str, dict[str, Any]]]:
    async with serving(create_app(served, config=config)) as client:
        response = await client.post("/v1/agents/bot/runs:stream", json={"input": "cats?"})
        assert response.status == 200
        frames: list[tuple[str, dict[str, Any]]] = parse_sse(await response.text())
    return frames


async def test_sse_frames_carry_the_changes_a_client_can_diff():
    frames = await stream(agent(record=True))
    changed = {kind: data for kind, data in frames if data["changes"]}
    assert set(changed) == {"pre_reasoning", "pre_acting"}
    [change] = changed["pre_acting"]["changes"]
    assert change["by"] == "narrow"
    assert change["field"] == "tool_call"
    assert change["before"]["input"] == {"q": "cats"}
    assert changed["pre_acting"]["tool_call"]["input"] == {"q": "cats", "limit": 3}
    request = next(data for kind, data in frames if kind == "pre_reasoning")
    [change] = request["changes"]
    assert change["before"] == request["messages"][:-1]  # the hook appended one message
    for _, data in frames:  # the frames parse back to events that undo to the originals
        event = EVENT_ADAPTER.validate_python(data)
        assert event.undo_changes().changes == ()


async def test_without_the_playground_the_agents_setting_holds():
    served = agent(record=False)
    frames = await stream(served, ServerConfig(playground=False))
    assert served.record_changes is False
    assert all(data["changes"] == [] for _, data in frames)
    assert any(data["modified_by"] for _, data in frames)


async def test_the_playground_makes_served_agents_record_changes():
    served = agent(record=False)
    frames = await stream(served)
    assert served.record_changes is True
    assert {kind for kind, data in frames if data["changes"]} == {"pre_reasoning", "pre_acting"}


async def test_the_ui_stream_works_with_recording_on():
    body = {
        "id": "chat-1",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "cats?"}]}],
        "trigger": "submit-message",
    }
    async with serving(create_app(agent(record=True))) as client:
        response = await client.post("/v1/agents/bot/ui", json=body)
        assert response.status == 200
        lines = (await response.read()).decode().split("\n\n")
    chunks = [json.loads(f.removeprefix("data: ")) for f in lines if f.startswith("data: {")]
    assert chunks[-1]["type"] == "finish"
    inputs = [c["input"] for c in chunks if c["type"] == "tool-input-available"]
    assert inputs[-1] == {"q": "cats", "limit": 3}  # the hook's input is re-announced
