"""Failures of the store and of the server itself: typed 5xx answers, streams that end, no leaks."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped,unused-ignore]
import pytest
from server_helpers import (  # type: ignore[import-not-found]
    Gate,
    gated_agent,
    parse_sse,
    read_frames_until,
    serving,
)

from rxagent import EVENT_ADAPTER, AgentState, ErrorEvent, InMemoryStore, ReActAgent, tool
from rxagent.errors import StoreUnavailableError
from rxagent.server import OWNER_KEY, SERVER_KEY, ServerConfig, create_app
from rxagent.state import InProcessControl, PostgresStore, SQLiteStore
from rxagent.state._store_common import unavailable
from rxagent.testing import ScriptedModel, tool_call

RUNS = "/v1/agents/bot/runs"
CHAT = "/v1/chat/completions"
UI = "/v1/agents/bot/ui"


class FlakyStore(InMemoryStore):
    """An in-memory store that can go down (every call, or only saves) and hold its saves."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False
        self.saves_fail = False  # the saves of a run (its session is leased) fail
        self.hold_saves = False
        self.deletes_fail = False
        self.save_entered = asyncio.Event()
        self.save_released = asyncio.Event()

    def __repr__(self) -> str:
        return "FlakyStore('postgresql://app:***@db/app')"

    def _check(self) -> None:
        if self.down:
            raise unavailable(self, ConnectionRefusedError("Connect call failed"))

    async def load(self, agent: str, session_id: str) -> Any:
        self._check()
        return await super().load(agent, session_id)

    async def save(self, agent: str, session_id: str, state: AgentState, **kw: Any) -> int:
        self._check()
        if self.saves_fail and await self.lease_holder(agent, session_id) is not None:
            raise unavailable(self, ConnectionResetError("Connection reset by peer"))
        if self.hold_saves:
            self.save_entered.set()
            await self.save_released.wait()
        return await super().save(agent, session_id, state, **kw)

    async def delete(self, agent: str, session_id: str) -> bool:
        self._check()
        if self.deletes_fail:
            raise unavailable(self, ConnectionResetError("Connection reset by peer"))
        return await super().delete(agent, session_id)

    async def acquire_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        self._check()
        return await super().acquire_lease(agent, session_id, owner, ttl_s)

    async def lease_holder(self, agent: str, session_id: str) -> str | None:
        self._check()
        return await super().lease_holder(agent, session_id)


async def store_unavailable(response: Any) -> dict[str, Any]:
    assert response.status == 503, await response.text()
    text = await response.text()
    assert "app:" not in text
    assert "Connect call" not in text
    error: dict[str, Any] = json.loads(text)["error"]
    assert error["code"] == "store_unavailable"
    assert response.headers["Retry-After"]
    return error


async def test_a_store_that_is_down_is_503_store_unavailable_on_every_route():
    store = FlakyStore()
    agent = ReActAgent("bot", "", ScriptedModel(["hi"] * 3), store=store)
    await store.save("bot", "s1", AgentState(extra={OWNER_KEY: "anonymous"}))
    store.down = True
    async with serving(create_app(agent)) as client:
        run = {"input": "hi", "session_id": "s1"}
        for response in (
            await client.post(RUNS, json=run),
            await client.post(RUNS, json={"input": "hi"}),
            await client.post(RUNS + ":stream", json=run),
            await client.post(UI, json=run),
            await client.get("/v1/sessions/s1"),
            await client.delete("/v1/sessions/s1"),
            await client.post("/v1/sessions/s1/interrupt"),
            await client.post("/v1/sessions/s1/approvals/a1", json={"approved": True}),
        ):
            await store_unavailable(response)
        chat = {"model": "bot", "messages": [{"role": "user", "content": "hi"}]}
        for stream in (False, True):
            response = await client.post(CHAT, json={**chat, "stream": stream})
            assert response.status == 503
            error = (await response.json())["error"]
            assert error["type"] == "server_error"
            assert error["code"] == "store_unavailable"
            assert set(error) == {"message", "type", "param", "code"}
        metrics = await (await client.get("/metrics")).text()
        assert 'rxagent_api_errors_total{code="store_unavailable",status="503"} 10.0' in metrics
        store.down = False  # the store is back: so is the server
        assert (await client.post(RUNS, json=run)).status == 200


async def test_a_real_postgres_store_that_is_down_is_503_not_a_traceback():
    store = PostgresStore("postgresql://app:s3cret@127.0.0.1:1/db")
    store._control = InProcessControl()  # the app's control subscription stays local
    agent = ReActAgent("bot", "", ScriptedModel(["hi"]), store=store)
    try:
        async with serving(create_app(agent)) as client:
            await store_unavailable(await client.post(RUNS, json={"input": "hi"}))
            await store_unavailable(await client.get("/v1/sessions/s1"))
    finally:
        await store.aclose()


async def test_a_store_failing_mid_run_ends_every_kind_of_stream_with_a_typed_error():
    store = FlakyStore()
    agent = ReActAgent("bot", "", ScriptedModel(["hi"] * 4), store=store)
    async with serving(create_app(agent)) as client:
        store.saves_fail = True  # each run starts, then cannot save its end
        await store_unavailable(await client.post(RUNS, json={"input": "x", "session_id": "a"}))

        response = await client.post(RUNS + ":stream", json={"input": "x", "session_id": "b"})
        assert response.status == 200
        frames = parse_sse((await response.read()).decode())  # the stream ends: no hang
        kind, data = frames[-1]
        last = EVENT_ADAPTER.validate_python(data)
        assert kind == "error"
        assert isinstance(last, ErrorEvent)
        assert last.source == "server"
        assert not last.recoverable
        assert "unavailable" in last.message
        assert "app:" not in last.message
        assert last.run_id == frames[0][1]["run_id"]
        assert last.seq > frames[-2][1]["seq"]

        chat = {"model": "bot", "messages": [{"role": "user", "content": "x"}], "stream": True}
        body = (await (await client.post(CHAT, json=chat)).read()).decode()
        error = json.loads(body.strip().split("\n\n")[-1].removeprefix("data: "))["error"]
        assert error["code"] == "store_unavailable"
        assert error["type"] == "server_error"

        ui = await (await client.post(UI, json={"input": "x", "session_id": "c"})).read()
        chunks = [json.loads(f[6:]) for f in ui.decode().split("\n\n") if f[6:7] == "{"]
        failure = next(c for c in chunks if c["type"] == "error")
        assert "unavailable" in failure["errorText"]
        assert "app:" not in failure["errorText"]
        assert ui.endswith(b"data: [DONE]\n\n")
    assert await agent.wait_idle(10)
    assert not agent.running_sessions()


async def test_a_stream_cut_off_by_the_store_names_it_and_the_session_goes_on_once_it_is_back():
    store = FlakyStore()
    agent = ReActAgent("bot", "", ScriptedModel(["hi", "again"]), store=store)
    async with serving(create_app(agent)) as client:
        store.saves_fail = True
        body = {"input": "x", "session_id": "s1"}
        response = await client.post(RUNS + ":stream", json=body)
        kind, data = parse_sse((await response.read()).decode())[-1]
        last = EVENT_ADAPTER.validate_python(data)
        assert kind == "error"
        assert isinstance(last, ErrorEvent)
        assert last.exception == "StoreUnavailableError"  # not some internal failure: retry
        store.saves_fail = False
        again = await client.post(RUNS, json={"input": "y", "session_id": "s1"})
        assert again.status == 200
        assert (await again.json())["reply"]["content"] == [{"type": "text", "text": "again"}]


async def test_an_unexpected_failure_of_the_openai_route_is_an_openai_error_body(
    monkeypatch: pytest.MonkeyPatch,
):
    from rxagent.server import _openai

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom: internal detail")

    monkeypatch.setattr(_openai, "completion_body", broken)
    agent = ReActAgent("bot", "", ScriptedModel(["hi"]))
    async with serving(create_app(agent)) as client:
        chat = {"model": "bot", "messages": [{"role": "user", "content": "hi"}]}
        response = await client.post(CHAT, json=chat)
        assert response.status == 500
        error = (await response.json())["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["type"] == "server_error"
        assert error["code"] == "internal_error"
        assert "boom" not in error["message"]


@pytest.mark.parametrize("session_id", ["%00", "a%00b", "has%20space", "x" * 200])
async def test_a_session_id_no_store_can_hold_is_a_typed_422_not_a_500(
    tmp_path: Path, session_id: str
):
    store = SQLiteStore(tmp_path / "s.db")
    agent = ReActAgent("bot", "", ScriptedModel([]), store=store)
    try:
        async with serving(create_app(agent)) as client:
            for response in (
                await client.get(f"/v1/sessions/{session_id}"),
                await client.delete(f"/v1/sessions/{session_id}"),
                await client.post(f"/v1/sessions/{session_id}/interrupt"),
                await client.post(
                    f"/v1/sessions/{session_id}/approvals/a1", json={"approved": True}
                ),
            ):
                assert response.status == 422, await response.text()
                error = (await response.json())["error"]
                assert error["code"] == "invalid_session_id"
                assert error["field"] == "session_id"
                assert len(error["message"]) < 300  # a long id is not echoed whole
    finally:
        await store.aclose()


async def test_tool_names_the_model_makes_up_cannot_grow_the_metrics_without_bound():
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    made_up = [tool_call(f"made_up_{i}") for i in range(80)]
    model = ScriptedModel([made_up, tool_call("add", a=1, b=2), "done"])
    agent = ReActAgent("bot", "", model, tools=[add], max_iters=5)
    async with serving(create_app(agent)) as client:
        assert (await client.post(RUNS, json={"input": "hi"})).status == 200
        metrics = await (await client.get("/metrics")).text()
    tools = [line for line in metrics.splitlines() if line.startswith("rxagent_tool_calls_total{")]
    assert 'rxagent_tool_calls_total{agent="bot",tool="add"} 1.0' in tools  # its own tools count
    assert any('tool="other"' in line for line in tools)
    assert len(tools) <= 66  # at most 64 other names, "other", and the agent's own


async def test_a_cancelled_run_is_saved_before_the_server_counts_it_done():
    gate = Gate()
    store = FlakyStore()
    agent = gated_agent(gate, store=store)
    app = create_app(agent, config=ServerConfig(keepalive_s=0.01))
    ctx = app[SERVER_KEY]
    async with serving(app) as client:
        chat = {"model": "bot", "messages": [{"role": "user", "content": "go"}], "stream": True}
        stream = await client.post(CHAT, json=chat)
        await gate.started.wait()
        store.hold_saves = True
        stream.close()  # the client leaves: the run is cancelled and saves what it has
        await store.save_entered.wait()
        assert await ctx.wait_idle(timeout=0) is False  # still saving: not done yet
        store.hold_saves = False
        store.save_released.set()
        assert await ctx.wait_idle(timeout=10)
        assert not agent.running_sessions()
    # the stateless request left nothing behind: its throw-away session was deleted last
    assert await store.list_sessions("bot") == []


async def test_an_interrupt_reason_too_long_for_postgres_notify_is_a_422(postgres_dsn: str):
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    store = PostgresStore(postgres_dsn, table_prefix=prefix)
    agent = ReActAgent("bot", "", ScriptedModel([]), store=store)
    try:
        await store.save("bot", "s1", AgentState(extra={OWNER_KEY: "anonymous"}))
        assert await store.acquire_lease("bot", "s1", "run-elsewhere", 60)
        async with serving(create_app(agent)) as client:
            url = "/v1/sessions/s1/interrupt"
            response = await client.post(url, json={"reason": "é" * 5000})
            assert response.status == 422, await response.text()
            error = (await response.json())["error"]
            assert error["field"] == "reason"
            assert "shorten" in error["message"]
            ok = await client.post(url, json={"reason": "stop"})
            assert ok.status == 202
            assert (await ok.json())["where"] == "remote"
    finally:
        await store.aclose()
        admin = await asyncpg.connect(postgres_dsn)
        try:
            for table in ("sessions", "leases", "meta"):
                await admin.execute(f"DROP TABLE IF EXISTS {prefix}{table}")
        finally:
            await admin.close()


async def test_streams_read_events_up_to_the_failure(monkeypatch: pytest.MonkeyPatch):
    # a failure of the server's own code mid-stream ends the SSE stream with a typed error too
    from rxagent.server import _runs

    real = _runs.sse_frame

    def failing(event: Any) -> bytes:
        if event.type == "post_reasoning":
            raise RuntimeError("secret internal detail")
        return real(event)

    monkeypatch.setattr(_runs, "sse_frame", failing)
    agent = ReActAgent("bot", "", ScriptedModel(["hi"]))
    async with serving(create_app(agent)) as client:
        response = await client.post(RUNS + ":stream", json={"input": "x"})
        frames = parse_sse((await response.read()).decode())
    kind, data = frames[-1]
    assert kind == "error"
    assert data["source"] == "server"
    assert "secret" not in data["message"]
    assert await agent.wait_idle(10)


async def test_a_stream_of_a_gated_run_reads_like_before():
    # a sanity check of the helpers this file shares with the lifecycle tests
    gate = Gate()
    agent = gated_agent(gate)
    async with serving(create_app(agent)) as client:
        response = await client.post(RUNS + ":stream", json={"input": "go"})
        frames = await read_frames_until(response, "pre_acting")
        gate.release.set()
        rest = parse_sse((await response.read()).decode())
    assert frames[0][0] == "pre_call"
    assert rest[-1][0] == "post_call"


@pytest.mark.parametrize("token", [b"\xff\xfe", "k\u00e9y".encode(), b"k1\x00"])
async def test_a_token_of_any_bytes_is_a_401_not_a_500(token: bytes):
    from aiohttp.test_utils import TestServer

    app = create_app(ReActAgent("bot", "", ScriptedModel([])), auth=["k1"])
    async with TestServer(app, host="127.0.0.1") as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(
            b"GET /v1/sessions/s1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + token
            + b"\r\nConnection: close\r\n\r\n"
        )
        await writer.drain()
        answer = await reader.read()
        writer.close()
        await writer.wait_closed()
    status = answer.split(b"\r\n")[0].split(b" ")[1]
    assert status in (b"401", b"400")  # aiohttp refuses a NUL in a header itself
    assert b"internal_error" not in answer


async def test_serve_closes_what_it_opened_when_a_store_is_down_at_startup():
    from rxagent.server import serve

    local = InMemoryStore()
    down = PostgresStore("postgresql://app:s3cret@127.0.0.1:1/db")
    agents = [
        ReActAgent("first", "", ScriptedModel([]), store=local),
        ReActAgent("second", "", ScriptedModel([]), store=down),
    ]
    with pytest.raises(StoreUnavailableError):
        await serve(create_app(agents), port=0, print_url=False)
    channel = local.control()
    assert isinstance(channel, InProcessControl)
    assert channel._subscribers == set()  # the subscription made before the failure is closed
    assert down._closed  # and every agent's store is closed


async def test_a_stateless_answer_stands_when_its_session_cannot_be_deleted(
    caplog: pytest.LogCaptureFixture,
):
    store = FlakyStore()
    agent = ReActAgent("bot", "", ScriptedModel(["one", "two"]), store=store)
    store.deletes_fail = True  # the answer is ready when the clean-up fails
    async with serving(create_app(agent)) as client:
        chat = {"model": "bot", "messages": [{"role": "user", "content": "hi"}]}
        whole = await client.post(CHAT, json=chat)
        assert whole.status == 200
        assert (await whole.json())["choices"][0]["message"]["content"] == "one"
        streamed = await client.post(CHAT, json={**chat, "stream": True})
        body = (await streamed.read()).decode()
        assert body.endswith("data: [DONE]\n\n")
        assert '"two"' in body
    assert "could not delete the throw-away session" in caplog.text
