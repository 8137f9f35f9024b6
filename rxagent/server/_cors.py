"""CORS, off by default: preflights and headers for the configured origins only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from aiohttp import web

from rxagent.server._core import SERVER_KEY

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["allowed_origin", "cors_middleware", "cors_on_prepare"]

_METHODS: Final = "GET, POST, DELETE, OPTIONS"
_HEADERS: Final = "Authorization, Content-Type, X-Session-Id"
_EXPOSED: Final = "X-Session-Id, x-vercel-ai-ui-message-stream"
_MAX_AGE: Final = "600"


def allowed_origin(request: web.Request) -> str | None:
    """The request's `Origin` when CORS allows it (`cors_origins`, where `"*"` allows any)."""
    origin = request.headers.get("Origin")
    origins = request.app[SERVER_KEY].config.cors_origins
    if origin is None or not origins:
        return None
    return origin if origin in origins or "*" in origins else None


@web.middleware
async def cors_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Answer CORS preflights (`OPTIONS` with `Access-Control-Request-Method`) when CORS is on."""
    is_preflight = (
        request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers
    )
    if not is_preflight or not request.app[SERVER_KEY].config.cors_origins:
        return await handler(request)
    if allowed_origin(request) is None:
        return web.json_response(
            {
                "error": {
                    "code": "cors_forbidden",
                    "message": "this origin is not in the server's cors_origins",
                    "field": None,
                }
            },
            status=403,
        )
    requested = request.headers.get("Access-Control-Request-Headers")
    return web.Response(
        status=204,
        headers={
            "Access-Control-Allow-Methods": _METHODS,
            "Access-Control-Allow-Headers": requested or _HEADERS,
            "Access-Control-Max-Age": _MAX_AGE,
        },
    )


async def cors_on_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """Add the CORS headers to every answer (streams too) for an allowed origin."""
    origin = allowed_origin(request)
    if origin is None:
        return
    response.headers["Access-Control-Allow-Origin"] = origin
    response.headers["Access-Control-Expose-Headers"] = _EXPOSED
    response.headers.add("Vary", "Origin")
