"""Building the agent of `rxagent run` and `rxagent chat` from their options."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from rxagent.cli._common import CliError, load_object, redact_url, store_url
from rxagent.errors import ConfigurationError
from rxagent.tools import Tool, Toolkit

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from rxagent.agent import ReActAgent
    from rxagent.models.base import ChatModel
    from rxagent.state import SessionStore

__all__ = [
    "DEFAULT_AGENT_NAME",
    "MODEL_ENV",
    "add_agent_options",
    "build_agent",
    "load_tools",
    "open_cli_store",
    "resolve_model_option",
]

DEFAULT_AGENT_NAME: Final = "assistant"
MODEL_ENV: Final = "RXAGENT_MODEL"


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    """Add the options that describe the agent and where its sessions live."""
    parser.add_argument(
        "--model",
        metavar="PROVIDER:NAME",
        help=f"the model, e.g. openai:gpt-4o-mini (default: ${MODEL_ENV}); the provider's API key "
        "and base URL come from its environment variables (OPENAI_API_KEY, OPENAI_BASE_URL, ...)",
    )
    parser.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="a tool, a list of tools or a Toolkit to give the agent (repeatable); modules of "
        "the current directory can be named",
    )
    parser.add_argument(
        "--sys-prompt", default="", metavar="TEXT", help="the system prompt (default: none)"
    )
    parser.add_argument(
        "--agent",
        default=DEFAULT_AGENT_NAME,
        metavar="NAME",
        help=f"the agent's name, which keys its sessions in the store (default: "
        f"{DEFAULT_AGENT_NAME})",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="where sessions live: memory://, sqlite:///path.db, postgresql://..., redis://... "
        "(default: $RXAGENT_STORE, else sqlite:///.rxagent/sessions.db)",
    )
    parser.add_argument(
        "--session", metavar="ID", help="the session to use or continue (default: a new one)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print every event as one JSON line (rxagent.EVENT_ADAPTER format) and nothing else",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="show the live event view even when stdout is not a terminal",
    )


def resolve_model_option(spec: str | None) -> ChatModel:
    """Resolve `--model` (or `$RXAGENT_MODEL`) through `rxagent.models.resolve`.

    Raises:
        CliError: No model was given, or it cannot be resolved (the message says why).
    """
    from rxagent.models import resolve

    spec = spec or os.environ.get(MODEL_ENV)
    if not spec:
        raise CliError(
            f"--model is required (or set {MODEL_ENV}), for example --model openai:gpt-4o-mini"
        )
    try:
        return resolve(spec)
    except ConfigurationError as exc:
        raise CliError(f"--model {spec!r}: {exc}") from exc


def _add_tools(kit: Toolkit, found: object, where: str) -> None:
    if isinstance(found, Toolkit):
        items: Sequence[object] = tuple(found)
    elif isinstance(found, list | tuple):
        items = found
    else:
        items = (found,)
    for item in items:
        if not (isinstance(item, Tool) or callable(item)) or isinstance(item, type):
            raise CliError(
                f"{where}: expected a tool (a function or a Tool), a list or tuple of them, or a "
                f"Toolkit, got {type(item).__name__}"
            )
        try:
            kit.add(item)
        except ConfigurationError as exc:
            raise CliError(f"{where}: {exc}") from exc


def load_tools(specs: Sequence[str]) -> Toolkit:
    """Import every `--tools MODULE:ATTR` and return one `Toolkit` of them all.

    A single Toolkit is used as it is (so its tool groups are kept).

    Raises:
        CliError: A spec cannot be imported, is not a tool, or two tools share a name.
    """
    loaded = [(spec, load_object(spec, "--tools")) for spec in specs]
    if len(loaded) == 1 and isinstance(loaded[0][1], Toolkit):
        return loaded[0][1]
    kit = Toolkit()
    for spec, found in loaded:
        _add_tools(kit, found, f"--tools {spec!r}")
    return kit


def open_cli_store(url: str | None) -> SessionStore:
    """Open the `--store` URL (default `$RXAGENT_STORE`, else the SQLite file).

    Raises:
        CliError: The URL cannot be opened (the message names the fix).
    """
    from rxagent.state import open_store

    url = store_url(url)
    try:
        return open_store(url)
    except ConfigurationError as exc:
        raise CliError(f"--store {redact_url(url)!r}: {exc}") from exc


def build_agent(args: argparse.Namespace, store: SessionStore) -> ReActAgent:
    """Return the agent the options describe, keeping its sessions in `store`."""
    from rxagent.agent import ReActAgent

    model = resolve_model_option(args.model)
    tools = load_tools(args.tools)
    try:
        return ReActAgent(args.agent, args.sys_prompt, model, tools=tools, store=store)
    except ConfigurationError as exc:
        raise CliError(str(exc)) from exc
