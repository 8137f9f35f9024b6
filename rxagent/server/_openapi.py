"""The OpenAPI 3.1 document of the server's JSON routes, built from the route models."""

from __future__ import annotations

import copy
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from pydantic.json_schema import models_json_schema

from rxagent.result import AgentResult
from rxagent.server._schemas import (
    SESSION_ID_PATTERN,
    AgentList,
    ApprovalRequest,
    ApprovalResponse,
    ErrorBody,
    InterruptRequest,
    InterruptResponse,
    RunRequest,
    SessionInfo,
    SessionList,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["ERROR_RESPONSES", "openapi_document"]

_REF: Final = "#/components/schemas/{model}"

ERROR_RESPONSES: Final[dict[int, str]] = {
    400: "Malformed HTTP (a bad header, a line over 8190 bytes, Content-Length with "
    "Transfer-Encoding), two `Authorization` headers, or a user header that is no user id; "
    "the answer quotes nothing of it.",
    401: "Missing or wrong bearer token.",
    404: "Unknown agent, or no such session for this API key.",
    409: "The session has a run in progress (here or in another process).",
    413: "The body is larger than `max_body_bytes`.",
    422: "Malformed JSON or a wrong schema; `error.field` names the field.",
    415: "The body is not JSON: send `Content-Type: application/json`.",
    429: "This API key holds `max_runs_per_key` runs already (`too_many_runs`), or a rate-limit "
    "guard refused the run (`rate_limited`); wait `Retry-After` seconds.",
}
"""The error answers every route may give, with what they mean."""


@cache
def _components() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    inputs = (RunRequest, InterruptRequest, ApprovalRequest)
    outputs = (
        AgentResult[Any],
        ApprovalResponse,
        SessionInfo,
        SessionList,
        AgentList,
        InterruptResponse,
        ErrorBody,
    )
    keys, top = models_json_schema(
        [(m, "validation") for m in inputs] + [(m, "serialization") for m in outputs],
        ref_template=_REF,
    )
    refs = {m.__name__.split("[")[0]: keys[(m, mode)] for (m, mode) in keys}
    return top["$defs"], refs


def _json(ref: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ref}}}


def _errors(refs: Mapping[str, Any], statuses: Iterable[int]) -> dict[str, Any]:
    return {str(s): _json(refs["ErrorBody"], ERROR_RESPONSES[s]) for s in statuses}


def _params(*names: str) -> list[dict[str, Any]]:
    known = {
        "name": {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
        "session_id": {
            "name": "session_id",
            "in": "path",
            "required": True,
            "schema": {"type": "string", "pattern": SESSION_ID_PATTERN},
        },
        "approval_id": {
            "name": "approval_id",
            "in": "path",
            "required": True,
            "schema": {"type": "string"},
        },
        "agent": {
            "name": "agent",
            "in": "query",
            "required": False,
            "description": "The agent's name, when several agents have a session with this id.",
            "schema": {"type": "string"},
        },
        "list_agent": {
            "name": "agent",
            "in": "query",
            "required": False,
            "description": "The agent whose sessions to list (optional when one agent is served).",
            "schema": {"type": "string"},
        },
        "limit": {
            "name": "limit",
            "in": "query",
            "required": False,
            "description": "The most sessions to list.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
        },
    }
    return [known[n] for n in names]


def _core_paths(refs: Mapping[str, Any]) -> dict[str, Any]:
    run_body = {"required": True, "content": {"application/json": {"schema": refs["RunRequest"]}}}
    session = _params("session_id", "agent")
    stream = {"schema": {"type": "string", "description": "`event: <type>` + `data: <JSON>`"}}
    return {
        "/": {
            "get": {
                "operationId": "home",
                "summary": "A small HTML page that links the routes and the docs",
                "security": [],
                "responses": {
                    "200": {
                        "description": "The page (no scripts, no external assets).",
                        "content": {"text/html": {"schema": {"type": "string"}}},
                    }
                },
            }
        },
        "/v1/agents": {
            "get": {
                "operationId": "listAgents",
                "summary": "The agents and teams the server serves",
                "responses": {
                    "200": _json(refs["AgentList"], "The agents, by route name."),
                    **_errors(refs, (400, 401)),
                },
            }
        },
        "/v1/agents/{name}/runs": {
            "post": {
                "operationId": "run",
                "summary": "Run an agent to the end",
                "parameters": _params("name"),
                "requestBody": run_body,
                "responses": {
                    "200": _json(refs["AgentResult"], "The run's result (with `session_id`)."),
                    **_errors(refs, (400, 401, 404, 409, 413, 415, 422, 429)),
                },
            }
        },
        "/v1/agents/{name}/runs:stream": {
            "post": {
                "operationId": "runStream",
                "summary": "Run an agent, streaming its events as SSE",
                "parameters": _params("name"),
                "requestBody": run_body,
                "responses": {
                    "200": {
                        "description": "One SSE frame per event, ending with `post_call`.",
                        "content": {"text/event-stream": stream},
                    },
                    **_errors(refs, (400, 401, 404, 409, 413, 415, 422, 429)),
                },
            }
        },
        "/v1/sessions": {
            "get": {
                "operationId": "listSessions",
                "summary": "The caller's sessions of an agent",
                "parameters": _params("list_agent", "limit"),
                "responses": {
                    "200": _json(refs["SessionList"], "The sessions, by id."),
                    **_errors(refs, (400, 401, 404, 422)),
                },
            }
        },
        "/v1/sessions/{session_id}": {
            "get": {
                "operationId": "getSession",
                "summary": "Show a session's saved state",
                "parameters": session,
                "responses": {
                    "200": _json(refs["SessionInfo"], "The session."),
                    **_errors(refs, (400, 401, 404)),
                },
            },
            "delete": {
                "operationId": "deleteSession",
                "summary": "Delete a session",
                "parameters": session,
                "responses": {
                    "200": {"description": 'Deleted: `{"deleted": true, "session_id": ...}`.'},
                    **_errors(refs, (400, 401, 404, 409)),
                },
            },
        },
        "/v1/sessions/{session_id}/interrupt": {
            "post": {
                "operationId": "interruptSession",
                "summary": "Interrupt the session's run, wherever it runs",
                "parameters": session,
                "requestBody": {
                    "required": False,
                    "content": {"application/json": {"schema": refs["InterruptRequest"]}},
                },
                "responses": {
                    "202": _json(refs["InterruptResponse"], "The run was asked to stop."),
                    **_errors(refs, (400, 401, 404, 409, 413, 415, 422)),
                },
            }
        },
        "/v1/sessions/{session_id}/approvals/{approval_id}": {
            "post": {
                "operationId": "decideApproval",
                "summary": "Approve or reject a parked tool call",
                "parameters": [*_params("session_id", "approval_id"), *_params("agent")],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": refs["ApprovalRequest"]}},
                },
                "responses": {
                    "200": _json(refs["ApprovalResponse"], "The decision (and resumed result)."),
                    **_errors(refs, (400, 401, 404, 409, 413, 415, 422, 429)),
                },
            }
        },
        "/v1/sessions/{session_id}/approvals/{approval_id}:stream": {
            "post": {
                "operationId": "decideApprovalStream",
                "summary": "Approve or reject a parked tool call; stream the resumed run as SSE",
                "parameters": [*_params("session_id", "approval_id"), *_params("agent")],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": refs["ApprovalRequest"]}},
                },
                "responses": {
                    "200": {
                        "description": "The resumed run's events, one SSE frame each, ending "
                        "with `post_call`; no frame while other approvals of the batch wait.",
                        "content": {"text/event-stream": stream},
                    },
                    **_errors(refs, (400, 401, 404, 409, 413, 415, 422, 429)),
                },
            }
        },
        "/healthz": {
            "get": {
                "operationId": "health",
                "summary": "Liveness",
                "security": [],
                "responses": {"200": {"description": '`{"status": "ok"}`.'}},
            }
        },
        "/metrics": {
            "get": {
                "operationId": "metrics",
                "summary": "Prometheus metrics (text format)",
                "responses": {
                    "200": {
                        "description": "The metrics.",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    **_errors(refs, (400, 401)),
                },
            }
        },
    }


def openapi_document(
    extra_paths: Mapping[str, Any] | None = None, *, version: str = "", auth: bool = True
) -> dict[str, Any]:
    """Return the OpenAPI 3.1 document of the JSON routes, plus `extra_paths`.

    Args:
        extra_paths: More path items (from the OpenAI and UI route modules).
        version: The API version shown in `info`.
        auth: Whether the routes need a bearer token.

    Example:
        ```python
        from rxagent.server import openapi_document

        doc = openapi_document(version="1.0")
        assert doc["openapi"].startswith("3.1")
        assert "/v1/agents/{name}/runs" in doc["paths"]
        ```
    """
    schemas, refs = _components()
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "rxagent server", "version": version or "0"},
        "paths": {**_core_paths(refs), **dict(extra_paths or {})},
        "components": {
            "schemas": copy.deepcopy(schemas),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
    if auth:
        document["security"] = [{"bearer": []}]
    return document
