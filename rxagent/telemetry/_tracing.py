"""OpenTelemetry spans built from a run's events, after the GenAI semantic conventions.

```text
invoke_agent {agent}            PreCall ............................................ PostCall
├── step 0                      first event of step 0 ...................... next step / PostCall
│   ├── chat {model}            PreReasoning ... PostReasoning (or the model's ErrorEvent)
│   ├── execute_tool {tool}     PreActing(id) ... PostActing(id)
│   │   └── invoke_agent {sub}  a nested agent's run, started inside the tool
│   └── execute_tool {tool}
└── step 1
    └── chat {model}
```

`Tracing` is a hook that only observes. It runs last among the hooks (`TRACING_PRIORITY`), so
spans carry the request and result the other hooks left. It keys its spans by run id, step and
tool-call id, and it makes the span of each model call and tool call the current span of the
run's context while the call runs: a nested agent started inside a tool, and an instrumented
HTTP client inside a tool or a model, get spans that are children of it. Every span is ended:
at its closing event, at PostCall for whatever is still open, and when the run's task ends
without a PostCall (a disposed run), with `error.type` `CANCELLED`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from rxagent._version import __version__
from rxagent.context import current_run_or_none
from rxagent.events import (
    ErrorEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
)

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

    from rxagent.context import RunContext
    from rxagent.events import BaseEvent
    from rxagent.hooks import OnError

__all__ = ["TRACING_PRIORITY", "Tracing"]

logger: Final = logging.getLogger("rxagent.telemetry")

TRACING_PRIORITY: Final = 10_000
"""The priority of the `Tracing` hook: after every hook that edits a request or a result."""

_PROVIDERS: Final = {"gemini": "gcp.gemini", "azure": "azure.ai.openai"}
"""rxagent provider names whose GenAI convention name differs."""

_CLAIMS: Final[dict[str, Tracing]] = {}
"""Run id -> the `Tracing` that traces it, so two tracers never trace one run twice."""

_ENDED: Final[dict[str, None]] = {}
"""Recently ended run ids, oldest first: events delivered after a run's PostCall open nothing."""

_ENDED_KEPT: Final = 4096
"""How many ended run ids are remembered."""

_LOCK: Final = threading.Lock()
"""Guards `_CLAIMS` and `_ENDED` where a change reads them first."""


@dataclass(slots=True)
class _RunSpans:
    """The open spans of one run."""

    agent: str
    run: Span
    step: int = -1
    step_span: Span | None = None
    chat: Span | None = None
    tools: dict[str, Span] = field(default_factory=dict)  # open tool spans by call id
    tool_names: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    tool_errors: dict[str, str] = field(default_factory=dict)  # call id -> error code
    last_seq: int = -1
    provider: str = "_OTHER"


def _ns(timestamp: float) -> int:
    return int(timestamp * 1e9)


def _provider_of(ctx: RunContext | None) -> str:
    name = getattr(ctx.model, "provider", None) if ctx is not None else None
    if not isinstance(name, str) or not name:
        return "_OTHER"
    return _PROVIDERS.get(name, name)


def _fail(span: Span, error_type: str, description: str | None = None) -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, description))


class Tracing:
    """A hook that turns an agent's runs into OpenTelemetry spans (GenAI semantic conventions).

    Give it to one agent (`ReActAgent(hooks=[Tracing()])`), or trace every agent with
    `rxagent.telemetry.instrument()`. Spans: `invoke_agent {agent}` per run, `step {n}` per
    ReAct step, `chat {model}` per model call and `execute_tool {tool}` per tool call; a nested
    agent's run is a child of the tool call that started it. Needs the `otel` extra
    (`pip install "rxagent[otel]"`) and, to export spans, an OpenTelemetry SDK.

    Args:
        tracer_provider: Where spans go; the global provider
            (`opentelemetry.trace.set_tracer_provider`) when None.

    Example:
        ```python
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from rxagent import ReActAgent
        from rxagent.telemetry import Tracing
        from rxagent.testing import ScriptedModel

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        agent = ReActAgent("demo", "", ScriptedModel(["Hi!"]), hooks=[Tracing(provider)])
        agent.call_sync("hello")
        names = [s.name for s in exporter.get_finished_spans()]
        assert names == ["chat scripted", "step 0", "invoke_agent demo"]
        ```
    """

    name: str = "tracing"
    priority: int = TRACING_PRIORITY
    on_error: OnError = "isolate"
    events: frozenset[type[BaseEvent]] | None = frozenset(
        {
            PreCallEvent,
            PreReasoningEvent,
            PostReasoningEvent,
            PreActingEvent,
            PostActingEvent,
            ErrorEvent,
            PostCallEvent,
        }
    )

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self._tracer: Tracer = trace.get_tracer(
            "rxagent", __version__, tracer_provider=tracer_provider
        )
        self._runs: dict[str, _RunSpans] = {}

    def __repr__(self) -> str:
        return f"<Tracing open_runs={len(self._runs)}>"

    # -- the hook --------------------------------------------------------------------------------

    async def on_event(self, event: BaseEvent) -> None:
        """Open, annotate or end the spans `event` stands for (never changes the event)."""
        self.observe(event)

    def observe(self, event: BaseEvent) -> None:
        """Trace one event, synchronously: what the hook does, for events fed by hand.

        Feeding a recorded run's events (`EventRecorder`, a saved SSE stream) in order traces
        it after the fact. It never raises: a failure is logged, and the run goes on.
        """
        try:
            self._observe(event)
        except Exception:  # tracing must never disturb a run
            logger.exception("tracing failed on %s of run %s", event.type, event.run_id)

    def _observe(self, event: BaseEvent) -> None:
        claimed = _CLAIMS.get(event.run_id)
        if claimed is not None and claimed is not self:
            return  # another tracer traces this run
        spans = self._runs.get(event.run_id)
        if spans is not None and event.seq <= spans.last_seq:
            return  # seen already (a nested run's event, forwarded to its parent's hooks)
        ctx = current_run_or_none()
        own = ctx is not None and ctx.run_id == event.run_id  # running in the run's own context
        if spans is None:
            if event.run_id in _ENDED:
                return  # an event delivered after the run's PostCall
            spans = self._start_run(event, ctx if own else None)
        spans.last_seq = event.seq
        current = self._dispatch(spans, event)
        if own and current is not None:
            # the span of the call about to run is the current span of the run's context
            otel_context.attach(trace.set_span_in_context(current))

    def _dispatch(self, spans: _RunSpans, event: BaseEvent) -> Span | None:
        """Update the spans; return the span that is current from now on in the run, if any."""
        if isinstance(event, PreReasoningEvent):
            return self._chat_started(spans, event)
        if isinstance(event, PostReasoningEvent):
            return self._chat_ended(spans, event)
        if isinstance(event, PreActingEvent):
            step = self._step(spans, event)
            call = event.tool_call
            span = self._tracer.start_span(
                f"execute_tool {call.name}",
                context=trace.set_span_in_context(step),
                kind=SpanKind.INTERNAL,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": call.name,
                    "gen_ai.tool.call.id": call.id,
                    "gen_ai.tool.type": "function",
                },
                start_time=_ns(event.timestamp),
            )
            spans.tools[call.id] = span
            spans.tool_names[call.id] = call.name
            return span
        if isinstance(event, PostActingEvent):
            return self._tool_ended(spans, event)
        if isinstance(event, ErrorEvent):
            self._error(spans, event)
        elif isinstance(event, PostCallEvent):
            self._end_run(spans, event)
        return None

    # -- runs ------------------------------------------------------------------------------------

    def _start_run(self, event: BaseEvent, ctx: RunContext | None) -> _RunSpans:
        parent = self._parent_of(event)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": event.agent,
            "gen_ai.conversation.id": event.session_id,
            "rxagent.run_id": event.run_id,
            "rxagent.path": list(event.path),
        }
        provider = _provider_of(ctx)
        if ctx is not None:
            attributes["gen_ai.request.model"] = ctx.model.name
            attributes["gen_ai.provider.name"] = attributes["gen_ai.system"] = provider
            if ctx.principal.user_id is not None:
                attributes["user.id"] = ctx.principal.user_id
        span = self._tracer.start_span(
            f"invoke_agent {event.agent}",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=_ns(event.timestamp),
        )
        spans = self._runs[event.run_id] = _RunSpans(event.agent, span, provider=provider)
        _CLAIMS[event.run_id] = self
        task = _current_task()
        if task is not None:  # a run disposed of ends without PostCall: end its spans anyway
            run_id = event.run_id
            task.add_done_callback(lambda _: self._abandon(run_id))
        return spans

    def _parent_of(self, event: BaseEvent) -> otel_context.Context | None:
        """The context a run's span starts in.

        The current context, when its span is one of this tracer's tool spans (a nested agent
        started inside a tool) or the run is not nested (the caller's own span, a server
        request's `traceparent`). A nested run's events seen outside its own context go under
        the newest open tool span of the newest run of the parent agent.
        """
        current = trace.get_current_span()
        ours = any(current in s.tools.values() for s in self._runs.values())
        if ours or len(event.path) < 2:
            return None  # start_span's default: the current context
        parent_agent = event.path[-2]
        for spans in reversed(self._runs.values()):
            if spans.agent == parent_agent:
                tools = list(spans.tools.values())
                span = tools[-1] if tools else spans.step_span or spans.run
                return trace.set_span_in_context(span)
        return None

    def _end_run(self, spans: _RunSpans, event: PostCallEvent) -> None:
        end = _ns(event.timestamp)
        self._close_open(spans, end, "not completed: the run ended")
        result = event.result
        span = spans.run
        usage = result.usage
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        span.set_attribute("rxagent.stop_reason", result.stop_reason)
        span.set_attribute("rxagent.steps", result.steps)
        if result.error is not None:
            _fail(span, str(result.error.code), f"{result.error.source}: {result.error.code}")
        self._forget(event.run_id)
        span.end(end_time=end)

    def _abandon(self, run_id: str) -> None:
        """The run's task ended; end what is still open (nothing after a PostCall)."""
        spans = self._runs.get(run_id)
        if spans is None:
            return
        self._close_open(spans, None, "not completed: the run's task ended")
        # disposed of by its subscriber, or broken off (a store outage): no PostCall came
        _fail(spans.run, "CANCELLED", "the run ended without its PostCall")
        self._forget(run_id)
        spans.run.end()

    def _forget(self, run_id: str) -> None:
        self._runs.pop(run_id, None)
        with _LOCK:  # agents on other threads' loops (call_sync in Jupyter) end runs too
            ended = _ENDED
            ended[run_id] = None
            if len(ended) > _ENDED_KEPT:
                del ended[next(iter(ended))]
            if _CLAIMS.get(run_id) is self:
                del _CLAIMS[run_id]

    def _close_open(self, spans: _RunSpans, end: int | None, why: str) -> None:
        """End the run's open tool, chat and step spans (as unfinished where they were open)."""
        for span in spans.tools.values():
            _fail(span, "INTERRUPTED", why)
            span.end(end_time=end)
        spans.tools.clear()
        spans.tool_names.clear()
        if spans.chat is not None:
            _fail(spans.chat, "INTERRUPTED", why)
            spans.chat.end(end_time=end)
            spans.chat = None
        if spans.step_span is not None:
            spans.step_span.end(end_time=end)
            spans.step_span = None

    # -- steps, model calls, tool calls ----------------------------------------------------------

    def _step(self, spans: _RunSpans, event: BaseEvent) -> Span:
        """The span of the event's step, started when the step's first event comes."""
        if spans.step_span is not None and spans.step == event.step:
            return spans.step_span
        at = _ns(event.timestamp)
        if spans.step_span is not None:
            spans.step_span.end(end_time=at)
        span = self._tracer.start_span(
            f"step {event.step}",
            context=trace.set_span_in_context(spans.run),
            attributes={"rxagent.step": event.step},
            start_time=at,
        )
        spans.step, spans.step_span = event.step, span
        return span

    def _chat_started(self, spans: _RunSpans, event: PreReasoningEvent) -> Span:
        step = self._step(spans, event)
        at = _ns(event.timestamp)
        if spans.chat is not None:  # the stream broke and the step starts again
            spans.chat.end(end_time=at)
        options = event.options
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": spans.provider,
            "gen_ai.system": spans.provider,
            "gen_ai.request.model": event.model,
        }
        if options.temperature is not None:
            attributes["gen_ai.request.temperature"] = options.temperature
        if options.max_output_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = options.max_output_tokens
        if options.seed is not None:
            attributes["gen_ai.request.seed"] = options.seed
        span = spans.chat = self._tracer.start_span(
            f"chat {event.model}".rstrip(),
            context=trace.set_span_in_context(step),
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=at,
        )
        return span

    def _chat_ended(self, spans: _RunSpans, event: PostReasoningEvent) -> Span:
        step = self._step(spans, event)
        span, spans.chat = spans.chat, None
        if span is None:  # its PreReasoning was not seen (tracing started mid-run)
            return step
        usage = event.usage
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        if event.finish_reason is not None:
            span.set_attribute("gen_ai.response.finish_reasons", (event.finish_reason,))
        model = event.response.metadata.get("model")
        if isinstance(model, str):
            span.set_attribute("gen_ai.response.model", model)
        span.end(end_time=_ns(event.timestamp))
        return step

    def _tool_ended(self, spans: _RunSpans, event: PostActingEvent) -> Span:
        step = self._step(spans, event)
        call_id = event.tool_call.id
        span = spans.tools.pop(call_id, None)
        spans.tool_names.pop(call_id, None)
        if span is None:
            return step
        code = spans.tool_errors.pop(call_id, None)
        if code is not None or event.result.is_error:
            _fail(span, code or "TOOL_ERROR")
        span.end(end_time=_ns(event.timestamp))
        return step

    def _error(self, spans: _RunSpans, event: ErrorEvent) -> None:
        code = str(event.code)
        if event.source == "model" and spans.chat is not None:
            _fail(spans.chat, code, event.exception or code)
            if not event.recoverable:  # no PostReasoning comes: the call ends here
                spans.chat.end(end_time=_ns(event.timestamp))
                spans.chat = None
            return
        if event.source.startswith("tool:"):
            name = event.source.removeprefix("tool:")
            for call_id, tool in spans.tool_names.items():  # the first open call of that tool
                if tool == name and call_id not in spans.tool_errors:
                    spans.tool_errors[call_id] = code
                    return
        target = spans.step_span or spans.run
        attributes: dict[str, str | bool] = {
            "error.type": code,
            "rxagent.source": event.source,
            "rxagent.recoverable": event.recoverable,
        }
        target.add_event("rxagent.error", attributes, timestamp=_ns(event.timestamp))


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop: a hook dispatched by hand
        return None
