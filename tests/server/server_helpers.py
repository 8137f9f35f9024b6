"""Helpers for the server tests: clients, SSE parsing, a gate tool that holds a run open."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer

from rxagent import InMemoryStore, Msg, ReActAgent, tool
from rxagent.testing import FunctionModel, tool_call


class RunnerTestServer(TestServer):
    """A TestServer whose AppRunner takes extra keyword arguments (`handler_cancellation`...)."""

    def __init__(self, app: web.Application, **runner_kw: Any) -> None:
        super().__init__(app, host="127.0.0.1")
        self._runner_kw = runner_kw

    async def _make_runner(self, **kwargs: Any) -> web.AppRunner:
        return web.AppRunner(self.app, **{**kwargs, **self._runner_kw})


@asynccontextmanager
async def serving(app: web.Application, **runner_kw: Any) -> AsyncIterator[TestClient[Any, Any]]:
    """A test client of `app` on 127.0.0.1 (closed, with the server, at the end).

    `runner_kw` go to the `AppRunner` (aiohttp's TestServer cancels handlers of clients that
    disconnect; `handler_cancellation=False` is `web.run_app`'s default).
    """
    async with TestClient(RunnerTestServer(app, **runner_kw)) as client:
        yield client


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """`(event, data)` for each frame of an SSE body; comments (keep-alives) are skipped."""
    frames = []
    for block in text.split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if not lines:
            continue
        event = next(line[7:] for line in lines if line.startswith("event: "))
        data = "\n".join(line[6:] for line in lines if line.startswith("data: "))
        frames.append((event, json.loads(data)))
    return frames


async def read_frames_until(
    response: ClientResponse, event_type: str
) -> list[tuple[str, dict[str, Any]]]:
    """Read SSE frames from a streaming response until one of `event_type` arrived."""
    frames: list[tuple[str, dict[str, Any]]] = []
    while not any(kind == event_type for kind, _ in frames):
        chunk = await response.content.readuntil(b"\n\n")
        assert chunk, f"the stream ended before a {event_type!r} frame"
        frames.extend(parse_sse(chunk.decode()))
    return frames


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


class Gate:
    """A tool that holds its run open until released; it records a cancellation."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.calls = 0
        self._counted = asyncio.Condition()

    async def reached(self, calls: int) -> None:
        """Wait until the tool has been called `calls` times."""
        async with self._counted:
            await self._counted.wait_for(lambda: self.calls >= calls)

    def tool(self) -> Any:
        gate = self

        @tool
        async def wait_here() -> str:
            """Wait until the test opens the gate."""
            gate.calls += 1
            gate.started.set()
            async with gate._counted:
                gate._counted.notify_all()
            try:
                await gate.release.wait()
            except asyncio.CancelledError:
                gate.cancelled.set()
                raise
            return "released"

        return wait_here


def _call_the_gate_then_answer(messages: list[Msg], tools: Any, options: Any) -> Any:
    return tool_call("wait_here") if messages[-1].role == "user" else "done"


def gated_agent(gate: Gate, name: str = "bot", *, store: Any = None, **kw: Any) -> ReActAgent:
    """An agent whose every run calls the gate tool once, then answers "done"."""
    model = FunctionModel(_call_the_gate_then_answer)
    return ReActAgent(name, "", model, tools=[gate.tool()], store=store, **kw)


def snapshot(store: InMemoryStore) -> tuple[dict[Any, Any], dict[Any, str]]:
    """What an in-memory store holds: states with versions, and lease owners."""
    return dict(store._states), {k: owner for k, (owner, _) in store._leases.items()}


def memory_is_paired(memory: list[dict[str, Any]]) -> bool:
    """Every tool_use block in memory has its tool result."""
    calls = [
        block["id"]
        for message in memory
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_use"
    ]
    results = [
        block["id"]
        for message in memory
        if message["role"] == "tool"
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    return sorted(calls) == sorted(results)


def rxagent_tasks() -> set[asyncio.Task[Any]]:
    """Live tasks running rxagent code (a run, a tool, a pump, a cleanup), but the caller's."""
    found = set()
    for task in asyncio.all_tasks() - {asyncio.current_task()}:
        coro: Any = task.get_coro()
        code = getattr(coro, "cr_code", None) or getattr(coro, "ag_code", None)
        filename = getattr(code, "co_filename", "")
        if "/rxagent/" in filename or "tests/server" in filename:
            found.add(task)
    return found


# -- server processes -------------------------------------------------------------------------

SCRIPT = Path(__file__).with_name("serve_agent.py")


@asynccontextmanager
async def server_process(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """Start `serve_agent.py args`, yield it and its base URL; kill it if it outlives the test."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), *args, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        line = (await process.stdout.readline()).decode()
        assert line.startswith("rxagent server listening on http://127.0.0.1:"), line
        yield process, line.rsplit(" ", 1)[1].strip()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def sse_until(response: aiohttp.ClientResponse, kind: str) -> list[tuple[str, Any]]:
    """Read SSE frames until one of type `kind` (or the end of the stream)."""
    frames: list[tuple[str, Any]] = []
    while not frames or frames[-1][0] != kind:
        block = await response.content.readuntil(b"\n\n")
        if not block:
            break
        lines = block.decode().strip().split("\n")
        if lines[0].startswith(":"):
            continue
        frames.append((lines[0].removeprefix("event: "), json.loads(lines[1][6:])))
    return frames


SECURED = Path(__file__).with_name("serve_secured.py")


@asynccontextmanager
async def secured_server(
    store: str, prefix: str = "", *, stderr: Path, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """Start `serve_secured.py store prefix` with `env` added, its stderr into the file `stderr`.

    Yield the process and its base URL; kill it if it outlives the test.
    """
    with stderr.open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(SECURED),
            store,
            prefix,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env={**os.environ, **(env or {})},
        )
    try:
        assert process.stdout is not None
        line = (await process.stdout.readline()).decode()
        assert line.startswith("rxagent server listening on http://127.0.0.1:"), line
        yield process, line.rsplit(" ", 1)[1].strip()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def raw_request(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes to the server at `url`; return the answer's status, headers and body.

    For requests an HTTP client refuses to send (a control character in a header, two
    Authorization headers, Content-Length with Transfer-Encoding). The server closes the
    connection after an error answer, so the answer is read to the end.
    """
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(request)
        await writer.drain()
        answer = await reader.read()
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body
