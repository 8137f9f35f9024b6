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
port), started by this script in its own process (it answers from precomputed bytes). The server,
the raw aiohttp loop, the rxagent variant and the measurement are the package's
(`rxagent.testing._bench_server`, `rxagent.testing._overhead`), shared with `rxagent bench`.

In one process and against the same server, blocks of runs of each variant alternate
(shuffled order in every round of blocks), non-streaming and streaming:

- **raw aiohttp** (the floor): a hand-written loop on one `aiohttp.ClientSession`, stdlib `json`,
  hand-written SSE parsing; it sends the identical request sequence.
- **rxagent**: `ReActAgent(..., OpenAIChatModel(..., stream=False/True), tools=[add],
  hooks=[5 no-op hooks that see every event])` (`--hooks N`), each run in a fresh session:
  `await agent.call(...)`, or, streaming, every event of `agent.events(...)` consumed.
- **raw openai** (`--openai-loop`): the same loop on `openai.AsyncOpenAI`.

Then the **concurrency phase**: batches of `--conc-m` (100) concurrent non-streaming runs
(`asyncio.gather`) with `--latency-ms` (50) of server latency per model call; a warm-up batch of
each variant, then `--conc-batches` (3) batches of each, alternating; runs/s = M / the median
batch time (`--conc-batches 0` skips it).

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
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rxagent.testing._bench_server import ServerProcess
from rxagent.testing._overhead import (
    API_KEY,
    HOST,
    MODEL,
    PROMPT,
    RAW,
    SYSTEM,
    TOOLS,
    BenchError,
    Variant,
    accumulate,
    add,
    exec_tool_calls,
    first_messages,
    machine,
    measure_round,
    raw_aiohttp,
    rxagent_variant,
    settings_of,
)

if TYPE_CHECKING:
    from collections.abc import Callable


PEERS = ("pydantic-ai", "langgraph", "openai-agents", "agentscope")
PEERS_PYTHON = os.environ.get("HTTP_BENCH_PEERS_PYTHON", "/work/venvs/peers/bin/python")
MODES = ("nonstream", "stream")
REFERENCE = RAW


def raw_openai(base_url: str, stream: bool) -> Variant:
    """The same loop on the raw `openai.AsyncOpenAI` client."""
    openai = importlib.import_module("openai")
    client = openai.AsyncOpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)

    async def run_nonstream() -> str:
        messages = first_messages()
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
                exec_tool_calls(messages, calls)
                continue
            return str(msg.content)

    async def run_stream() -> str:
        messages = first_messages()
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
                    accumulate(calls, {"tool_calls": [d.model_dump() for d in delta.tool_calls]})
            if calls:
                exec_tool_calls(messages, [calls[i] for i in sorted(calls)])
                continue
            return "".join(text)

    return Variant("raw-openai", run_stream if stream else run_nonstream, close=client.close)


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


def _builders(args: argparse.Namespace) -> list[Callable[[str, bool], Variant]]:
    hooks = args.hooks
    builders: list[Callable[[str, bool], Variant]] = [raw_aiohttp]
    if not args.no_rxagent:
        builders.append(lambda url, stream: rxagent_variant(url, stream, hooks=hooks))
    if args.async_tool:
        builders.append(
            lambda url, stream: rxagent_variant(url, stream, hooks=hooks, async_tool=True)
        )
    if args.openai_loop:
        builders.append(raw_openai)
    if args.framework:
        builders.append(PEER_BUILDERS[args.framework])
    return builders


async def measure_process(args: argparse.Namespace, port: int) -> dict[str, Any]:
    """One process's measurement: every phase with every variant, interleaved."""
    root = f"http://{HOST}:{port}"
    out: dict[str, Any] = {"process": args.framework or "rxagent", "pid": os.getpid()}
    out.update(await measure_round(_builders(args), root, settings_of(args), args.modes))
    failed = {
        phase: r["checks"] for phase, r in out.items() if isinstance(r, dict) and not r["verified"]
    }
    if failed:
        raise BenchError(f"checks failed: {failed}")
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


def run_peer(name: str, port: int, args: argparse.Namespace, round_no: int) -> dict[str, Any]:
    """One peer framework in its own process of the peers virtualenv, with the raw loop and
    rxagent interleaved beside it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [args.peers_python, str(Path(__file__).resolve()), "--framework", name]
        cmd += ["--port", str(port), "--json", str(out), "--seed", str(args.seed + round_no)]
        cmd += ["--n", str(args.n), "--warmup", str(args.warmup), "--block", str(args.block)]
        cmd += ["--k", str(args.k), "--modes", ",".join(args.modes), "--hooks", str(args.hooks)]
        cmd += ["--conc-m", str(args.conc_m), "--conc-batches", str(args.conc_batches)]
        cmd += ["--latency-ms", f"{args.latency_ms:g}"]
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
    if any("concurrency" in p for p in done):
        lines += ["", *_concurrency_table(done, settings)]
    return "\n".join(lines)


def _concurrency_table(processes: list[dict[str, Any]], settings: dict[str, Any]) -> list[str]:
    """Runs/s of each variant with M concurrent runs, and its ratio to the raw aiohttp loop's
    batches in the same process (median over rounds [min..max])."""
    cells: dict[str, dict[str, list[float]]] = {}
    for proc in processes:
        for name, r in proc.get("concurrency", {}).get("variants", {}).items():
            cell = cells.setdefault(f"{proc['process']} process: {name}", {})
            cell.setdefault("runs_per_s", []).append(r["runs_per_s"])
            cell.setdefault("ratio", []).append(r.get("ratio", 1.0))
    checks = [p["concurrency"]["verified"] for p in processes if "concurrency" in p]
    return [
        f"Concurrency: {settings['conc_m']} concurrent runs (asyncio.gather), non-streaming,"
        f" {settings['latency_ms']:g} ms server latency per model call; {settings['conc_batches']}"
        f" batch(es) per variant per round after a warm-up batch, alternating;"
        f" {sum(checks)}/{len(checks)} phases verified",
        "| variant | runs/s | x raw aiohttp runs/s |",
        "|---|---:|---:|",
        *(
            f"| {row} | {_cell(c['runs_per_s'], '{:.1f}')} | {_cell(c['ratio'], '{:.2f}')} |"
            for row, c in cells.items()
        ),
    ]


def orchestrate(args: argparse.Namespace) -> dict[str, Any]:
    server = ServerProcess(args.k, args.chunks)
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
        "machine": machine(),
        "settings": {
            "k": args.k,
            "n": args.n,
            "warmup": args.warmup,
            "block": args.block,
            "rounds": args.rounds,
            "modes": args.modes,
            "chunks": args.chunks,
            "peers": args.peers,
            "hooks": args.hooks,
            "conc_m": args.conc_m,
            "conc_batches": args.conc_batches,
            "latency_ms": args.latency_ms,
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
    p.add_argument("--hooks", type=int, default=5, help="rxagent's no-op hooks (see every event)")
    p.add_argument("--conc-m", type=int, default=100, help="concurrent runs per batch")
    p.add_argument(
        "--conc-batches", type=int, default=3, help="timed concurrent batches (0: no phase)"
    )
    p.add_argument("--latency-ms", type=float, default=50.0, help="server latency per model call")
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
    # internal: one peer process
    p.add_argument("--framework", choices=sorted(PEER_BUILDERS), help=argparse.SUPPRESS)
    p.add_argument("--no-rxagent", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
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
        args.conc_m, args.conc_batches = 20, 1
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
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
