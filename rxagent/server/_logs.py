"""Log redaction: no API key or credential reaches a log record the server writes."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from rxagent.models._http import redact_secrets

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["REDACTED_LOGGERS", "RedactingFilter", "install_log_redaction", "redact_secrets"]

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
    "rxagent.tokens",
    "rxagent.tools",
)
"""The loggers `install_log_redaction` filters, with every other `rxagent.*` logger there is."""

_FORMATTER: Final = logging.Formatter()


class RedactingFilter(logging.Filter):
    """A logging filter that cuts API keys and credentials out of every record it sees.

    It rewrites the record in place (message, arguments, exception text and stack), using
    `redact_secrets`: bearer tokens, `Authorization` / `x-api-key` / `api-key` values, key
    shapes (`sk-...`, `AIza...`) and the `keys` given. It never drops a record.

    Args:
        keys: Secrets to cut wherever they appear (the server's own API keys).

    Example:
        ```python
        import logging
        from rxagent.server import RedactingFilter

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
