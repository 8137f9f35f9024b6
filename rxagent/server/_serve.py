"""`run_server`: serve an app until SIGINT or SIGTERM, then shut down gracefully."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import TYPE_CHECKING

from aiohttp import web

from rxagent.errors import ConfigurationError
from rxagent.server._app import LOG_REDACTION, create_app
from rxagent.server._banner import describe, stopped
from rxagent.server._core import SERVER_KEY
from rxagent.server._logs import RedactingFilter
from rxagent.server._runner import IDLE_TIMEOUT_S, AppRunner

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from rxagent.agent import ReActAgent
    from rxagent.multiagent import Orchestrator
    from rxagent.server._auth import AuthSpec
    from rxagent.server._core import ServerConfig
    from rxagent.server._served import ServedAgent

    Served = ReActAgent | Orchestrator
    from rxagent.state import SessionStore

__all__ = ["run_server", "serve"]


def run_server(
    app_or_agents: web.Application
    | ServedAgent
    | Sequence[ServedAgent]
    | Mapping[str, ServedAgent],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    store: SessionStore | None = None,
    auth: AuthSpec = None,
    config: ServerConfig | None = None,
    print_url: bool = True,
) -> None:
    """Serve until SIGINT or SIGTERM, then shut down gracefully and return (blocking).

    Shutdown stops accepting connections, interrupts every run in progress, waits up to
    `config.shutdown_timeout_s` for them to save their state (an SSE stream ends with the
    interrupted run's PostCall), then closes the agents' stores and model connections: this
    function owns its event loop, so nothing may outlive it.

    Args:
        app_or_agents: An app from `create_app`, or what `create_app` takes.
        host: The interface to listen on (the default serves this machine only).
        port: The TCP port (0: any free port; the printed URL says which).
        store: Passed to `create_app` (agents only).
        auth: Passed to `create_app` (agents only).
        config: Passed to `create_app` (agents only).
        print_url: Print `rxagent server listening on http://host:port` once listening, then
            what is served (agents, routes, auth, store, metrics); and, once stopped, how many
            runs were interrupted and saved.

    Raises:
        ConfigurationError: When `store`, `auth` or `config` come with a ready-made app.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.server import run_server
        from rxagent.testing import ScriptedModel


        def main() -> None:
            agent = ReActAgent("bot", "", ScriptedModel(["Hi!"] * 100))
            run_server(agent, port=8000, auth=["sk-local"])  # blocks until SIGINT / SIGTERM


        if __name__ == "__main__":
            main()
        ```
    """
    if isinstance(app_or_agents, web.Application):
        if store is not None or auth is not None or config is not None:
            raise ConfigurationError(
                "run_server(app, ...) takes store, auth and config only with agents; "
                "pass them to create_app(...) instead"
            )
        app = app_or_agents
    else:
        app = create_app(app_or_agents, store=store, auth=auth, config=config)
    asyncio.run(serve(app, host=host, port=port, print_url=print_url))


async def serve(
    app: web.Application,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    print_url: bool = True,
    stop: asyncio.Event | None = None,
    on_listening: Callable[[str], object] | None = None,
    backlog: int = 128,
) -> None:
    """Serve `app` on the running loop until `stop` is set or SIGINT / SIGTERM arrives.

    The async core of `run_server`; see there. Signal handlers are installed when the loop
    supports them (the main thread on Unix). While it serves, the log records of aiohttp and
    rxagent pass through the app's `RedactingFilter`, and connections use `AppRunner`, so a
    malformed request gets the typed JSON error and neither echoes nor logs an API key. A
    connection idle for `ServerConfig.idle_timeout_s` (no request, or a client that stopped
    reading its answer) is closed.
    `on_listening(url)` is called once the server listens, with its base URL
    (`http://host:port`, with the port chosen when `port=0`). `backlog` is how many connections
    the kernel queues before the server accepts them (raise it for bursts of hundreds of new
    connections; the system's `somaxconn` caps it).

    Example:
        ```python
        import asyncio
        from rxagent import ReActAgent
        from rxagent.server import create_app, serve
        from rxagent.testing import ScriptedModel

        async def main() -> None:
            stop = asyncio.Event()
            app = create_app(ReActAgent("bot", "", ScriptedModel([])))
            server = asyncio.create_task(serve(app, port=0, print_url=False, stop=stop))
            stop.set()  # e.g. from your own shutdown logic
            await server

        asyncio.run(main())
        ```
    """
    stop = stop if stop is not None else asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop.set)
            installed.append(signum)
    ctx = app.get(SERVER_KEY)
    timeout = ctx.config.shutdown_timeout_s if ctx is not None else 10.0
    idle = ctx.config.idle_timeout_s if ctx is not None else IDLE_TIMEOUT_S
    redaction = app.get(LOG_REDACTION) or RedactingFilter()
    redaction.install()
    runner = AppRunner(
        app, handler_cancellation=True, shutdown_timeout=timeout, keepalive_timeout=idle
    )
    try:
        await runner.setup()  # a store that is down fails here: what opened is closed below
        site = web.TCPSite(runner, host, port, backlog=backlog)
        await site.start()
        url = f"http://{host}:{runner.addresses[0][1]}"
        if print_url:
            sys.stdout.write(f"rxagent server listening on {url}\n{describe(app, url)}")
            sys.stdout.flush()
        if on_listening is not None:
            on_listening(url)
        await stop.wait()
    finally:
        try:
            await runner.cleanup()
            if ctx is not None:
                await _close_agents(ctx.agents.values())
                if print_url:
                    sys.stdout.write(stopped(ctx))
                    sys.stdout.flush()
        finally:
            redaction.remove()
            for signum in installed:
                loop.remove_signal_handler(signum)


async def _close_agents(agents: Iterable[ServedAgent]) -> None:
    """Close every agent's model connections and each distinct store once."""
    closed: set[int] = set()
    for agent in agents:
        await agent.aclose()
        if id(agent.store) not in closed:
            closed.add(id(agent.store))
            await agent.store.aclose()
