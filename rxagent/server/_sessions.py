"""The session routes: show, delete, interrupt, and decide approvals."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from aiohttp import web

from rxagent.errors import ApiError, ApprovalError, SessionBusyError
from rxagent.server._core import SERVER_KEY, Principal, ServerContext
from rxagent.server._errors import busy, check_session_id
from rxagent.server._public import PublicErrors
from rxagent.server._schemas import (
    ApprovalRequest,
    ApprovalResponse,
    InterruptRequest,
    InterruptResponse,
    SessionInfo,
)

if TYPE_CHECKING:
    from rxagent.result import AgentResult
    from rxagent.server._served import ServedAgent
    from rxagent.state import StoredState

__all__ = ["decide_approval", "delete_session", "interrupt_session", "show_session"]


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
            raise _no_approval(approval_id) from None
        except SessionBusyError:
            raise busy(session_id) from None
    if result is not None:
        ctx.metrics.finished(agent.name, result, time.perf_counter() - started)
        result = PublicErrors(_ignore).result(result, f"session {session_id!r}")
    answer = ApprovalResponse(
        session_id=session_id, approval_id=approval_id, approved=body.approved, result=result
    )
    return _json(answer)


def _ignore(event: object) -> None:
    """Observe nothing."""


def _no_approval(approval_id: str) -> ApiError:
    return ApiError(
        404,
        "approval_not_found",
        f"no pending approval {approval_id!r} in this session (unknown, or already decided)",
        field="approval_id",
    )
