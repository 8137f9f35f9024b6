"""A live terminal view of a run's event stream, printed progressively with `rich`.

Each event is printed as it arrives: a rule per reasoning step, the request (and the hooks that
rewrote it), streamed thinking, text and tool-call arguments, each tool call with its result and
timing, errors, and a usage and timing summary after the `PostCallEvent`. Nothing is redrawn, so
the same output works in a terminal and in a pipe or CI log (where rich drops colours).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Final

from rich.text import Text

from rxagent.events import (
    ActingChunkEvent,
    BaseEvent,
    ErrorEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rich.console import Console

    from rxagent.messages import ToolResultBlock

__all__ = ["LiveEventView"]

_INDENT: Final = 2
_LABEL: Final = 10
_PREVIEW_CHARS: Final = 120


def _clip(value: str, limit: int = _PREVIEW_CHARS) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _call_signature(name: str, arguments: Mapping[str, Any]) -> str:
    args = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return f"{name}({args})"


class _StreamWriter:
    """Writes streamed text word by word, wrapped under a label column."""

    def __init__(self, console: Console, label: str, style: str, label_style: str) -> None:
        self.console = console
        self.style = style
        self.indent = _INDENT + _LABEL + 1
        self.width = max(console.width, self.indent + 20)
        self.word = ""
        self.space = False
        self.column = self.indent
        self.indent_due = False
        head = Text(" " * _INDENT)
        head.append(label.ljust(_LABEL), style=label_style)
        head.append(" ")
        self._write(head)

    def _write(self, text: Text | str) -> None:
        piece = text if isinstance(text, Text) else Text(text, style=self.style)
        self.console.print(piece, end="", soft_wrap=True, highlight=False)

    def _newline(self) -> None:
        self._write("\n")
        self.column = self.indent
        self.indent_due = True  # written with the next word, so blank lines stay empty

    def _flush_word(self) -> None:
        if not self.word:
            return
        gap = 1 if self.space and self.column > self.indent else 0
        if self.column + gap + len(self.word) > self.width and self.column > self.indent:
            self._newline()
            gap = 0
        if self.indent_due:
            self._write(" " * self.indent)
            self.indent_due = False
        self._write(" " * gap + self.word)
        self.column += gap + len(self.word)
        self.word, self.space = "", False

    def feed(self, piece: str) -> None:
        for char in piece:
            if char == "\n":
                self._flush_word()
                self._newline()
                self.space = False
            elif char.isspace():
                self._flush_word()
                self.space = True
            else:
                self.word += char
                if len(self.word) >= self.width - self.indent:
                    self._flush_word()

    def close(self) -> None:
        self._flush_word()
        self._write("\n")


class LiveEventView:
    """Prints a run's events to a rich `Console` as they arrive.

    Args:
        console: Where to print.
        tools: The agent's tool names, for the banner.
        hooks: The agent's hook names, for the banner.
        title: The banner's first line.

    Example:
        ```python
        import asyncio, io
        from rich.console import Console
        from rxagent import ReActAgent
        from rxagent._demo import LiveEventView
        from rxagent.testing import ScriptedModel


        async def main() -> str:
            out = io.StringIO()
            view = LiveEventView(Console(file=out, width=80))
            async for event in ReActAgent("a", "", ScriptedModel(["Hi!"])).events("hello"):
                view.handle(event)
            return out.getvalue()


        assert "Hi!" in asyncio.run(main())
        ```
    """

    def __init__(
        self,
        console: Console,
        *,
        tools: Sequence[str] = (),
        hooks: Sequence[str] = (),
        title: str = "",
    ) -> None:
        self.console = console
        self.tools = tuple(tools)
        self.hooks = tuple(hooks)
        self.title = title
        self.events = 0
        self.started = time.perf_counter()
        self._stream: _StreamWriter | None = None
        self._stream_key: tuple[str, int] | None = None

    # -- output helpers -------------------------------------------------------------------------

    def _row(
        self, label: str, content: str, style: str = "", label_style: str = "bold cyan"
    ) -> None:
        self._end_stream()
        writer = _StreamWriter(self.console, label, style, label_style)
        writer.feed(content)
        writer.close()

    def _start_stream(self, key: tuple[str, int], label: str, style: str, label_style: str) -> None:
        if self._stream_key == key:
            return
        self._end_stream()
        self._stream = _StreamWriter(self.console, label, style, label_style)
        self._stream_key = key

    def _end_stream(self) -> None:
        if self._stream is not None:
            self._stream.close()
        self._stream, self._stream_key = None, None

    # -- events ---------------------------------------------------------------------------------

    def handle(self, event: BaseEvent) -> None:
        """Print one event."""
        self.events += 1
        if isinstance(event, ReasoningChunkEvent):
            self._on_chunk(event)
        elif isinstance(event, PreCallEvent):
            self._on_pre_call(event)
        elif isinstance(event, PreReasoningEvent):
            self._on_pre_reasoning(event)
        elif isinstance(event, PostReasoningEvent):
            self._on_post_reasoning(event)
        elif isinstance(event, PreActingEvent):
            call = event.tool_call
            self._row(
                f"▶ {call.id}", _call_signature(call.name, call.input), label_style="bold yellow"
            )
        elif isinstance(event, ActingChunkEvent):
            self._row("progress", f"{event.tool_call_id}: {_clip(str(event.chunk))}", "dim", "dim")
        elif isinstance(event, PostActingEvent):
            self._on_post_acting(event)
        elif isinstance(event, ErrorEvent):
            kind = "recoverable" if event.recoverable else "fatal"
            message = f"{event.code} from {event.source} ({kind}): {event.message}"
            self._row("error", message, "red", "bold red")
        elif isinstance(event, PostCallEvent):
            self._on_post_call(event)
        else:
            self._row(event.type, _clip(event.model_dump_json(include=_EXTRA_FIELDS)), "dim", "dim")

    def _on_pre_call(self, event: PreCallEvent) -> None:
        if self.title:
            self.console.print(Text(self.title, style="bold"))
        details = [f"agent {event.agent}"]
        if self.tools:
            details.append(f"tools {', '.join(self.tools)}")
        self.console.print(Text(" · ".join(details), style="dim"))
        if self.hooks:
            self.console.print(Text(f"hooks {', '.join(self.hooks)}", style="dim"))
        for message in event.input:
            self._row(message.role, message.text, label_style="bold green")

    def _on_pre_reasoning(self, event: PreReasoningEvent) -> None:
        self._end_stream()
        self.console.rule(Text(f"step {event.step}", style="bold"), style="dim")
        request = f"{len(event.messages)} messages, {len(event.tools)} tools"
        self._row("request", f"{request} → {event.model or 'model'}")
        if event.modified_by:
            names = ", ".join(event.modified_by)
            self._row("hook", f"{names} rewrote the request", "magenta", "bold magenta")
        for message in event.messages:
            added_by = message.metadata.get("added_by")
            if added_by:
                content = f"+ {message.role} message: {_clip(message.text, 300)}"
                self._row("", content, "magenta")

    def _on_chunk(self, event: ReasoningChunkEvent) -> None:
        delta = event.delta
        key = (delta.type, event.index)
        if delta.type == "thinking_delta":
            self._start_stream(key, "thinking", "dim italic", "bold blue")
            self._stream_feed(delta.text)
        elif delta.type == "text_delta":
            self._start_stream(key, "assistant", "", "bold green")
            self._stream_feed(delta.text)
        else:
            self._start_stream(key, "call", "dim", "bold yellow")
            if delta.name:
                self._stream_feed(f"{delta.name} ")
            self._stream_feed(delta.args)

    def _stream_feed(self, text: str) -> None:
        if self._stream is not None:
            self._stream.feed(text)

    def _on_post_reasoning(self, event: PostReasoningEvent) -> None:
        self._end_stream()
        calls = len(event.response.tool_calls)
        outcome = f"{calls} tool call{'s' if calls != 1 else ''}" if calls else "final answer"
        usage = event.usage
        tokens = f"{usage.input_tokens} in / {usage.output_tokens} out tokens"
        self._row("model", f"{outcome} · {tokens}")

    def _on_post_acting(self, event: PostActingEvent) -> None:
        result = event.result
        timing = f"{event.duration_ms:.1f} ms"
        if result.is_error:
            message = f"{result.name} failed in {timing}: {_clip(result.text)}"
            self._row(f"✗ {result.id}", message, "red", "bold red")
            return
        hits = _doc_hits(result)
        if hits is None:
            summary = f"{result.name} → {_clip(result.text)}  ({timing})"
            self._row(f"✓ {result.id}", summary, label_style="bold green")
            return
        count = f"{len(hits)} hit{'s' if len(hits) != 1 else ''}"
        self._row(
            f"✓ {result.id}", f"{result.name} → {count}  ({timing})", label_style="bold green"
        )
        for hit in hits:
            self._row("", f"• {hit['source']}: {_clip(hit['heading'], 60)}", "dim")

    def _on_post_call(self, event: PostCallEvent) -> None:
        self._end_stream()
        result = event.result
        wall = time.perf_counter() - self.started
        self.console.rule(Text("summary", style="bold"), style="dim")
        status = "ok" if result.ok else f"failed: {result.error.code if result.error else '?'}"
        tools = f" ({', '.join(result.tools_used)})" if result.tools_used else ""
        usage = result.usage
        rows = [
            ("result", f"{status} · stop reason {result.stop_reason}"),
            ("steps", str(result.steps)),
            ("tool calls", f"{len(result.tools_used)}{tools}"),
            (
                "tokens",
                f"{usage.input_tokens} in · {usage.output_tokens} out · "
                f"{usage.total_tokens} total · {usage.requests} requests",
            ),
            ("events", str(self.events)),
            ("wall time", f"{wall:.2f} s (run {result.duration_ms / 1000:.2f} s)"),
        ]
        for label, value in rows:
            self._row(label, value)


_EXTRA_FIELDS: Final = {"type", "name", "checkpoint", "reason", "attempt", "delay_s", "code"}


def _doc_hits(result: ToolResultBlock) -> list[dict[str, str]] | None:
    """Return the result as doc hits when it is a JSON list of them, else None."""
    try:
        data = json.loads(result.text)
    except ValueError:
        return None
    if not isinstance(data, list) or not all(
        isinstance(item, dict) and {"source", "heading"} <= item.keys() for item in data
    ):
        return None
    return [{str(k): str(v) for k, v in item.items()} for item in data]
