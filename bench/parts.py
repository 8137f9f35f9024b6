"""Per-part cost of one ReAct step over HTTP, each part against the same work done by hand.

Run: `python bench/parts.py` (about 20 s; `--quick` for a smoke run, `--json FILE`).

`bench/http_overhead.py` measures what rxagent adds to a whole run against a raw aiohttp loop.
This script takes that sum apart. Each part is timed alone, in CPU time, in interleaved rounds,
beside the matching work of a hand-written loop (stdlib `json`, a bare `split` for SSE):

- **thread hop**: one call of a sync `add(a, b)` tool through `Toolkit.execute`, on a worker
  thread (the default) and declared `blocking=False` (inline on the loop), against
  `add(**json.loads(arguments))`.
- **request**: the OpenAI request body for a history of three tool calls (`request_body()` and
  the JSON encoding) against `json.dumps` of the same dict.
- **whole response**: a completion with one tool call read into deltas and built into a message
  (`parse_deltas`, `ResponseBuilder`) against `json.loads`.
- **per chunk**: a streamed answer of 20 text chunks: SSE decoding, the OpenAI chunk parser and
  `ResponseBuilder.add`, per chunk, against `split` and `json.loads` per line.

The loop itself (events, hook dispatch, run set-up and finish) is `bench/overhead.py`'s: the same
agent with a zero-latency model against a plain loop, with 0, 5 and 20 hooks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from typing import TYPE_CHECKING, Any

from rxagent.formatters.openai import OpenAIFormatter
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock
from rxagent.models import ModelOptions, OpenAIChatModel, ResponseBuilder
from rxagent.tools import Toolkit, tool

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

clock = time.process_time
TOOL_ARGS = '{"a": 1, "b": 2}'


def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


def _history() -> tuple[list[Msg], list[dict[str, Any]]]:
    """A system and user prompt and three tool calls with results, as Msg and as raw dicts."""
    msgs = [Msg.system("You are a helpful assistant."), Msg.user("What is 1 + 2?")]
    raw: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is 1 + 2?"},
    ]
    for i in range(3):
        call = ToolUseBlock(id=f"call_{i}", name="add", input={"a": i, "b": 2})
        msgs.append(Msg(role="assistant", content=[call]))
        msgs.append(Msg(role="tool", content=[ToolResultBlock(id=call.id, name="add", output="3")]))
        fn = {"name": "add", "arguments": json.dumps({"a": i, "b": 2})}
        raw.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{i}", "type": "function", "function": fn}],
            }
        )
        raw.append({"role": "tool", "tool_call_id": f"call_{i}", "content": "3"})
    return msgs, raw


def _completion() -> bytes:
    call = {"id": "call_9", "type": "function", "function": {"name": "add", "arguments": TOOL_ARGS}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }
    return json.dumps(body).encode()


def _stream(chunks: int) -> bytes:
    def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        data = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        return b"data: " + json.dumps({**data, "choices": [choice]}).encode() + b"\n\n"

    parts = [frame({"role": "assistant", "content": ""})]
    parts += [frame({"content": f"word{i} "}) for i in range(chunks)]
    parts.append(frame({}, "stop"))
    return b"".join(parts) + b"data: [DONE]\n\n"


def _tool_parts() -> dict[str, tuple[Callable[[], Awaitable[None]], ...]]:
    """A sync tool call on a worker thread, and inline where `blocking=False` exists."""
    call = ToolUseBlock(id="call_1", name="add", input={"a": 1, "b": 2})
    threaded = Toolkit([tool(add)])

    async def hop_thread() -> None:
        await threaded.execute(call)

    async def hop_raw() -> None:
        add(**json.loads(TOOL_ARGS))

    parts: dict[str, tuple[Callable[[], Awaitable[None]], ...]] = {
        "thread hop (sync tool call)": (hop_thread, hop_raw)
    }
    try:
        inline = Toolkit([tool(add, blocking=False)])  # type: ignore[call-overload,unused-ignore]
    except TypeError:  # a version without blocking=False
        return parts

    async def hop_inline() -> None:
        await inline.execute(call)

    parts["inline sync tool call (blocking=False)"] = (hop_inline, hop_raw)
    return parts


def _model_parts(chunks: int) -> dict[str, tuple[Callable[[], Awaitable[None]], ...]]:
    """Building a request, reading a whole response, reading a streamed one."""
    from rxagent.formatters.framing import SSEDecoder

    model = OpenAIChatModel("gpt-4o-mini", base_url="http://127.0.0.1:9", api_key="x")
    formatter = OpenAIFormatter()
    msgs, raw_msgs = _history()
    schema = tool(add).schema
    raw_tools = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": schema.description,
                "parameters": schema.parameters,
            },
        }
    ]
    options = ModelOptions()
    completion, stream = _completion(), _stream(chunks)
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    async def request_rx() -> None:
        encode(model.request_body(msgs, [schema], options)).encode()

    async def request_raw() -> None:
        json.dumps({"model": "gpt-4o-mini", "messages": raw_msgs, "tools": raw_tools}).encode()

    async def whole_rx() -> None:
        builder = ResponseBuilder()
        for delta in formatter.parse_deltas(json.loads(completion)):
            builder.add(delta)
        builder.build()

    async def whole_raw() -> None:
        json.loads(completion)["choices"][0]["message"]

    async def chunks_rx() -> None:
        decoder, parser, builder = SSEDecoder(), formatter.stream_parser(), ResponseBuilder()
        for event in decoder.feed(stream):
            for delta in parser.feed(event):
                builder.add(delta)
        builder.build()

    async def chunks_raw() -> None:
        text = []
        for line in stream.split(b"\n"):
            if line.startswith(b"data: ") and line[6:] != b"[DONE]":
                delta = json.loads(line[6:])["choices"][0]["delta"]
                if delta.get("content"):
                    text.append(delta["content"])
        "".join(text)

    return {
        "request building (3-call history)": (request_rx, request_raw),
        "whole response (one tool call)": (whole_rx, whole_raw),
        f"streamed answer ({chunks} chunks)": (chunks_rx, chunks_raw),
    }


def _parts(chunks: int) -> dict[str, tuple[Callable[[], Awaitable[None]], ...]]:
    """Each part: (rxagent's way, the hand-written way)."""
    return {**_tool_parts(), **_model_parts(chunks)}


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    results: dict[str, Any] = {}
    for name, (rx, raw) in _parts(args.chunks).items():
        times: dict[str, list[float]] = {"rx": [], "raw": []}
        for fn in (rx, raw):  # warm-up: caches, threads
            for _ in range(args.n):
                await fn()
        for _ in range(args.rounds):
            order = [("rx", rx), ("raw", raw)]
            rng.shuffle(order)
            for key, fn in order:
                start = clock()
                for _ in range(args.n):
                    await fn()
                times[key].append((clock() - start) / args.n * 1e6)
        rx_us, raw_us = statistics.median(times["rx"]), statistics.median(times["raw"])
        results[name] = {"rxagent_us": rx_us, "by_hand_us": raw_us, "extra_us": rx_us - raw_us}
    return results


def report(results: dict[str, Any], chunks: int) -> str:
    lines = [
        f"Per-part CPU cost (median µs per call; python {sys.version.split()[0]})",
        "",
        "| part | rxagent | by hand | extra | x by hand |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        ratio = r["rxagent_us"] / r["by_hand_us"] if r["by_hand_us"] > 0 else float("nan")
        lines.append(
            f"| {name} | {r['rxagent_us']:.1f} | {r['by_hand_us']:.1f} | "
            f"{r['extra_us']:+.1f} | {ratio:.2f} |"
        )
    per_chunk = [r for n, r in results.items() if n.startswith("streamed")]
    if per_chunk:
        lines.append("")
        lines.append(f"per chunk: {per_chunk[0]['extra_us'] / chunks:+.2f} µs over the hand loop")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=300, help="calls per timed block")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--chunks", type=int, default=20)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="a smoke run with tiny counts")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.rounds = 5, 2
    results = asyncio.run(measure(args))
    print(report(results, args.chunks))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
