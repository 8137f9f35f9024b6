"""`rxagent chat`: an interactive REPL over one agent, with live events per turn.

Lines are read from stdin (a terminal or a pipe). `/exit` or end of input quits, `/reset`
starts a new session, `/help` lists the commands. Ctrl-C during an answer interrupts it and
returns to the prompt; at the prompt it clears the line. Each turn shows the answer and one
summary line (`summary_line`).
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TextIO

from rxagent.cli._build import CliAgent, add_agent_options, open_cli_agent
from rxagent.cli._common import EXIT_FAILED, EXIT_OK, new_session_id, silence_stdout
from rxagent.cli._turn import (
    DEMO_NOTICE,
    TurnOutput,
    ctrl_c_notice,
    describe_failure,
    run_turn,
    someone_watches,
    stderr_line,
)
from rxagent.errors import CliError

if TYPE_CHECKING:
    import argparse

__all__ = ["CHAT_HELP", "add_chat_parser", "chat_command"]

CHAT_HELP: Final = "commands: /reset starts a new session, /exit quits (so does Ctrl-D), /help"
_PROMPT: Final = "you> "


def add_chat_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add the `chat` command to the `commands` subparsers."""
    chat = commands.add_parser(
        "chat",
        parents=parents,
        help="talk to an agent in an interactive loop",
        description=(
            "An interactive loop: each line read from stdin is one turn of the same session, "
            "shown live, and ends with a one-line summary. The agent is --agent MODULE:ATTR, one "
            "built from --model and --tools, or, with neither, the offline demo agent. /reset "
            "starts a new session, /exit or end of input quits. Ctrl-C interrupts the current "
            "answer and returns to the prompt. With --web, the same agent is served on this "
            "machine and the playground opens in the browser instead."
        ),
    )
    add_agent_options(chat)
    chat.add_argument(
        "--web",
        action="store_true",
        help="serve the agent on 127.0.0.1 and open the playground page in the browser: the "
        "chat, and every event of each run with what hooks changed (Ctrl-C stops)",
    )
    chat.add_argument(
        "--port",
        type=int,
        default=0,
        help="with --web: the port to listen on (default: any free one, printed)",
    )
    chat.add_argument(
        "--no-open",
        action="store_true",
        help="with --web: print the playground's link instead of opening a browser",
    )
    chat.set_defaults(handler=chat_command)


@dataclass(slots=True)
class _Chat:
    opened: CliAgent
    session_id: str


async def _open_chat(args: argparse.Namespace) -> _Chat:
    return _Chat(await open_cli_agent(args), args.session or new_session_id("chat"))


def _read_line(stdin: TextIO, interactive: bool) -> str | None:
    """The next line, or None at the end of input; Ctrl-C at the prompt gives an empty line."""
    if not interactive:
        line = stdin.readline()
        return line if line else None
    try:
        return input(_PROMPT)
    except EOFError:
        return None
    except KeyboardInterrupt:
        stderr_line("\n(/exit or Ctrl-D quits)")
        return ""


def _command(chat: _Chat, text: str) -> bool:
    """Handle a `/command`; return False when the loop should end."""
    word = text.split()[0]
    if word in ("/exit", "/quit"):
        return False
    if word == "/reset":
        chat.session_id = new_session_id("chat")
        stderr_line(f"new session {chat.session_id}")
    elif word == "/help":
        stderr_line(CHAT_HELP)
    else:
        stderr_line(f"unknown command {word}; {CHAT_HELP}")
    return True


def _banner(chat: _Chat, interactive: bool) -> None:
    agent = chat.opened.agent
    lines = [
        f"rxagent chat · agent {agent.name} · model {agent.model.name} · session {chat.session_id}"
    ]
    if chat.opened.source == "demo":
        lines.append(DEMO_NOTICE)
    if interactive:
        lines.append(f"{CHAT_HELP}; Ctrl-C interrupts an answer")
    stderr_line("\n".join(lines))


def _loop(runner: asyncio.Runner, chat: _Chat, output: TurnOutput, stdin: TextIO) -> None:
    interactive = stdin.isatty()
    if interactive or someone_watches(output):
        _banner(chat, interactive)
    agent = chat.opened.agent
    while True:
        line = _read_line(stdin, interactive)
        if line is None:
            return
        text = line.strip()
        if not text:
            continue
        if text.startswith("/"):
            if _command(chat, text):
                continue
            return
        try:
            result = runner.run(
                run_turn(
                    agent,
                    text,
                    chat.session_id,
                    output.handler(agent),
                    notify=ctrl_c_notice(output),
                )
            )
        except CliError as exc:
            stderr_line(f"error: {exc}")
            continue
        output.finish(result)
        failure = describe_failure(result, chat.session_id)
        if failure is not None:
            stderr_line(failure)


def chat_command(args: argparse.Namespace) -> int:
    """Run the chat loop until `/exit` or the end of input; return the exit code."""
    if args.web:
        from rxagent.cli._web import web_command

        return web_command(args)
    if args.port != 0 or args.no_open:
        raise CliError("--port and --no-open go with --web")
    out = sys.stdout
    output = TurnOutput(out, json=args.json, live=args.live or out.isatty(), compact=True)
    with asyncio.Runner() as runner:
        chat = runner.run(_open_chat(args))
        try:
            _loop(runner, chat, output, sys.stdin)
        except BrokenPipeError:
            silence_stdout()
            return EXIT_FAILED
        finally:
            runner.run(chat.opened.aclose())
    return EXIT_OK
