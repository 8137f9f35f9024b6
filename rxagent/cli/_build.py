"""The agent of `rxagent run` and `rxagent chat`: loaded, built from options, or the demo.

- `--agent MODULE:ATTR` loads an agent (or calls a zero-argument factory of one).
- `--model PROVIDER:NAME` (or `$RXAGENT_MODEL`) builds one from `--tools`, `--sys-prompt`,
  `--name` and `--context-window`.
- With neither, the offline demo agent answers: no key, no network.

The sessions live in the `--store` unless a loaded agent has a store of its own, as with
`rxagent.server.create_app(store=...)`.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from rxagent.cli._common import load_agent, load_object, redact_url, store_url
from rxagent.errors import CliError, ConfigurationError
from rxagent.tools import Tool, Toolkit

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.agent import ReActAgent
    from rxagent.models.base import ChatModel
    from rxagent.state import SessionStore

__all__ = [
    "DEFAULT_AGENT_NAME",
    "MODEL_ENV",
    "CliAgent",
    "add_agent_options",
    "load_tools",
    "open_cli_agent",
    "open_cli_store",
    "resolve_model_option",
]

DEFAULT_AGENT_NAME: Final = "assistant"
MODEL_ENV: Final = "RXAGENT_MODEL"

_BUILD_OPTIONS: Final = ("--model", "--tools", "--sys-prompt", "--name", "--context-window")
"""The options that describe an agent built from options (they conflict with `--agent`)."""


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of tokens, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of tokens, got {value}")
    return number


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    """Add the options that choose the agent and where its sessions live."""
    parser.add_argument(
        "--agent",
        metavar="MODULE:ATTR",
        help="the agent to talk to: a ReActAgent, or a zero-argument function returning one "
        "(modules of the current directory can be named); it brings its own model, tools and "
        "system prompt, so it cannot be combined with --model, --tools, --sys-prompt, --name "
        "or --context-window",
    )
    parser.add_argument(
        "--model",
        metavar="PROVIDER:NAME",
        help=f"build the agent on this model, e.g. openai:gpt-4o-mini (default: ${MODEL_ENV}; "
        "without either, and without --agent, the offline demo agent answers); the provider's "
        "API key and base URL come from its environment variables (OPENAI_API_KEY, ...)",
    )
    parser.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="a tool, a list of tools or a Toolkit to give the agent built from --model "
        "(repeatable); modules of the current directory can be named",
    )
    parser.add_argument(
        "--sys-prompt", metavar="TEXT", help="the system prompt of the agent built from --model"
    )
    parser.add_argument(
        "--name",
        metavar="NAME",
        help="the name of the agent built from --model, which keys its sessions in the store "
        f"(default: {DEFAULT_AGENT_NAME})",
    )
    parser.add_argument(
        "--context-window",
        type=_positive_int,
        metavar="TOKENS",
        help="the model's context window, for a model rxagent does not know (a local one, say)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="where sessions live: memory://, sqlite:///path.db, postgresql://..., redis://... "
        "(default: $RXAGENT_STORE, else sqlite:///.rxagent/sessions.db); an --agent created "
        "with a store of its own keeps it",
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


def _without_spec(message: str, spec: str) -> str:
    """The message of `resolve(spec)` without its leading `model='...'`, which the CLI names."""
    head = f"model={spec!r}"
    if message.startswith(head):
        return message[len(head) :].removeprefix(":").strip()
    return message


def resolve_model_option(spec: str) -> ChatModel:
    """Resolve `--model` (or `$RXAGENT_MODEL`) through `rxagent.models.resolve`.

    Raises:
        CliError: The model cannot be resolved (the message says why, naming `--model` once).
    """
    from rxagent.models import resolve

    try:
        return resolve(spec)
    except ConfigurationError as exc:
        raise CliError(f"--model {spec!r}: {_without_spec(str(exc), spec)}") from exc


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


@dataclass(slots=True)
class CliAgent:
    """The agent a command talks to, where its sessions live, and where it came from."""

    agent: ReActAgent
    store: str
    """The store, as the command shows it: the URL (password hidden), or the agent's own."""
    source: Literal["agent", "model", "demo"]
    """`--agent`, `--model` (or `$RXAGENT_MODEL`), or the offline demo agent."""

    async def aclose(self) -> None:
        """Close the agent's model clients and toolsets, then its store."""
        try:
            await self.agent.aclose()
        finally:
            await self.agent.store.aclose()


def _given(args: argparse.Namespace) -> list[str]:
    """The options of `_BUILD_OPTIONS` that were given."""
    values = (args.model or None, args.tools, args.sys_prompt, args.name, args.context_window)
    return [
        option
        for option, value in zip(_BUILD_OPTIONS, values, strict=True)
        if value is not None and value != []
    ]


def _build_from_options(args: argparse.Namespace) -> ReActAgent:
    from rxagent.agent import ReActAgent

    model = resolve_model_option(args.model or os.environ[MODEL_ENV])
    if args.context_window is not None:
        model.context_window = args.context_window
    tools = load_tools(args.tools)
    name = args.name if args.name is not None else DEFAULT_AGENT_NAME
    try:
        return ReActAgent(name, args.sys_prompt or "", model, tools=tools)
    except ConfigurationError as exc:
        raise CliError(str(exc)) from exc


def _choose_agent(args: argparse.Namespace) -> tuple[ReActAgent, Literal["agent", "model", "demo"]]:
    if args.agent:
        conflicts = _given(args)
        if conflicts:
            raise CliError(
                f"--agent {args.agent!r} cannot be combined with {conflicts[0]}: the agent "
                "brings its own model, tools, system prompt and name; drop "
                f"{' and '.join(conflicts)}, or drop --agent to build one from --model"
            )
        return load_agent(args.agent), "agent"
    if args.model or os.environ.get(MODEL_ENV):
        return _build_from_options(args), "model"
    given = _given(args)
    if given:
        raise CliError(
            f"{given[0]} needs --model: without --model or --agent the offline demo agent "
            "answers, and it has its own tools and prompt; pass --model PROVIDER:NAME, for "
            "example --model openai:gpt-4o-mini"
        )
    from rxagent.demo import build_demo_agent

    return build_demo_agent(), "demo"


def _note_unknown_window(model: ChatModel) -> None:
    """On a terminal, say once that the model's window is a guess, and how to set it."""
    from rxagent.hooks.builtin import DEFAULT_CONTEXT_WINDOW, context_window_for

    if getattr(model, "context_window", None) is not None or context_window_for(model.name):
        return
    if sys.stderr.isatty():
        print(
            f"note: rxagent does not know the context window of model {model.name!r} and "
            f"assumes {DEFAULT_CONTEXT_WINDOW:,} tokens; pass --context-window TOKENS",
            file=sys.stderr,
            flush=True,
        )


async def open_cli_agent(args: argparse.Namespace) -> CliAgent:
    """Return the agent the options name, with its sessions in the `--store`.

    `--agent` loads one, `--model` builds one, and with neither the offline demo agent answers.
    An agent with the default in-memory store gets the `--store` (default `$RXAGENT_STORE`,
    else SQLite); one with a store of its own keeps it.

    Raises:
        CliError: Conflicting options, or an agent, model, tool or store that cannot be had.
    """
    from rxagent.state import InMemoryStore

    agent, source = _choose_agent(args)
    if source == "model":
        _note_unknown_window(agent.model)
    if type(agent.store) is not InMemoryStore:
        return CliAgent(agent, f"{type(agent.store).__name__} (the agent's own)", source)
    try:
        agent.store = open_cli_store(args.store)
    except BaseException:
        await agent.aclose()
        raise
    return CliAgent(agent, redact_url(store_url(args.store)), source)
