"""DashScope failures → typed `AgentRunError`s: by the dotted `code` when known, else by status."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import ErrorCode
from rxagent.formatters.base import excerpt, parse_retry_after, provider_error, status_error

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rxagent.errors import AgentRunError
    from rxagent.formatters.framing import SSEEvent

__all__ = [
    "CONTEXT_LENGTH_MARKERS",
    "PROVIDER",
    "classify",
    "error_from_status",
    "stream_error",
]

PROVIDER: Final = "dashscope"
"""`DashScopeFormatter.provider`: the name every DashScope error carries."""

CONTEXT_LENGTH_MARKERS: Final = ("range of input length",)
"""Lower-case message fragments that make an `InvalidParameter` error `CONTEXT_TOO_LONG`
(DashScope says "Range of input length should be [1, 30720]")."""

_RETRYABLE_HEADS: Final = frozenset(
    {"InternalError", "ServiceUnavailable", "SystemError", "RequestTimeOut"}
)


def error_from_status(status: int, body: bytes, headers: Mapping[str, str]) -> AgentRunError:
    """Classify a failed response (see `DashScopeFormatter.error_from_response`)."""
    code = message = None
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        inner = data.get("error")
        source = inner if isinstance(inner, dict) else data
        code, message = source.get("code"), source.get("message")
    return classify(status, code, message, body, headers)


def stream_error(event: SSEEvent) -> AgentRunError:
    """The typed error of an `event:error` frame (its status from the `:HTTP_STATUS/` comment)."""
    status = _status_of(event.comments) or 500
    if status < 400:
        status = 500
    try:
        data = json.loads(event.data)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return status_error(PROVIDER, status, event.data or f"HTTP {status}")
    return classify(status, data.get("code"), data.get("message"), event.data, None)


def classify(
    status: int,
    code: Any,
    message: Any,
    body: bytes | str,
    headers: Mapping[str, str] | None,
) -> AgentRunError:
    """The typed error for a DashScope failure: by `code` when known, else by HTTP status."""
    code = code if isinstance(code, str) and code else None
    text = message if isinstance(message, str) and message else None
    kind = _code_kind(code, text or "") if code is not None else None
    if kind is None:
        return status_error(
            PROVIDER, status, body, message=text, provider_code=code, headers=headers
        )
    return provider_error(
        kind[0],
        text or excerpt(body) or f"HTTP {status}",
        provider=PROVIDER,
        status=status,
        provider_code=code,
        body=body,
        recoverable=kind[1],
        retry_after=parse_retry_after(headers) if headers else None,
    )


def _code_kind(code: str, message: str) -> tuple[ErrorCode, bool] | None:
    """`(ErrorCode, recoverable)` for a DashScope error code, or None to classify by status.

    Codes are dotted (`Throttling.RateQuota`, `InternalError.Algo.InvalidParameter`); a
    specific segment (`InvalidParameter`, `DataInspectionFailed`) wins over a generic head.
    """
    parts = code.split(".")
    head = parts[0]
    if head == "Throttling":
        return ErrorCode.RATE_LIMITED, True
    if "InvalidApiKey" in parts or "AccessDenied" in parts:
        return ErrorCode.AUTH, False
    if "Arrearage" in parts:
        return ErrorCode.RATE_LIMITED, False  # the account is overdue: waiting will not help
    if "DataInspectionFailed" in parts:
        return ErrorCode.INVALID_REQUEST, False  # the content filter refused the input or output
    if "InvalidParameter" in parts:
        lowered = message.lower()
        if any(marker in lowered for marker in CONTEXT_LENGTH_MARKERS):
            return ErrorCode.CONTEXT_TOO_LONG, False
        return ErrorCode.INVALID_REQUEST, False
    if head in _RETRYABLE_HEADS:
        return ErrorCode.PROVIDER_ERROR, True
    return None


def _status_of(comments: tuple[str, ...]) -> int | None:
    for comment in comments:
        if comment.startswith("HTTP_STATUS/"):
            try:
                return int(comment[12:])
            except ValueError:
                return None
    return None
