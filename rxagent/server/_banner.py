"""What `serve` prints: what it serves once listening, and what shutdown did once stopped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rxagent.server._core import SERVER_KEY

if TYPE_CHECKING:
    from aiohttp import web

    from rxagent.server._core import ServerContext

__all__ = ["describe", "stopped"]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def describe(app: web.Application, url: str) -> str:
    """The lines after the URL: agents, routes, auth, store(s) and metrics; nothing secret.

    A store is shown by its repr, which hides any password in its URL; an API key is counted,
    never shown. An app that is not from `create_app` gets no lines.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.server import create_app
        from rxagent.server._banner import describe
        from rxagent.testing import ScriptedModel

        text = describe(create_app(ReActAgent("bot", "", ScriptedModel([])), auth=["k1"]),
                        "http://127.0.0.1:8000")
        assert "agents: bot" in text and "auth: on (1 API key;" in text and "k1" not in text
        assert "playground: http://127.0.0.1:8000/playground" in text
        ```
    """
    ctx = app.get(SERVER_KEY)
    if ctx is None:
        return ""
    names = ", ".join(ctx.agents)
    playground = (
        [f"  playground: {url}/playground (talk to the agents, watch every event)"]
        if ctx.config.playground
        else []
    )
    lines = [
        *playground,
        f"  page: {url}/ (the routes, linked)",
        f"  agents: {names}",
        f"  runs: POST {url}/v1/agents/{{name}}/runs (JSON), .../runs:stream (SSE), "
        ".../ui (AI SDK)",
        f"  openai: POST {url}/v1/chat/completions (model = agent name)",
        f"  sessions: {url}/v1/sessions?agent={{name}}, {url}/v1/sessions/{{id}} (GET, DELETE; "
        "POST .../interrupt, .../approvals/{id}[:stream])",
        "  auth: "
        + (
            f"on ({_plural(len(ctx.keys.keys), 'API key')}; send Authorization: Bearer <key>)"
            if ctx.keys is not None
            else "off (every request is accepted; API keys turn it on: auth= in Python, "
            "--api-key with rxagent serve)"
        ),
        f"  store: {_stores(ctx)}",
        f"  metrics: {url}/metrics"
        + (" (public)" if ctx.config.public_metrics or ctx.keys is None else " (bearer)"),
        f"  openapi: {url}/openapi.json; health: {url}/healthz",
        "  stop: Ctrl-C (runs in progress are interrupted and saved)",
    ]
    return "\n".join(lines) + "\n"


def _stores(ctx: ServerContext) -> str:
    seen: dict[int, str] = {}
    for agent in ctx.agents.values():
        store = agent.store
        kept = "" if store.persistent else " (sessions last only while this process runs)"
        seen.setdefault(id(store), f"{store!r}{kept}")
    return "; ".join(seen.values())


def stopped(ctx: ServerContext) -> str:
    r"""The line `serve` prints once stopped: how many runs were interrupted, and saved.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.server import SERVER_KEY, create_app
        from rxagent.server._banner import stopped
        from rxagent.testing import ScriptedModel

        ctx = create_app(ReActAgent("bot", "", ScriptedModel([])))[SERVER_KEY]
        ctx.interrupted_at_shutdown = 2
        assert stopped(ctx) == "rxagent server stopped: 2 runs were interrupted and saved\n"
        ```
    """
    interrupted, unfinished = ctx.interrupted_at_shutdown, ctx.unfinished_at_shutdown
    if not interrupted:
        return "rxagent server stopped: no run was in progress\n"
    if not unfinished:
        verb = "was" if interrupted == 1 else "were"
        return (
            f"rxagent server stopped: {_plural(interrupted, 'run')} {verb} interrupted and saved\n"
        )
    return (
        f"rxagent server stopped: {_plural(interrupted, 'run')} interrupted; {unfinished} did "
        f"not finish saving within shutdown_timeout_s ({ctx.config.shutdown_timeout_s} s)\n"
    )
