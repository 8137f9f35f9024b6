"""`RedactingFilter` and `install_log_redaction`: no key survives in a log record."""

from __future__ import annotations

import logging
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.server import RedactingFilter, install_log_redaction
from rxagent.server._logs import REDACTED_LOGGERS

KEY = "rk-own-key-0123456789"


def _record(msg: str, *args: object, exc: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    return logging.LogRecord("aiohttp.server", logging.ERROR, __file__, 1, msg, args, exc_info)


@given(
    before=st.text(max_size=60),
    after=st.text(max_size=60),
    token=st.text(string.ascii_letters + string.digits + "-._~+/=", min_size=1, max_size=40),
)
def test_no_bearer_token_or_own_key_survives_a_record(before: str, after: str, token: str):
    record = _record("%s Bearer %s %s %s", before, token, KEY, after)
    RedactingFilter(keys=[KEY]).filter(record)
    message = logging.Formatter().format(record)
    assert f"Bearer {token} " not in message
    assert KEY not in message


def test_the_exception_and_the_stack_of_a_record_are_redacted_too():
    try:
        raise ValueError(f"b'Authorization: Bearer {KEY}\\r'")
    except ValueError as exc:
        record = _record("Error handling request from %s", "127.0.0.1", exc=exc)
    record.stack_info = f"stack with {KEY}"
    assert RedactingFilter(keys=[KEY]).filter(record)  # kept, never dropped
    text = logging.Formatter().format(record)
    assert KEY not in text
    assert "ValueError" in text  # the traceback is still there, redacted
    assert record.exc_info is None


def test_a_record_with_exception_text_only_is_redacted():
    record = _record("plain")
    record.exc_text = f"Traceback: Bearer {KEY}"
    RedactingFilter().filter(record)
    assert record.exc_text == "Traceback: Bearer [redacted]"


def test_a_record_without_secrets_keeps_its_message():
    record = _record("%d requests", 3)
    RedactingFilter().filter(record)
    assert record.getMessage() == "3 requests"


def test_install_covers_aiohttp_and_every_rxagent_logger_and_remove_undoes_it(
    caplog: pytest.LogCaptureFixture,
):
    late = logging.getLogger("rxagent.some.module")  # exists before install: covered
    redaction = install_log_redaction(keys=[KEY])
    try:
        for name in (*REDACTED_LOGGERS, "rxagent.some.module"):
            assert redaction in logging.getLogger(name).filters, name
        install_log_redaction(keys=[KEY]).remove()  # another one leaves this one in place
        assert redaction in logging.getLogger("aiohttp.access").filters
        with caplog.at_level(logging.INFO):
            late.warning("key %s", KEY)
            logging.getLogger("aiohttp.access").info("GET / Authorization: Bearer %s", KEY)
        assert KEY not in caplog.text
        assert caplog.text.count("[redacted]") == 2
    finally:
        redaction.remove()
    assert all(redaction not in logging.getLogger(n).filters for n in REDACTED_LOGGERS)
    redaction.remove()  # idempotent
