"""`GET /playground`: a page that runs the served agents and shows every event of their runs.

The page is plain HTML, CSS and JavaScript modules shipped in `rxagent/server/playground/`: no
build step, nothing fetched from the network. It speaks only the server's own JSON and SSE
routes, with the API key the user types (kept in the tab's memory or `sessionStorage`), and it
is served with a Content-Security-Policy that allows no inline script or style.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any, Final

from aiohttp import web

from rxagent.errors import ApiError
from rxagent.server._served import leaves, served_kinds

__all__ = [
    "PLAYGROUND_CSP",
    "PLAYGROUND_PATH",
    "openapi_paths",
    "playground_file",
    "playground_page",
    "record_changes",
]

PLAYGROUND_PATH: Final = "/playground"
"""Where the page is served."""

PLAYGROUND_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
"""The page's Content-Security-Policy: its own files only, no inline script or style."""

_TYPES: Final = {
    "html": "text/html",
    "js": "text/javascript",
    "css": "text/css",
    "svg": "image/svg+xml",
    "txt": "text/plain",
}
_FILE: Final = re.compile(r"^[a-z0-9][a-z0-9_-]*\.(html|js|css|svg|txt)$")
_HEADERS: Final = {
    "Content-Security-Policy": PLAYGROUND_CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}


def _read(name: str) -> bytes | None:
    """The bytes of one of the page's files, or None when there is no such file."""
    match = _FILE.match(name)
    if match is None:
        return None
    found = resources.files("rxagent.server").joinpath("playground", name)
    return found.read_bytes() if found.is_file() else None


def _answer(name: str) -> web.Response:
    body = _read(name)
    if body is None:
        raise ApiError(
            404,
            "not_found",
            f"the playground has no file {name!r}",
            field="path",
        )
    kind = _TYPES[name.rsplit(".", 1)[1]]
    return web.Response(body=body, headers={**_HEADERS, "Content-Type": f"{kind}; charset=utf-8"})


async def playground_page(request: web.Request) -> web.Response:
    """`GET /playground`: the page (no auth: it holds nothing; it asks for the key itself)."""
    return _answer("index.html")


async def playground_file(request: web.Request) -> web.Response:
    """`GET /playground/{file}`: one of the page's scripts, styles or images."""
    return _answer(request.match_info["file"])


def record_changes(agent: object) -> None:
    """Make `agent` (a team: each member, at any depth) record what its hooks change.

    The playground diffs each change; an agent reached only through another agent's
    `as_tool()` keeps its own setting.
    """
    agent_kind, _ = served_kinds()
    for leaf in leaves(agent):
        if isinstance(leaf, agent_kind):
            leaf.record_changes = True


def openapi_paths() -> dict[str, Any]:
    """The page's entry in the OpenAPI document."""
    return {
        PLAYGROUND_PATH: {
            "get": {
                "operationId": "playground",
                "summary": "The playground: talk to the agents, watch every event of their runs",
                "security": [],
                "responses": {
                    "200": {
                        "description": "The page (it asks for the API key itself).",
                        "content": {"text/html": {"schema": {"type": "string"}}},
                    }
                },
            }
        }
    }
