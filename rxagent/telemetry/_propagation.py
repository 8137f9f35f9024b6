"""Trace context from a request: a run started in `remote_parent()` continues the caller's trace."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = ["TRACE_HEADERS", "remote_parent"]

TRACE_HEADERS: Final = ("traceparent", "tracestate", "baggage")
"""The W3C headers a request carries its trace context in."""


@contextmanager
def remote_parent(headers: Mapping[str, str]) -> Iterator[bool]:
    """Make the trace context in `headers` (W3C `traceparent`) current inside the block.

    A run started in the block (its task and context are made there) gets a span that is a
    child of the caller's span. It uses the OpenTelemetry API's configured propagator (W3C
    trace context and baggage by default). Without a `traceparent` header, or without the
    OpenTelemetry API, it does nothing. Yields whether a context was taken from the headers.

    Example:
        ```python
        from opentelemetry import trace
        from rxagent.telemetry import remote_parent

        header = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
        with remote_parent(header) as found:
            span = trace.get_current_span().get_span_context()
        assert found and format(span.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"
        ```
    """
    if not any(headers.get(name) for name in ("traceparent", "Traceparent", "TRACEPARENT")):
        yield False
        return
    try:
        from opentelemetry import context, propagate
    except ImportError:  # the otel extra is not installed: nothing to continue
        yield False
        return
    token = context.attach(propagate.extract(headers))
    try:
        yield True
    finally:
        context.detach(token)
