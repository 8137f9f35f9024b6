"""OpenAI error bodies → typed `AgentRunError`s: HTTP failures and in-body or in-stream errors."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import ErrorCode
from rxagent.formatters.base import provider_error, status_error

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rxagent.errors import AgentRunError

__all__ = ["error_from_status", "stream_error"]

# The provider's error code (or type) → ErrorCode, whatever the HTTP status.
_CODES: Final[Mapping[str, ErrorCode]] = {
    "context_length_exceeded": ErrorCode.CONTEXT_TOO_LONG,
    "string_above_max_length": ErrorCode.CONTEXT_TOO_LONG,
    "insufficient_quota": ErrorCode.RATE_LIMITED,
    "rate_limit_exceeded": ErrorCode.RATE_LIMITED,
    "invalid_api_key": ErrorCode.AUTH,
    "authentication_error": ErrorCode.AUTH,
    "permission_error": ErrorCode.AUTH,
    "account_deactivated": ErrorCode.AUTH,
    "model_not_found": ErrorCode.INVALID_REQUEST,
}
# Error types that say enough on their own when there is no status (an error inside a stream).
_STREAM_TYPES: Final[Mapping[str, ErrorCode]] = {
    "invalid_request_error": ErrorCode.INVALID_REQUEST,
    "BadRequestError": ErrorCode.INVALID_REQUEST,
    "server_error": ErrorCode.PROVIDER_ERROR,
    "requests": ErrorCode.RATE_LIMITED,
    "tokens": ErrorCode.RATE_LIMITED,
}
_RECOVERABLE_IN_STREAM: Final = frozenset((ErrorCode.PROVIDER_ERROR, ErrorCode.RATE_LIMITED))
_CONTEXT_PHRASES: Final = ("maximum context length", "context length exceeded")


def error_from_status(
    provider: str, status: int, body: bytes, headers: Mapping[str, str]
) -> AgentRunError:
    """Classify an HTTP error (see `OpenAIFormatter.error_from_response`)."""
    try:
        decoded = json.loads(body)
    except ValueError:
        decoded = None
    code, provider_code, message = _classify(decoded, status)
    err = status_error(
        provider,
        status,
        body,
        message=message,
        provider_code=provider_code,
        code=code,
        headers=headers,
    )
    if provider_code == "insufficient_quota":
        err.recoverable = False  # waiting does not refill a quota
    return err


def stream_error(provider: str, payload: Any, data: str) -> AgentRunError:
    """The typed error of an error object with no HTTP status: a stream event or a 200 body."""
    code, provider_code, message = _classify(payload, None)
    code = code or ErrorCode.PROVIDER_ERROR
    recoverable = code in _RECOVERABLE_IN_STREAM and provider_code != "insufficient_quota"
    return provider_error(
        code,
        message or "an error event in the stream",
        provider=provider,
        provider_code=provider_code,
        body=data,
        recoverable=recoverable,
    )


def _classify(payload: Any, status: int | None) -> tuple[ErrorCode | None, str | None, str | None]:
    """Return (code or None for "by status", the provider's code, the message) of an error body."""
    err = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(payload, dict) and payload.get("object") == "error":  # vLLM
        err = payload
    if isinstance(err, str):
        return None, None, err
    if not isinstance(err, dict):
        return None, None, None
    message = err.get("message")
    message = message if isinstance(message, str) else None
    raw_code, raw_type = err.get("code"), err.get("type")
    code_text = raw_code if isinstance(raw_code, str) and raw_code else None
    type_text = raw_type if isinstance(raw_type, str) and raw_type else None
    code = _CODES.get(code_text or "") or _CODES.get(type_text or "")
    if code is None and status in (None, 400) and message:
        lowered = message.lower()
        if any(phrase in lowered for phrase in _CONTEXT_PHRASES):
            code = ErrorCode.CONTEXT_TOO_LONG
    if code is None and status is None:
        code = _STREAM_TYPES.get(type_text or "")
    return code, code_text or type_text, message
