"""Prometheus metrics of a server: one registry per application, fed by the runs' events."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import ConfigurationError
from rxagent.events import ErrorEvent, PostActingEvent, PostCallEvent, PreReasoningEvent
from rxagent.events import PostReasoningEvent as _PostReasoning

if TYPE_CHECKING:
    from collections.abc import Container

    from rxagent.events import BaseEvent
    from rxagent.result import AgentResult

__all__ = [
    "MAX_OTHER_TOOL_LABELS",
    "METRICS_CONTENT_TYPE",
    "OTHER_TOOL",
    "RunObserver",
    "ServerMetrics",
]

METRICS_CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
"""The content type of the Prometheus text format."""

MAX_OTHER_TOOL_LABELS: Final = 64
"""How many tool names that are not the agent's own get a `tool` label of their own."""
OTHER_TOOL: Final = "other"
"""The `tool` label of the tool names past `MAX_OTHER_TOOL_LABELS`."""

_LATENCY_BUCKETS: Final = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


def _prometheus() -> Any:
    try:
        import prometheus_client
    except ImportError as exc:  # pragma: no cover - the server extra is installed in tests
        raise ConfigurationError(
            "the rxagent server's /metrics needs prometheus-client: pip install 'rxagent[server]'"
        ) from exc
    return prometheus_client


class ServerMetrics:
    """The metrics one application exports on `/metrics`, in a registry of its own.

    Two applications in one process never share counters. Names start with `rxagent_`. Labels
    take bounded values only (no session ids, no keys): a `tool` label is the tool's name for the
    agent's own tools, and for at most `MAX_OTHER_TOOL_LABELS` other names (a nested agent's
    tools, or names a model made up); later ones count as `"other"`.

    Example:
        ```python
        from rxagent.server import ServerMetrics

        metrics = ServerMetrics()
        metrics.api_error("session_busy", 409)
        assert b"rxagent_api_errors_total" in metrics.render()
        ```
    """

    def __init__(self) -> None:
        self._other_tools: set[str] = set()
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        prom = _prometheus()
        self.registry = prom.CollectorRegistry(auto_describe=True)
        self._generate_latest = prom.generate_latest
        make_counter, make_histogram = prom.Counter, prom.Histogram
        reg = self.registry
        self.runs = make_counter(
            "rxagent_runs", "Runs finished, by agent and outcome.", ["agent", "outcome"],
            registry=reg,
        )  # fmt: skip
        self.active = prom.Gauge(
            "rxagent_active_runs", "Runs in progress, by agent.", ["agent"], registry=reg
        )
        self.steps = make_counter(
            "rxagent_steps", "Reasoning steps (model responses), by agent.", ["agent"], registry=reg
        )
        self.tool_calls = make_counter(
            "rxagent_tool_calls", "Tool calls finished, by agent and tool.", ["agent", "tool"],
            registry=reg,
        )  # fmt: skip
        self.errors = make_counter(
            "rxagent_errors", "Run errors (ErrorEvents), by agent and ErrorCode.",
            ["agent", "code"], registry=reg,
        )  # fmt: skip
        self.api_errors = make_counter(
            "rxagent_api_errors", "HTTP error answers, by error code and status.",
            ["code", "status"], registry=reg,
        )  # fmt: skip
        self.tokens = make_counter(
            "rxagent_tokens", "Model tokens, by agent and direction (input, output).",
            ["agent", "direction"], registry=reg,
        )  # fmt: skip
        self.cost = make_counter(
            "rxagent_cost_usd", "Model cost in US dollars (Usage.cost, from the agent's price "
            "table), by agent.", ["agent"], registry=reg,
        )  # fmt: skip
        self.run_seconds = make_histogram(
            "rxagent_run_duration_seconds", "Wall time of runs, by agent.", ["agent"],
            buckets=_LATENCY_BUCKETS, registry=reg,
        )  # fmt: skip
        self.model_seconds = make_histogram(
            "rxagent_model_step_duration_seconds",
            "Time from PreReasoning to PostReasoning (one model call), by agent.", ["agent"],
            buckets=_LATENCY_BUCKETS, registry=reg,
        )  # fmt: skip

    def child(self, metric: Any, *labels: str) -> Any:
        """`metric.labels(*labels)`, looked up once per label values (a run needs about a dozen).

        A series is still created at its first use, as `labels()` does, so `/metrics` lists
        the same series; only the lookup (a lock and the label checks) is not repeated.
        """
        key = (id(metric), labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found

    def tool_label(self, name: str, own: Container[str]) -> str:
        """The `tool` label of a call of `name` by an agent whose own tools are `own`."""
        if name in own or name in self._other_tools:
            return name
        if len(self._other_tools) < MAX_OTHER_TOOL_LABELS:
            self._other_tools.add(name)
            return name
        return OTHER_TOOL

    def api_error(self, code: str, status: int) -> None:
        """Count one error answer."""
        self.child(self.api_errors, code, str(status)).inc()

    def finished(self, agent: str, result: AgentResult[Any] | None, seconds: float) -> None:
        """Count a finished run: outcome, latency, tokens and cost (`result=None`: cancelled)."""
        child = self.child
        child(self.runs, agent, outcome_of(result)).inc()
        child(self.run_seconds, agent).observe(seconds)
        if result is not None:
            usage = result.usage
            child(self.tokens, agent, "input").inc(usage.input_tokens)
            child(self.tokens, agent, "output").inc(usage.output_tokens)
            child(self.cost, agent).inc(usage.cost)

    def render(self) -> bytes:
        """The registry in the Prometheus text format."""
        data: bytes = self._generate_latest(self.registry)
        return data


def outcome_of(result: AgentResult[Any] | None) -> str:
    """How a run ended, as the `outcome` label.

    `ok`, `pending_approval` (parked for a human), `interrupted`, `error` or `cancelled` (the
    client went away).
    """
    if result is None:
        return "cancelled"
    if result.interrupted:
        return "interrupted"
    if not result.ok:
        return "error"
    return "pending_approval" if result.pending_approvals else "ok"


class RunObserver:
    """Feeds one run's events into the metrics as they pass through the server.

    Args:
        metrics: The application's metrics.
        agent: The agent's name (the `agent` label).
        tools: The agent's own tools (a `Toolkit`, or names), whose names always label calls.
    """

    __slots__ = ("_agent", "_metrics", "_model_started", "_tools", "result", "started")

    def __init__(
        self, metrics: ServerMetrics, agent: str, tools: Container[str] = frozenset()
    ) -> None:
        self._metrics = metrics
        self._agent = agent
        self._tools = tools
        self._model_started: float | None = None
        self.started = time.perf_counter()
        self.result: AgentResult[Any] | None = None

    def __call__(self, event: BaseEvent) -> None:
        """Observe one event."""
        metrics, agent = self._metrics, self._agent
        kind = type(event)
        if kind is PreReasoningEvent:
            self._model_started = time.perf_counter()
        elif kind is _PostReasoning:
            metrics.child(metrics.steps, agent).inc()
            if self._model_started is not None:
                elapsed = time.perf_counter() - self._model_started
                metrics.child(metrics.model_seconds, agent).observe(elapsed)
                self._model_started = None
        elif isinstance(event, PostActingEvent):
            tool = metrics.tool_label(event.tool_call.name, self._tools)
            metrics.child(metrics.tool_calls, agent, tool).inc()
        elif isinstance(event, ErrorEvent):
            metrics.child(metrics.errors, agent, str(event.code)).inc()
        elif isinstance(event, PostCallEvent) and len(event.path) <= 1:
            self.result = event.result
