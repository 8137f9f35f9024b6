"""Observability: OpenTelemetry spans of every run, and structured, redacted logs.

- `instrument()` traces every agent's runs; `Tracing()` is the hook that does it, for one
  agent. Spans follow the OpenTelemetry GenAI semantic conventions: `invoke_agent {agent}` →
  `step {n}` → `chat {model}` and `execute_tool {tool}`. They need the `otel` extra
  (`pip install "rxagent[otel]"`); without it `instrument()` and `Tracing` raise a
  `ConfigurationError` that says so, and everything else here works.
- `remote_parent(headers)` continues a caller's trace (W3C `traceparent`); the server's run
  routes use it.
- `json_logs()` writes rxagent's log records as JSON lines carrying the run's identity
  (`RunContextFilter`: `run_id`, `session_id`, `agent`, `user_id`), with API keys and
  credentials cut out (`RedactingFilter`).

See the observability guide in the docs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rxagent.telemetry._instrument import Instrumentation as Instrumentation
from rxagent.telemetry._instrument import instrument as instrument
from rxagent.telemetry._logs import REDACTED_LOGGERS as REDACTED_LOGGERS
from rxagent.telemetry._logs import RUN_FIELDS as RUN_FIELDS
from rxagent.telemetry._logs import JsonFormatter as JsonFormatter
from rxagent.telemetry._logs import RedactingFilter as RedactingFilter
from rxagent.telemetry._logs import RunContextFilter as RunContextFilter
from rxagent.telemetry._logs import install_log_redaction as install_log_redaction
from rxagent.telemetry._logs import json_logs as json_logs
from rxagent.telemetry._logs import secrets_from_env as secrets_from_env
from rxagent.telemetry._otel import INSTALL_HINT as INSTALL_HINT
from rxagent.telemetry._otel import otel_missing
from rxagent.telemetry._propagation import TRACE_HEADERS as TRACE_HEADERS
from rxagent.telemetry._propagation import remote_parent as remote_parent

if TYPE_CHECKING:
    from rxagent.telemetry._tracing import TRACING_PRIORITY as TRACING_PRIORITY
    from rxagent.telemetry._tracing import Tracing as Tracing

__all__ = [
    "INSTALL_HINT",
    "REDACTED_LOGGERS",
    "RUN_FIELDS",
    "TRACE_HEADERS",
    "TRACING_PRIORITY",
    "Instrumentation",
    "JsonFormatter",
    "RedactingFilter",
    "RunContextFilter",
    "Tracing",
    "install_log_redaction",
    "instrument",
    "json_logs",
    "remote_parent",
    "secrets_from_env",
]

_NEEDS_OTEL: Final = frozenset({"Tracing", "TRACING_PRIORITY"})


def __getattr__(name: str) -> Any:
    """`Tracing` and `TRACING_PRIORITY` import the OpenTelemetry API on first use."""
    if name not in _NEEDS_OTEL:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from rxagent.telemetry import _tracing
    except ImportError as exc:
        raise otel_missing(f"rxagent.telemetry.{name}") from exc
    return getattr(_tracing, name)


def __dir__() -> list[str]:
    return list(__all__)
