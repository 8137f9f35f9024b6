"""`rxagent serve MODULE:ATTR`: serve agents (or a ready aiohttp application) over HTTP."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from rxagent.cli._build import open_cli_store
from rxagent.cli._common import EXIT_FAILED, EXIT_OK, call_factory, load_object
from rxagent.errors import CliError, ConfigurationError

if TYPE_CHECKING:
    import argparse

    from aiohttp import web

    from rxagent.agent import ReActAgent

__all__ = ["API_KEYS_ENV", "add_serve_parser", "serve_command"]

API_KEYS_ENV: Final = "RXAGENT_API_KEYS"
"""Comma-separated API keys the server accepts (added to `--api-key`)."""

_Target: TypeAlias = "web.Application | list[ReActAgent] | dict[str, ReActAgent]"

_WHAT: Final = (
    "an aiohttp.web.Application, a ReActAgent, a list or dict of agents, or a zero-argument "
    "function returning one of those"
)


def add_serve_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the `serve` command to the `commands` subparsers."""
    serve = commands.add_parser(
        "serve",
        parents=parents,
        help="serve agents over HTTP (runs, SSE, OpenAI-compatible chat completions)",
        description=(
            f"Serve MODULE:ATTR over HTTP, where ATTR is {_WHAT}. Agents are served with "
            "rxagent.server.create_app; SIGINT or SIGTERM shut the server down gracefully "
            "(in-flight runs are interrupted and their state saved). Once listening it prints "
            "what it serves: agents, routes, auth, store and metrics; GET / is a page that "
            "links the routes."
        ),
    )
    serve.add_argument("target", metavar="MODULE:ATTR", help="what to serve")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default: %(default)s, this machine only)",
    )
    serve.add_argument(
        "--port", type=int, default=8000, help="the port, 0: any free one (default: %(default)s)"
    )
    serve.add_argument(
        "--store",
        metavar="URL",
        help="where the agents' sessions live: sqlite:///path.db, postgresql://..., redis://... "
        "(default: $RXAGENT_STORE, else sqlite:///.rxagent/sessions.db); an agent created with "
        "a store of its own keeps it",
    )
    serve.add_argument(
        "--api-key",
        action="append",
        default=[],
        metavar="KEY",
        dest="api_keys",
        help=f"an accepted bearer token (repeatable; also ${API_KEYS_ENV}, comma-separated) "
        "(default: none, and the server accepts every request)",
    )
    serve.set_defaults(handler=serve_command)


def _as_target(
    found: object, where: str
) -> web.Application | list[ReActAgent] | dict[str, ReActAgent] | None:
    """The application, or the agents, that `found` is; None when it is neither."""
    from aiohttp import web

    from rxagent.agent import ReActAgent

    if isinstance(found, web.Application):
        return found
    if isinstance(found, ReActAgent):
        return [found]
    if isinstance(found, list | tuple) and found:
        bad = [type(a).__name__ for a in found if not isinstance(a, ReActAgent)]
        if bad:
            raise CliError(f"{where}: every item must be a ReActAgent, got {', '.join(bad)}")
        return list(found)
    if isinstance(found, Mapping) and found:
        bad = [type(a).__name__ for a in found.values() if not isinstance(a, ReActAgent)]
        if bad:
            raise CliError(f"{where}: every value must be a ReActAgent, got {', '.join(bad)}")
        return dict(found)
    return None


def _agents_of(
    found: object, where: str
) -> web.Application | list[ReActAgent] | dict[str, ReActAgent]:
    """The application, or the agents, that `found` is (calling a factory once)."""
    target = _as_target(found, where)
    if target is None and callable(found) and not isinstance(found, type):
        found = call_factory(found, where, _WHAT)
        target = _as_target(found, where)
    if target is None:
        empty = isinstance(found, list | tuple | Mapping) and not found
        got = "an empty collection" if empty else type(found).__name__
        raise CliError(f"{where}: expected {_WHAT}, got {got}")
    return target


def _api_keys(given: list[str]) -> list[str] | None:
    keys = [*given, *os.environ.get(API_KEYS_ENV, "").split(",")]
    keys = [key.strip() for key in keys if key.strip()]
    return keys or None


def serve_command(args: argparse.Namespace) -> int:
    """Serve the target until SIGINT or SIGTERM; return the exit code."""
    from rxagent.server import create_app, run_server

    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: a port is a number from 0 to 65535")
    where = f"serve {args.target!r}"
    target = _agents_of(load_object(args.target, "serve"), where)
    keys = _api_keys(args.api_keys)
    from aiohttp import web

    if isinstance(target, web.Application):
        if args.store or keys:
            raise CliError(
                f"{where} is an application already built: --store, --api-key and "
                f"${API_KEYS_ENV} apply only when serving agents; configure them in the "
                "application instead"
            )
        app = target
    else:
        store = open_cli_store(args.store)
        try:
            app = create_app(target, store=store, auth=keys)
        except ConfigurationError as exc:
            raise CliError(f"{where}: {exc}") from exc
    try:
        run_server(app, host=args.host, port=args.port)
    except OSError as exc:
        raise CliError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; pick another "
            "--port or --host",
            exit_code=EXIT_FAILED,
        ) from exc
    return EXIT_OK
