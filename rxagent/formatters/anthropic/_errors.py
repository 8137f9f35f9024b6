"""Error classification: Anthropic's error object, from a failed response or inside a stream."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import AgentRunError, ErrorCode
from rxagent.formatters.anthropic._constants import PROVIDER
from rxagent.formatters.base import provider_error, status_error

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["error_from_object", "error_from_status"]

# error.type -> (code, recoverable when it arrives inside a stream, where there is no status)
_ERROR_TYPES: Final[dict[str, tuple[ErrorCode, bool]]] = {
    "invalid_request_error": (ErrorCode.INVALID_REQUEST, False),
    "not_found_error": (ErrorCode.INVALID_REQUEST, False),
    "authentication_error": (ErrorCode.AUTH, False),
    "permission_error": (ErrorCode.AUTH, False),
    "billing_error": (ErrorCode.AUTH, False),
    "request_too_large": (ErrorCode.CONTEXT_TOO_LONG, False),
    "rate_limit_error": (ErrorCode.RATE_LIMITED, True),
    "api_error": (ErrorCode.PROVIDER_ERROR, True),
    "timeout_error": (ErrorCode.PROVIDER_ERROR, True),
    "overloaded_error": (ErrorCode.PROVIDER_ERROR, True),
}


def error_from_status(status: int, body: bytes, headers: Mapping[str, str]) -> AgentRunError:
    """Classify a failed response by its status and the `error.type` of its body, if any.

    A body that is not Anthropic's error object is classified by status alone.
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        data = None
    kind, message = _error_fields(data)
    known = _ERROR_TYPES.get(kind) if kind else None
    return status_error(
        PROVIDER,
        status,
        body,
        message=message,
        provider_code=kind,
        code=known[0] if known else None,
        headers=headers,
    )


def error_from_object(obj: Any, raw: str) -> AgentRunError:
    """The typed error of an error object that came without a status: a body or stream event.

    `raw` is the text it was read from, kept on the error. An unknown `error.type` is a
    recoverable `PROVIDER_ERROR`.
    """
    kind, message = _error_fields(obj)
    code, recoverable = _ERROR_TYPES.get(kind or "", (ErrorCode.PROVIDER_ERROR, True))
    return provider_error(
        code,
        message or "error event in the stream",
        provider=PROVIDER,
        provider_code=kind,
        body=raw,
        recoverable=recoverable,
    )


def _error_fields(obj: Any) -> tuple[str | None, str | None]:
    """`error.type` and `error.message` of `{"type": "error", "error": {...}}`.

    Each is None where it is missing or not a string; an empty message is None too.
    """
    error = obj.get("error") if isinstance(obj, dict) else None
    if not isinstance(error, dict):
        return None, None
    kind, message = error.get("type"), error.get("message")
    return (
        kind if isinstance(kind, str) else None,
        message if isinstance(message, str) and message else None,
    )
