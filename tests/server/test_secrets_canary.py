"""Canary keys: the server's API key and a provider's key never show, wherever one looks.

One server (`serve()`, as `run_server` runs it) with a canary bearer key, and agents whose
`OpenAIChatModel` has a canary provider key, against `FakeOpenAIServer`s: one that answers
(a tool call, then a streamed reply) and some that fail every request with errors that quote
the key (in the message, in a raw HTML body, in a mid-stream error). Then neither key may be in
the logs (`rxagent.*` and `aiohttp.*`, every level), the error bodies, the SSE streams (runs,
UI, chat completions), `/metrics`, `/openapi.json`, the saved state (the SQLite file) or the
`repr()` of agents, models, stores and the server's objects.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from rxagent import ReActAgent, tool
from rxagent.models import OpenAIChatModel, RetryPolicy
from rxagent.server import SERVER_KEY, ServerConfig, create_app, serve
from rxagent.state import SQLiteStore
from rxagent.testing import tool_call
from rxagent.testing.providers import FakeOpenAIServer, Fault
from rxagent.testing.providers._base import RecordedRequest

SECRET_PART = uuid.uuid4().hex
SERVER_CANARY = f"canary-server-{SECRET_PART[:24]}"
"""The server's bearer key: no key shape, so only knowing the key can cut it."""
PROVIDER_CANARY = f"sk-canary-{SECRET_PART[8:]}"
"""The provider's key, shaped as OpenAI's."""
CANARIES = (SERVER_CANARY, PROVIDER_CANARY, SECRET_PART[:24], SECRET_PART[8:])


def _leaks(text: str) -> list[str]:
    """The canaries (or their random parts) found in `text`."""
    return [canary for canary in CANARIES if canary in text]


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def _answer(request: RecordedRequest) -> Any:
    if request.body["messages"][-1]["role"] == "user":
        return tool_call("add", a=2, b=3)
    return "The sum of 2 and 3 is 5."


FAULTS: dict[str, Fault] = {
    "auth": Fault(
        status=401,
        error_type="invalid_api_key",
        message=f"Incorrect API key provided: {PROVIDER_CANARY}.",
    ),
    "server": Fault(status=500, message=f"internal error while serving key {PROVIDER_CANARY}"),
    "html": Fault(
        status=502,
        body=f"<html>bad gateway; Authorization: Bearer {PROVIDER_CANARY}</html>".encode(),
        content_type="text/html",
    ),
    "stream": Fault(mid_stream_error=1, message=f"stream broken for {PROVIDER_CANARY}"),
    "invalid": Fault(
        status=400,
        error_type="invalid_request_error",
        message=f"Invalid request from the key {PROVIDER_CANARY}: 'messages' is too long",
    ),
}
"""Every request of an agent `failing-<name>` fails so, quoting the key."""


async def _no_wait(_: float) -> None:
    """The retry's sleep: no time passes."""


def _model(server: FakeOpenAIServer) -> OpenAIChatModel:
    retry = RetryPolicy(max_retries=1, sleep=_no_wait)
    return OpenAIChatModel(
        "gpt-4o-mini", base_url=server.base_url, api_key=PROVIDER_CANARY, max_retries=retry
    )


class Capture(logging.Handler):
    """Every record that reaches a handler, formatted with its exception and stack."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def captured() -> Iterator[Capture]:
    """`rxagent.*` and `aiohttp.*` at DEBUG, caught at the root as a handler sees them."""
    handler = Capture()
    root = logging.getLogger()
    loggers = [logging.getLogger(name) for name in ("rxagent", "aiohttp")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@dataclass
class Seen:
    """Everything the surfaces showed, by where it came from."""

    texts: dict[str, str] = field(default_factory=dict)

    def add(self, where: str, text: str) -> None:
        assert where not in self.texts, where
        self.texts[where] = text

    def leaks(self) -> dict[str, list[str]]:
        return {where: found for where, text in self.texts.items() if (found := _leaks(text))}


@dataclass
class Served:
    url: str
    app: Any
    agents: list[ReActAgent]
    store: SQLiteStore
    failing: dict[str, FakeOpenAIServer]


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    answering = FakeOpenAIServer(_answer, chunk_size=5)
    failing = {name: FakeOpenAIServer(["never sent"]) for name in FAULTS}
    for name, fault in FAULTS.items():
        for request in range(1, 200):
            failing[name].fail(request, fault)
    servers = [answering, *failing.values()]
    for server in servers:
        await server.start()
    agents = [ReActAgent("answering", "You add.", _model(answering), tools=[add])]
    agents += [
        ReActAgent(f"failing-{name}", "", _model(server), tools=[add])
        for name, server in failing.items()
    ]
    store = SQLiteStore(str(tmp_path / "sessions.db"))
    app = create_app(agents, store=store, auth=[SERVER_CANARY], config=ServerConfig())
    stop = asyncio.Event()
    urls: list[str] = []
    task = asyncio.create_task(
        serve(app, port=0, print_url=False, stop=stop, on_listening=urls.append)
    )
    try:
        while not urls:
            assert not task.done(), task
            await asyncio.sleep(0.01)
        yield Served(urls[0], app, agents, store, failing)
    finally:
        stop.set()
        await task
        for server in servers:
            await server.stop()
        await store.aclose()


AUTH = {"Authorization": f"Bearer {SERVER_CANARY}"}
CHAT = {"messages": [{"role": "user", "content": "What is 2 + 3?"}]}


async def _text(
    http: aiohttp.ClientSession, method: str, url: str, *, status: int | None = None, **kw: Any
) -> str:
    async with http.request(method, url, **kw) as response:
        text = await response.text()
        if status is not None:
            assert response.status == status, (url, response.status, text)
        return text


async def _runs(http: aiohttp.ClientSession, base: str, agent: str, seen: Seen) -> None:
    """Every run route, for one agent: JSON, SSE, UI, chat completions whole and streamed."""
    run = {"input": "What is 2 + 3?", "session_id": None}
    seen.add(
        f"{agent} runs",
        await _text(http, "POST", f"{base}/v1/agents/{agent}/runs", json=run, headers=AUTH),
    )
    seen.add(
        f"{agent} runs:stream",
        await _text(http, "POST", f"{base}/v1/agents/{agent}/runs:stream", json=run, headers=AUTH),
    )
    seen.add(
        f"{agent} ui",
        await _text(http, "POST", f"{base}/v1/agents/{agent}/ui", json=run, headers=AUTH),
    )
    for stream in (False, True):
        body = {**CHAT, "model": agent, "stream": stream}
        seen.add(
            f"{agent} chat stream={stream}",
            await _text(http, "POST", f"{base}/v1/chat/completions", json=body, headers=AUTH),
        )


async def _errors(http: aiohttp.ClientSession, base: str, seen: Seen) -> None:
    """Error bodies: keys that are wrong or sent wrongly, 4xx of every kind."""
    sessions = f"{base}/v1/sessions"
    wrong = {
        "no key": {},
        "a wrong key": {"Authorization": "Bearer not-the-key-0000"},
        "the key with a suffix": {"Authorization": f"Bearer {SERVER_CANARY}x"},
        "the key as Basic": {"Authorization": f"Basic {SERVER_CANARY}"},
        "the key without a scheme": {"Authorization": SERVER_CANARY},
        "the key in x-api-key": {"X-Api-Key": SERVER_CANARY},
    }
    for name, headers in wrong.items():
        seen.add(f"401 {name}", await _text(http, "GET", sessions, headers=headers, status=401))
        seen.add(
            f"401 chat, {name}",
            await _text(
                http,
                "POST",
                f"{base}/v1/chat/completions",
                json={**CHAT, "model": "answering"},
                headers=headers,
                status=401,
            ),
        )
    two = [("Authorization", f"Bearer {SERVER_CANARY}"), ("Authorization", "Bearer other-key")]
    seen.add("400 two keys", await _text(http, "GET", sessions, headers=two, status=400))
    runs = f"{base}/v1/agents/answering/runs"
    seen.add(
        "422 the key in the body",
        await _text(
            http,
            "POST",
            runs,
            json={"input": "hi", "api_key": SERVER_CANARY, "session_id": SERVER_CANARY + "!"},
            headers=AUTH,
            status=422,
        ),
    )
    seen.add(
        "422 chat, the key in the body",
        await _text(
            http,
            "POST",
            f"{base}/v1/chat/completions",
            json={**CHAT, "model": "answering", "api_key": PROVIDER_CANARY, "user": 5},
            headers=AUTH,
        ),
    )
    seen.add(
        "422 chat, a provider key as the session header",
        await _text(
            http,
            "POST",
            f"{base}/v1/chat/completions",
            json={**CHAT, "model": "answering"},
            headers={**AUTH, "X-Session-Id": f"chat/{PROVIDER_CANARY}"},
            status=422,
        ),
    )
    seen.add(
        "404 unknown agent",
        await _text(http, "POST", f"{base}/v1/agents/nobody/runs", json={"input": "hi"},
                    headers=AUTH, status=404),
    )  # fmt: skip
    seen.add(
        "404 unknown session",
        await _text(http, "GET", f"{sessions}/nobody-{uuid.uuid4().hex}", headers=AUTH, status=404),
    )
    seen.add("405", await _text(http, "PUT", runs, headers=AUTH, status=405))
    seen.add(
        "413",
        await _text(http, "POST", runs, data=io.BytesIO(b"x" * (2 << 20)), headers={**AUTH,
                    "Content-Type": "application/json"}, status=413),
    )  # fmt: skip


def _raw_request(url: str, request: bytes) -> str:
    """Send raw bytes (a malformed request aiohttp's client would refuse) and read the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


async def _malformed(base: str, seen: Seen) -> None:
    """Requests the HTTP parser refuses, with the key in a header next to the fault."""
    bad_header = (
        f"GET /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {SERVER_CANARY}\r\n"
        f"X-Broken {PROVIDER_CANARY}\r\n\r\n"
    ).encode()
    bad_line = f"GET /v1/sessions?key={SERVER_CANARY} HTTP/1.1 extra\r\n\r\n".encode()
    bad_value = (
        f"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {SERVER_CANARY}\x01\r\n\r\n"
    ).encode()
    for name, request in (("header", bad_header), ("line", bad_line), ("value", bad_value)):
        seen.add(f"malformed {name}", await asyncio.to_thread(_raw_request, base, request))


async def test_no_canary_key_shows_anywhere(served: Served, captured: Capture):
    seen = Seen()
    base = served.url
    async with aiohttp.ClientSession() as http:
        # the fake provider does quote the key: the canary is live
        failing = served.failing["auth"]
        echoed = await _text(http, "POST", f"{failing.base_url}/chat/completions", json={})
        assert PROVIDER_CANARY in echoed
        for agent in served.agents:
            await _runs(http, base, agent.name, seen)
        await _errors(http, base, seen)
        await _malformed(base, seen)
        for agent in served.agents:
            listing = await _text(
                http, "GET", f"{base}/v1/sessions?agent={agent.name}", headers=AUTH, status=200
            )
            seen.add(f"GET /v1/sessions?agent={agent.name}", listing)
            for session_id in _session_ids(listing):
                seen.add(
                    f"GET /v1/sessions/{session_id}",
                    await _text(
                        http, "GET", f"{base}/v1/sessions/{session_id}", headers=AUTH, status=200
                    ),
                )
        seen.add("/metrics", await _text(http, "GET", f"{base}/metrics", headers=AUTH, status=200))
        seen.add("/openapi.json", await _text(http, "GET", f"{base}/openapi.json", status=200))
        seen.add("/", await _text(http, "GET", f"{base}/", headers=AUTH))
    ctx = served.app[SERVER_KEY]
    for i, agent in enumerate(served.agents):
        seen.add(f"repr(agent {i})", f"{agent!r} {agent!s}")
        seen.add(f"repr(model {i})", f"{agent.model!r} {agent.model!s}")
    seen.add("repr(store)", f"{served.store!r} {served.store!s}")
    for i, other in enumerate(_other_objects()):
        seen.add(f"repr(other {i})", f"{other!r} {other!s}")
    seen.add("repr(server)", f"{ctx!r} {ctx.config!r} {ctx.keys!r} {served.app!r}")

    # what was looked at is what was meant: runs answered, failed, were refused
    texts = seen.texts
    assert "The sum of 2 and 3 is 5." in texts["answering runs"]
    assert "event: post_call" in texts["failing-auth runs:stream"]
    assert '"AUTH"' in texts["failing-auth runs"]
    assert all('"ok":false' in texts[f"failing-{name} runs"] for name in FAULTS)
    assert "rxagent_runs_total" in texts["/metrics"]
    assert len(captured.lines) > 10
    assert any("model failure" in line for line in captured.lines)

    store_bytes = b"".join(p.read_bytes() for p in Path(served.store._path).parent.glob("*"))
    leaks = seen.leaks()
    assert leaks == {}
    assert [line for line in captured.lines if _leaks(line)] == []
    assert not [c for c in CANARIES if c.encode() in store_bytes]


def _other_objects() -> list[object]:
    """Models of every provider and stores whose URLs carry the canaries (nothing connects)."""
    from rxagent.models import (
        AnthropicChatModel,
        AzureOpenAIChatModel,
        DashScopeChatModel,
        GeminiChatModel,
    )
    from rxagent.state import PostgresStore, RedisStore

    proxy = f"https://gateway:{SERVER_CANARY}@proxy.example/v1"
    return [
        OpenAIChatModel("gpt-4o-mini", base_url=proxy, api_key=PROVIDER_CANARY),
        OpenAIChatModel(
            "gpt-4o-mini", base_url=f"https://x.example/v1?api_key={SERVER_CANARY}", api_key="k"
        ),
        AnthropicChatModel("claude", api_key=PROVIDER_CANARY),
        GeminiChatModel("gemini", api_key=PROVIDER_CANARY),
        DashScopeChatModel("qwen", api_key=PROVIDER_CANARY),
        AzureOpenAIChatModel(
            "deployment", base_url="https://r.openai.azure.com", api_key=PROVIDER_CANARY
        ),
        PostgresStore(f"postgresql://rxagent:{SERVER_CANARY}@127.0.0.1:1/test"),
        RedisStore(f"redis://:{SERVER_CANARY}@127.0.0.1:1/0"),
    ]


def _session_ids(listing: str) -> list[str]:
    return [item["session_id"] for item in json.loads(listing)["sessions"]]


async def test_a_provider_error_inside_the_stream_is_redacted_by_the_model():
    """The library's own answer: no server, a key with no key shape, an in-stream error."""
    key = f"canary-provider-{uuid.uuid4().hex}"
    fault = Fault(mid_stream_error=1, message=f"stream broken; your key {key} is over its quota")
    async with FakeOpenAIServer(["never sent"]) as server:
        for request in range(1, 10):
            server.fail(request, fault)
        retry = RetryPolicy(max_retries=2, sleep=_no_wait)
        model = OpenAIChatModel(
            "gpt-4o-mini", base_url=server.base_url, api_key=key, max_retries=retry
        )
        agent = ReActAgent("bot", "", model)
        events = [event async for event in agent.events("hi")]
        await agent.aclose()
    texts = [event.model_dump_json() for event in events]
    assert any('"type":"retry"' in text for text in texts)
    assert any("over its quota" in text for text in texts)  # the provider's text is there
    assert [text for text in texts if key in text] == []


def test_retries_and_fallbacks_reach_clients_as_a_code_and_a_request_id():
    """A retried or fallen-back request's provider text is kept for the log, as an error's is."""
    from rxagent import ErrorCode, ErrorEvent
    from rxagent.events import FallbackEvent, RetryEvent
    from rxagent.server._public import PublicErrors

    detail = "Cannot connect to host 10.0.0.7:443 for org-internal"
    seen: list[Any] = []
    public = PublicErrors(seen.append)
    retry = public(
        RetryEvent(attempt=2, delay_s=0.5, code=ErrorCode.PROVIDER_ERROR, message=detail)
    )
    fallback = public(
        FallbackEvent(from_model="a", to_model="b", code=ErrorCode.PROVIDER_ERROR, message=detail)
    )
    error = public(
        ErrorEvent(code=ErrorCode.PROVIDER_ERROR, message=detail, source="model", recoverable=True)
    )
    shown = [getattr(event, "message", "") for event in (retry, fallback, error)]
    assert all(detail not in text for text in shown)
    assert all(text.startswith("the model provider failed (PROVIDER_ERROR)") for text in shown)
    ids = {match[1] for text in shown if (match := REQUEST_ID.search(text))}
    assert len(ids) == 1  # one failure, one request id
    assert seen == [retry, fallback, error]
    quiet = RetryEvent(attempt=2, delay_s=0.5, code=ErrorCode.RATE_LIMITED)
    assert public(quiet) is quiet  # nothing to hide: passed as it is


REQUEST_ID = re.compile(r"request id (req-[0-9a-f]{12})")
