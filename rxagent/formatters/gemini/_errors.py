"""Error classification: Google API error objects, from a failed response or inside a stream."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import AgentRunError, ErrorCode
from rxagent.formatters.base import status_error

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["GRPC_HTTP_STATUS", "STATUS_CODES", "api_error", "error_from_status"]

STATUS_CODES: Final[Mapping[str, ErrorCode]] = {
    "RESOURCE_EXHAUSTED": ErrorCode.RATE_LIMITED,
    "UNAUTHENTICATED": ErrorCode.AUTH,
    "PERMISSION_DENIED": ErrorCode.AUTH,
    "INVALID_ARGUMENT": ErrorCode.INVALID_REQUEST,
    "FAILED_PRECONDITION": ErrorCode.INVALID_REQUEST,
    "NOT_FOUND": ErrorCode.INVALID_REQUEST,
    "OUT_OF_RANGE": ErrorCode.INVALID_REQUEST,
    "ALREADY_EXISTS": ErrorCode.INVALID_REQUEST,
    "UNIMPLEMENTED": ErrorCode.INVALID_REQUEST,
    "UNAVAILABLE": ErrorCode.PROVIDER_ERROR,
    "INTERNAL": ErrorCode.PROVIDER_ERROR,
    "DEADLINE_EXCEEDED": ErrorCode.PROVIDER_ERROR,
    "ABORTED": ErrorCode.PROVIDER_ERROR,
    "UNKNOWN": ErrorCode.PROVIDER_ERROR,
    "CANCELLED": ErrorCode.PROVIDER_ERROR,
    "DATA_LOSS": ErrorCode.PROVIDER_ERROR,
}
"""The gRPC `status` of a Google API error → `ErrorCode` (the HTTP status decides otherwise)."""

GRPC_HTTP_STATUS: Final[Mapping[str, int]] = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INTERNAL": 500,
    "DATA_LOSS": 500,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
"""The HTTP status Google sends with each gRPC status (used when an error has no `code`)."""

_CONTEXT_MARKER: Final = re.compile(
    r"input token count.*exceeds the maximum number of tokens allowed", re.IGNORECASE | re.DOTALL
)
_AUTH_REASONS: Final = frozenset(("API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED"))
_DURATION: Final = re.compile(r"\s*(\d+(?:\.\d*)?)s\s*")


def error_from_status(
    provider: str, status: int, body: bytes, headers: Mapping[str, str]
) -> AgentRunError:
    """Classify a failed HTTP response (see `GeminiFormatter.error_from_response`)."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, list) and data:  # the non-SSE stream endpoint wraps it in an array
        data = data[0]
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return status_error(provider, status, body, headers=headers)
    return api_error(provider, error, body, status=status, headers=headers)


def api_error(
    provider: str,
    error: Mapping[str, Any],
    body: bytes | str,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> AgentRunError:
    """Classify one Google API error object (`{"code", "message", "status", "details"}`)."""
    grpc = error.get("status")
    grpc = grpc if isinstance(grpc, str) else None
    message = error.get("message")
    message = message if isinstance(message, str) and message else None
    if status is None:
        code_field = error.get("code")
        status = (
            code_field
            if isinstance(code_field, int) and not isinstance(code_field, bool)
            else GRPC_HTTP_STATUS.get(grpc or "", 500)
        )
    code = STATUS_CODES.get(grpc or "")
    reason, delay = _details(error.get("details"))
    if grpc == "INVALID_ARGUMENT" and message and _CONTEXT_MARKER.search(message):
        code = ErrorCode.CONTEXT_TOO_LONG
    elif reason in _AUTH_REASONS:
        code = ErrorCode.AUTH
    err = status_error(
        provider,
        status,
        body,
        message=message,
        provider_code=grpc or reason,
        code=code,
        headers=headers,
    )
    if err.retry_after is None and delay is not None:
        err.retry_after = delay
    return err


def _details(details: Any) -> tuple[str | None, float | None]:
    """The `ErrorInfo` reason and the `RetryInfo` delay (seconds) of an error's details."""
    reason: str | None = None
    delay: float | None = None
    if not isinstance(details, list):
        return reason, delay
    for item in details:
        if not isinstance(item, dict):
            continue
        kind = item.get("@type")
        if not isinstance(kind, str):
            continue
        if kind.endswith("google.rpc.ErrorInfo") and isinstance(item.get("reason"), str):
            reason = item["reason"]
        elif kind.endswith("google.rpc.RetryInfo") and isinstance(item.get("retryDelay"), str):
            match = _DURATION.fullmatch(item["retryDelay"])
            if match is not None:
                delay = float(match.group(1))
    return reason, delay
