"""The npm `ai` package reads the UI message stream (tests/server/node/read_stream.mjs).

The reader parses the stream exactly as `useChat`'s DefaultChatTransport does
(`parseJsonEventStream` + `uiMessageChunkSchema`), assembles it with `readUIMessageStream`, checks
the message with `validateUIMessages` and `convertToModelMessages`, and prints it as JSON.

Node is needed: without it these tests skip, except under CI=true, where they fail. A missing
`node_modules` is installed once per session with `npm ci` (pinned by package-lock.json).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, NoReturn

import pytest
from aiohttp import web

from rxagent import ErrorCode, ReActAgent, current_run, tool
from rxagent.error_messages import DEFAULT_ERROR_MESSAGES
from rxagent.server import create_app
from rxagent.testing import ScriptedModel, text, thinking, tool_call

NODE_DIR = Path(__file__).resolve().parent / "node"
READER = NODE_DIR / "read_stream.mjs"


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true needs Node for the AI SDK test: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def node_reader() -> list[str]:
    """The command that runs the reader; installs its node_modules with `npm ci` if missing."""
    node = shutil.which("node")
    if node is None:
        _unavailable("Node.js (18 or later) is not installed; install it to run the AI SDK test")
    if not (NODE_DIR / "node_modules" / "ai" / "package.json").is_file():
        npm = shutil.which("npm")
        if npm is None:
            _unavailable(f"npm is not installed, and {NODE_DIR}/node_modules is missing")
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            _unavailable(f"`npm ci` failed in {NODE_DIR}: {done.stderr.strip()[-2000:]}")
    return [node, str(READER)]


async def read_with_node(reader: list[str], agent: ReActAgent, *args: str) -> dict[str, Any]:
    """Serve `agent` on 127.0.0.1, run the reader against its UI route, return its output."""
    runner = web.AppRunner(create_app(agent))
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        url = f"http://127.0.0.1:{port}/v1/agents/{agent.name}/ui"
        proc = await asyncio.create_subprocess_exec(
            *reader, url, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), 60)  # a hang guard
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
    finally:
        await runner.cleanup()
    assert proc.returncode == 0, err.decode()
    result: dict[str, Any] = json.loads(out)
    return result


@tool
def weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


@tool
async def count(n: int) -> dict[str, int]:
    """Counts to n, reporting progress.

    Args:
        n: How far.
    """
    for i in range(n):
        current_run().progress({"done": i + 1})
    return {"counted": n}


async def test_the_ai_sdk_reads_a_run_that_calls_tools_then_answers(node_reader):
    first: list[Any] = [
        thinking("The user wants the weather.", signature="sig"),
        text("Let me check."),
        tool_call("weather", city="Paris"),
        tool_call("count", id="provider-7", n=2),
    ]
    model = ScriptedModel([first, "It is sunny in Paris."], chunk_size=5)
    agent = ReActAgent("bot", "", model, tools=[weather, count])
    result = await read_with_node(node_reader, agent, "Weather in Paris?", "chat-42")
    assert result["errors"] == []
    message = result["message"]
    assert message["role"] == "assistant"
    assert message["metadata"]["sessionId"] == "chat-42"
    assert message["metadata"]["ok"] is True
    parts = message["parts"]
    assert [p["type"] for p in parts] == [
        "step-start",
        "reasoning",
        "text",
        "tool-weather",
        "tool-count",
        "data-tool-progress",
        "step-start",
        "text",
    ]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts == ["Let me check.", "It is sunny in Paris."]
    assert parts[1]["text"] == "The user wants the weather."
    assert parts[1]["state"] == "done"
    weather_part, count_part = parts[3], parts[4]
    assert weather_part["toolCallId"] == "call_1"
    assert weather_part["state"] == "output-available"
    assert weather_part["input"] == {"city": "Paris"}
    assert weather_part["output"] == "sunny in Paris"
    assert count_part["toolCallId"] == "provider-7"
    assert count_part["state"] == "output-available"
    assert count_part["input"] == {"n": 2}
    assert json.loads(count_part["output"]) == {"counted": 2}
    assert parts[5] == {"type": "data-tool-progress", "id": "provider-7", "data": {
        "toolCallId": "provider-7", "toolName": "count", "chunk": {"done": 2}}}  # fmt: skip


async def test_the_ai_sdk_sees_a_failed_run_as_an_error(node_reader):
    agent = ReActAgent("bot", "", ScriptedModel([]))
    result = await read_with_node(node_reader, agent, "hi")
    [error] = result["errors"]
    assert error["message"].startswith("PROVIDER_ERROR: ")
    assert result["message"]["metadata"]["ok"] is False
    [part] = [p for p in result["message"]["parts"] if p["type"] == "text"]
    assert part["text"] == DEFAULT_ERROR_MESSAGES[ErrorCode.PROVIDER_ERROR]


def test_a_missing_node_skips_but_fails_under_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no node"):
        _unavailable("no node")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true needs Node"):
        _unavailable("no node")
