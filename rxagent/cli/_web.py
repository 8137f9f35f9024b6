"""`rxagent chat --web`: serve the chosen agent on this machine and open the playground.

The agent is the one `rxagent chat` would talk to (`--agent`, `--model`, or the offline demo),
with its sessions in the same `--store`. The server listens on 127.0.0.1 only, with no API key
(nothing but this machine can reach it), until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import webbrowser
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from rxagent.cli._build import open_cli_agent
from rxagent.cli._common import EXIT_FAILED, EXIT_OK
from rxagent.errors import CliError

if TYPE_CHECKING:
    import argparse

__all__ = ["playground_url", "web_command"]


def playground_url(base: str, agent: str, session_id: str | None = None) -> str:
    """The playground's deep link: `base/playground?agent=NAME[&session=ID]`.

    Example:
        ```python
        from rxagent.cli._web import playground_url

        url = playground_url("http://127.0.0.1:8000", "demo", "s 1")
        assert url == "http://127.0.0.1:8000/playground?agent=demo&session=s+1"
        ```
    """
    query = {"agent": agent} | ({"session": session_id} if session_id else {})
    return f"{base}/playground?{urlencode(query)}"


def _open(url: str, *, browser: bool) -> None:
    sys.stdout.write(f"playground: {url}\n")
    sys.stdout.flush()
    if browser and not webbrowser.open(url):
        sys.stderr.write("no browser could be started here: open the link above yourself\n")


async def _serve(args: argparse.Namespace) -> None:
    from rxagent.server import create_app, serve

    opened = await open_cli_agent(args)
    agent = opened.agent
    try:
        app = create_app(agent)
    except BaseException:
        await opened.aclose()
        raise
    loop = asyncio.get_running_loop()

    def listening(base: str) -> None:
        url = playground_url(base, agent.name, args.session)
        loop.run_in_executor(None, lambda: _open(url, browser=not args.no_open))

    # serve() closes the agent, its model connections and its store when it stops
    await serve(app, host="127.0.0.1", port=args.port, on_listening=listening)


def web_command(args: argparse.Namespace) -> int:
    """Serve the agent and open the playground until Ctrl-C; return the exit code."""
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: a port is a number from 0 to 65535")
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(args))
    except OSError as exc:
        raise CliError(
            f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}; pick another --port",
            exit_code=EXIT_FAILED,
        ) from exc
    return EXIT_OK
