"""SSE and NDJSON framing, re-exported from `rxagent.formatters.framing`, where it lives.

Framing is pure parsing shared by the formatters, so it sits in their layer; this module keeps
the names importable from `rxagent.models.framing` too.

Example:
    ```python
    from rxagent.formatters import framing
    from rxagent.models.framing import SSEDecoder

    assert SSEDecoder is framing.SSEDecoder
    ```
"""

from rxagent.formatters.framing import DEFAULT_MAX_LINE_BYTES as DEFAULT_MAX_LINE_BYTES
from rxagent.formatters.framing import NDJSONDecoder as NDJSONDecoder
from rxagent.formatters.framing import SSEDecoder as SSEDecoder
from rxagent.formatters.framing import SSEEvent as SSEEvent
from rxagent.formatters.framing import is_done as is_done
from rxagent.formatters.framing import iter_ndjson as iter_ndjson
from rxagent.formatters.framing import iter_sse as iter_sse

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "NDJSONDecoder",
    "SSEDecoder",
    "SSEEvent",
    "is_done",
    "iter_ndjson",
    "iter_sse",
]
