"""`GET /`: a small HTML page that links the server's routes and the docs."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Final

from aiohttp import web

if TYPE_CHECKING:
    from rxagent.server._core import ServerContext

__all__ = ["home", "home_page"]

_ROUTES: Final = (
    ("GET", "/v1/agents", "the agents and teams served"),
    ("POST", "/v1/agents/{name}/runs", "run an agent to the end (JSON)"),
    ("POST", "/v1/agents/{name}/runs:stream", "run an agent, its events as SSE"),
    ("POST", "/v1/agents/{name}/ui", "the Vercel AI SDK UI message stream"),
    ("POST", "/v1/chat/completions", "OpenAI-compatible chat completions (model = agent)"),
    ("GET", "/v1/sessions?agent={name}", "your sessions of an agent"),
    ("GET", "/v1/sessions/{id}", "a session's saved state (DELETE removes it)"),
    ("POST", "/v1/sessions/{id}/interrupt", "stop a session's run"),
    ("POST", "/v1/sessions/{id}/approvals/{approval_id}", "approve or reject a tool call"),
    ("POST", "/v1/sessions/{id}/approvals/{approval_id}:stream", "decide, stream the resumed run"),
)
_LINKS: Final = (
    ("/openapi.json", "the OpenAPI 3.1 document"),
    ("/healthz", "liveness"),
    ("/metrics", "Prometheus metrics"),
)


def home_page(*, auth: bool, playground: bool = False) -> str:
    """The page: the routes, links to the documents a browser can open, and the docs.

    It names no agent, key or store, so it may be served without a bearer token.

    Example:
        ```python
        from rxagent.server._home import home_page

        page = home_page(auth=True, playground=True)
        assert page.startswith("<!doctype html>") and 'href="/openapi.json"' in page
        assert 'href="/playground"' in page
        assert "<script" not in page
        ```
    """
    rows = "\n".join(
        f"<tr><td>{method}</td><td><code>{escape(path)}</code></td><td>{escape(what)}</td></tr>"
        for method, path, what in _ROUTES
    )
    links = "\n".join(
        f'<li><a href="{path}">{path}</a>: {escape(what)}</li>' for path, what in _LINKS
    )
    access = (
        "Every route but this page and <code>/healthz</code> needs "
        "<code>Authorization: Bearer &lt;key&gt;</code>."
        if auth
        else "Auth is off: every request is accepted."
    )
    try_it = (
        '<p><a href="/playground">Open the playground</a>: talk to the agents and watch every '
        "event of their runs.</p>"
        if playground
        else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rxagent server</title>
<style>body{{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}}
td{{padding:.2rem .6rem;vertical-align:top}}code{{font-size:.95em}}</style></head>
<body>
<h1>rxagent server</h1>
{try_it}
<p>{access}</p>
<h2>Routes</h2>
<table>
{rows}
</table>
<h2>Links</h2>
<ul>
{links}
<li>the guide: <code>docs/server.md</code> in the rxagent sources (<code>mkdocs serve</code>
shows every page)</li>
</ul>
</body></html>
"""


async def home(request: web.Request, ctx: ServerContext) -> web.Response:
    """Answer `GET /` with the page (no auth: it holds nothing secret)."""
    return web.Response(
        text=home_page(auth=ctx.keys is not None, playground=ctx.config.playground),
        content_type="text/html",
        headers={"Cache-Control": "no-cache"},
    )
