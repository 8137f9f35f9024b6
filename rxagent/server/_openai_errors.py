"""OpenAI-style errors: the request checks' helpers, the error body, run failures as statuses.

| status | `type` | when |
|---|---|---|
| 400 | `invalid_request_error` | an unsupported parameter, a rejected or too long input |
| 401 | `invalid_request_error` (`code: invalid_api_key`) | a missing or wrong bearer token |
| 404 | `invalid_request_error` (`code: model_not_found`) | `model` names no agent |
| 409, 413, 422 | `invalid_request_error` | a busy session, a body over the limit, a bad parameter |
| 429 | `rate_limit_error` | too many runs for the key, or the agent's provider is rate limited |
| 5xx | `server_error` | the run failed on the server (its provider, a tool, a timeout) |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import ApiError, ErrorCode

if TYPE_CHECKING:
    from rxagent.result import ErrorInfo

__all__ = [
    "error_body",
    "invalid",
    "missing",
    "read_object",
    "read_text",
    "run_error",
    "type_name",
    "unsupported",
    "wrong_type",
]

_CODES: Final[Mapping[str, str]] = {
    "agent_not_found": "model_not_found",
    "unauthorized": "invalid_api_key",
}
"""The server's own error codes that OpenAI spells differently."""

_RUN_STATUS: Final[Mapping[ErrorCode, tuple[int, str]]] = {
    ErrorCode.RATE_LIMITED: (429, "rate_limit_exceeded"),
    ErrorCode.CONTEXT_TOO_LONG: (400, "context_length_exceeded"),
    ErrorCode.INVALID_REQUEST: (400, "invalid_request"),
    ErrorCode.GUARD_REJECTED: (400, "guard_rejected"),
    ErrorCode.HOOK_REJECTED: (400, "hook_rejected"),
    ErrorCode.USAGE_LIMIT: (400, "usage_limit"),
    ErrorCode.AUTH: (502, "provider_auth"),
    ErrorCode.PROVIDER_ERROR: (502, "provider_error"),
    ErrorCode.TIMEOUT: (504, "timeout"),
    ErrorCode.CANCELLED: (503, "cancelled"),
}
"""A failed run's status and OpenAI `code`; other failures are 500 with the lowercased code."""


def invalid(param: str, message: str, code: str = "invalid_value") -> ApiError:
    """A 422 for a parameter of the wrong type or value."""
    return ApiError(422, code, message, field=param)


def unsupported(param: str, message: str) -> ApiError:
    """A 400 for a valid OpenAI parameter this server cannot honour."""
    return ApiError(400, "unsupported_parameter", message, field=param)


def type_name(value: object) -> str:
    """A JSON value's type, as an error message says it ("an array", "null")."""
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return names.get(type(value), type(value).__name__)


def wrong_type(param: str, expected: str, value: object) -> ApiError:
    """A 422 `invalid_type`."""
    return invalid(
        param,
        f"Invalid type for '{param}': expected {expected}, but got {type_name(value)} instead.",
        "invalid_type",
    )


def missing(param: str) -> ApiError:
    """A 422 `missing_required_parameter`."""
    return invalid(param, f"Missing required parameter: '{param}'.", "missing_required_parameter")


def read_text(
    item: Mapping[str, Any], key: str, param: str, *, required: bool = True
) -> str | None:
    """`item[key]` as a string (None when absent and not required); 422 otherwise."""
    value = item.get(key)
    if value is None:
        if required:
            raise missing(f"{param}.{key}")
        return None
    if not isinstance(value, str):
        raise wrong_type(f"{param}.{key}", "a string", value)
    return value


def read_object(value: object, param: str) -> Mapping[str, Any]:
    """`value` as a JSON object; 422 otherwise."""
    if not isinstance(value, Mapping):
        raise wrong_type(param, "an object", value)
    return value


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def error_body(error: ApiError) -> dict[str, Any]:
    """OpenAI's error body for `error`: `{"error": {"message", "type", "param", "code"}}`.

    Example:
        ```python
        from rxagent.errors import ApiError
        from rxagent.server._openai_errors import error_body

        body = error_body(ApiError(404, "agent_not_found", "no agent 'x'", field="model"))
        assert body == {"error": {"message": "no agent 'x'", "type": "invalid_request_error",
                                  "param": "model", "code": "model_not_found"}}
        ```
    """
    return {
        "error": {
            "message": error.message,
            "type": _error_type(error.status),
            "param": error.field,
            "code": _CODES.get(error.code, error.code),
        }
    }


def run_error(error: ErrorInfo, agent: str) -> ApiError:
    """A failed run as an `ApiError`: its status and code from the run's `ErrorCode`.

    Example:
        ```python
        from rxagent.errors import ErrorCode
        from rxagent.result import ErrorInfo
        from rxagent.server._openai_errors import run_error

        failed = ErrorInfo(code=ErrorCode.RATE_LIMITED, message="slow down", source="model")
        err = run_error(failed, "helper")
        assert (err.status, err.code) == (429, "rate_limit_exceeded")
        assert err.message.startswith("The agent 'helper' failed (RATE_LIMITED, model): ")
        ```
    """
    status, code = _RUN_STATUS.get(error.code, (500, error.code.lower()))
    message = f"The agent '{agent}' failed ({error.code}, {error.source}): {error.message}"
    return ApiError(status, code, message)
