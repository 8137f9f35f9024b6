"""`rxagent run "prompt"`: one call of an agent built from options."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, Any

from rxagent.cli._build import add_agent_options, build_agent, open_cli_store
from rxagent.cli._common import (
    EXIT_FAILED,
    CliError,
    new_session_id,
    redact_url,
    silence_stdout,
    store_url,
)
from rxagent.cli._turn import (
    TurnOutput,
    ctrl_c_notice,
    describe_failure,
    exit_code_of,
    run_turn,
    stderr_line,
)

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
            "Run one prompt through an agent made of a model and tools. On a terminal the events "
            "are shown live (streamed text, tool calls with timings, retries); in a pipe only the "
            "reply's text is printed; with --json every event is one JSON line. The first Ctrl-C "
            "interrupts the run and saves the session; a second one stops it at once."
        ),
    )
    run.add_argument("prompt", help="the user message ('-': read it from stdin)")
    add_agent_options(run)
    run.set_defaults(handler=run_command)


async def _run(args: argparse.Namespace, output: TurnOutput) -> tuple[AgentResult[Any] | None, str]:
    session_id = args.session or new_session_id("run")
    async with contextlib.AsyncExitStack() as stack:
        store = open_cli_store(args.store)
        stack.push_async_callback(store.aclose)
        agent = build_agent(args, store)
        stack.push_async_callback(agent.aclose)
        result = await run_turn(
            agent,
            args.prompt,
            session_id,
            output.handler(agent),
            notify=ctrl_c_notice(output),
        )
        return result, session_id


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
        result, session_id = asyncio.run(_run(args, output))
        output.finish(result)
        if output.live and result is not None:
            print(f"session {session_id} · store {redact_url(store_url(args.store))}", file=out)
    except BrokenPipeError:
        silence_stdout()
        return EXIT_FAILED
    failure = describe_failure(result, session_id)
    if failure is not None:
        stderr_line(failure)
    return exit_code_of(result)
