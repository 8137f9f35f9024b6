"""Log redaction: no API key or credential reaches a log record the server writes.

The filter lives in `rxagent.telemetry` (structured logs); the server re-exports it.
"""

from __future__ import annotations

from rxagent.models._http import redact_secrets
from rxagent.telemetry._logs import REDACTED_LOGGERS, RedactingFilter, install_log_redaction

__all__ = ["REDACTED_LOGGERS", "RedactingFilter", "install_log_redaction", "redact_secrets"]
