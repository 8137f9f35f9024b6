"""Stand-ins for the server routes the playground needs, added only where the app lacks them.

`GET /playground` and its files, `GET /v1/agents`, `GET /v1/sessions?agent=` and
`POST /v1/sessions/{id}/approvals/{approval_id}:stream`, built on the server's own helpers with
the contract of the playground's spec. Once the server serves a route itself, its stand-in is not
added.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

import rxagent.server
from rxagent.errors import ApiError
from rxagent.events import EVENT_TYPES, BaseEvent
from rxagent.hooks import hook
from rxagent.server._auth import key_of
from rxagent.server._core import SERVER_KEY
from rxagent.server._errors import check_session_id
from rxagent.server._runs import SSE_HEADERS, sse_frame
from rxagent.server._sessions_lookup import owner_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["add_missing_routes"]

PLAYGROUND_DIR = Path(rxagent.server.__file__).parent / "playground"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".txt": "text/plain",
}


def _has(app: web.Application, method: str, path: str) -> bool:
    for resource in app.router.resources():
        if resource.canonical == path and any(r.method == method for r in resource):
            return True
    return False


async def _playground(request: web.Request) -> web.Response:
    name = request.match_info.get("file", "index.html")
    target = (PLAYGROUND_DIR / name).resolve()
    if target.parent != PLAYGROUND_DIR.resolve() or not target.is_file():
        raise web.HTTPNotFound()
    if target.suffix not in _TYPES:
        raise web.HTTPNotFound()
    return web.Response(
        body=target.read_bytes(),
        content_type=_TYPES[target.suffix],
        headers={"Content-Security-Policy": CSP, "Cache-Control": "no-store"},
    )


async def _agents(request: web.Request) -> web.Response:
    ctx = request.app[SERVER_KEY]
    ctx.authenticate(request)
    listed: list[dict[str, Any]] = []
    for name, agent in ctx.agents.items():
        model = getattr(agent, "model", None)
        tools = getattr(agent, "tools", None)
        listed.append(
            {
                "name": name,
                "kind": "agent" if isinstance(agent, rxagent.ReActAgent) else "team",
                "description": getattr(agent, "description", "") or "",
                "model": getattr(model, "name", None),
                "tools": sorted(getattr(t, "name", str(t)) for t in tools) if tools else [],
                "members": [],
                "record_changes": bool(getattr(agent, "record_changes", False)),
            }
        )
    return web.json_response({"agents": listed})


def _title(memory: Any) -> str:
    for msg in memory:
        if msg.role == "user":
            return str(msg.text)[:80]
    return ""


async def _sessions(request: web.Request) -> web.Response:
    ctx = request.app[SERVER_KEY]
    principal = ctx.authenticate(request)
    name = request.query.get("agent")
    agents = {name: ctx.agent(name)} if name else dict(ctx.agents)
    listed: list[dict[str, Any]] = []
    for route, agent in agents.items():
        for session_id in await agent.store.list_sessions(agent.name):
            stored = await agent.store.load(agent.name, session_id)
            if stored is None or owner_of(stored.state) != key_of(principal):
                continue
            state = stored.state
            listed.append(
                {
                    "session_id": session_id,
                    "agent": route,
                    "version": stored.version,
                    "running": await ctx.running_where(agent, session_id) is not None,
                    "messages": len(state.memory),
                    "runs": state.runs,
                    "pending_approvals": [p.approval_id for p in state.pending_approvals],
                    "usage": state.usage.model_dump(mode="json"),
                    "title": _title(state.memory),
                }
            )
    return web.json_response({"sessions": listed})


async def _approval_stream(request: web.Request, session_id: str, approval_id: str) -> Any:
    ctx = request.app[SERVER_KEY]
    principal = ctx.authenticate(request)
    check_session_id(session_id)
    found, _ = await ctx.find_session(principal, session_id, request.query.get("agent"))
    if not isinstance(found, rxagent.ReActAgent):
        raise ApiError(404, "not_found", "teams park no tool calls here")
    agent = found
    body = await request.json()
    if not isinstance(body.get("approved"), bool):
        raise ApiError(422, "invalid_body", "approved must be true or false", field="approved")
    queue: asyncio.Queue[BaseEvent] = asyncio.Queue()

    @hook(*EVENT_TYPES, priority=1_000_000, name="playground_tap")
    def tap(event: BaseEvent) -> None:
        if event.session_id == session_id:
            queue.put_nowait(event)

    agent.hooks.add(tap)
    if body["approved"]:
        decided = agent.approve(approval_id, session_id=session_id, principal=principal)
    else:
        decided = agent.reject(
            approval_id, body.get("reason"), session_id=session_id, principal=principal
        )
    task = asyncio.ensure_future(decided)
    response = web.StreamResponse(headers={**SSE_HEADERS, "X-Session-Id": session_id})
    try:
        await response.prepare(request)
        while not (task.done() and queue.empty()):
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                await response.write(sse_frame(getter.result()))
            else:
                getter.cancel()
        task.result()
        await response.write_eof()
    finally:
        agent.hooks.remove(tap)
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
    return response


def add_missing_routes(app: web.Application) -> None:
    """Add the stand-ins for the routes `app` does not serve yet."""
    if not _has(app, "GET", "/playground"):
        app.router.add_get("/playground", _playground)
        app.router.add_get("/playground/{file}", _playground)
    if not _has(app, "GET", "/v1/agents"):
        app.router.add_get("/v1/agents", _agents)
    if not _has(app, "GET", "/v1/sessions"):
        app.router.add_get("/v1/sessions", _sessions)
    if any(":stream" in r.canonical and "approvals" in r.canonical for r in app.router.resources()):
        return

    @web.middleware
    async def approval_stream(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        parts = request.path.split("/")
        if (
            request.method == "POST"
            and len(parts) == 6
            and parts[1:3] == ["v1", "sessions"]
            and parts[4] == "approvals"
            and parts[5].endswith(":stream")
        ):

            async def stream(req: web.Request) -> web.StreamResponse:
                result: web.StreamResponse = await _approval_stream(
                    req, parts[3], parts[5].removesuffix(":stream")
                )
                return result

            return await _through_errors(request, stream)
        return await handler(request)

    app.middlewares.append(approval_stream)


async def _through_errors(
    request: web.Request,
    stream: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> web.StreamResponse:
    try:
        return await stream(request)
    except ApiError as error:
        return web.json_response(error.body(), status=error.status, headers=error.headers)
