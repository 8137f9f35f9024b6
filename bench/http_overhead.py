"""Per-step HTTP overhead: rxagent and the peer frameworks against the raw aiohttp loop.

Run: `python bench/http_overhead.py` (rxagent and the raw loops, 3 rounds, about 20 s; `--quick`
for a smoke run), `python bench/http_overhead.py --peers` (adds pydantic-ai, LangGraph, the OpenAI
Agents SDK and AgentScope, run from a separate virtualenv; about 2 minutes a round), `--json FILE`
for the results, `--merge A.json B.json ...` for one report of several runs. The last lines of
the report check the goal: rxagent's paired overhead under 300 µs per step, and below every peer's.

The workload is the one of `shared/bench/peers`: system + user prompt, then K=3 LLM calls that
each return one `add(a, b)` tool call, the tool runs, and a final LLM call returns text. That is
4 LLM calls per run; a **step** is one LLM call with its tool call, so per-step time = per-run
time / 4. The LLM is a deterministic fake OpenAI Chat Completions server on 127.0.0.1 (a free
port), started by this script in its own process (it answers from precomputed bytes).

In one process and against the same server, blocks of runs of each variant alternate
(shuffled order in every round of blocks), non-streaming and streaming:

- **raw aiohttp** (the floor): a hand-written loop on one `aiohttp.ClientSession`, stdlib `json`,
  hand-written SSE parsing; it sends the identical request sequence.
- **rxagent**: `ReActAgent(..., OpenAIChatModel(..., stream=False/True), tools=[add])`,
  `await agent.call(...)`, each run in a fresh session.
- **raw openai** (`--openai-loop`): the same loop on `openai.AsyncOpenAI`.

The **paired overhead** of a variant is its median per-step time minus the raw aiohttp loop's,
both measured in the same process over the same minutes; it holds up when the machine's speed
drifts, which absolute times do not. With `--peers` every peer framework runs in its own process
from the peers virtualenv (`/work/venvs/peers`, see `shared/bench/peers/setup_venv.sh`; rxagent is
installed there too), measured the same way side by side with the raw aiohttp loop and rxagent.

Every run is checked: the final text, the tool called exactly K times, and the server's
counters (runs x 4 requests per phase, all of them streaming in the streaming phase).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import itertools
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from aiohttp import web

PROMPT = "What is 1 + 2? Use the add tool."
SYSTEM = "You are a helpful assistant. Use tools when asked."
MODEL = "gpt-4o-mini"
API_KEY = "x"
HOST = "127.0.0.1"  # the fake server binds loopback only
PEERS = ("pydantic-ai", "langgraph", "openai-agents", "agentscope")
PEERS_PYTHON = os.environ.get("HTTP_BENCH_PEERS_PYTHON", "/work/venvs/peers/bin/python")
MODES = ("nonstream", "stream")
REFERENCE = "raw-aiohttp"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers and return the sum.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    }
]


class BenchError(RuntimeError):
    pass


class ToolCounter:
    calls = 0


def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    ToolCounter.calls += 1
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    ToolCounter.calls += 1
    return a + b


# ------------------------------------------------------------------------------------------------
# The fake OpenAI server (adapted from shared/bench/peers/fake_openai.py; same response bytes).
# It runs in its own process: `python bench/http_overhead.py --serve`.

_ID = "\x00ID\x00"  # spliced with a per-request counter
_USAGE = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
_TOOL_ARGS = '{"a": 1, "b": 2}'
_ARG_PIECES = ('{"a": ', '1, "b": ', "2}")


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _split(template: bytes) -> tuple[bytes, ...]:
    return tuple(template.split(b"\\u0000ID\\u0000"))


def _completion(message: dict[str, Any], finish: str) -> tuple[bytes, ...]:
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
    return _split(
        _dumps(
            {
                "id": "chatcmpl-" + _ID,
                "object": "chat.completion",
                "created": 1700000000,
                "model": MODEL,
                "choices": [choice],
                "usage": _USAGE,
                "system_fingerprint": "fp_fake",
            }
        )
    )


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> bytes:
    obj: dict[str, Any] = {
        "id": "chatcmpl-" + _ID,
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": MODEL,
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        if delta is not None
        else [],
    }
    if usage is not None:
        obj["usage"] = usage
    return b"data: " + _dumps(obj) + b"\n\n"


def _sse(chunks: list[bytes], finish: str) -> dict[bool, tuple[bytes, ...]]:
    """Both endings: a separate usage chunk (stream_options.include_usage) or usage on finish."""
    with_usage = [*chunks, _chunk({}, finish), _chunk(None, None, _USAGE)]
    without = [*chunks, _chunk({}, finish, _USAGE)]
    return {
        True: _split(b"".join([*with_usage, b"data: [DONE]\n\n"])),
        False: _split(b"".join([*without, b"data: [DONE]\n\n"])),
    }


class FakeOpenAI:
    """K tool-call answers, then the final text; request counters for the checks."""

    def __init__(self, k: int, chunks: int) -> None:
        self.k = k
        self.ids = itertools.count(1)
        self.stats = self.zero()
        self.last = b"{}"
        call = {"id": "call_" + _ID, "type": "function"}
        self.ns_tool = _completion(
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [{**call, "function": {"name": "add", "arguments": _TOOL_ARGS}}],
            },
            "tool_calls",
        )
        self.ns_final = _completion(
            {"role": "assistant", "content": "done", "refusal": None}, "stop"
        )
        first = {**call, "index": 0, "function": {"name": "add", "arguments": ""}}
        self.st_tool = _sse(
            [_chunk({"role": "assistant", "content": None, "tool_calls": [first]})]
            + [
                _chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
                for piece in _ARG_PIECES
            ],
            "tool_calls",
        )
        texts = ["done"] + [" done"] * (chunks - 1)
        self.st_final = _sse(
            [_chunk({"role": "assistant", "content": ""})]
            + [_chunk({"content": text}) for text in texts],
            "stop",
        )

    @staticmethod
    def zero() -> dict[str, int]:
        keys = ("requests", "stream_requests", "tool_call_responses", "final_responses")
        return dict.fromkeys((*keys, "bad_requests", "other_paths"), 0)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        stats = self.stats
        if request.method != "POST" or not request.path.endswith("/chat/completions"):
            stats["other_paths"] += 1
            return web.json_response({"error": {"message": "not found"}}, status=404)
        raw = await request.read()
        try:
            body = json.loads(raw)
            n_tool = sum(1 for m in body["messages"] if m.get("role") == "tool")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            stats["bad_requests"] += 1
            return web.json_response({"error": {"message": f"bad request: {exc}"}}, status=400)
        self.last = raw
        stats["requests"] += 1
        ident = str(next(self.ids)).encode()
        want_tool = n_tool < self.k
        stats["tool_call_responses" if want_tool else "final_responses"] += 1
        if not body.get("stream"):
            parts = self.ns_tool if want_tool else self.ns_final
            return web.Response(body=ident.join(parts), content_type="application/json")
        stats["stream_requests"] += 1
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        parts = (self.st_tool if want_tool else self.st_final)[usage]
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        return web.Response(body=ident.join(parts), headers=headers)  # one write; parsed per event

    async def stats_view(self, request: web.Request) -> web.Response:
        from aiohttp import web

        if request.method == "POST":
            self.stats = self.zero()
        return web.json_response(self.stats)

    async def last_view(self, request: web.Request) -> web.Response:
        from aiohttp import web

        return web.Response(body=self.last, content_type="application/json")


async def serve(k: int, chunks: int, max_runtime_s: float) -> None:
    from aiohttp import web

    fake = FakeOpenAI(k, chunks)
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("GET", "/stats", fake.stats_view)
    app.router.add_route("POST", "/stats/reset", fake.stats_view)
    app.router.add_route("GET", "/last", fake.last_view)
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    sock.listen(1024)
    await web.SockSite(runner, sock, backlog=1024).start()
    print(f"PORT={sock.getsockname()[1]}", flush=True)
    try:
        await asyncio.sleep(max_runtime_s)  # bounded: the server always stops by itself
    finally:
        await runner.cleanup()


class Server:
    """The fake server in a child process (`--serve`), stopped by its pid."""

    def __init__(self, k: int, chunks: int, max_runtime_s: float = 3600.0) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", "--k", str(k)]
        cmd += ["--chunks", str(chunks), "--max-runtime-s", str(max_runtime_s)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("PORT="):
            self.stop()
            raise BenchError(f"the fake server did not start (said {line!r})")
        self.port = int(line.strip().removeprefix("PORT="))
        self.root = f"http://{HOST}:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


# ------------------------------------------------------------------------------------------------
# Variants. Each is built for one mode and returns the final text of one run; `after` (untimed)
# runs after each run, `close` at the end.


@dataclass
class Variant:
    name: str
    run: Callable[[], Awaitable[str]]
    after: Callable[[], Awaitable[None]] | None = None
    close: Callable[[], Awaitable[None]] | None = None
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)


def _exec_tool_calls(messages: list[dict[str, Any]], tool_calls: list[dict[str, Any]]) -> None:
    calls = [{"id": tc["id"], "type": "function", "function": tc["function"]} for tc in tool_calls]
    messages.append({"role": "assistant", "content": None, "tool_calls": calls})
    for tc in tool_calls:
        result = add(**json.loads(tc["function"]["arguments"]))
        messages.append({"role": "tool", "tool_call_id": tc["id"], "content": str(result)})


def _first_messages() -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}]


def _accumulate(calls: dict[int, dict[str, Any]], delta: dict[str, Any]) -> None:
    for tcd in delta.get("tool_calls") or ():
        acc = calls.setdefault(
            tcd["index"], {"id": None, "function": {"name": "", "arguments": ""}}
        )
        if tcd.get("id"):
            acc["id"] = tcd["id"]
        fn = tcd.get("function") or {}
        if fn.get("name"):
            acc["function"]["name"] += fn["name"]
        if fn.get("arguments"):
            acc["function"]["arguments"] += fn["arguments"]


def raw_aiohttp(base_url: str, stream: bool) -> Variant:
    """The floor: the identical requests on a raw aiohttp session (as shared/bench/peers)."""
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0),
        headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"},
    )
    url = base_url + "/chat/completions"
    dumps, loads = json.dumps, json.loads

    async def run_nonstream() -> str:
        messages = _first_messages()
        while True:
            body = dumps({"model": MODEL, "messages": messages, "tools": TOOLS})
            async with session.post(url, data=body) as r:
                if r.status != 200:
                    raise BenchError(f"HTTP {r.status}")
                data = loads(await r.read())
            msg = data["choices"][0]["message"]
            if msg.get("tool_calls"):
                _exec_tool_calls(messages, msg["tool_calls"])
                continue
            return str(msg["content"])

    async def run_stream() -> str:
        messages = _first_messages()
        while True:
            request = {"model": MODEL, "messages": messages, "tools": TOOLS, "stream": True}
            request["stream_options"] = {"include_usage": True}
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            async with session.post(url, data=dumps(request)) as r:
                if r.status != 200:
                    raise BenchError(f"HTTP {r.status}")
                async for line in r.content:  # SSE: one event per `data:` line
                    if not line.startswith(b"data: "):
                        continue
                    payload = line[6:].strip()
                    if payload == b"[DONE]":
                        break
                    choices = loads(payload).get("choices")
                    if not choices:
                        continue
                    delta = choices[0].get("delta") or {}
                    if delta.get("content"):
                        text.append(delta["content"])
                    _accumulate(calls, delta)
            if calls:
                _exec_tool_calls(messages, [calls[i] for i in sorted(calls)])
                continue
            return "".join(text)

    return Variant(REFERENCE, run_stream if stream else run_nonstream, close=session.close)


def raw_openai(base_url: str, stream: bool) -> Variant:
    """The same loop on the raw `openai.AsyncOpenAI` client."""
    openai = importlib.import_module("openai")
    client = openai.AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)

    async def run_nonstream() -> str:
        messages = _first_messages()
        while True:
            resp = await client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
            msg = resp.choices[0].message
            if msg.tool_calls:
                calls = [
                    {
                        "id": c.id,
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in msg.tool_calls
                ]
                _exec_tool_calls(messages, calls)
                continue
            return str(msg.content)

    async def run_stream() -> str:
        messages = _first_messages()
        while True:
            chunks = await client.chat.completions.create(
                model=MODEL,
                messages=messages,
                tools=TOOLS,
                stream=True,
                stream_options={"include_usage": True},
            )
            text: list[str] = []
            calls: dict[int, dict[str, Any]] = {}
            async for chunk in chunks:
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                if delta.content:
                    text.append(delta.content)
                if delta.tool_calls:
                    _accumulate(calls, {"tool_calls": [d.model_dump() for d in delta.tool_calls]})
            if calls:
                _exec_tool_calls(messages, [calls[i] for i in sorted(calls)])
                continue
            return "".join(text)

    return Variant("raw-openai", run_stream if stream else run_nonstream, close=client.close)


def rxagent_variant(base_url: str, stream: bool, *, async_tool: bool = False) -> Variant:
    """rxagent: `ReActAgent` + `OpenAIChatModel`, `await agent.call(...)`, a fresh session each."""
    from rxagent import ReActAgent, tool
    from rxagent.models import OpenAIChatModel

    model = OpenAIChatModel(MODEL, base_url=base_url, api_key=API_KEY, max_retries=0, stream=stream)
    fn = add_async if async_tool else add
    agent = ReActAgent("bench", SYSTEM, model, tools=[tool(fn, name="add")])
    ids = itertools.count()
    last = ""

    async def run() -> str:
        nonlocal last
        last = f"s{next(ids)}"
        result = await agent.call(PROMPT, session_id=last)
        if not result.ok:
            raise BenchError(f"rxagent run failed: {result.error}")
        return result.text

    async def after() -> None:  # untimed: keep the store as small as the peers' state
        await agent.store.delete(agent.name, last)

    name = "rxagent-async-tool" if async_tool else "rxagent"
    return Variant(name, run, after=after, close=model.aclose)


# ------------------------------------------------------------------------------------------------
# Peer frameworks: imported only here, in a process of the peers virtualenv (--framework NAME).
# Settings as in shared/bench/peers/run_*.py.


def _pydantic_ai(base_url: str, stream: bool) -> Variant:
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    pai = importlib.import_module("pydantic_ai")
    models = importlib.import_module("pydantic_ai.models.openai")
    providers = importlib.import_module("pydantic_ai.providers.openai")
    provider = providers.OpenAIProvider(base_url=base_url, api_key=API_KEY)
    agent = pai.Agent(
        models.OpenAIChatModel(MODEL, provider=provider), system_prompt=SYSTEM, tools=[add]
    )

    async def run_nonstream() -> str:
        return str((await agent.run(PROMPT)).output)

    async def run_stream() -> str:
        out = None
        async with agent.run_stream_events(PROMPT) as events:
            async for event in events:
                if isinstance(event, pai.AgentRunResultEvent):
                    out = event.result.output
        return str(out)

    return Variant("pydantic-ai", run_stream if stream else run_nonstream)


def _langgraph(base_url: str, stream: bool) -> Variant:
    for var in (
        "LANGSMITH_TRACING",
        "LANGCHAIN_TRACING_V2",
        "LANGSMITH_API_KEY",
        "LANGCHAIN_API_KEY",
    ):
        os.environ.pop(var, None)
    agents = importlib.import_module("langchain.agents")
    lc_openai = importlib.import_module("langchain_openai")
    llm = lc_openai.ChatOpenAI(
        model=MODEL, base_url=base_url, api_key=API_KEY, max_retries=0, stream_usage=True
    )
    agent = agents.create_agent(llm, tools=[add], system_prompt=SYSTEM)
    inputs = {"messages": [{"role": "user", "content": PROMPT}]}

    async def run_nonstream() -> str:
        state = await agent.ainvoke(inputs)
        return str(state["messages"][-1].content)

    async def run_stream() -> str:
        parts = []
        async for msg, _meta in agent.astream(inputs, stream_mode="messages"):
            if getattr(msg, "type", None) == "AIMessageChunk" and isinstance(msg.content, str):
                parts.append(msg.content)
        return "".join(parts)

    return Variant("langgraph", run_stream if stream else run_nonstream)


def _openai_agents(base_url: str, stream: bool) -> Variant:
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    sdk = importlib.import_module("agents")
    openai = importlib.import_module("openai")
    sdk.set_tracing_disabled(True)  # its default exporter posts to the public API
    client = openai.AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
    model = sdk.OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
    agent = sdk.Agent(
        name="bench", instructions=SYSTEM, model=model, tools=[sdk.function_tool(add)]
    )

    async def run_nonstream() -> str:
        return str((await sdk.Runner.run(agent, PROMPT)).final_output)

    async def run_stream() -> str:
        result = sdk.Runner.run_streamed(agent, PROMPT)
        async for _event in result.stream_events():
            pass
        return str(result.final_output)

    return Variant("openai-agents", run_stream if stream else run_nonstream, close=client.close)


def _agentscope(base_url: str, stream: bool) -> Variant:
    import logging

    agent_mod = importlib.import_module("agentscope.agent")
    credential = importlib.import_module("agentscope.credential")
    message = importlib.import_module("agentscope.message")
    model_mod = importlib.import_module("agentscope.model")
    permission = importlib.import_module("agentscope.permission")
    tool_mod = importlib.import_module("agentscope.tool")
    logging.getLogger("agentscope").setLevel(logging.WARNING)
    model = model_mod.OpenAIChatModel(
        credential=credential.OpenAICredential(api_key=API_KEY, base_url=base_url),
        model=MODEL,
        stream=stream,
        max_retries=0,
        client_kwargs={"max_retries": 0},
    )
    allow = permission.PermissionDecision(
        behavior=permission.PermissionBehavior.ALLOW, message="allowed"
    )
    toolkit = tool_mod.Toolkit(tools=[tool_mod.FunctionTool(add, permission=allow)])

    def text_of(msg: Any) -> str:
        parts = []
        for block in msg.content if msg is not None else ():
            text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
            if text:
                parts.append(text)
        return "".join(parts)

    def new_agent() -> Any:  # 2.x agents keep the conversation: one per run, as in the harness
        return agent_mod.Agent(name="bench", system_prompt=SYSTEM, model=model, toolkit=toolkit)

    async def run_nonstream() -> str:
        return text_of(await new_agent().reply(message.UserMsg(name="user", content=PROMPT)))

    async def run_stream() -> str:
        final = None
        user = message.UserMsg(name="user", content=PROMPT)
        async for event in new_agent().reply_stream(user, yield_final_msg=True):
            if type(event).__name__ == "Msg":
                final = event
        return text_of(final)

    return Variant("agentscope", run_stream if stream else run_nonstream)


PEER_BUILDERS: dict[str, Callable[[str, bool], Variant]] = {
    "pydantic-ai": _pydantic_ai,
    "langgraph": _langgraph,
    "openai-agents": _openai_agents,
    "agentscope": _agentscope,
}
PEER_PACKAGES = {
    "pydantic-ai": ["pydantic-ai-slim", "openai"],
    "langgraph": ["langgraph", "langchain", "langchain-openai", "openai"],
    "openai-agents": ["openai-agents", "openai"],
    "agentscope": ["agentscope", "openai"],
}


# ------------------------------------------------------------------------------------------------
# Measurement


async def _server(session: aiohttp.ClientSession, root: str, reset: bool = False) -> Any:
    if reset:
        async with session.post(root + "/stats/reset") as r:
            return await r.json()
    async with session.get(root + "/stats") as r:
        return await r.json()


async def _checked(variant: Variant, k: int) -> tuple[float, float]:
    """One run: (wall ms, CPU ms), after checking its text and its tool calls."""
    calls = ToolCounter.calls
    c0 = time.process_time_ns()
    t0 = time.perf_counter_ns()
    text = await variant.run()
    wall = (time.perf_counter_ns() - t0) / 1e6
    cpu = (time.process_time_ns() - c0) / 1e6
    if "done" not in text:
        raise BenchError(f"{variant.name}: unexpected final text {text!r}")
    if ToolCounter.calls - calls != k:
        raise BenchError(f"{variant.name}: {ToolCounter.calls - calls} tool calls, expected {k}")
    if variant.after is not None:
        await variant.after()
    return wall, cpu


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def _summary(v: Variant, steps: int) -> dict[str, Any]:
    med = statistics.median(v.wall_ms)
    return {
        "runs": len(v.wall_ms),
        "run_ms_median": med,
        "run_ms_p90": _pct(v.wall_ms, 0.9),
        "step_us_median": med / steps * 1e3,
        "step_us_p90": _pct(v.wall_ms, 0.9) / steps * 1e3,
        "cpu_step_us_median": statistics.median(v.cpu_ms) / steps * 1e3,
    }


async def measure_phase(
    builders: list[Callable[[str, bool], Variant]],
    base_url: str,
    root: str,
    stream: bool,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Blocks of `args.block` runs of each variant, in shuffled order per round of blocks."""
    variants = [build(base_url, stream) for build in builders]
    steps = args.k + 1
    async with aiohttp.ClientSession() as control:
        try:
            for variant in variants:  # warm-up: connections, caches, lazy imports
                for _ in range(args.warmup):
                    await _checked(variant, args.k)
            gc.collect()
            await _server(control, root, reset=True)
            tools0 = ToolCounter.calls
            order = random.Random(args.seed)
            shuffled = list(variants)
            started = time.perf_counter()
            done = 0
            while done < args.n:
                count = min(args.block, args.n - done)
                order.shuffle(shuffled)
                for variant in shuffled:
                    for _ in range(count):
                        wall, cpu = await _checked(variant, args.k)
                        variant.wall_ms.append(wall)
                        variant.cpu_ms.append(cpu)
                done += count
                gc.collect()  # between rounds of blocks, never inside a timed block
            wall_s = time.perf_counter() - started
            stats = await _server(control, root)
        finally:
            for variant in variants:
                if variant.close is not None:
                    await variant.close()
    runs = args.n * len(variants)
    verified = {
        "requests": stats["requests"] == runs * steps,
        "stream_requests": stats["stream_requests"] == (runs * steps if stream else 0),
        "tool_calls": ToolCounter.calls - tools0 == runs * args.k,
        "final_responses": stats["final_responses"] == runs,
        "no_bad_requests": stats["bad_requests"] == 0 and stats["other_paths"] == 0,
    }
    results = {v.name: _summary(v, steps) for v in variants}
    ref = results[REFERENCE]
    for name, r in results.items():
        if name != REFERENCE:
            r["overhead_step_us"] = r["step_us_median"] - ref["step_us_median"]
            r["cpu_overhead_step_us"] = r["cpu_step_us_median"] - ref["cpu_step_us_median"]
            r["ratio"] = r["run_ms_median"] / ref["run_ms_median"]
    return {
        "variants": results,
        "server_stats": stats,
        "tool_calls": ToolCounter.calls - tools0,
        "checks": verified,
        "verified": all(verified.values()),
        "phase_wall_s": wall_s,
    }


def _builders(args: argparse.Namespace) -> list[Callable[[str, bool], Variant]]:
    builders: list[Callable[[str, bool], Variant]] = [raw_aiohttp]
    if not args.no_rxagent:
        builders.append(rxagent_variant)
    if args.async_tool:
        builders.append(lambda url, stream: rxagent_variant(url, stream, async_tool=True))
    if args.openai_loop:
        builders.append(raw_openai)
    if args.framework:
        builders.append(PEER_BUILDERS[args.framework])
    return builders


async def measure_process(args: argparse.Namespace, port: int) -> dict[str, Any]:
    """One process's measurement: every phase with every variant, interleaved."""
    root = f"http://{HOST}:{port}"
    out: dict[str, Any] = {"process": args.framework or "rxagent", "pid": os.getpid()}
    for mode in args.modes:
        out[mode] = await measure_phase(_builders(args), root + "/v1", root, mode == "stream", args)
        if not out[mode]["verified"]:
            raise BenchError(f"{mode}: checks failed: {out[mode]['checks']}")
    return out


# ------------------------------------------------------------------------------------------------
# Orchestration, aggregation and the report


def _versions(packages: list[str]) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in packages:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "?"
    return out


def _machine() -> dict[str, Any]:
    cpu = platform.processor()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "loadavg": os.getloadavg(),
    }


def run_peer(name: str, port: int, args: argparse.Namespace, round_no: int) -> dict[str, Any]:
    """One peer framework in its own process of the peers virtualenv, with the raw loop and
    rxagent interleaved beside it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [args.peers_python, str(Path(__file__).resolve()), "--framework", name]
        cmd += ["--port", str(port), "--json", str(out), "--seed", str(args.seed + round_no)]
        cmd += ["--n", str(args.n), "--warmup", str(args.warmup), "--block", str(args.block)]
        cmd += ["--k", str(args.k), "--modes", ",".join(args.modes)]
        cmd += [flag for flag, on in _passed_flags(args) if on]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
        if proc.returncode != 0 or not out.exists():
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            return {"process": name, "error": f"exit {proc.returncode}: {tail}"}
        result: dict[str, Any] = json.loads(out.read_text())
        return result


def _passed_flags(args: argparse.Namespace) -> list[tuple[str, bool]]:
    return [
        ("--openai-loop", args.openai_loop),
        ("--async-tool", args.async_tool),
        ("--no-rxagent", args.no_rxagent),
    ]


def _cell(values: list[float], fmt: str = "{:+.0f}") -> str:
    if not values:
        return "n/a"
    med = fmt.format(statistics.median(values))
    if len(values) == 1:
        return med
    return f"{med} [{fmt.format(min(values))}..{fmt.format(max(values))}]"


_KEYS = ("step_us_median", "step_us_p90", "overhead_step_us", "cpu_overhead_step_us", "ratio")


def aggregate(processes: list[dict[str, Any]], modes: list[str]) -> dict[str, Any]:
    """Per-round values of each row. Detail rows keep the process a variant ran in; summary
    rows pool rxagent's measurements beside the peers and the raw openai loop's."""
    detail: dict[str, dict[str, dict[str, list[float]]]] = {}
    summary: dict[str, dict[str, dict[str, list[float]]]] = {}

    def put(table: dict[str, Any], row: str, mode: str, r: dict[str, Any]) -> None:
        cell = table.setdefault(row, {}).setdefault(mode, {})
        for key in _KEYS:
            if key in r:
                cell.setdefault(key, []).append(r[key])

    for proc in processes:
        if "error" in proc:
            continue
        own = proc["process"] == "rxagent"
        for mode in modes:
            for name, r in proc[mode]["variants"].items():
                put(detail, f"{proc['process']} process: {name}", mode, r)
                if name == REFERENCE:
                    continue
                if name.startswith("rxagent") and not own:
                    put(summary, f"{name} (beside the peers)", mode, r)
                else:
                    put(summary, name, mode, r)
    order = {name: i for i, name in enumerate(("rxagent", "rxagent-async-tool", "raw-openai"))}
    ranked = dict(sorted(summary.items(), key=lambda item: order.get(item[0].split()[0], 9)))
    return {"summary": ranked, "detail": detail}


def _goal(rows: dict[str, Any], modes: list[str]) -> list[str]:
    out = []
    for mode in modes:
        own = rows.get("rxagent", {}).get(mode, {}).get("overhead_step_us")
        if not own:
            continue
        ovh = statistics.median(own)
        peers = {
            row: statistics.median(c[mode]["overhead_step_us"])
            for row, c in rows.items()
            if row.split()[0] in PEER_BUILDERS and mode in c
        }
        lowest = all(ovh < v for v in peers.values())
        out.append(
            f"goal ({mode}): rxagent +{ovh:.0f} µs/step over raw aiohttp"
            f" ({'under' if ovh < 300 else 'NOT under'} 300 µs)"
            + (
                f"; lowest of {len(peers) + 1} frameworks: {'yes' if lowest else 'NO'}"
                if peers
                else ""
            )
        )
    return out


def _table(rows: dict[str, Any], modes: list[str], detail: bool) -> list[str]:
    header, sep = "| variant |", "|---|"
    for mode in modes:
        header += f" {mode} µs/step |"
        if detail:
            header += f" {mode} p90 µs/step |"
        header += f" {mode} overhead µs/step (paired) | {mode} x raw aiohttp |"
        header += f" {mode} CPU overhead µs/step |"
        sep += "---:|---:|---:|---:|" + ("---:|" if detail else "")
    lines = [header, sep]
    for row, cells in rows.items():
        line = f"| {row} |"
        ref = row.endswith(REFERENCE)
        for mode in modes:
            c = cells.get(mode, {})
            line += f" {_cell(c.get('step_us_median', []), '{:.0f}')} |"
            if detail:
                line += f" {_cell(c.get('step_us_p90', []), '{:.0f}')} |"
            line += (
                f" {'0 (reference)' if ref else _cell(c.get('overhead_step_us', []))} |"
                f" {'1' if ref else _cell(c.get('ratio', []), '{:.2f}')} |"
                f" {'0' if ref else _cell(c.get('cpu_overhead_step_us', []))} |"
            )
        lines.append(line)
    return lines


def report(results: dict[str, Any]) -> str:
    rows = results["rows"]
    settings = results["settings"]
    modes = settings["modes"]
    m = results["machine"]
    lines = [
        f"HTTP overhead benchmark: {m['date_utc']}, Python {m['python']}, {m['cores']} cores "
        f"({m['cpu']}), load {m['loadavg'][0]:.2f}",
        *(
            f"run {i}: {r['date_utc']}, load {r['loadavg'][0]:.2f}"
            for i, r in enumerate(results.get("machines", ()), 1)
        ),
        f"K={settings['k']} tool steps + 1 final call = 4 LLM calls per run; n={settings['n']}"
        f" runs per variant per phase, {settings['rounds']} round(s); paired = against the raw"
        " aiohttp loop in the same process; cells: median over rounds [min..max]",
        "",
        *_table(rows["summary"], modes, detail=False),
        "",
        "Per process (each variant against the raw aiohttp loop of its own process):",
        *_table(rows["detail"], modes, detail=True),
    ]
    failed = [p for p in results["processes"] if "error" in p]
    lines += [f"\nFAILED {p['process']}: {p['error']}" for p in failed]
    lines.append("")
    done = [p for p in results["processes"] if "error" not in p]
    checks = [p[mode]["verified"] for p in done for mode in modes]
    lines.append(
        f"checks: {sum(checks)}/{len(checks)} phases verified (text, tool calls, requests)"
    )
    lines += _goal(rows["summary"], modes)
    return "\n".join(lines)


def orchestrate(args: argparse.Namespace) -> dict[str, Any]:
    server = Server(args.k, args.chunks)
    processes: list[dict[str, Any]] = []
    try:
        for round_no in range(args.rounds):
            jobs: list[str | None] = [None, *args.peers]  # None: rxagent in this process
            jobs = jobs[round_no % len(jobs) :] + jobs[: round_no % len(jobs)]  # rotate
            for job in jobs:
                print(f"round {round_no + 1}/{args.rounds}: {job or 'rxagent'}", file=sys.stderr)
                if job is None:
                    here = argparse.Namespace(**{**vars(args), "seed": args.seed + round_no})
                    result = asyncio.run(measure_process(here, server.port))
                else:
                    result = run_peer(job, server.port, args, round_no)
                result["round"] = round_no + 1
                processes.append(result)
    finally:
        server.stop()
    versions = _versions(["aiohttp", "openai"])
    from rxagent import __version__

    versions["rxagent"] = __version__
    for proc in processes:
        versions.update(proc.get("versions", {}))
    return {
        "machine": _machine(),
        "settings": {
            "k": args.k,
            "n": args.n,
            "warmup": args.warmup,
            "block": args.block,
            "rounds": args.rounds,
            "modes": args.modes,
            "chunks": args.chunks,
            "peers": args.peers,
        },
        "versions": versions,
        "rows": aggregate(processes, args.modes),
        "processes": processes,
    }


def merge(paths: list[str], modes: list[str]) -> dict[str, Any]:
    """Several runs' JSON results as one (rounds renumbered; machine info of each run kept)."""
    runs = [json.loads(Path(path).read_text()) for path in paths]
    processes: list[dict[str, Any]] = []
    offset = 0
    for run in runs:
        processes.extend({**proc, "round": proc["round"] + offset} for proc in run["processes"])
        offset += run["settings"]["rounds"]
    settings = {**runs[0]["settings"], "rounds": offset, "modes": modes}
    versions: dict[str, str] = {}
    for run in runs:
        versions.update(run["versions"])
    return {
        "machine": runs[0]["machine"],
        "machines": [run["machine"] for run in runs],
        "settings": settings,
        "versions": versions,
        "rows": aggregate(processes, modes),
        "processes": processes,
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--n", type=int, default=300, help="timed runs per variant per phase")
    p.add_argument("--warmup", type=int, default=10, help="untimed runs per variant first")
    p.add_argument("--block", type=int, default=10, help="runs per variant per block")
    p.add_argument("--rounds", type=int, default=3, help="processes per framework")
    p.add_argument("--k", type=int, default=3, help="tool-call steps per run")
    p.add_argument("--chunks", type=int, default=20, help="text chunks of a streamed answer")
    p.add_argument("--modes", default="nonstream,stream")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="a smoke run with tiny counts")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument(
        "--peers",
        nargs="?",
        const=",".join(PEERS),
        default="",
        help=f"also run these peer frameworks (default all: {','.join(PEERS)})",
    )
    p.add_argument("--peers-python", default=PEERS_PYTHON, help="the peers virtualenv's python")
    p.add_argument("--openai-loop", action="store_true", help="also run the raw openai loop")
    p.add_argument("--async-tool", action="store_true", help="also rxagent with an async tool")
    p.add_argument("--merge", nargs="+", metavar="JSON", help="report several --json results")
    # internal: one peer process, the fake server
    p.add_argument("--framework", choices=sorted(PEER_BUILDERS), help=argparse.SUPPRESS)
    p.add_argument("--no-rxagent", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--max-runtime-s", type=float, default=3600.0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.modes = [m for m in args.modes.split(",") if m]
    if set(args.modes) - set(MODES):
        p.error(f"--modes takes {','.join(MODES)}")
    args.peers = [x for x in args.peers.split(",") if x]
    if set(args.peers) - set(PEERS):
        p.error(f"--peers takes {','.join(PEERS)}")
    if args.peers and not Path(args.peers_python).exists():
        p.error(
            f"no peers virtualenv at {args.peers_python}: create it with"
            " VENV=... bash shared/bench/peers/setup_venv.sh, then pip install -e . into it,"
            " and pass --peers-python"
        )
    if args.quick:
        args.n, args.warmup, args.block, args.rounds = 20, 2, 5, 1
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.serve:
        asyncio.run(serve(args.k, args.chunks, args.max_runtime_s))
        return 0
    if args.framework:  # one peer process, against the orchestrator's server
        result = asyncio.run(measure_process(args, args.port))
        result["versions"] = _versions(PEER_PACKAGES[args.framework])
        Path(args.json).write_text(json.dumps(result))
        return 0
    results = merge(args.merge, args.modes) if args.merge else orchestrate(args)
    print(report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0 if all("error" not in p for p in results["processes"]) else 1


if __name__ == "__main__":
    sys.exit(main())
