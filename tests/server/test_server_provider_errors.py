"""A provider's failure reaches clients as its code and a request id; the log has the detail.

The provider here echoes the `Authorization` header it got in its error body, as some do.
"""

from __future__ import annotations

import re
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from server_helpers import secured_server  # type: ignore[import-not-found]

from rxagent import AgentResult

PROVIDER_KEY = "sk-proj-providerkey0123456789abcdef"


async def _echo_auth(request: web.Request) -> web.Response:
    error = {
        "message": f"Incorrect API key provided: {request.headers.get('Authorization')}",
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }
    return web.json_response({"error": error}, status=401)


@asynccontextmanager
async def echoing_provider() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", _echo_auth)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


REQUEST_ID = re.compile(r"request id (req-[0-9a-f]{12})")


async def _run(http: aiohttp.ClientSession, url: str, agent: str) -> tuple[AgentResult[Any], str]:
    async with http.post(f"{url}/v1/agents/{agent}/runs", json={"input": "hi"}) as answer:
        assert answer.status == 200
        text = await answer.text()
    return AgentResult[Any].model_validate_json(text), text


async def test_provider_failures_reach_clients_as_a_code_and_a_request_id(tmp_path: Path):
    log = tmp_path / "server.log"
    async with echoing_provider() as provider:
        env = {"RXAGENT_TEST_PROVIDER": provider, "RXAGENT_TEST_PROVIDER_KEY": PROVIDER_KEY}
        async with (
            secured_server(f"sqlite:{tmp_path / 's.db'}", stderr=log, env=env) as (proc, url),
            aiohttp.ClientSession() as http,
        ):
            echoed, echoed_text = await _run(http, url, "remote")
            refused, refused_text = await _run(http, url, "offline")
            chat = {"model": "remote", "messages": [{"role": "user", "content": "hi"}]}
            async with http.post(f"{url}/v1/chat/completions", json=chat) as answer:
                openai_text = await answer.text()
                openai_status = answer.status
            async with http.post(
                f"{url}/v1/agents/remote/runs:stream", json={"input": "hi"}
            ) as stream:
                sse_text = await stream.text()
            proc.send_signal(signal.SIGTERM)
            assert await proc.wait() == 0
    assert echoed.error is not None
    assert echoed.error.code == "AUTH"
    assert refused.error is not None
    assert refused.error.code == "PROVIDER_ERROR"
    assert openai_status >= 400
    for text in (echoed_text, refused_text, openai_text, sse_text):
        assert PROVIDER_KEY not in text
        assert PROVIDER_KEY[:12] not in text
        assert "Cannot connect" not in text
        assert "127.0.0.1:9" not in text
        assert REQUEST_ID.search(text), text
    logged = log.read_text()
    assert PROVIDER_KEY not in logged  # redacted in the log as well
    for text in (echoed_text, refused_text):
        request_id = REQUEST_ID.search(text)
        assert request_id is not None
        (line,) = [line for line in logged.splitlines() if request_id[1] in line]
        assert "model failure" in line  # the log keeps the detail under the request id
    assert "Cannot connect" in logged or "ClientConnectorError" in logged
    assert "Incorrect API key provided: Bearer [redacted]" in logged
