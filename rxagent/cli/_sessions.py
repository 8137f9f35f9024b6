"""`rxagent sessions list|show|delete`: look into a session store."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

from rich.console import Console
from rich.text import Text

from rxagent.cli._build import open_cli_store
from rxagent.cli._common import EXIT_FAILED, EXIT_OK, redact_url, store_url, utf8_safe
from rxagent.errors import CliError, RxAgentError, StoreUnavailableError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable

    from rxagent.messages import Msg
    from rxagent.state import SessionStore, StoredState

__all__ = ["add_sessions_parser"]

T = TypeVar("T")

_CLIP: Final = 100
_LEASE_S: Final = 30.0
_LABEL: Final = 11


def add_sessions_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the `sessions` command group to the `commands` subparsers."""
    sessions = commands.add_parser(
        "sessions",
        parents=parents,
        help="list, show or delete stored sessions",
        description="Look into a session store: list its sessions, show one, or delete one.",
    )
    actions = sessions.add_subparsers(dest="action", metavar="ACTION", required=True)
    store_help = (
        "the session store: sqlite:///path.db, postgresql://..., redis://..., memory:// "
        "(default: $RXAGENT_STORE, else sqlite:///.rxagent/sessions.db)"
    )
    specs = (
        ("list", "list the sessions (of one agent with --name)", _list, False, True),
        ("show", "show a session's state (--json: the raw state)", _show, True, True),
        ("delete", "delete a session", _delete, True, False),
    )
    for name, text, action, takes_id, takes_json in specs:
        sub = actions.add_parser(name, parents=parents, help=text, description=text)
        if takes_id:
            sub.add_argument("session_id", metavar="ID", help="the session id")
        sub.add_argument(
            "--name",
            "--agent",
            dest="agent",
            metavar="NAME",
            help="the name of the agent the session belongs to (--agent NAME works too)",
        )
        sub.add_argument("--store", metavar="URL", help=store_help)
        if takes_json:
            sub.add_argument("--json", action="store_true", help="print JSON")
        sub.set_defaults(handler=_command(action))


class _Store:
    """The store's reads and deletes, with a failure to reach it turned into a `CliError`."""

    def __init__(self, store: SessionStore, url: str) -> None:
        self.store = store
        self.url = redact_url(url)

    async def _call(self, operation: Awaitable[T]) -> T:
        try:
            return await operation
        except Exception as exc:
            unreachable = isinstance(exc, StoreUnavailableError)
            if isinstance(exc, RxAgentError) and not unreachable:
                raise
            cause = exc.__cause__ if unreachable and exc.__cause__ is not None else exc
            raise CliError(
                f"--store {self.url!r}: {type(cause).__name__}: {cause}; check the URL and that "
                "the store's server is running",
                exit_code=EXIT_FAILED,
            ) from exc

    async def agents(self, agent: str | None) -> list[str]:
        return [agent] if agent else sorted(await self._call(self.store.list_agents()))

    async def sessions(self, agent: str) -> list[str]:
        return sorted(await self._call(self.store.list_sessions(agent)))

    async def load(self, agent: str, session_id: str) -> StoredState | None:
        return await self._call(self.store.load(agent, session_id))

    async def delete(self, agent: str, session_id: str) -> str | None:
        """Delete the session unless a run holds it; return that run's id (None: deleted).

        The delete holds the session's lease meanwhile, so no run can start on it halfway.
        """
        holder = f"cli-delete-{uuid.uuid4().hex}"
        if not await self._call(self.store.acquire_lease(agent, session_id, holder, _LEASE_S)):
            return await self._call(self.store.lease_holder(agent, session_id)) or "a run"
        try:
            await self._call(self.store.delete(agent, session_id))
        finally:
            await self._call(self.store.release_lease(agent, session_id, holder))
        return None


_Action: TypeAlias = "Callable[[_Store, argparse.Namespace], Awaitable[int]]"


def _command(action: _Action) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        return asyncio.run(_with_store(action, args))

    return handler


async def _with_store(action: _Action, args: argparse.Namespace) -> int:
    store = open_cli_store(args.store)
    try:
        return await action(_Store(store, store_url(args.store)), args)
    finally:
        await store.aclose()


def _console() -> Console:
    return Console(file=utf8_safe(sys.stdout), highlight=False, soft_wrap=True)


async def _list(store: _Store, args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = []
    for agent in await store.agents(args.agent):
        for session_id in await store.sessions(agent):
            stored = await store.load(agent, session_id)
            if stored is None:  # deleted while listing
                continue
            state = stored.state
            rows.append(
                {
                    "agent": agent,
                    "session_id": session_id,
                    "version": stored.version,
                    "messages": len(state.memory),
                    "runs": state.runs,
                    "tokens": state.usage.total_tokens,
                }
            )
    if args.json:
        print(json.dumps(rows))
        return EXIT_OK
    if not rows:
        where = f" of agent {args.agent!r}" if args.agent else ""
        print(f"no sessions{where} in {redact_url(store_url(args.store))}", file=sys.stderr)
        return EXIT_OK
    header = ("agent", "session", "version", "messages", "runs", "tokens")
    cells = [[str(value) for value in row.values()] for row in rows]
    widths = [max(len(line[i]) for line in [list(header), *cells]) for i in range(len(header))]

    def line(values: list[str] | tuple[str, ...]) -> str:
        padded = [
            value.ljust(width) if i < 2 else value.rjust(width)
            for i, (value, width) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    console = _console()
    console.print(Text(line(header), style="bold"))
    console.print(Text("  ".join("─" * width for width in widths), style="dim"))
    for values in cells:
        console.print(Text(line(values)))
    return EXIT_OK


async def _find(store: _Store, args: argparse.Namespace) -> tuple[str, StoredState]:
    """The agent and stored state of `args.session_id`, or a CliError naming the fix."""
    url = redact_url(store_url(args.store))
    found: list[tuple[str, StoredState]] = []
    for agent in await store.agents(args.agent):
        stored = await store.load(agent, args.session_id)
        if stored is not None:
            found.append((agent, stored))
    if not found:
        of = f" of agent {args.agent!r}" if args.agent else ""
        raise CliError(
            f"no session {args.session_id!r}{of} in {url}; `rxagent sessions list --store "
            f"{url}` shows the sessions",
            exit_code=EXIT_FAILED,
        )
    if len(found) > 1:
        names = ", ".join(agent for agent, _ in found)
        raise CliError(
            f"session {args.session_id!r} exists for several agents ({names}); pass --name NAME"
        )
    return found[0]


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _CLIP else flat[: _CLIP - 1] + "…"


def _describe(message: Msg) -> str:
    parts = [message.text] if message.text else []
    parts += [f"→ {call.name}({json.dumps(dict(call.input))})" for call in message.tool_calls]
    for result in message.tool_results:
        mark = "✗" if result.is_error else "✓"
        parts.append(f"{mark} {result.name}: {result.text}")
    return _clip(" ".join(parts))


async def _show(store: _Store, args: argparse.Namespace) -> int:
    agent, stored = await _find(store, args)
    state = stored.state
    if args.json:
        print(state.model_dump_json())
        return EXIT_OK
    usage = state.usage
    calls = sum(len(message.tool_calls) for message in state.memory)
    rows = [
        ("session", args.session_id),
        ("agent", agent),
        ("version", f"{stored.version} (schema {state.schema_version})"),
        ("runs", f"{state.runs} · steps {state.step} · tool calls {calls}"),
        (
            "tokens",
            f"{usage.input_tokens} in · {usage.output_tokens} out · {usage.total_tokens} total · "
            f"{usage.requests} requests",
        ),
        ("memory", f"{len(state.memory)} messages"),
    ]
    if state.pending_approvals:
        ids = ", ".join(p.approval_id for p in state.pending_approvals)
        rows.append(("approvals", f"pending: {ids}"))
    if state.extra:
        rows.append(("extra", ", ".join(sorted(state.extra))))
    rows += [(f"  {message.role}", _describe(message)) for message in state.memory]
    console = _console()
    for label, value in rows:
        text = Text(label.ljust(_LABEL), style="bold cyan")
        text.append(" " + value)
        console.print(text)
    return EXIT_OK


async def _delete(store: _Store, args: argparse.Namespace) -> int:
    agent, _ = await _find(store, args)
    holder = await store.delete(agent, args.session_id)
    if holder is not None:
        raise CliError(
            f"session {args.session_id!r} of agent {agent!r} has a run in progress ({holder}); "
            "interrupt it or wait for it to finish, then delete it",
            exit_code=EXIT_FAILED,
        )
    print(f"deleted session {args.session_id} of agent {agent}")
    return EXIT_OK
