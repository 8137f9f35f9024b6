"""A run imports only what it uses: no guard patterns, stores, providers or servers it does not use.

Each check runs in a fresh interpreter: it imports what a run needs (`ReActAgent`, `tool`,
`OpenAIChatModel`), runs one agent with a tool against a small fake OpenAI server, and lists the
modules that were imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import rxagent

# heavy or optional modules a ReActAgent run with OpenAIChatModel and no options never uses
DENIED = (
    "rich",
    "tiktoken",
    "tiktoken_ext",
    "qdrant_client",
    "opentelemetry",
    "mcp",
    "numpy",
    "redis",
    "asyncpg",
    "psycopg",
    "aiosqlite",
    "sqlite3",
    "rxagent.cli",
    "rxagent.server",
    "rxagent.telemetry",
    "rxagent.rag",
    "rxagent.multiagent",
    "rxagent.memory",
    "rxagent.demo",
    "rxagent.testing",
    "rxagent.tools.mcp",
    "rxagent.guards._patterns",
    "rxagent.guards._detector",
    "rxagent.guards._features",
    "rxagent.guards._classification",
    "rxagent.guards._pii",
    "rxagent.guards._rate_limit",
    "rxagent.state._sqlite",
    "rxagent.state._redis",
    "rxagent.state._postgres",
    "rxagent.state._control_sqlite",
    "rxagent.state._control_redis",
    "rxagent.state._control_pg",
    "rxagent.interceptors._cache",
    "rxagent.interceptors._breaker",
    "rxagent.interceptors._fallback",
    "rxagent.models.anthropic",
    "rxagent.models.gemini",
    "rxagent.models.dashscope",
    "rxagent.models.ollama",
    "rxagent.formatters.anthropic",
    "rxagent.formatters.gemini",
    "rxagent.formatters.dashscope",
    "rxagent.formatters.ollama",
)

RUN = r"""
import asyncio, json, sys

from rxagent import ReActAgent, tool
from rxagent.models import OpenAIChatModel
after_import = sorted(sys.modules)

from aiohttp import web

ARGS = json.dumps({"a": 1, "b": 2})
CALL = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": ARGS}}
REPLIES = [
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "assistant", "content": "3"},
]
USAGE = {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}


def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b


async def main() -> str:
    calls = 0

    async def complete(request):
        nonlocal calls
        body = await request.json()
        message = REPLIES[min(calls, 1)]
        calls += 1
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return web.json_response(
                {"id": "x", "model": "m", "choices": [choice], "usage": USAGE}
            )
        delta = dict(message)
        if delta.get("tool_calls"):
            delta["tool_calls"] = [dict(CALL, index=0)]
        chunks = [
            {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {"choices": [], "usage": USAGE},
        ]
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for chunk in chunks:
            data = json.dumps(dict(chunk, id="x", model="m"))
            await response.write(f"data: {data}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", complete)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    model = OpenAIChatModel("gpt-4o-mini", base_url=f"http://127.0.0.1:{port}/v1", api_key="x",
                            max_retries=0, stream=STREAM)
    agent = ReActAgent("lazy", "Be brief.", model, tools=[tool(add)])
    try:
        result = await agent.call("What is 1 + 2?")
    finally:
        await model.aclose()
        await runner.cleanup()
    return result.text


text = asyncio.run(main())
print(json.dumps({"text": text, "after_import": after_import, "after_run": sorted(sys.modules)}))
"""


def _modules(stream: bool) -> dict[str, Any]:
    root = str(Path(rxagent.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    code = RUN.replace("STREAM", repr(stream))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["text"] == "3"
    return result


def _denied(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if any(m == d or m.startswith(d + ".") for d in DENIED))


@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
def test_a_run_imports_nothing_it_does_not_use(stream: bool):
    modules = _modules(stream)
    assert _denied(modules["after_import"]) == []
    assert _denied(modules["after_run"]) == []


def test_the_lazy_packages_still_export_every_name():
    import importlib

    for package in ("guards", "state", "interceptors", "output", "tools", "tokens"):
        module = importlib.import_module(f"rxagent.{package}")
        assert set(module._EXPORTS) == set(module.__all__), package
        assert set(module.__all__) <= set(dir(module)), package
        for name in module.__all__:
            assert getattr(module, name) is getattr(
                importlib.import_module(module._EXPORTS[name]), name
            )
