"""Bodies are read strictly, and run inputs cannot save unpaired history (real server process)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from server_helpers import secured_server, serving  # type: ignore[import-not-found]

from rxagent import AgentResult, ReActAgent
from rxagent.server import create_app
from rxagent.testing import ScriptedModel

KEY = "rk-live-strict-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
NOT_BOOLEANS: list[Any] = ["yes", "on", "Y", "true", 1, 1.0, 0, None, [True]]


async def test_an_approval_takes_only_a_json_boolean(tmp_path: Path):
    log = tmp_path / "server.log"
    env = {"RXAGENT_TEST_KEYS": KEY}
    async with (
        secured_server(f"sqlite:{tmp_path / 's.db'}", stderr=log, env=env) as (proc, url),
        aiohttp.ClientSession(headers=AUTH) as http,
    ):
        async with http.post(f"{url}/v1/agents/bot/runs", json={"input": "pay"}) as parked:
            result = AgentResult[Any].model_validate(await parked.json())
        assert result.stop_reason == "approval_pending"
        (approval,) = result.pending_approvals
        decide = f"{url}/v1/sessions/{result.session_id}/approvals/{approval}"
        for value in NOT_BOOLEANS:
            async with http.post(decide, json={"approved": value}) as answer:
                assert answer.status == 422, value
                error = (await answer.json())["error"]
                assert (error["code"], error["field"]) == ("invalid_body", "approved"), value
        async with http.get(f"{url}/v1/sessions/{result.session_id}") as shown:
            state = (await shown.json())["state"]
        waiting = [p["approval_id"] for p in state["pending_approvals"]]
        assert waiting == [approval]  # nothing changed
        assert "PAID" not in log.read_text()
        async with http.post(decide, json={"approved": True}) as answer:
            assert answer.status == 200
            resumed = AgentResult[Any].model_validate((await answer.json())["result"])
        assert resumed.text == "done"
        proc.send_signal(signal.SIGTERM)
        assert await proc.wait() == 0
    assert "PAID 5" in log.read_text()


TOOL_RESULT = {"type": "tool_result", "id": "call_9", "name": "slow", "output": "x"}
CALL = {"type": "tool_use", "id": "call_9", "name": "slow", "input": {}}

UNPAIRED: dict[str, tuple[list[dict[str, Any]], str]] = {
    "an empty tool message": ([{"role": "tool", "content": ""}], "input[0]: a tool message"),
    "a result that answers no call": (
        [{"role": "user", "content": "hi"}, {"role": "tool", "content": [TOOL_RESULT]}],
        "input[1]: the tool result 'call_9' answers no tool call",
    ),
    "a call without its result": (
        [{"role": "assistant", "content": [CALL]}, {"role": "user", "content": "hi"}],
        "input[0]: the tool calls 'call_9' have no tool message",
    ),
    "image data that is not base64": (
        [
            {
                "role": "user",
                "content": [{"type": "image", "data": "not base64!", "media_type": "image/png"}],
            }
        ],
        "input[0]: the image data is not valid base64",
    ),
    "a tool result with is_error 0": (
        [
            {"role": "assistant", "content": [CALL]},
            {"role": "tool", "content": [{**TOOL_RESULT, "is_error": 0}]},
        ],
        "is_error",
    ),
}


@pytest.mark.parametrize("route", ["runs", "runs:stream"])
async def test_run_inputs_that_would_save_unpaired_history_are_refused(tmp_path: Path, route: str):
    log = tmp_path / "server.log"
    async with (
        secured_server(f"sqlite:{tmp_path / 's.db'}", stderr=log) as (_, url),
        aiohttp.ClientSession() as http,
    ):
        for i, (messages, says) in enumerate(UNPAIRED.values()):
            body = {"input": messages, "session_id": f"s{i}"}
            async with http.post(f"{url}/v1/agents/bot/{route}", json=body) as answer:
                assert answer.status == 422, messages
                error = (await answer.json())["error"]
                assert error["field"].startswith("input"), error
                assert says in error["message"], error
            async with http.get(f"{url}/v1/sessions/s{i}") as shown:
                assert shown.status == 404  # nothing was saved
        paired = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [CALL]},
            {"role": "tool", "content": [TOOL_RESULT]},
            {"role": "user", "content": "hi"},
        ]
        async with http.post(f"{url}/v1/agents/bot/runs", json={"input": paired}) as answer:
            assert answer.status == 200  # paired history is taken as it is


SINGLE_MESSAGES: dict[str, tuple[dict[str, Any], str]] = {
    "a tool message": ({"role": "tool", "content": ""}, "input[0]: a tool message must hold"),
    "a tool result": (
        {"role": "tool", "content": [TOOL_RESULT]},
        "input[0]: the tool result 'call_9' answers no tool call",
    ),
    "a tool call": (
        {"role": "assistant", "content": [CALL]},
        "input[0]: the tool calls 'call_9' have no tool message",
    ),
    "image data that is not base64": (
        {
            "role": "user",
            "content": [{"type": "image", "data": "not base64!", "media_type": "image/png"}],
        },
        "input[0]: the image data is not valid base64",
    ),
}


@pytest.mark.parametrize("route", ["runs", "runs:stream", "ui"])
@pytest.mark.parametrize("case", sorted(SINGLE_MESSAGES))
async def test_one_message_as_input_is_checked_as_a_history_of_one(route: str, case: str):
    message, says = SINGLE_MESSAGES[case]
    agent = ReActAgent("bot", "", ScriptedModel(["unused"]))
    async with serving(create_app(agent)) as client:
        body = {"input": message, "session_id": "s1"}
        answer = await client.post(f"/v1/agents/bot/{route}", json=body)
        assert answer.status == 422, await answer.text()
        error = (await answer.json())["error"]
        assert (error["code"], error["field"]) == ("invalid_input", "input")
        assert says in error["message"]
        assert (await client.get("/v1/sessions/s1")).status == 404  # nothing was saved
        ok = await client.post(
            f"/v1/agents/bot/{route}", json={"input": {"role": "user", "content": "hi"}}
        )
        assert ok.status == 200


CHAT_CALL = {"id": "c1", "type": "function", "function": {"name": "slow", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("message", "param"),
    [
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**CHAT_CALL, "function": {"name": "slow", "arguments": "{oops"}}],
            },
            "messages[1].tool_calls[0].function.arguments",
        ),
        (
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,%%%"}}
                ],
            },
            "messages[1].content[0].image_url.url",
        ),
    ],
)
async def test_the_openai_route_refuses_unreadable_history(message: dict[str, Any], param: str):
    messages = [{"role": "user", "content": "hi"}, message]
    if message["role"] == "assistant":
        messages += [{"role": "tool", "tool_call_id": "c1", "content": "x"}]
    messages.append({"role": "user", "content": "and?"})
    agent = ReActAgent("bot", "", ScriptedModel(["ok"]))
    async with serving(create_app(agent)) as client:
        answer = await client.post(
            "/v1/chat/completions", json={"model": "bot", "messages": messages}
        )
        assert answer.status == 422
        assert (await answer.json())["error"]["param"] == param
