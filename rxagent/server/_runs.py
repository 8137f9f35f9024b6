"""The run routes: `POST /v1/agents/{name}/runs` (JSON) and `.../runs:stream` (SSE)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Final

from aiohttp import web

from rxagent.errors import ErrorCode, StoreUnavailableError
from rxagent.events import ErrorEvent
from rxagent.server._core import SERVER_KEY
from rxagent.server._errors import server_failure
from rxagent.server._schemas import RunRequest

if TYPE_CHECKING:
    from rxagent.events import BaseEvent
    from rxagent.server._core import RunHandle

__all__ = [
    "KEEPALIVE_FRAME",
    "SSE_HEADERS",
    "run_json",
    "run_stream",
    "sse_frame",
    "stream_events",
]

SSE_HEADERS: Final = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # nginx: pass each frame on at once
}
"""The headers of an SSE answer."""

KEEPALIVE_FRAME: Final = b": keep-alive\n\n"
"""An SSE comment: clients ignore it; it keeps proxies from closing an idle stream."""


class _SSEResponse(web.StreamResponse):
    """A `StreamResponse` whose headers go out with its first frames, in one socket write.

    The route prepares it once the run's first event is there already, so waiting for the
    first write delays nothing; it saves a write (a system call and a TCP segment) per stream.
    """

    _send_headers_immediately = False


def sse_frame(event: BaseEvent) -> bytes:
    """One SSE frame: `event: <type>` and `data: <EVENT_ADAPTER JSON>` (one line).

    The data is the event's own JSON, the same bytes `EVENT_ADAPTER.dump_json` gives for a
    built-in event (without the union's dispatch), and `model_dump_json` for an event class of
    your own.

    Example:
        ```python
        from rxagent import EVENT_ADAPTER, Msg, PreCallEvent
        from rxagent.server import sse_frame

        frame = sse_frame(PreCallEvent(input=[Msg.user("hi")], agent="bot"))
        head, data = frame.splitlines()[:2]
        assert head == b"event: pre_call" and frame.endswith(b"}" + bytes([10, 10]))
        assert EVENT_ADAPTER.validate_json(data.removeprefix(b"data: ")).agent == "bot"
        ```
    """
    data = event.__pydantic_serializer__.to_json(event)
    return b"event: " + event.type.encode() + b"\ndata: " + data + b"\n\n"


async def run_json(request: web.Request) -> web.Response:
    """Run the agent to the end; answer its `AgentResult` as JSON (with `session_id`)."""
    ctx = request.app[SERVER_KEY]
    principal = ctx.authenticate(request)
    agent = ctx.agent(request.match_info["name"])
    body = await ctx.parse_body(request, RunRequest)
    async with ctx.open_run(request, principal, agent, body.input, body.session_id) as handle:
        async for _event in handle.events:
            pass
    assert handle.result is not None  # the events ended with PostCall
    return web.json_response(
        text=handle.result.model_dump_json(), headers={"X-Session-Id": handle.session_id}
    )


async def run_stream(request: web.Request) -> web.StreamResponse:
    """Stream the run as SSE, one frame per event, with keep-alive comments in between.

    A client that goes away is noticed at the next frame or keep-alive; leaving `open_run`
    then cancels the run, which saves consistent state and frees the session. A run that breaks
    off (its store went down, say) ends the stream with an `ErrorEvent` of source `server`
    instead of its PostCall.
    """
    ctx = request.app[SERVER_KEY]
    principal = ctx.authenticate(request)
    agent = ctx.agent(request.match_info["name"])
    body = await ctx.parse_body(request, RunRequest)
    async with ctx.open_run(request, principal, agent, body.input, body.session_id) as handle:
        return await stream_events(request, handle, ctx.config.keepalive_s)


async def stream_events(
    request: web.Request, handle: RunHandle, keepalive_s: float
) -> web.StreamResponse:
    """Answer the run of `handle` as SSE: one frame per event, keep-alive comments in between.

    Call it inside the block that opened the run: returning early (the client left) leaves the
    block, which cancels the run.
    """
    response = _SSEResponse(headers={**SSE_HEADERS, "X-Session-Id": handle.session_id})
    await response.prepare(request)
    last: BaseEvent | None = None
    try:
        async for batch in handle.batches(keepalive_s):
            if request.transport is None or request.transport.is_closing():
                return response  # the client left: leaving the block cancels the run
            if not batch:
                await response.write(KEEPALIVE_FRAME)
                continue
            frames = [sse_frame(e) for e in batch]
            last = batch[-1]
            await response.write(frames[0] if len(frames) == 1 else b"".join(frames))
    except ConnectionResetError:  # the client left while we wrote
        return response
    except Exception as exc:  # the stream broke off: end it with a typed error event
        failure = server_failure(exc, f"the event stream of agent {handle.agent!r}")
        try:
            event = _failure_event(handle, last, failure.message, exc)
            await response.write(sse_frame(event))
        except ConnectionResetError:
            return response
    with contextlib.suppress(ConnectionResetError):  # the client left as the run ended
        await response.write_eof()
    return response


def _failure_event(
    handle: RunHandle, last: BaseEvent | None, message: str, exc: Exception
) -> ErrorEvent:
    """The `ErrorEvent` (source `server`) that ends a stream whose run broke off.

    Its `exception` is `"StoreUnavailableError"` when the session store went away (the client
    may continue the session once it is back); None for any other failure, whose details stay
    in the server's log.
    """
    return ErrorEvent(
        code=ErrorCode.UNKNOWN,
        message=message,
        source="server",
        recoverable=False,
        exception="StoreUnavailableError" if isinstance(exc, StoreUnavailableError) else None,
        run_id=handle.run_id,
        session_id=handle.session_id,
        agent=handle.agent,
        path=last.path if last is not None else (handle.agent,),
        step=last.step if last is not None else 0,
        seq=last.seq + 1 if last is not None else 0,
    )
