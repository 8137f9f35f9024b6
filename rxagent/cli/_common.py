"""What the commands share: their typed error, `module:attr` imports, store URLs and streams."""

from __future__ import annotations

import contextlib
import difflib
import importlib
import inspect
import os
import sys
import uuid
from typing import TYPE_CHECKING, Final, TextIO

from rich.console import Console

from rxagent.errors import CliError as CliError
from rxagent.errors import ConfigurationError
from rxagent.state._store_common import redact

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.agent import ReActAgent
    from rxagent.events import BaseEvent

__all__ = [
    "DEFAULT_STORE_URL",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "STORE_ENV",
    "PipeConsole",
    "call_factory",
    "json_lines",
    "load_agent",
    "load_object",
    "new_session_id",
    "redact_url",
    "silence_stdout",
    "store_url",
    "utf8_safe",
]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130

DEFAULT_STORE_URL: Final = "sqlite:///.rxagent/sessions.db"
"""Where sessions live when neither `--store` nor `RXAGENT_STORE` says otherwise."""
STORE_ENV: Final = "RXAGENT_STORE"


def _cwd_on_path() -> None:
    """Let `module:attr` name modules of the current directory, as `python -m` does."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def _import_module(name: str, where: str) -> object:
    _cwd_on_path()
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise CliError(
                f"{where}: no module named {exc.name!r}; run rxagent from the directory that "
                "holds it, or install the package that provides it"
            ) from exc
        raise CliError(
            f"{where}: importing {name!r} failed: {exc}; install the missing package"
        ) from exc
    except Exception as exc:
        raise CliError(
            f"{where}: importing {name!r} failed with {type(exc).__name__}: {exc}; fix the module "
            "(--debug shows the traceback)"
        ) from exc


def load_object(spec: str, option: str) -> object:
    """Import `module:attr` (the attribute may be dotted) for `option`.

    Raises:
        CliError: The spec is malformed, the module cannot be imported, or it lacks the attribute.
    """
    where = f"{option} {spec!r}"
    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise CliError(
            f"{where}: expected MODULE:ATTRIBUTE, for example 'my_tools:search' for the name "
            "search in my_tools.py"
        )
    found = _import_module(module_name, where)
    owner = module_name
    for part in attr.split("."):
        if not hasattr(found, part):
            names = [n for n in dir(found) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "check the name"
            raise CliError(f"{where}: module {owner!r} has no attribute {part!r}; {hint}")
        found = getattr(found, part)
        owner = f"{owner}.{part}"
    return found


_AGENT_EXPECTED: Final = "a ReActAgent, or a zero-argument function (a plain def) that returns one"


def call_factory(factory: Callable[..., object], where: str, expected: str) -> object:
    """Call a factory named on the command line with no arguments, and return what it made.

    Args:
        factory: The function (a plain `def`).
        where: The option and spec, for messages (`"--agent 'app:make'"`).
        expected: What the option takes, for the message about an `async def`.

    Raises:
        CliError: It is an `async def`, it has parameters without defaults, or it raised.
    """
    if inspect.iscoroutinefunction(factory):
        raise CliError(f"{where}: expected {expected}; make the factory a plain def")
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: just call it
        signature = None
    if signature is not None:
        required = [
            name
            for name, parameter in signature.parameters.items()
            if parameter.default is parameter.empty
            and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        ]
        if required:
            raise CliError(
                f"{where}: the factory needs {', '.join(required)}, but it is called with no "
                "arguments; give them defaults, or name the agent it makes instead"
            )
    try:
        return factory()
    except ConfigurationError as exc:
        raise CliError(f"{where}: {exc}") from exc
    except Exception as exc:
        raise CliError(
            f"{where}: calling the factory failed with {type(exc).__name__}: {exc}; fix it "
            "(--debug shows the traceback)"
        ) from exc


def load_agent(spec: str, option: str = "--agent") -> ReActAgent:
    """Import `module:attr` naming an agent, or a factory of one, and return the agent.

    `attr` is a `ReActAgent`, or a zero-argument function (a plain `def`, not `async def`)
    that returns one; it is called once. Modules of the current directory can be named, and
    `attr` may be dotted. This is what `rxagent run --agent` and `rxagent chat --agent` load.

    Raises:
        CliError: The spec is malformed, the module or attribute is missing, the factory fails,
            or what it names is not an agent (the message names `option` and the fix).

    Example:
        ```python
        from rxagent.cli._common import load_agent

        agent = load_agent("rxagent.demo:build_demo_agent")
        assert agent.name == "demo" and "calculator" in agent.toolkit.names()
        ```
    """
    from rxagent.agent import ReActAgent

    where = f"{option} {spec!r}"
    found = load_object(spec, option)
    if not isinstance(found, ReActAgent) and callable(found) and not isinstance(found, type):
        made = call_factory(found, where, _AGENT_EXPECTED)
        if not isinstance(made, ReActAgent):
            raise CliError(
                f"{where}: the factory returned {type(made).__name__}, not a ReActAgent; "
                "return the agent"
            )
        return made
    if not isinstance(found, ReActAgent):
        several = (
            " (run and chat talk to one agent: name one)"
            if isinstance(found, list | tuple | dict)
            else ""
        )
        raise CliError(f"{where}: expected {_AGENT_EXPECTED}, got {type(found).__name__}{several}")
    return found


def store_url(given: str | None) -> str:
    """Return `given`, else `$RXAGENT_STORE`, else `DEFAULT_STORE_URL`."""
    return given or os.environ.get(STORE_ENV) or DEFAULT_STORE_URL


def redact_url(url: str) -> str:
    """Return `url` with any password replaced by `***`, for messages.

    A URL too malformed to parse is not shown at all, since it could hold a password.
    """
    return redact(url)


def new_session_id(prefix: str) -> str:
    """Return a fresh session id such as `run-1f0c2a9b3d4e`."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class PipeConsole(Console):
    """A console whose broken pipe is an ordinary `BrokenPipeError`, not rich's `SystemExit`.

    So the run is cancelled and cleaned up like on any other early exit.
    """

    def on_broken_pipe(self) -> None:
        """Stop writing and raise `BrokenPipeError`."""
        self.quiet = True
        raise BrokenPipeError


def json_lines(out: TextIO) -> Callable[[BaseEvent], None]:
    """Return a function that writes each event to `out` as one `EVENT_ADAPTER` JSON line."""

    def emit(event: BaseEvent) -> None:
        out.write(event.model_dump_json() + "\n")
        out.flush()

    return emit


def utf8_safe(stream: TextIO) -> TextIO:
    """Replace characters the stream's encoding cannot show, instead of failing on them."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and "utf" not in (getattr(stream, "encoding", "") or "").lower():
        with contextlib.suppress(ValueError, OSError):
            reconfigure(errors="replace")
    return stream


def silence_stdout() -> None:
    """Point stdout at devnull after the reader went away (`rxagent demo --json | head`)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
