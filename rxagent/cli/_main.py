"""The `rxagent` parser, and `main`, which turns every error into one line and an exit code."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import traceback
from typing import TYPE_CHECKING

from rxagent._version import __version__
from rxagent.cli._bench import add_bench_parser
from rxagent.cli._chat import add_chat_parser
from rxagent.cli._common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
from rxagent.cli._demo_command import add_demo_parser
from rxagent.cli._rag import add_rag_parser
from rxagent.cli._run import add_run_parser
from rxagent.cli._serve import add_serve_parser
from rxagent.cli._sessions import add_sessions_parser
from rxagent.errors import CliError, ConfigurationError, RxAgentError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the `rxagent` command.

    Example:
        ```python
        from rxagent.cli import build_parser

        args = build_parser().parse_args(["run", "Hi!", "--model", "openai:gpt-4o-mini"])
        assert args.command == "run" and args.prompt == "Hi!" and not args.debug
        ```
    """
    parser = argparse.ArgumentParser(
        prog="rxagent",
        description="Tool-using LLM agents as typed, observable, hookable event streams.",
    )
    parser.add_argument("--version", action="version", version=f"rxagent {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an error (any position)"
    )
    # `--debug` is accepted after the command too; SUPPRESS keeps a later default from
    # overwriting the value parsed before it
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of an error",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in (
        add_demo_parser,
        add_run_parser,
        add_chat_parser,
        add_serve_parser,
        add_sessions_parser,
        add_rag_parser,
        add_bench_parser,
    ):
        add(commands, [debug])
    return parser


@contextlib.contextmanager
def _logging(debug: bool) -> Iterator[None]:
    """Send rxagent's log records to stderr with `--debug`; keep them off the output otherwise.

    Without a handler Python prints warnings to stderr, which would interleave with the live view
    and the one-line errors; what they say (retries, for instance) is in the events already.
    """
    logger = logging.getLogger("rxagent")
    level = logger.level
    handler: logging.Handler
    if debug:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.setLevel(logging.DEBUG)
    else:
        handler = logging.NullHandler()
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _report(exc: BaseException, message: str, debug: bool) -> None:
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    print(message if message.startswith("error:") else f"error: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `rxagent` command with `argv` (default: `sys.argv[1:]`) and return its exit code.

    Exit codes: 0 on success, 1 when the run (or the command) failed, 2 for a usage error (or
    no command), 130 when interrupted with Ctrl-C. Errors are one line on stderr that names the
    fix; `--debug` adds the traceback.

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
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        with _logging(args.debug):
            return handler(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except CliError as exc:
        _report(exc, str(exc), args.debug)
        return exc.exit_code
    except ConfigurationError as exc:
        _report(exc, str(exc), args.debug)
        return EXIT_USAGE
    except RxAgentError as exc:
        _report(exc, str(exc), args.debug)
        return EXIT_FAILED
    except Exception as exc:
        hint = "" if args.debug else " (--debug shows the traceback)"
        _report(exc, f"{type(exc).__name__}: {exc}{hint}", args.debug)
        return EXIT_FAILED
