"""The `rxagent` command.

```text
rxagent --version
rxagent demo [--json] [--fast] [--delay SECONDS]
```

`rxagent demo` runs a small agent offline (a scripted model, real tools, a prompt-rewriting hook)
and shows its event stream live; `--json` prints each event as one JSON line instead. See
`docs/cli.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any, Final, TextIO

from rich.console import Console

from rxagent import __version__
from rxagent.events import BaseEvent, PostCallEvent

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rxagent.agent import ReActAgent
    from rxagent.result import AgentResult

__all__ = ["build_parser", "main"]

DEFAULT_DELAY: Final = 0.015
"""Seconds between streamed chunks in the live view (none with `--fast` or `--json`)."""

_EXIT_USAGE: Final = 2
_EXIT_INTERRUPTED: Final = 130


def _non_negative(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not seconds >= 0:
        raise argparse.ArgumentTypeError(f"the delay must be >= 0 seconds, got {value}")
    return seconds


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the `rxagent` command.

    Example:
        ```python
        from rxagent.cli import build_parser

        args = build_parser().parse_args(["demo", "--json"])
        assert args.command == "demo" and args.json
        ```
    """
    parser = argparse.ArgumentParser(
        prog="rxagent",
        description="Tool-using LLM agents as typed, observable, hookable event streams.",
    )
    parser.add_argument("--version", action="version", version=f"rxagent {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="run an offline demo agent and show its event stream",
        description=(
            "Run a small agent offline, with no network and no API key: a scripted model asks "
            "two real tools (a docs search and a calculator) in parallel, a hook rewrites the "
            "prompt, and the answer quotes the tool results. The event stream is shown live."
        ),
    )
    demo.add_argument(
        "--json",
        action="store_true",
        help="print every event as one JSON line (rxagent.EVENT_ADAPTER format) and nothing else",
    )
    demo.add_argument("--fast", action="store_true", help="stream with no delay between chunks")
    demo.add_argument(
        "--delay",
        type=_non_negative,
        metavar="SECONDS",
        help=f"seconds between streamed chunks (default {DEFAULT_DELAY} in the live view, "
        "0 with --json or --fast)",
    )
    demo.set_defaults(handler=_demo_command)
    return parser


async def _run_events(
    agent: ReActAgent, msg: str, on_event: Callable[[BaseEvent], None]
) -> AgentResult[Any] | None:
    result: AgentResult[Any] | None = None
    async for event in agent.events(msg):
        on_event(event)
        if isinstance(event, PostCallEvent):
            result = event.result
    return result


class _PipeConsole(Console):
    """A console whose broken pipe is an ordinary `BrokenPipeError`, not rich's `SystemExit`.

    So the run is cancelled and cleaned up like on any other early exit.
    """

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def _print_json_line(out: TextIO) -> Callable[[BaseEvent], None]:
    def emit(event: BaseEvent) -> None:
        out.write(event.model_dump_json() + "\n")
        out.flush()

    return emit


def _utf8_safe(stream: TextIO) -> TextIO:
    """Replace characters the stream's encoding cannot show, instead of failing on them."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and "utf" not in (getattr(stream, "encoding", "") or "").lower():
        with contextlib.suppress(ValueError, OSError):
            reconfigure(errors="replace")
    return stream


def _demo_command(args: argparse.Namespace) -> int:
    from rxagent._demo import DEMO_QUESTION, LiveEventView, build_demo_agent

    out = sys.stdout
    if args.delay is not None:
        delay = args.delay
    else:
        delay = 0.0 if args.json or args.fast else DEFAULT_DELAY
    agent = build_demo_agent(delay=delay)
    if args.json:
        on_event = _print_json_line(out)
    else:
        view = LiveEventView(
            _PipeConsole(file=_utf8_safe(out), highlight=False),
            tools=agent.toolkit.names(),
            hooks=[h.name for h in agent.hooks],
            title="rxagent demo · offline: scripted model, real tools, no network, no API key",
        )
        on_event = view.handle
    try:
        result = asyncio.run(_run_events(agent, DEMO_QUESTION, on_event))
    except KeyboardInterrupt:
        return _EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return 1
    return 0 if result is not None and result.ok else 1


def _silence_stdout() -> None:
    """Point stdout at devnull after the reader went away (`rxagent demo --json | head`)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `rxagent` command with `argv` (default: `sys.argv[1:]`) and return its exit code.

    Exit codes: 0 on success, 1 when the run failed, 2 for a usage error (or no command),
    130 when interrupted with Ctrl-C.

    Example:
        ```python
        from rxagent.cli import main

        assert main(["--version"]) == 0  # prints "rxagent <version>"
        ```
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else _EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return _EXIT_USAGE
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


if __name__ == "__main__":
    raise SystemExit(main())
