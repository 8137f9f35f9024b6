"""`rxagent run "prompt"`: one call of an agent (`--agent`, `--model`, or the offline demo)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, Any

from rxagent.cli._build import CliAgent, add_agent_options, open_cli_agent
from rxagent.cli._common import EXIT_FAILED, new_session_id, silence_stdout
from rxagent.cli._turn import (
    DEMO_NOTICE,
    TurnOutput,
    ctrl_c_notice,
    describe_failure,
    exit_code_of,
    run_turn,
    someone_watches,
    stderr_line,
)
from rxagent.errors import CliError

if TYPE_CHECKING:
    import argparse

    from rxagent.result import AgentResult

__all__ = ["add_run_parser", "run_command"]


def add_run_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the `run` command to the `commands` subparsers."""
    run = commands.add_parser(
        "run",
        parents=parents,
        help="run one prompt through an agent and show its events",
        description=(
            "Run one prompt through an agent: --agent MODULE:ATTR, one built from --model and "
            "--tools, or, with neither, the offline demo agent. On a terminal the events are "
            "shown live (streamed text, tool calls with timings, retries); in a pipe only the "
            "reply's text is printed; with --json every event is one JSON line. The first Ctrl-C "
            "interrupts the run and saves the session; a second one stops it at once."
        ),
    )
    run.add_argument("prompt", help="the user message ('-': read it from stdin)")
    add_agent_options(run)
    run.set_defaults(handler=run_command)


async def _run(
    args: argparse.Namespace, output: TurnOutput
) -> tuple[AgentResult[Any] | None, str, CliAgent]:
    session_id = args.session or new_session_id("run")
    async with contextlib.AsyncExitStack() as stack:
        opened = await open_cli_agent(args)
        stack.push_async_callback(opened.aclose)
        if opened.source == "demo" and someone_watches(output):
            stderr_line(DEMO_NOTICE)
        result = await run_turn(
            opened.agent,
            args.prompt,
            session_id,
            output.handler(opened.agent),
            notify=ctrl_c_notice(output),
        )
        return result, session_id, opened


def run_command(args: argparse.Namespace) -> int:
    """Run the prompt; return the exit code."""
    out = sys.stdout
    if args.prompt == "-":
        args.prompt = sys.stdin.read().strip()
    if not args.prompt.strip():
        raise CliError("the prompt is empty; pass the user message, or '-' to read it from stdin")
    live = args.live or out.isatty()
    output = TurnOutput(out, json=args.json, live=live, title="rxagent run")
    try:
        result, session_id, opened = asyncio.run(_run(args, output))
        output.finish(result)
        if output.live and result is not None:
            print(f"session {session_id} · store {opened.store}", file=out)
    except BrokenPipeError:
        silence_stdout()
        return EXIT_FAILED
    failure = describe_failure(result, session_id)
    if failure is not None:
        stderr_line(failure)
    return exit_code_of(result)
