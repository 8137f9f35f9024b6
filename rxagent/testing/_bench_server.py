"""The fake OpenAI Chat Completions server of the overhead benchmark (`rxagent bench`).

It answers from precomputed bytes (the ones of `shared/bench/peers/fake_openai.py`): K answers
that each call `add(a=1, b=2)`, counted by the `tool` messages of the request, then the final
text `done`. A path segment `/lat/MS/` (as in `http://127.0.0.1:PORT/lat/50/v1`) delays every
answer by MS milliseconds. `GET /stats` returns its counters, `POST /stats/reset` zeroes them, and
`GET /last` returns the last request's body.

Run it in its own process, so that the client's CPU is measured alone:
`python -m rxagent.testing._bench_server --k 3 --chunks 20` prints `PORT=<port>` once it listens
on 127.0.0.1, and stops after `--max-runtime-s`. `ServerProcess` does that and stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import socket
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from rxagent.testing._overhead import HOST, MODEL, BenchError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from aiohttp import web

__all__ = ["FakeOpenAI", "ServerProcess", "running", "serve"]

_ID = "\x00ID\x00"  # spliced with a per-request counter
_USAGE = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
_TOOL_ARGS = '{"a": 1, "b": 2}'
_ARG_PIECES = ('{"a": ', '1, "b": ', "2}")
STAT_KEYS = (
    "requests",
    "stream_requests",
    "tool_call_responses",
    "final_responses",
    "bad_requests",
    "other_paths",
)


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


def latency_of(path: str) -> float:
    """The latency in seconds that a request path asks for (`.../lat/50/...`: 0.05), else 0.

    Example:
        ```python
        from rxagent.testing._bench_server import latency_of

        assert latency_of("/lat/50/v1/chat/completions") == 0.05
        assert latency_of("/v1/chat/completions") == 0.0
        ```
    """
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part == "lat":
            with contextlib.suppress(ValueError):
                return max(0.0, float(parts[i + 1]) / 1000)
    return 0.0


class FakeOpenAI:
    """K tool-call answers, then the final text; request counters for the run checks.

    Args:
        k: How many answers call the tool before the final text.
        chunks: How many text chunks a streamed final answer has.
    """

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
        """Return a fresh set of counters, all zero."""
        return dict.fromkeys(STAT_KEYS, 0)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one Chat Completions request (any other path: 404)."""
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
        latency = latency_of(request.path)
        if latency:
            await asyncio.sleep(latency)
        if not body.get("stream"):
            parts = self.ns_tool if want_tool else self.ns_final
            return web.Response(body=ident.join(parts), content_type="application/json")
        stats["stream_requests"] += 1
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        parts = (self.st_tool if want_tool else self.st_final)[usage]
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        return web.Response(body=ident.join(parts), headers=headers)  # one write; parsed per event

    async def stats_view(self, request: web.Request) -> web.Response:
        """`GET /stats`: the counters; `POST /stats/reset`: the counters, then zero them."""
        from aiohttp import web

        stats = self.stats
        if request.method == "POST":
            self.stats = self.zero()
        return web.json_response(stats)

    async def last_view(self, request: web.Request) -> web.Response:
        """`GET /last`: the body of the last Chat Completions request."""
        from aiohttp import web

        return web.Response(body=self.last, content_type="application/json")


@contextlib.asynccontextmanager
async def running(fake: FakeOpenAI, port: int = 0) -> AsyncIterator[int]:
    """Serve `fake` on 127.0.0.1 (`port` 0: a free one) while the block runs; yield the port."""
    from aiohttp import web

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("GET", "/stats", fake.stats_view)
    app.router.add_route("POST", "/stats/reset", fake.stats_view)
    app.router.add_route("GET", "/last", fake.last_view)
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(1024)
        await web.SockSite(runner, sock, backlog=1024).start()
        yield sock.getsockname()[1]
    finally:
        await runner.cleanup()


async def serve(k: int, chunks: int, max_runtime_s: float) -> None:
    """Serve a `FakeOpenAI(k, chunks)`, print `PORT=<port>`, and stop after `max_runtime_s`."""
    async with running(FakeOpenAI(k, chunks)) as port:
        print(f"PORT={port}", flush=True)
        await asyncio.sleep(max_runtime_s)  # bounded: the server always stops by itself


class ServerProcess:
    """The fake server in a child process, stopped by its pid (`stop()`, or leave the `with`).

    Args:
        k: Tool-call answers per run.
        chunks: Text chunks of a streamed final answer.
        max_runtime_s: The child stops by itself after this many seconds.

    Raises:
        BenchError: When the child does not say its port.
    """

    def __init__(self, k: int, chunks: int, max_runtime_s: float = 3600.0) -> None:
        cmd = [sys.executable, "-m", "rxagent.testing._bench_server", "--k", str(k)]
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
        """Stop the child (terminate, then kill after 10 s); idempotent."""
        if self.proc.poll() is None:
            self.proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """`python -m rxagent.testing._bench_server`: serve until `--max-runtime-s`."""
    p = argparse.ArgumentParser(description="the fake OpenAI server of rxagent bench")
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--chunks", type=int, default=20)
    p.add_argument("--max-runtime-s", type=float, default=3600.0)
    args = p.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.k, args.chunks, args.max_runtime_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
