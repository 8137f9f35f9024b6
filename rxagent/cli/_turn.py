"""Running one turn of an agent for the CLI: its events shown one of three ways, Ctrl-C handled.

- `--json`: each event as one JSON line on stdout, and nothing else there.
- live (a terminal, or `--live`): `RunView` prints the events as they arrive.
- plain (a pipe): the reply's text when the run ends.

`rxagent chat` asks for a compact turn: the live view without its banner, and in both the live
and the plain form a one-line summary (`summary_line`) instead of the summary block.

The first Ctrl-C asks the run to stop at its next checkpoint (`agent.interrupt`): tools are
cancelled, every tool call gets a result and the state is saved. A second Ctrl-C cancels the run
at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import TYPE_CHECKING, Any, Final, TextIO

from rich.text import Text

from rxagent._demo import LiveEventView
from rxagent.cli._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CliError,
    PipeConsole,
    json_lines,
    utf8_safe,
)
from rxagent.errors import SessionBusyError
from rxagent.events import (
    BaseEvent,
    FallbackEvent,
    InterruptedEvent,
    PostCallEvent,
    PreCallEvent,
    RetryEvent,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from rxagent.agent import ReActAgent
    from rxagent.result import AgentResult

__all__ = [
    "DEMO_NOTICE",
    "RunView",
    "TurnOutput",
    "ctrl_c_notice",
    "describe_failure",
    "exit_code_of",
    "run_turn",
    "someone_watches",
    "stderr_line",
    "summary_line",
]


DEMO_NOTICE: Final = (
    "no --model or --agent: the offline demo agent answers (it searches rxagent's docs and does "
    "arithmetic); pass --model openai:gpt-4o-mini, or --agent MODULE:ATTR, for your own"
)
"""Said on a terminal when the demo agent stands in for one the options did not name."""


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_line(result: AgentResult[Any]) -> str:
    """One line about a finished turn: tool calls, steps, tokens, time and session.

    Example:
        ```python
        from rxagent import AgentResult, Msg
        from rxagent.cli._turn import summary_line
        from rxagent.models import Usage

        result = AgentResult(
            reply=Msg.assistant("391"), tools_used=("calculator",), steps=2, session_id="chat-1",
            usage=Usage(input_tokens=300, output_tokens=12), duration_ms=20.0,
        )
        assert summary_line(result) == (
            "· 1 tool call (calculator) · 2 steps · 312 tokens · 0.02 s · session chat-1"
        )
        ```
    """
    calls = len(result.tools_used)
    tools = f"{_plural(calls, 'tool call')} ({', '.join(dict.fromkeys(result.tools_used))})"
    parts = [
        tools if calls else "no tool calls",
        _plural(result.steps, "step"),
        f"{result.usage.total_tokens:,} tokens",
        f"{result.duration_ms / 1000:.2f} s",
        f"session {result.session_id}",
    ]
    if not result.ok:
        code = result.error.code if result.error is not None else "?"
        parts.insert(0, "interrupted" if result.interrupted else f"failed: {code}")
    return "· " + " · ".join(parts)


class RunView(LiveEventView):
    """The live view of `rxagent run` and `rxagent chat`: the demo's view, plus retries.

    A `compact` view (chat) leaves out the banner and ends a turn with `summary_line`.
    """

    def __init__(self, *args: Any, compact: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.compact = compact

    def handle(self, event: BaseEvent) -> None:
        """Print one event."""
        if self.compact and isinstance(event, PreCallEvent):
            self.events += 1
            for said in event.input:
                self._row(said.role, said.text, label_style="bold green")
        elif self.compact and isinstance(event, PostCallEvent):
            self.events += 1
            self._end_stream()
            line = Text(summary_line(event.result), style="dim")
            self.console.print(line, highlight=False, soft_wrap=True)
        elif isinstance(event, RetryEvent):
            self.events += 1
            message = f": {event.message}" if event.message else ""
            self._row(
                "retry",
                f"attempt {event.attempt} in {event.delay_s:.2f} s after {event.code}{message}",
                "yellow",
                "bold yellow",
            )
        elif isinstance(event, FallbackEvent):
            self.events += 1
            text = f"{event.from_model} -> {event.to_model} after {event.code}"
            self._row("fallback", text, "yellow", "bold yellow")
        elif isinstance(event, InterruptedEvent):
            self.events += 1
            reason = f": {event.reason}" if event.reason else ""
            self._row("interrupt", f"stopped at {event.checkpoint}{reason}", "red", "bold red")
        else:
            super().handle(event)


class TurnOutput:
    """Where a turn's events go: JSON lines, the live view, or the final text.

    Args:
        out: The stream to write to (stdout).
        json: Write JSON lines.
        live: Show the live view (ignored with `json`).
        title: The live view's banner.
        compact: End each turn with one summary line, after the plain reply too (chat).
    """

    def __init__(
        self, out: TextIO, *, json: bool, live: bool, title: str = "", compact: bool = False
    ) -> None:
        self.out = out
        self.json = json
        self.live = live and not json
        self.title = title
        self.compact = compact

    def handler(self, agent: ReActAgent) -> Callable[[BaseEvent], None]:
        """Return the function that shows one event of a new turn of `agent`."""
        if self.json:
            return json_lines(self.out)
        if self.live:
            view = RunView(
                PipeConsole(file=utf8_safe(self.out), highlight=False),
                tools=agent.toolkit.names(),
                title=f"{self.title} · model {agent.model.name}" if self.title else "",
                compact=self.compact,
            )
            return view.handle
        return lambda event: None

    def finish(self, result: AgentResult[Any] | None) -> None:
        """Show what the live view and the JSON lines have not: the plain reply."""
        if self.json or self.live or result is None or not result.ok:
            return
        summary = f"{summary_line(result)}\n" if self.compact else ""
        self.out.write(f"{result.text}\n{summary}")
        self.out.flush()


def _interrupted(result: AgentResult[Any]) -> bool:
    """Interrupted on request, not timed out (a `request_timeout` is a failure)."""
    return result.interrupted and (result.error is None or result.error.code == "INTERRUPTED")


def exit_code_of(result: AgentResult[Any] | None) -> int:
    """0 for a successful run, 130 for an interrupted (or cancelled) one, else 1."""
    if result is None or _interrupted(result):
        return EXIT_INTERRUPTED
    return EXIT_OK if result.ok else EXIT_FAILED


def describe_failure(result: AgentResult[Any] | None, session_id: str) -> str | None:
    """The line for stderr about a run that did not succeed, or None."""
    if result is None:
        return f"cancelled: session {session_id!r} keeps the state of its last completed step"
    if _interrupted(result):
        return f"interrupted: the state of session {session_id!r} was saved"
    if result.ok:
        return None
    if result.error is None:  # pragma: no cover - a failed run always carries its error
        return "the run failed"
    return f"error: the run failed: {result.error.code}: {result.error.message}"


@contextlib.contextmanager
def _on_ctrl_c(callback: Callable[[], None]) -> Iterator[None]:
    """Call `callback` on SIGINT while the block runs (where the loop can: Unix, main thread)."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, callback)
    except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


async def _consume(
    agent: ReActAgent, prompt: str, session_id: str, on_event: Callable[[BaseEvent], None]
) -> AgentResult[Any] | None:
    result: AgentResult[Any] | None = None
    async for event in agent.events(prompt, session_id=session_id):
        on_event(event)
        if isinstance(event, PostCallEvent):
            result = event.result
    return result


async def run_turn(
    agent: ReActAgent,
    prompt: str,
    session_id: str,
    on_event: Callable[[BaseEvent], None],
    *,
    notify: Callable[[str], None] | None = None,
) -> AgentResult[Any] | None:
    """Run `prompt` on the session, showing each event; None when a second Ctrl-C cancelled it.

    Raises:
        CliError: The session has a run in progress (here or in another process).
    """
    task = asyncio.ensure_future(_consume(agent, prompt, session_id, on_event))
    presses = 0

    def ctrl_c() -> None:
        nonlocal presses
        presses += 1
        if presses == 1 and agent.interrupt(session_id, "Interrupted with Ctrl-C."):
            if notify is not None:
                notify("interrupting... (press Ctrl-C again to stop at once)")
            return
        task.cancel()

    with _on_ctrl_c(ctrl_c):
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait([task])
            raise
    if task.cancelled():
        return None
    try:
        return task.result()
    except SessionBusyError as exc:
        raise CliError(
            f"session {session_id!r} of agent {agent.name!r} has a run in progress; wait for it "
            "to finish, or pass another --session",
            exit_code=EXIT_FAILED,
        ) from exc


def stderr_line(message: str) -> None:
    """Write one line to stderr."""
    print(message, file=sys.stderr, flush=True)


def someone_watches(output: TurnOutput) -> bool:
    """True when a person reads the output: the live view, or stderr on a terminal."""
    return output.live or sys.stderr.isatty()


def ctrl_c_notice(output: TurnOutput) -> Callable[[str], None] | None:
    """Where to say that Ctrl-C is interrupting: stderr, when someone watches (not in a pipe)."""
    return stderr_line if someone_watches(output) else None
