"""`create_app`: the aiohttp application, its routes, middlewares and lifecycle."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from rxagent._version import __version__
from rxagent.errors import ApiError, ConfigurationError
from rxagent.server._auth import AuthSpec, KeyRing
from rxagent.server._catalog import list_agents
from rxagent.server._control import serve_control
from rxagent.server._core import SERVER_KEY, ServerConfig, ServerContext
from rxagent.server._cors import cors_middleware, cors_on_prepare
from rxagent.server._errors import error_response, server_failure
from rxagent.server._home import home
from rxagent.server._logs import RedactingFilter
from rxagent.server._metrics import METRICS_CONTENT_TYPE
from rxagent.server._openai import openapi_paths as openai_paths
from rxagent.server._openai import setup_openai_routes
from rxagent.server._openapi import openapi_document
from rxagent.server._playground import (
    PLAYGROUND_PATH,
    playground_file,
    playground_page,
    record_changes,
)
from rxagent.server._playground import openapi_paths as playground_paths
from rxagent.server._runs import run_json, run_stream
from rxagent.server._served import served_kinds
from rxagent.server._sessions import (
    decide_approval,
    decide_approval_stream,
    delete_session,
    interrupt_session,
    list_sessions,
    show_session,
)
from rxagent.server._ui import openapi_paths as ui_paths
from rxagent.server._ui import setup_ui_routes
from rxagent.state import InMemoryStore

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from rxagent.server._served import ServedAgent
    from rxagent.state import SessionStore, Subscription

__all__ = ["LOG_REDACTION", "create_app"]

logger: Final = logging.getLogger("rxagent.server")


_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SUBSCRIPTIONS: Final = web.AppKey("rxagent.server.subscriptions", list)
_OPENAPI: Final = web.AppKey("rxagent.server.openapi", str)
LOG_REDACTION: Final = web.AppKey("rxagent.server.log_redaction", RedactingFilter)
"""The app's log filter: it knows the app's API keys (`run_server` installs it)."""


def _agents_by_name(
    agents: ServedAgent | Sequence[ServedAgent] | Mapping[str, ServedAgent],
) -> dict[str, ServedAgent]:
    kinds = served_kinds()
    given: object = agents
    table: dict[object, object] = {}
    if isinstance(given, kinds):
        table = {given.name: given}
    elif isinstance(given, Mapping):
        table = dict(given)
    elif isinstance(given, Sequence) and not isinstance(given, str):
        for agent in given:
            name = agent.name if isinstance(agent, kinds) else object()
            if name in table:
                raise ConfigurationError(
                    f"two agents are named {name!r}; give each agent its own name"
                )
            table[name] = agent
    if not table or not all(isinstance(a, kinds) for a in table.values()):
        raise ConfigurationError(
            "create_app takes a ReActAgent or a team (rxagent.multiagent), a non-empty list of "
            f"them, or a mapping name -> agent, got {agents!r}"
        )
    result: dict[str, ServedAgent] = {}
    for key, agent in table.items():
        assert isinstance(agent, kinds)
        for name in (key, agent.name):
            if not isinstance(name, str) or not _NAME.match(name):
                raise ConfigurationError(
                    f"agent name {name!r} cannot be part of a URL; use letters, digits and ._-"
                )
        result[str(key)] = agent
    names = [a.name for a in result.values()]
    if len(set(names)) != len(names):
        raise ConfigurationError(
            "two agents of the app share a name; sessions and control messages are keyed by "
            "agent.name, so give each agent its own name"
        )
    return result


@web.middleware
async def _errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Answer every error with the typed JSON body (and count it)."""
    ctx = request.app[SERVER_KEY]
    try:
        if len(request.headers.getall("Authorization", ())) > 1:
            raise ApiError(
                400,
                "duplicate_header",
                "the request has more than one Authorization header; send exactly one",
                field="Authorization",
            )
        return await handler(request)
    except ApiError as error:
        ctx.metrics.api_error(error.code, error.status)
        return error_response(error)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status, "http_error")
        mapped = ApiError(exc.status, code, exc.reason, headers=_allow_header(exc))
        ctx.metrics.api_error(mapped.code, mapped.status)
        return error_response(mapped)
    except Exception as exc:  # a store that is down: 503; anything else: 500, logged
        failure = server_failure(exc, f"{request.method} {request.path}")
        ctx.metrics.api_error(failure.code, failure.status)
        return error_response(failure)


def _allow_header(exc: web.HTTPException) -> dict[str, str]:
    allow = exc.headers.get("Allow")
    return {"Allow": allow} if allow else {}


async def _home(request: web.Request) -> web.Response:
    return await home(request, request.app[SERVER_KEY])


async def _healthz(request: web.Request) -> web.Response:
    if request.app[SERVER_KEY].shutting_down:
        return web.json_response({"status": "shutting_down"}, status=503)
    return web.json_response({"status": "ok"})


async def _metrics(request: web.Request) -> web.Response:
    ctx = request.app[SERVER_KEY]
    if not ctx.config.public_metrics:
        ctx.authenticate(request)
    return web.Response(body=ctx.metrics.render(), headers={"Content-Type": METRICS_CONTENT_TYPE})


async def _openapi(request: web.Request) -> web.Response:
    return web.json_response(text=request.app[_OPENAPI])


def _stores(ctx: ServerContext) -> list[tuple[SessionStore, dict[str, ServedAgent]]]:
    """Each distinct store and the agents (by `agent.name`) that keep sessions in it."""
    groups: dict[int, tuple[SessionStore, dict[str, ServedAgent]]] = {}
    for agent in ctx.agents.values():
        groups.setdefault(id(agent.store), (agent.store, {}))[1][agent.name] = agent
    return list(groups.values())


async def _subscribe(app: web.Application) -> None:
    """Subscribe each store's agents to its control channel (all of them, or none)."""
    subscriptions: list[Subscription] = app[_SUBSCRIPTIONS]
    try:
        for store, agents in _stores(app[SERVER_KEY]):
            subscriptions.append(await serve_control(store.control(), agents))
    except BaseException:  # a store that is down: the app does not start, and keeps nothing
        while subscriptions:
            await subscriptions.pop().close()
        raise


async def _shutdown(app: web.Application) -> None:
    if not await app[SERVER_KEY].shutdown():
        logger.warning("runs still in progress after shutdown_timeout_s; they are cancelled")


async def _unsubscribe(app: web.Application) -> None:
    ctx = app[SERVER_KEY]
    await ctx.wait_idle(ctx.config.shutdown_timeout_s)  # cancelled runs finish saving
    subscriptions: list[Subscription] = app[_SUBSCRIPTIONS]
    while subscriptions:
        await subscriptions.pop().close()


def _raw_keys(auth: AuthSpec) -> list[str]:
    """The API keys of `auth` (checked by `KeyRing.of` already), for the log redaction."""
    if auth is None:
        return []
    return list(auth.keys() if isinstance(auth, Mapping) else auth)


def create_app(
    agents: ServedAgent | Sequence[ServedAgent] | Mapping[str, ServedAgent],
    *,
    store: SessionStore | None = None,
    auth: AuthSpec = None,
    config: ServerConfig | None = None,
) -> web.Application:
    """Return an aiohttp application that serves `agents` over HTTP.

    Args:
        agents: A `ReActAgent` or a team (`rxagent.multiagent`: a pipeline, a `MsgHub`),
            a list of them (each under its `name`), or a mapping route name -> agent. A
            team's members' events are nested in its streams (`path`).
        store: Where sessions live: it replaces the store of every agent whose store is an
            `InMemoryStore` (the default). Agents with another store keep theirs. The caller
            closes it (`run_server` closes every agent's store when it exits).
        auth: None (no auth: every caller is `"anonymous"`), a list of API keys, or a mapping
            API key -> key_id. Keys are compared in constant time. The app reads no environment
            variable: pass `os.environ["RXAGENT_API_KEYS"].split(",")` yourself.
        config: Limits, keep-alive, CORS and shutdown settings.

    Raises:
        ConfigurationError: For no agents, duplicate or non-URL names, or bad auth keys.

    Example:
        ```python
        import asyncio
        from aiohttp.test_utils import TestClient, TestServer
        from rxagent import AgentResult, ReActAgent
        from rxagent.server import create_app
        from rxagent.testing import ScriptedModel

        async def main() -> None:
            agent = ReActAgent("bot", "", ScriptedModel(["Hello!"]))
            async with TestClient(TestServer(create_app(agent))) as client:
                response = await client.post("/v1/agents/bot/runs", json={"input": "hi"})
                result = AgentResult.model_validate(await response.json())
                assert result.text == "Hello!" and result.session_id

        asyncio.run(main())
        ```
    """
    config = config if config is not None else ServerConfig()
    table = _agents_by_name(agents)
    keys = KeyRing.of(auth)
    for agent in table.values():
        if config.playground:
            record_changes(agent)
        if store is not None and type(agent.store) is InMemoryStore:
            agent.store = store
        if config.lease_ttl_s is not None:
            agent.lease_ttl_s = config.lease_ttl_s
    ctx = ServerContext(table, config, keys)
    app = web.Application(
        client_max_size=config.max_body_bytes,
        middlewares=[cors_middleware, _errors] if config.cors_origins else [_errors],
    )
    app[SERVER_KEY] = ctx
    app[_SUBSCRIPTIONS] = []
    app[LOG_REDACTION] = RedactingFilter(_raw_keys(auth))
    app.router.add_get("/", _home)
    app.router.add_get("/v1/agents", list_agents)
    app.router.add_post("/v1/agents/{name}/runs", run_json)
    app.router.add_post("/v1/agents/{name}/runs:stream", run_stream)
    app.router.add_get("/v1/sessions", list_sessions)
    app.router.add_get("/v1/sessions/{session_id}", show_session)
    app.router.add_delete("/v1/sessions/{session_id}", delete_session)
    app.router.add_post("/v1/sessions/{session_id}/interrupt", interrupt_session)
    app.router.add_post(  # before the JSON form, whose {approval_id} would match "id:stream"
        "/v1/sessions/{session_id}/approvals/{approval_id}:stream", decide_approval_stream
    )
    app.router.add_post("/v1/sessions/{session_id}/approvals/{approval_id}", decide_approval)
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/metrics", _metrics)
    app.router.add_get("/openapi.json", _openapi)
    if config.playground:
        app.router.add_get(PLAYGROUND_PATH, playground_page)
        app.router.add_get(PLAYGROUND_PATH + "/{file}", playground_file)
    setup_openai_routes(app)
    setup_ui_routes(app)
    extra_paths: dict[str, Any] = {**openai_paths(), **ui_paths()}
    if config.playground:
        extra_paths.update(playground_paths())
    document = openapi_document(
        extra_paths, version=__version__, auth=keys is not None, agents=table
    )
    app[_OPENAPI] = json.dumps(document)
    if config.cors_origins:  # CORS is off by default: no per-request work for it then
        app.on_response_prepare.append(cors_on_prepare)
    app.on_startup.append(_subscribe)
    app.on_shutdown.append(_shutdown)
    app.on_cleanup.append(_unsubscribe)
    return app
