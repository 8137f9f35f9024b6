"""Structured logs: the run's identity on every record, JSON lines, and no secret in any of them.

Inside a run, `rxagent.current_run_or_none()` is the run's `RunContext` (a context variable
the engine sets for the run's task and everything it starts). `RunContextFilter` copies its
identity onto each record; `JsonFormatter` writes a record as one JSON object; `RedactingFilter`
cuts API keys and credentials out of it. `json_logs()` puts the three together on a handler.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, TextIO

from rxagent.context import current_run_or_none
from rxagent.models._http import redact_secrets

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "REDACTED_LOGGERS",
    "RUN_FIELDS",
    "JsonFormatter",
    "RedactingFilter",
    "RunContextFilter",
    "install_log_redaction",
    "json_logs",
    "secrets_from_env",
]

RUN_FIELDS: Final = ("run_id", "session_id", "agent", "user_id")
"""The record attributes `RunContextFilter` sets (None outside a run; `user_id` when known)."""

REDACTED_LOGGERS: Final = (
    "aiohttp.access",
    "aiohttp.server",
    "aiohttp.web",
    "aiohttp.internal",
    "rxagent",
    "rxagent.agent",
    "rxagent.hooks",
    "rxagent.hooks.context_window",
    "rxagent.models.retry",
    "rxagent.server",
    "rxagent.state",
    "rxagent.telemetry",
    "rxagent.tokens",
    "rxagent.tools",
)
"""The loggers `install_log_redaction` filters, with every other `rxagent.*` logger there is."""

_SECRET_ENV_SUFFIXES: Final = ("_API_KEY", "_AUTH_TOKEN", "_ACCESS_TOKEN", "_SECRET_KEY")

_FORMATTER: Final = logging.Formatter()

_STANDARD: Final = frozenset(
    logging.LogRecord("", 0, "", 0, "", (), None).__dict__.keys() | {"message", "asctime"}
)
"""Attributes every record has: what `JsonFormatter` does not repeat as extra fields."""


def secrets_from_env(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """The values of environment variables that hold credentials (`*_API_KEY`, `*_TOKEN`...).

    Example:
        ```python
        from rxagent.telemetry import secrets_from_env

        env = {"OPENAI_API_KEY": "sk-local-1234", "HOME": "/root"}
        assert secrets_from_env(env) == ("sk-local-1234",)
        ```
    """
    env = os.environ if environ is None else environ
    return tuple(
        value
        for name, value in env.items()
        if value and name.upper().endswith(_SECRET_ENV_SUFFIXES)
    )


class RunContextFilter(logging.Filter):
    """Sets `run_id`, `session_id`, `agent` and `user_id` on each record from the current run.

    Outside a run they are None. Attach it to a handler, so it sees the records of every
    logger that reaches the handler (a filter on a logger sees only that logger's records).
    It never drops a record.

    Example:
        ```python
        import logging
        from rxagent.telemetry import RunContextFilter

        record = logging.LogRecord("rxagent.agent", logging.INFO, __file__, 1, "hi", (), None)
        assert RunContextFilter().filter(record) and record.run_id is None
        ```
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Add the run's identity to `record`; always keep it."""
        ctx = current_run_or_none()
        if ctx is None:
            record.run_id = record.session_id = record.agent = record.user_id = None
        else:
            record.run_id = ctx.run_id
            record.session_id = ctx.session_id
            record.agent = ctx.agent
            record.user_id = ctx.principal.user_id
        return True


class RedactingFilter(logging.Filter):
    """A logging filter that cuts API keys and credentials out of every record it sees.

    It rewrites the record in place (message, arguments, exception text and stack), using
    `redact_secrets`: bearer tokens, `Authorization` / `x-api-key` / `api-key` values, key
    shapes (`sk-...`, `AIza...`) and the `keys` given. It never drops a record.

    Args:
        keys: Secrets to cut wherever they appear (the server's own API keys, the providers'
            keys: see `secrets_from_env()`).

    Example:
        ```python
        import logging
        from rxagent.telemetry import RedactingFilter

        record = logging.LogRecord(
            "aiohttp.server", logging.ERROR, __file__, 1, "bad header %r", ("Bearer k-secret1",),
            None,
        )
        assert RedactingFilter(keys=["k-secret1"]).filter(record)
        assert record.getMessage() == "bad header 'Bearer [redacted]'"
        ```
    """

    def __init__(self, keys: Iterable[str] = ()) -> None:
        super().__init__()
        self.keys = tuple(keys)
        self._installed: list[logging.Logger] = []

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact `record` in place; always keep it."""
        keys = self.keys
        message = record.getMessage()
        redacted = redact_secrets(message, keys)
        if redacted != message or record.args:
            record.msg, record.args = redacted, None
        if record.exc_info is not None:
            record.exc_text = redact_secrets(_FORMATTER.formatException(record.exc_info), keys)
            record.exc_info = None  # what a handler formats is the redacted text only
        elif record.exc_text:
            record.exc_text = redact_secrets(record.exc_text, keys)
        if record.stack_info:
            record.stack_info = redact_secrets(record.stack_info, keys)
        return True

    def install(self) -> RedactingFilter:
        """Attach to the `REDACTED_LOGGERS` and every `rxagent.*` logger that exists now."""
        known = [name for name in logging.root.manager.loggerDict if name.startswith("rxagent.")]
        for name in dict.fromkeys((*REDACTED_LOGGERS, *known)):
            logger = logging.getLogger(name)
            if self not in logger.filters:
                logger.addFilter(self)
                self._installed.append(logger)
        return self

    def remove(self) -> None:
        """Detach from every logger `install` attached to."""
        while self._installed:
            self._installed.pop().removeFilter(self)


def install_log_redaction(keys: Iterable[str] = ()) -> RedactingFilter:
    """Redact API keys from the records of aiohttp's and rxagent's loggers; return the filter.

    `run_server` does this for its lifetime; call it yourself when you run `create_app` with
    your own runner, and `remove()` the filter when you are done. A logging filter applies to
    the records of the logger it is attached to, so it goes on `aiohttp.access`,
    `aiohttp.server`, `aiohttp.web`, `aiohttp.internal`, `rxagent` and every `rxagent.*` logger.

    Args:
        keys: The server's API keys (cut wherever they appear, not only after `Bearer`).

    Example:
        ```python
        import logging
        from rxagent.server import install_log_redaction

        redaction = install_log_redaction(keys=["sk-local-123"])
        try:
            assert redaction in logging.getLogger("aiohttp.server").filters
        finally:
            redaction.remove()
        assert redaction not in logging.getLogger("aiohttp.server").filters
        ```
    """
    return RedactingFilter(keys).install()


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON object per line.

    Keys: `time` (ISO 8601, UTC), `level`, `logger`, `message`, the run's identity
    (`run_id`, `session_id`, `agent`, `user_id`, when `RunContextFilter` set them and they are
    known), `exception` and `stack` when present, and every `extra=` field of the call. Values
    JSON cannot hold are written with `repr`. The finished line goes through `redact_secrets`
    with `keys`, so a secret in an `extra=` field is cut too.

    Args:
        keys: Secrets to cut from each line, besides key shapes and `Authorization` values.

    Example:
        ```python
        import json
        import logging
        from rxagent.telemetry import JsonFormatter

        record = logging.LogRecord("rxagent.agent", logging.WARNING, __file__, 1, "slow %s",
                                   ("tool",), None)
        line = json.loads(JsonFormatter().format(record))
        assert line["level"] == "WARNING" and line["message"] == "slow tool"
        ```
    """

    def __init__(self, keys: Iterable[str] = ()) -> None:
        super().__init__()
        self.keys = tuple(keys)

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in RUN_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                entry[name] = value
        if record.exc_info is not None and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        for name, value in record.__dict__.items():
            if name not in _STANDARD and name not in entry and name not in RUN_FIELDS:
                entry[name] = value
        # the cut stops at a quote or a backslash, so the line stays valid JSON
        return redact_secrets(json.dumps(entry, ensure_ascii=False, default=repr), self.keys)


def json_logs(
    *,
    level: int | str = logging.INFO,
    stream: TextIO | None = None,
    logger: str = "rxagent",
    keys: Iterable[str] = (),
    keys_from_env: bool = True,
) -> logging.Handler:
    """Write `logger`'s records (rxagent's by default) as JSON lines, with the run's identity.

    The handler carries `RunContextFilter` and then `RedactingFilter` (with `keys`, and the
    values of credential variables in the environment unless `keys_from_env=False`), and
    formats with `JsonFormatter`. Remove it with `logging.getLogger(logger).removeHandler(h)`.

    Args:
        level: The logger's level.
        stream: Where the lines go (standard error by default).
        logger: The logger to attach to; `""` for the root logger, so your own records get the
            same treatment.
        keys: Secrets to cut from every record, besides key shapes and `Authorization` values.
        keys_from_env: Also cut the values of `*_API_KEY`, `*_AUTH_TOKEN`, `*_ACCESS_TOKEN` and
            `*_SECRET_KEY` environment variables.

    Example:
        ```python
        import io
        import json
        import logging
        from rxagent.telemetry import json_logs

        out = io.StringIO()
        handler = json_logs(stream=out, keys=["hunter2-secret"])
        try:
            logging.getLogger("rxagent.agent").warning("key %s", "hunter2-secret")
        finally:
            logging.getLogger("rxagent").removeHandler(handler)
        assert json.loads(out.getvalue())["message"] == "key [redacted]"
        ```
    """
    secrets = (*keys, *secrets_from_env()) if keys_from_env else tuple(keys)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.addFilter(RunContextFilter())
    handler.addFilter(RedactingFilter(secrets))
    handler.setFormatter(JsonFormatter(secrets))
    target = logging.getLogger(logger)
    target.setLevel(level)
    target.addHandler(handler)
    return handler
