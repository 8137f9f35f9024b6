"""`rxagent demo`: an offline agent run, shown live or as JSON lines."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rich.text import Text

from rxagent.cli._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    PipeConsole,
    json_lines,
    silence_stdout,
    utf8_safe,
)
from rxagent.events import BaseEvent, PostCallEvent

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.agent import ReActAgent
    from rxagent.result import AgentResult

__all__ = ["DEFAULT_DELAY", "add_demo_parser", "what_next"]

DEFAULT_DELAY: Final = 0.015
"""Seconds between streamed chunks in the live view (none with `--fast` or `--json`)."""


def _non_negative(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not seconds >= 0:
        raise argparse.ArgumentTypeError(f"the delay must be >= 0 seconds, got {value}")
    return seconds


def add_demo_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the `demo` command to the `commands` subparsers."""
    demo = commands.add_parser(
        "demo",
        parents=parents,
        help="run an offline demo agent and show its event stream",
        description=(
            "Run a small agent offline, with no network and no API key: its model reads the "
            "question, asks two real tools (a docs search and a calculator) in parallel, a hook "
            "rewrites the prompt, and the answer quotes the tool results. The event stream is "
            "shown live, then what to try next."
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
    demo.set_defaults(handler=demo_command)


def _docs_path() -> str:
    """Where the CLI guide is: relative to the current directory when it is below it."""
    from rxagent._demo import find_docs_dir

    docs = find_docs_dir()
    if docs is None:
        return "rxagent --help"
    guide = docs / "cli.md" if (docs / "cli.md").is_file() else docs
    try:
        return guide.relative_to(Path(os.getcwd()).resolve()).as_posix()
    except ValueError:
        return str(guide)


def what_next() -> tuple[str, str]:
    """The two lines that end `rxagent demo`: chat, serve and the docs.

    Example:
        ```python
        from rxagent.cli._demo_command import what_next

        chat, serve = what_next()
        assert "rxagent chat" in chat and "rxagent serve rxagent.demo:build_demo_agent" in serve
        ```
    """
    return (
        "  next       rxagent chat (your own questions; --model openai:gpt-4o-mini)",
        f"             rxagent serve rxagent.demo:build_demo_agent · docs: {_docs_path()}",
    )


async def _run_events(
    agent: ReActAgent, msg: str, on_event: Callable[[BaseEvent], None]
) -> AgentResult[Any] | None:
    result: AgentResult[Any] | None = None
    async for event in agent.events(msg):
        on_event(event)
        if isinstance(event, PostCallEvent):
            result = event.result
    return result


def demo_command(args: argparse.Namespace) -> int:
    """Run the demo agent; return the exit code."""
    from rxagent._demo import DEMO_QUESTION, LiveEventView, build_demo_agent

    out = sys.stdout
    if args.delay is not None:
        delay = args.delay
    else:
        delay = 0.0 if args.json or args.fast else DEFAULT_DELAY
    agent = build_demo_agent(delay=delay)
    if args.json:
        on_event = json_lines(out)
    else:
        view = LiveEventView(
            PipeConsole(file=utf8_safe(out), highlight=False),
            tools=agent.toolkit.names(),
            hooks=[h.name for h in agent.hooks],
            title="rxagent demo · offline: a deterministic model, real tools, no network, no key",
        )
        on_event = view.handle
    try:
        result = asyncio.run(_run_events(agent, DEMO_QUESTION, on_event))
        if not args.json:
            view.console.rule(style="dim")
            for line in what_next():
                view.console.print(Text(line, style="bold"), soft_wrap=True)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_FAILED
    return EXIT_OK if result is not None and result.ok else EXIT_FAILED
