"""The session routes: show, delete, interrupt, and decide approvals."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from rxagent.errors import ApiError, ApprovalError, SessionBusyError
from rxagent.server._auth import key_of
from rxagent.server._core import SERVER_KEY, Principal, ServerContext
from rxagent.server._errors import busy, check_session_id, no_approval
from rxagent.server._public import PublicErrors
from rxagent.server._runs import SSE_HEADERS, stream_events
from rxagent.server._schemas import (
    ApprovalRequest,
    ApprovalResponse,
    InterruptRequest,
    InterruptResponse,
    SessionInfo,
    SessionList,
    SessionSummary,
)
from rxagent.server._sessions_lookup import owner_of

if TYPE_CHECKING:
    from rxagent.result import AgentResult
    from rxagent.server._served import ServedAgent
    from rxagent.state import AgentState, StoredState

__all__ = [
    "decide_approval",
    "decide_approval_stream",
    "delete_session",
    "interrupt_session",
    "list_sessions",
    "show_session",
]

MAX_LISTED: Final = 1000
"""The most sessions `GET /v1/sessions` lists at once (`limit`)."""
_TITLE_CHARS: Final = 80


async def _session(
    request: web.Request,
) -> tuple[ServerContext, Principal, ServedAgent, StoredState]:
    ctx = request.app[SERVER_KEY]
    principal = ctx.authenticate(request)
    session_id = check_session_id(request.match_info["session_id"])
    agent, stored = await ctx.find_session(principal, session_id, request.query.get("agent"))
    return ctx, principal, agent, stored


def _route_name(ctx: ServerContext, agent: ServedAgent) -> str:
    return next(name for name, a in ctx.agents.items() if a is agent)


def _json(model: Any, status: int = 200) -> web.Response:
    return web.json_response(text=model.model_dump_json(), status=status)


async def show_session(request: web.Request) -> web.Response:
    """`GET /v1/sessions/{id}`: the saved state, its version, and whether a run is going."""
    ctx, _, agent, stored = await _session(request)
    session_id = request.match_info["session_id"]
    info = SessionInfo(
        session_id=session_id,
        agent=_route_name(ctx, agent),
        version=stored.version,
        running=await ctx.running_where(agent, session_id) is not None,
        state=stored.state,
    )
    return _json(info)


async def delete_session(request: web.Request) -> web.Response:
    """`DELETE /v1/sessions/{id}`: remove the session (409 while a run is in progress).

    The delete holds the session's lease, so a run cannot start on it meanwhile, in this
    process or another.
    """
    _, _, agent, _ = await _session(request)
    session_id = request.match_info["session_id"]
    store = agent.store
    holder = f"delete-{uuid.uuid4().hex}"
    if agent.is_running(session_id) or not await store.acquire_lease(
        agent.name, session_id, holder, agent.lease_ttl_s
    ):
        raise busy(session_id)
    try:
        await store.delete(agent.name, session_id)
    finally:
        await store.release_lease(agent.name, session_id, holder)
    return web.json_response({"deleted": True, "session_id": session_id})


async def interrupt_session(request: web.Request) -> web.Response:
    """`POST /v1/sessions/{id}/interrupt`: stop the session's run, here or in another process."""
    ctx, _, agent, _ = await _session(request)
    session_id = request.match_info["session_id"]
    body = await ctx.parse_body(request, InterruptRequest)
    where = await ctx.interrupt(agent, session_id, body.reason)
    if where is None:
        raise ApiError(
            409,
            "not_running",
            f"session {session_id!r} has no run in progress",
            field="session_id",
        )
    return _json(InterruptResponse(where=where), status=202)


async def decide_approval(request: web.Request) -> web.Response:
    """`POST /v1/sessions/{id}/approvals/{approval_id}`: approve or reject a parked tool call.

    The agent's `approve` / `reject` resumes the run once the batch is decided; the answer then
    carries the resumed run's result.
    """
    ctx, principal, agent, _ = await _session(request)  # 404 for another key's session
    session_id = request.match_info["session_id"]
    approval_id = request.match_info["approval_id"]
    body = await ctx.parse_body(request, ApprovalRequest)
    async with ctx.track(principal, agent, session_id):
        started = time.perf_counter()
        try:
            if body.approved:
                result: AgentResult[Any] | None = await agent.approve(
                    approval_id, session_id=session_id, principal=principal
                )
            else:
                result = await agent.reject(
                    approval_id, body.reason, session_id=session_id, principal=principal
                )
        except ApprovalError:
            raise no_approval(approval_id) from None
        except SessionBusyError:
            raise busy(session_id) from None
    if result is not None:
        ctx.metrics.finished(agent.name, result, time.perf_counter() - started)
        result = PublicErrors(_ignore).result(result, f"session {session_id!r}")
    answer = ApprovalResponse(
        session_id=session_id, approval_id=approval_id, approved=body.approved, result=result
    )
    return _json(answer)


async def decide_approval_stream(request: web.Request) -> web.StreamResponse:
    """`POST /v1/sessions/{id}/approvals/{approval_id}:stream`: decide, stream the resumed run.

    The answer is SSE, as `runs:stream`: the events of the run the decision resumes, from its
    PreCall to its PostCall. While other approvals of the batch wait, no run resumes and the
    stream ends without a frame.
    """
    ctx, principal, agent, _ = await _session(request)  # 404 for another key's session
    session_id = request.match_info["session_id"]
    approval_id = request.match_info["approval_id"]
    body = await ctx.parse_body(request, ApprovalRequest)
    opened = ctx.open_decision(request, principal, agent, session_id, body, approval_id)
    async with opened as handle:
        if handle is not None:
            return await stream_events(request, handle, ctx.config.keepalive_s)
    response = web.StreamResponse(headers={**SSE_HEADERS, "X-Session-Id": session_id})
    await response.prepare(request)
    await response.write_eof()
    return response


async def list_sessions(request: web.Request) -> web.Response:
    """`GET /v1/sessions?agent=NAME&limit=N`: the caller's sessions of an agent, by id.

    `agent` may be left out when the server serves one agent. Each session is loaded to check
    its owner, so `limit` (default 100, at most 1000) bounds the work; `truncated` says more
    sessions exist.
    """
    ctx = request.app[SERVER_KEY]
    principal = ctx.authenticate(request)
    name = request.query.get("agent")
    if name is None:
        if len(ctx.agents) != 1:
            raise ApiError(
                422,
                "agent_required",
                "this server serves several agents; add ?agent=<name>, one of "
                f"{sorted(ctx.agents)}",
                field="agent",
            )
        (name,) = ctx.agents
    agent = ctx.agent(name)
    limit = _limit(request.query.get("limit"))
    key = key_of(principal)
    listed: list[SessionSummary] = []
    truncated = False
    for session_id in sorted(await agent.store.list_sessions(agent.name)):
        stored = await agent.store.load(agent.name, session_id)
        if stored is None or owner_of(stored.state) != key:
            continue
        if len(listed) == limit:
            truncated = True
            break
        running = await ctx.running_where(agent, session_id) is not None
        listed.append(_summary(name, session_id, stored, running))
    return _json(SessionList(agent=name, sessions=tuple(listed), truncated=truncated))


def _limit(given: str | None) -> int:
    if given is None:
        return 100
    if not given.isdigit() or not 1 <= int(given) <= MAX_LISTED:
        raise ApiError(
            422,
            "invalid_limit",
            f"limit must be a whole number from 1 to {MAX_LISTED}, got {given!r}",
            field="limit",
        )
    return int(given)


def _summary(agent: str, session_id: str, stored: StoredState, running: bool) -> SessionSummary:
    state = stored.state
    return SessionSummary(
        session_id=session_id,
        agent=agent,
        version=stored.version,
        running=running,
        messages=len(state.memory),
        runs=state.runs,
        pending_approvals=tuple(p.approval_id for p in state.pending_approvals),
        usage=state.usage,
        title=_title(state),
    )


def _title(state: AgentState) -> str:
    first = next((m.text for m in state.memory if m.role == "user" and m.text), "")
    line = " ".join(first.split())
    return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1] + "…"


def _ignore(event: object) -> None:
    """Observe nothing."""
