"""The OpenAI-compatible routes: `POST /v1/chat/completions`, `GET /v1/models[/{model}]`.

`model` names an agent. A request is stateless (the client sends its whole history; the run
uses a throw-away session) unless an `X-Session-Id` header names a session. Tools run on the
server and are never returned as `tool_calls`; their progress rides in an extra `rxagent` field.
Errors use OpenAI's error body. See `docs/server/openai.md`.
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from rxagent.errors import ApiError, ErrorCode
from rxagent.events import PostReasoningEvent
from rxagent.server._core import SERVER_KEY
from rxagent.server._errors import clip, server_failure
from rxagent.server._openai_errors import error_body, invalid, run_error
from rxagent.server._openai_messages import new_input
from rxagent.server._openai_openapi import openapi_paths
from rxagent.server._openai_request import read_chat_request
from rxagent.server._openai_response import (
    PROGRESS_EVENTS,
    ChunkStream,
    closing_event,
    completion_body,
)
from rxagent.server._schemas import SESSION_ID_PATTERN

if TYPE_CHECKING:
    from rxagent.messages import Msg
    from rxagent.result import AgentResult
    from rxagent.server._core import RunHandle, ServerContext
    from rxagent.server._served import ServedAgent
    from rxagent.state import AgentState

__all__ = ["CHAT_COMPLETIONS_PATH", "SESSION_HEADER", "openapi_paths", "setup_openai_routes"]

CHAT_COMPLETIONS_PATH: Final = "/v1/chat/completions"
"""The route of the OpenAI-compatible endpoint."""
SESSION_HEADER: Final = "X-Session-Id"
"""The request header that names a session (the response echoes it)."""

_SESSION_ID_RE: Final = re.compile(SESSION_ID_PATTERN)
_DONE: Final = b"data: [DONE]\n\n"
_KEEPALIVE: Final = b": keep-alive\n\n"


class _AnyObject(BaseModel):
    """A JSON object, read as is (the checks are `read_chat_request`'s)."""

    model_config = ConfigDict(extra="allow")


def setup_openai_routes(app: web.Application) -> None:
    """Add the OpenAI-compatible routes to a server application (`create_app` calls it).

    Example:
        ```python
        from aiohttp import web
        from rxagent.server._openai import setup_openai_routes

        app = web.Application()
        setup_openai_routes(app)
        routes = {(r.method, r.resource.canonical) for r in app.router.routes()}
        assert ("POST", "/v1/chat/completions") in routes
        assert ("GET", "/v1/models") in routes
        ```
    """
    app.router.add_post(CHAT_COMPLETIONS_PATH, chat_completions)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/v1/models/{model}", get_model)


def error_response(request: web.Request, error: ApiError) -> web.Response:
    """`error` as an OpenAI error response (its status, body and headers), counted."""
    request.app[SERVER_KEY].metrics.api_error(error.code, error.status)
    return web.json_response(error_body(error), status=error.status, headers=error.headers)


def _frame(body: dict[str, Any]) -> bytes:
    return (
        b"data: " + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"
    )


# -- models ----------------------------------------------------------------------------------------


def _model_card(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "rxagent"}


def _agent(ctx: ServerContext, model: str) -> ServedAgent:
    if model not in ctx.agents:
        names = ", ".join(sorted(ctx.agents)) or "none"
        raise ApiError(
            404,
            "model_not_found",
            f"The model '{model}' does not exist: 'model' names one of this server's agents "
            f"({names}).",
            field="model",
        )
    return ctx.agent(model)


async def list_models(request: web.Request) -> web.Response:
    """`GET /v1/models`: the agents, as OpenAI model objects."""
    ctx = request.app[SERVER_KEY]
    try:
        ctx.authenticate(request)
    except ApiError as exc:
        return error_response(request, exc)
    return web.json_response(
        {"object": "list", "data": [_model_card(name) for name in sorted(ctx.agents)]}
    )


async def get_model(request: web.Request) -> web.Response:
    """`GET /v1/models/{model}`: one agent as an OpenAI model object (404 `model_not_found`)."""
    ctx = request.app[SERVER_KEY]
    try:
        ctx.authenticate(request)
        name = request.match_info["model"]
        _agent(ctx, name)
    except ApiError as exc:
        return error_response(request, exc)
    return web.json_response(_model_card(name))


# -- chat completions ------------------------------------------------------------------------------


async def chat_completions(request: web.Request) -> web.StreamResponse:
    """`POST /v1/chat/completions`: run the agent `model` names; answer as OpenAI does."""
    try:
        return await _chat(request)
    except ApiError as exc:
        return error_response(request, exc)
    except Exception as exc:  # a store that is down (503), or a bug (500): OpenAI's body too
        return error_response(request, server_failure(exc, f"POST {CHAT_COMPLETIONS_PATH}"))


def _session_header(request: web.Request) -> str | None:
    session_id = request.headers.get(SESSION_HEADER)
    if session_id is None:
        return None
    if not _SESSION_ID_RE.fullmatch(session_id):
        raise invalid(
            SESSION_HEADER,
            f"Invalid '{SESSION_HEADER}': {clip(session_id)}; give 1 to 128 letters, digits and "
            "'._:-' (starting with a letter or digit), or leave the header out for a stateless "
            "request.",
        )
    return session_id


def _failure(result: AgentResult[Any], agent: str, *, ephemeral: bool) -> ApiError | None:
    """The error a finished run answers with, or None when its reply is the answer."""
    if result.error is not None and result.error.code != ErrorCode.INTERRUPTED:
        return run_error(result.error, agent)
    if result.pending_approvals and ephemeral:
        return ApiError(
            409,
            "approval_required",
            f"The agent '{agent}' needs approval for tool calls, which needs a session: send "
            f"the header '{SESSION_HEADER}: <id>', then approve with POST "
            "/v1/sessions/<id>/approvals/<approval_id>.",
        )
    return None


async def _chat(request: web.Request) -> web.StreamResponse:
    ctx = request.app[SERVER_KEY]
    principal = ctx.authenticate(request)
    body = await ctx.parse_body(request, _AnyObject)
    chat = read_chat_request(body.model_extra or {})
    agent = _agent(ctx, chat.model)
    session_id = _session_header(request)
    ephemeral = session_id is None

    def inputs(state: AgentState | None) -> tuple[Msg, ...]:  # from the one load of the claim
        return new_input(chat.messages, has_history=state is not None and bool(state.memory))

    created = int(time.time())
    headers = {} if session_id is None else {SESSION_HEADER: session_id}
    async with ctx.open_run(
        request, principal, agent, inputs, session_id, ephemeral=ephemeral, options=chat.options
    ) as handle:
        if chat.stream:
            response = web.StreamResponse(
                headers={
                    "Content-Type": "text/event-stream",
                    "Cache-Control": "no-cache",
                    **headers,
                }
            )
            stream = ChunkStream(chat.model, include_usage=chat.include_usage, created=created)
            try:
                await response.prepare(request)
                await _stream(ctx, handle, stream, response, session_id, ephemeral=ephemeral)
                await response.write_eof()
            except ConnectionResetError:  # the client left: leaving the block cancels the run
                pass
            return response
        progress: list[dict[str, Any]] = []
        result: AgentResult[Any] | None = None
        model_finish: str | None = None
        async for event in handle.events:
            if event.type in PROGRESS_EVENTS:
                progress.append(event.model_dump(mode="json"))
            elif isinstance(event, PostReasoningEvent) and len(event.path) <= 1:
                model_finish = event.finish_reason
            post = closing_event(event)
            if post is not None:
                result = post.result
    if result is None:  # pragma: no cover - a run always ends with PostCall
        raise ApiError(500, "no_result", "The run ended without a result.")
    failure = _failure(result, chat.model, ephemeral=ephemeral)
    if failure is not None:
        raise failure
    body_out = completion_body(
        result,
        model=chat.model,
        created=created,
        session_id=session_id,
        progress=progress,
        model_finish=model_finish,
    )
    return web.json_response(body_out, headers=headers)


async def _stream(
    ctx: ServerContext,
    handle: RunHandle,
    stream: ChunkStream,
    response: web.StreamResponse,
    session_id: str | None,
    *,
    ephemeral: bool,
) -> None:
    """Write the run as chunks; a failure after the first byte is an in-stream error object."""
    frames: list[bytes] = []  # one write per batch of events
    try:
        async for batch in handle.batches(ctx.config.keepalive_s):
            if not batch:
                await response.write(_KEEPALIVE)
                continue
            frames = []
            for event in batch:
                frames.extend(_frame(chunk) for chunk in stream.feed(event))
                post = closing_event(event)
                if post is None:
                    continue
                failure = _failure(post.result, stream.model, ephemeral=ephemeral)
                if failure is not None:
                    frames.append(_frame(error_body(failure)))
                    await response.write(b"".join(frames))
                    return
                frames.extend(
                    _frame(chunk) for chunk in stream.close(post.result, session_id=session_id)
                )
                frames.append(_DONE)
            if frames:
                await response.write(b"".join(frames))
            frames = []
    except ConnectionResetError:
        raise
    except Exception as exc:  # what the batch had before the failure goes first
        failure = exc if isinstance(exc, ApiError) else server_failure(exc, "a chat stream")
        await response.write(b"".join([*frames, _frame(error_body(failure))]))
