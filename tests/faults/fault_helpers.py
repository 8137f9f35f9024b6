"""The fault matrix's pieces: its server process, streaming clients, store checks, the table.

`fault_server.py` is the server; `FaultServer` starts it. `stream_run` follows one streaming run
and keeps whatever it saw until the stream ended or broke. `session_shape` reads what the store
holds for a session and says whether it is complete, paired up to a step, or broken. The
`Matrix` collects one row per fault and store and prints them as a table.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from rxagent import AgentResult
from rxagent.state import AgentState, SessionStore, open_store

SERVER = Path(__file__).with_name("fault_server.py")
AGENT = "worker"


@dataclass
class StoreTarget:
    """A store for the servers of one test: its URL and prefix as `fault_server.py` takes them."""

    kind: str
    url: str
    prefix: str

    def open(self) -> SessionStore:
        """A store of our own on the same data, to check what the servers saved."""
        if self.kind == "sqlite":
            return open_store(self.url)
        if self.kind == "postgres":
            return open_store(self.url, table_prefix=self.prefix)
        return open_store(self.url, prefix=self.prefix)


@dataclass
class FaultServer:
    """A running `fault_server.py`."""

    process: asyncio.subprocess.Process
    url: str

    @property
    def pid(self) -> int:
        return self.process.pid

    async def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        assert await self.process.wait() == -signal.SIGKILL

    async def terminate(self) -> int:
        """SIGTERM; the exit code (the server shuts down within its 10 s, or the test fails)."""
        self.process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.process.wait(), 30)


@asynccontextmanager
async def fault_server(
    target: StoreTarget, tool_log: Path, stderr: Path, env: dict[str, str] | None = None
) -> AsyncIterator[FaultServer]:
    """Start `fault_server.py` on `target`; yield it once it listens; kill it if it outlives us."""
    with stderr.open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(SERVER),
            target.url,
            target.prefix or "-",
            str(tool_log),
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env={**os.environ, **(env or {})},
        )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        assert line.startswith("rxagent server listening on http://127.0.0.1:"), line
        yield FaultServer(process, line.rsplit(" ", 1)[1].strip())
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


# -- clients ------------------------------------------------------------------------------------


@dataclass
class Seen:
    """What a client saw of one streaming run."""

    session: str
    status: int | None = None
    frames: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    broke: str | None = None
    """How the stream broke off (the connection was lost), if it did."""

    @property
    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.frames]

    @property
    def post_call(self) -> dict[str, Any] | None:
        """The run's result, when the client saw its `post_call`."""
        for kind, data in self.frames:
            if kind == "post_call":
                return dict(data["result"])
        return None

    @property
    def error(self) -> dict[str, Any] | None:
        """The `error` frame that ended the stream, if one did."""
        for kind, data in self.frames:
            if kind == "error":
                return data
        return None


def parse_block(block: bytes) -> tuple[str, dict[str, Any]] | None:
    """One SSE frame from its bytes, or None for a keep-alive comment."""
    lines = [line for line in block.decode().split("\n") if line and not line.startswith(":")]
    if not lines:
        return None
    event = next(line[7:] for line in lines if line.startswith("event: "))
    data = "\n".join(line[6:] for line in lines if line.startswith("data: "))
    return event, json.loads(data)


async def read_stream(response: aiohttp.ClientResponse, seen: Seen) -> None:
    """Read SSE frames into `seen` until the stream ends or breaks."""
    try:
        while True:
            block = await response.content.readuntil(b"\n\n")
            if not block:
                return
            frame = parse_block(block)
            if frame is not None:
                seen.frames.append(frame)
    except (aiohttp.ClientError, asyncio.IncompleteReadError, ConnectionError, ValueError) as exc:
        seen.broke = type(exc).__name__


async def stream_run(
    http: aiohttp.ClientSession, url: str, session: str, text: str, seen: Seen | None = None
) -> Seen:
    """Start a streaming run of `text` in `session` and follow it to its end (or the break)."""
    seen = seen if seen is not None else Seen(session)
    body = {"input": text, "session_id": session}
    return await _follow(http, f"{url}/v1/agents/{AGENT}/runs:stream", body, seen)


async def approve_stream(
    http: aiohttp.ClientSession, url: str, session: str, approval_id: str, seen: Seen
) -> Seen:
    """Approve `approval_id` and follow the resumed run's stream into `seen`."""
    route = f"{url}/v1/sessions/{session}/approvals/{approval_id}:stream"
    return await _follow(http, route, {"approved": True}, seen)


async def _follow(
    http: aiohttp.ClientSession, route: str, body: dict[str, Any], seen: Seen
) -> Seen:
    """POST `body` to a streaming route and read its frames into `seen` (or the break)."""
    try:
        async with http.post(route, json=body) as response:
            seen.status = response.status
            if response.status != 200:
                seen.frames.append(("http_error", await response.json()))
                return seen
            await read_stream(response, seen)
    except (aiohttp.ClientError, ConnectionError) as exc:
        seen.broke = type(exc).__name__
    return seen


async def until_free(
    http: aiohttp.ClientSession, url: str, session: str, text: str, bound_s: float
) -> dict[str, Any]:
    """Run `text` in `session` (JSON route), retrying while the session is still leased (409).

    A dead server's lease expires within its TTL; `bound_s` bounds the wait.
    """
    deadline = time.monotonic() + bound_s
    body = {"input": text, "session_id": session}
    while True:
        async with http.post(f"{url}/v1/agents/{AGENT}/runs", json=body) as answer:
            if answer.status != 409:
                payload = await answer.json()
                assert answer.status == 200, payload
                return dict(payload)
        assert time.monotonic() < deadline, f"session {session} is still leased"
        await asyncio.sleep(0.1)  # polling: the lease expires on the store's clock


# -- what the store holds -----------------------------------------------------------------------


def _paired(state: AgentState) -> bool:
    calls = [c.id for m in state.memory if m.role == "assistant" for c in m.tool_calls]
    results = [r.id for m in state.memory if m.role == "tool" for r in m.tool_results]
    return sorted(calls) == sorted(results)


def session_shape(state: AgentState | None, steps: int) -> str:
    """What a `work:steps` session holds, after its first run.

    - `absent`: nothing saved;
    - `complete`: the run's reply `finished <steps>` after all its steps;
    - `step <n>`: paired, ending after its n-th completed step (n may be 0: the input alone, or
      nothing: the session was created, and its first step did not complete);
    - `broken: ...`: anything else (an unpaired call, a step out of order, stray messages).
    """
    if state is None:
        return "absent"
    memory = state.memory
    if not _paired(state):
        return "broken: an unpaired tool call"
    roles = [m.role for m in memory]
    if not roles:
        return "step 0"  # the session was created; its first step did not complete
    if roles[0] != "user":
        return f"broken: roles {roles}"
    done = 0
    i = 1
    while i + 1 < len(memory) and roles[i : i + 2] == ["assistant", "tool"]:
        (result,) = memory[i + 1].tool_results
        if result.is_error or result.text != f"step {done + 1} done":
            return f"broken: step {done + 1} holds {result.text!r}"
        done += 1
        i += 2
    rest = roles[i:]
    if rest == []:
        return f"step {done}"
    if rest == ["assistant"] and done == steps and memory[i].text == f"finished {steps}":
        return "complete"
    return f"broken: roles {roles}"


async def load_state(store: SessionStore, session: str) -> AgentState | None:
    loaded = await store.load(AGENT, session)
    return None if loaded is None else loaded.state


def started_twice(tool_log: Path) -> list[str]:
    """Idempotency keys whose tool started more than once."""
    if not tool_log.exists():
        return []
    starts = Counter(
        line.split(" ", 1)[1]
        for line in tool_log.read_text().splitlines()
        if line.startswith("start ")
    )
    return sorted(key for key, n in starts.items() if n > 1)


def rss_kb(pid: int) -> int:
    """The resident memory of process `pid`, in KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for process {pid}")


# -- the table ----------------------------------------------------------------------------------


@dataclass
class MatrixRow:
    """One fault on one store: what happened to its runs."""

    fault: str
    store: str
    size: str
    runs: int = 0
    lost: int = 0
    """Runs whose saved work is gone or broken (a finished run not stored complete, an unpaired
    call, a parked approval that did not survive)."""
    duplicated: int = 0
    """Idempotency keys whose tool ran twice."""
    recovered: int = 0
    """Runs cut off by the fault that completed when continued afterwards."""
    to_recover: int = 0
    """Runs cut off by the fault (to recover)."""
    notes: str = ""


class Matrix:
    """The rows of one pytest session, printed as a table at its end."""

    def __init__(self) -> None:
        self.rows: list[MatrixRow] = []

    def row(self, fault: str, store: str, size: str) -> MatrixRow:
        row = MatrixRow(fault, store, size)
        self.rows.append(row)
        return row

    def table(self) -> str:
        head = "| fault | store | size | runs | lost | duplicated | recovered | notes |"
        lines = [head, "|---|---|---|---:|---:|---:|---:|---|"]
        for r in self.rows:
            recovered = f"{r.recovered}/{r.to_recover}"
            lines.append(
                f"| {r.fault} | {r.store} | {r.size} | {r.runs} | {r.lost} | {r.duplicated} "
                f"| {recovered} | {r.notes} |"
            )
        return "\n".join(lines)


@contextlib.contextmanager
def timed() -> Any:
    """`with timed() as took: ...; took()` is the seconds spent in the block so far."""
    started = time.monotonic()
    yield lambda: time.monotonic() - started


def reply_text(result: dict[str, Any]) -> str:
    """The text of an `AgentResult` as JSON."""
    return AgentResult[Any].model_validate(result).text
