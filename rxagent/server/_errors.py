"""Typed API errors: one exception, and the errors every route shares."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Final

from aiohttp import web

from rxagent.errors import ApiError as ApiError
from rxagent.errors import StoreUnavailableError
from rxagent.models._http import redact_secrets
from rxagent.server._schemas import SESSION_ID_PATTERN

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic import ValidationError

__all__ = [
    "busy",
    "check_json_type",
    "check_session_id",
    "clip",
    "error_response",
    "invalid_body",
    "no_approval",
    "no_session",
    "server_failure",
    "too_large",
]

logger: Final = logging.getLogger("rxagent.server")

_SESSION_ID: Final = re.compile(SESSION_ID_PATTERN)
_CLIP: Final = 80
_JSON_TYPES: Final = frozenset({"application/json", "application/octet-stream"})
"""Bodies read as JSON: JSON, and bytes of no declared kind (how clients send raw bytes)."""
STORE_RETRY_AFTER_S: Final = "5"
"""The `Retry-After` of a 503 `store_unavailable`."""


def error_response(error: ApiError) -> web.Response:
    """`error` as an aiohttp response: its status, its typed JSON body and its headers."""
    return web.json_response(error.body(), status=error.status, headers=error.headers)


def _field_of(loc: Sequence[int | str]) -> str | None:
    """A pydantic error location as a dotted field name, without union-member tags."""
    parts = [str(p) for p in loc if isinstance(p, int) or p.isidentifier()]
    return ".".join(parts) or None


def clip(value: str) -> str:
    """`value` as a message quotes it: its repr, cut short when it is long.

    What looks like a credential (`sk-...`, a bearer token: see `redact_secrets`) is cut out
    first: an error body echoes what the client sent, and error bodies end up in logs.

    Example:
        ```python
        from rxagent.server._errors import clip

        assert clip("chat/sk-proj-0123456789abcdefXYZ") == "'chat/[redacted]'"
        ```
    """
    shown = repr(redact_secrets(value))
    return shown if len(shown) <= _CLIP else shown[: _CLIP - 4] + "...'"


def check_session_id(session_id: str) -> str:
    """Return a session id from a URL or header; 422 `invalid_session_id` when no store takes it."""
    if not _SESSION_ID.fullmatch(session_id):
        raise ApiError(
            422,
            "invalid_session_id",
            f"session id {clip(session_id)} is not valid: use 1 to 128 letters, digits and "
            "'._:-', starting with a letter or a digit",
            field="session_id",
        )
    return session_id


def check_json_type(request: web.Request) -> None:
    """Raise ApiError 415 when the request says its body is something else than JSON."""
    if "Content-Type" not in request.headers:
        return  # an undeclared body is read as JSON
    ctype = request.content_type
    if ctype not in _JSON_TYPES and not ctype.endswith("+json"):
        raise ApiError(
            415,
            "unsupported_media_type",
            f"the body must be JSON, not {ctype!r}: send 'Content-Type: application/json'",
            field="Content-Type",
        )


def server_failure(exc: Exception, where: str) -> ApiError:
    """The typed answer to an unexpected failure in `where`, logged; no detail leaks out.

    A `StoreUnavailableError` is a 503 `store_unavailable` with `Retry-After` (logged as a
    warning: the store's repr, password hidden, and its error); anything else is a 500
    `internal_error`, logged with its traceback.
    """
    if isinstance(exc, StoreUnavailableError):
        logger.warning("%s: %s", where, exc)
        return ApiError(
            503,
            "store_unavailable",
            "the session store is unavailable (its server cannot be reached); retry later",
            headers={"Retry-After": STORE_RETRY_AFTER_S},
        )
    logger.error("unhandled error in %s", where, exc_info=exc)
    return ApiError(500, "internal_error", "the server failed; see its log")


def busy(session_id: str) -> ApiError:
    return ApiError(
        409,
        "session_busy",
        f"session {clip(session_id)} already has a run in progress; wait for it or interrupt it "
        "(POST /v1/sessions/{id}/interrupt)",
        field="session_id",
    )


def too_large(limit: int) -> ApiError:
    return ApiError(
        413, "body_too_large", f"the request body is larger than the limit of {limit} bytes"
    )


def no_session(session_id: str) -> ApiError:
    return ApiError(
        404,
        "session_not_found",
        f"no session {clip(session_id)} for this API key",
        field="session_id",
    )


def invalid_body(exc: ValidationError) -> ApiError:
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    if first["type"] == "json_invalid":
        return ApiError(422, "invalid_json", f"the body is not valid JSON: {first['msg']}")
    if first["type"] == "model_type" and not first["loc"]:
        return ApiError(422, "invalid_body", "the body must be a JSON object")
    described = "; ".join(f"{_field_of(e['loc']) or 'body'}: {e['msg']}" for e in errors[:5])
    return ApiError(422, "invalid_body", described, field=_field_of(first["loc"]))


def no_approval(approval_id: str) -> ApiError:
    """404 `approval_not_found`: the session waits for no such approval."""
    return ApiError(
        404,
        "approval_not_found",
        f"no pending approval {approval_id!r} in this session (unknown, or already decided)",
        field="approval_id",
    )
