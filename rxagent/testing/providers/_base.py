"""The shared engine of the fake provider servers: scripting, recording, faults, start and stop.

Each provider module subclasses `FakeProviderServer` with its routes and its wire rendering; this
module holds everything they share.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Self, TypeAlias

from aiohttp import web

from rxagent.messages import Msg, ToolUseBlock
from rxagent.models.base import Usage
from rxagent.testing._builders import Turn, estimate_tokens, turn_to_blocks

__all__ = [
    "FakeProviderServer",
    "Fault",
    "RecordedRequest",
    "Reply",
    "ScriptItem",
]


@dataclass(frozen=True, slots=True)
class Reply:
    """A scripted turn with an explicit finish reason or usage.

    Example:
        ```python
        from rxagent.testing.providers import Reply

        cut = Reply("The answer is", finish="length")
        assert cut.finish == "length"
        ```
    """

    turn: Turn
    """The response (see `rxagent.testing.Turn`)."""
    finish: str | None = field(default=None, kw_only=True)
    """The finish reason in rxagent's vocabulary (`"stop"`, `"length"`, `"tool_calls"`,
    `"content_filter"`, `"pause"`); by default `"tool_calls"` when the turn calls tools, else
    `"stop"`. The server sends the provider's own word for it."""
    usage: Usage | None = field(default=None, kw_only=True)
    """The usage to report; by default a character-count estimate."""


ScriptItem: TypeAlias = "Turn | Reply"
"""One scripted response: a turn, or a `Reply` around one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """A failure to inject into one request.

    Example:
        ```python
        from rxagent.testing.providers import Fault

        rate_limited = Fault(status=429, headers={"retry-after-ms": "10"})
        broken = Fault(mid_stream_error=2)  # the provider's error event after 2 chunks
        assert rate_limited.status == 429 and broken.drop_after is None
        ```
    """

    status: int | None = None
    """Answer with this HTTP status and the provider's error body."""
    error_type: str | None = None
    """The provider's own error type or code in that body (or in the stream error)."""
    message: str = "injected failure"
    """The error's message."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers (`retry-after`, ...)."""
    body: bytes | None = None
    """A raw body sent instead of the provider's error body (an HTML page from a proxy, say)."""
    content_type: str = "application/json"
    """The content type of a raw `body`."""
    mid_stream_error: int | None = None
    """Send the provider's in-stream error event after this many chunks, then end."""
    drop_after: int | None = None
    """Drop the connection after this many chunks."""
    first_byte_delay: float = 0.0
    """Seconds to wait before answering at all (cut short when the client goes away)."""
    consume_turn: bool = False
    """Whether the failed request uses up the turn it would have played (default: no, so a
    retried request gets the same turn)."""


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: Any
    """The decoded JSON body (None when it was not JSON)."""


@dataclass(slots=True)
class ScriptedResponse:
    """A turn ready to render: the assistant message, its usage and finish reason."""

    message: Msg
    usage: Usage
    finish: str
    index: int
    """The request's position (1-based), for ids that differ between responses."""


_FREE_PORT_HOST: Final = "127.0.0.1"


class FakeProviderServer:
    """A local HTTP server that speaks one provider's wire format, played from a script.

    Use it as `async with Server(turns) as server:` inside a running loop, or as
    `with Server(turns) as server:` to run it on a thread of its own (for synchronous SDK clients).
    It listens on 127.0.0.1 on a free port, and stops itself when the block ends.

    Args:
        turns: The responses, in request order (see `rxagent.testing.Turn`; a `Reply` sets the
            finish reason or usage), or a function from the `RecordedRequest` to a turn.
        chunk_size: Characters per streamed text, thinking or argument fragment.

    Attributes:
        requests: Every request received, in order.
        base_url: The API root to give a client (set once started).
        root: The server's own root, `http://127.0.0.1:<port>` (set once started).
    """

    provider: ClassVar[str] = ""
    stream_content_type: ClassVar[str] = "text/event-stream"

    def __init__(
        self,
        turns: Sequence[ScriptItem] | Callable[[RecordedRequest], ScriptItem] = (),
        *,
        chunk_size: int = 8,
    ) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        if callable(turns):
            self._script: Callable[[RecordedRequest], ScriptItem] | None = turns
            self._turns: list[ScriptItem] = []
        else:
            if isinstance(turns, str | Msg | Reply) or not isinstance(turns, Sequence):
                raise TypeError(
                    f"{type(self).__name__} takes a list of turns, e.g. "
                    f"{type(self).__name__}(['Hello!']), got {type(turns).__name__}"
                )
            self._script = None
            self._turns = list(turns)
            for i, item in enumerate(self._turns):  # a bad script fails here, not mid-test
                turn_to_blocks(
                    item.turn if isinstance(item, Reply) else item, where=f"turn #{i + 1}"
                )
        self.chunk_size = chunk_size
        self.requests: list[RecordedRequest] = []
        self.base_url = ""
        self.root = ""
        self.port = 0
        self._played = 0
        self._faults: dict[int, Fault] = {}
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None

    # -- scripting ---------------------------------------------------------------------------------

    def fail(self, request: int, fault: Fault | None = None, /, **fields: Any) -> Self:
        """Inject `fault` (or `Fault(**fields)`) into request number `request` (1 for the first).

        Returns the server, so calls chain.
        """
        if request < 1:
            raise ValueError(f"request numbers start at 1, got {request}")
        self._faults[request] = fault if fault is not None else Fault(**fields)
        return self

    def add(self, *turns: ScriptItem) -> None:
        """Append turns to the script."""
        self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        """Turns not yet played."""
        return len(self._turns) - self._played

    def _next_response(self, request: RecordedRequest, index: int) -> ScriptedResponse | None:
        if self._script is not None:
            item: ScriptItem = self._script(request)
        else:
            if self._played >= len(self._turns):
                return None
            item = self._turns[self._played]
            self._played += 1
        reply = item if isinstance(item, Reply) else Reply(item)
        blocks = turn_to_blocks(reply.turn, where=f"the turn for request #{index}")
        blocks = tuple(
            b.model_copy(update={"id": f"call_{index}_{i}"})
            if isinstance(b, ToolUseBlock) and not b.id
            else b
            for i, b in enumerate(blocks)
        )
        calls = any(isinstance(b, ToolUseBlock) for b in blocks)
        finish = reply.finish or ("tool_calls" if calls else "stop")
        usage = reply.usage
        if usage is None:
            prompt = len(json.dumps(request.body)) if request.body is not None else 0
            out = sum(len(b.model_dump_json()) for b in blocks)
            usage = Usage(
                input_tokens=estimate_tokens(prompt),
                output_tokens=estimate_tokens(out),
                requests=1,
            )
        return ScriptedResponse(Msg.assistant(blocks), usage, finish, index)

    # -- what each provider implements -------------------------------------------------------------

    def routes(self) -> list[web.RouteDef]:
        """The provider's endpoints; each handler calls `self.handle(request, stream=...)`."""
        raise NotImplementedError

    def render(self, response: ScriptedResponse, request: RecordedRequest) -> Any:
        """The whole (non-streamed) response body."""
        raise NotImplementedError

    def render_stream(
        self, response: ScriptedResponse, request: RecordedRequest
    ) -> Iterator[bytes]:
        """The streamed response, one wire frame (an SSE event, an NDJSON line) per item."""
        raise NotImplementedError

    def render_error(self, fault: Fault) -> tuple[int, Any]:
        """The status and JSON body of an HTTP error for `fault`."""
        raise NotImplementedError

    def render_stream_error(self, fault: Fault) -> bytes:
        """The frame of an error sent inside a stream."""
        raise NotImplementedError

    def stream_headers(self) -> Mapping[str, str]:
        """Headers of a streamed response besides the content type."""
        return {"Cache-Control": "no-cache"}

    # -- serving -----------------------------------------------------------------------------------

    async def receive(self, request: web.Request) -> tuple[RecordedRequest, int, Fault | None]:
        """Record `request`; return it, its number (1 for the first) and its injected fault.

        The fault's `first_byte_delay` has passed when it returns.

        For routes that answer without the script (embeddings): they answer a fault with a
        status or body as `handle` does.
        """
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        recorded = RecordedRequest(
            method=request.method,
            path=request.path,
            query=dict(request.query),
            headers=dict(request.headers),
            body=body,
        )
        self.requests.append(recorded)
        index = len(self.requests)
        fault = self._faults.get(index)
        if fault is not None and fault.first_byte_delay:
            await asyncio.sleep(fault.first_byte_delay)
        return recorded, index, fault

    async def handle(self, request: web.Request, *, stream: bool) -> web.StreamResponse:
        """Record `request`, then answer it from the script (or with its injected fault)."""
        recorded, index, fault = await self.receive(request)
        body = recorded.body
        if fault is not None and (fault.status is not None or fault.body is not None):
            if fault.consume_turn:
                self._next_response(recorded, index)
            return self._error_response(fault)
        if body is None:
            return self._error_response(
                Fault(
                    status=400, message="the request body is not JSON", error_type="invalid_request"
                )
            )
        response = self._next_response(recorded, index)
        if response is None:
            return self._error_response(
                Fault(
                    status=500,
                    message=f"the fake {self.provider} server's script is exhausted "
                    f"({len(self._turns)} turns scripted, request #{index})",
                    error_type="script_exhausted",
                )
            )
        if not stream:
            return web.json_response(self.render(response, recorded))
        resp = web.StreamResponse(
            headers={"Content-Type": self.stream_content_type, **self.stream_headers()}
        )
        await resp.prepare(request)
        for sent, frame in enumerate(self.render_stream(response, recorded)):
            if fault is not None and fault.mid_stream_error == sent:
                self._unplay(fault)
                await resp.write(self.render_stream_error(fault))
                break
            if fault is not None and fault.drop_after == sent:
                self._unplay(fault)
                await resp.drain()
                if request.transport is not None:
                    request.transport.abort()
                return resp
            await resp.write(frame)
        await resp.write_eof()
        return resp

    def _unplay(self, fault: Fault) -> None:
        """A failed request leaves its turn for the next one, unless the fault says otherwise."""
        if not fault.consume_turn and self._script is None:
            self._played -= 1

    def _error_response(self, fault: Fault) -> web.Response:
        headers = dict(fault.headers)
        if fault.body is not None:
            return web.Response(
                status=fault.status or 502,
                body=fault.body,
                headers={"Content-Type": fault.content_type, **headers},
            )
        status, payload = self.render_error(fault)
        return web.json_response(payload, status=status, headers=headers)

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen on 127.0.0.1 on a free port."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(self.routes())
        # A request whose client has gone (a timeout, a cancelled call) is cancelled, as a real
        # server stops the work, so a `first_byte_delay` does not hold up `stop()` until it ends.
        runner = web.AppRunner(
            app, access_log=None, handle_signals=False, handler_cancellation=True
        )
        await runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((_FREE_PORT_HOST, 0))
        site = web.SockSite(runner, sock)
        await site.start()
        self._runner = runner
        self.port = sock.getsockname()[1]
        self.root = f"http://{_FREE_PORT_HOST}:{self.port}"
        self.base_url = self._base_url(self.root)

    def _base_url(self, root: str) -> str:
        """The API root a client is given; providers with a version prefix override it."""
        return root

    async def stop(self) -> None:
        """Stop listening and close open connections."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def __enter__(self) -> Self:
        started = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._thread_loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the starting thread
                failure.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        self._thread = threading.Thread(target=serve, name=f"fake-{self.provider}", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            raise failure[0]
        return self

    def __exit__(self, *exc: object) -> None:
        loop, thread = self._thread_loop, self._thread
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
        self._thread = self._thread_loop = None
