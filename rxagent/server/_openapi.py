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

__all__ = [
    "AGENT_NAME",
    "AGENT_NAME_PATTERN",
    "ERROR_RESPONSES",
    "SSE_EVENT",
    "openapi_document",
]

_REF: Final = "#/components/schemas/{model}"

AGENT_NAME_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
"""What an agent's route name looks like (the document lists the served ones as an `enum`)."""

AGENT_NAME: Final[dict[str, Any]] = {"$ref": "#/components/schemas/AgentName"}
"""The schema of a value that names a served agent: a path `{name}`, `?agent=`, a `model`."""

SSE_EVENT: Final[dict[str, Any]] = {
    "type": "object",
    "description": "One Server-Sent Event, as a client parses it: its `event` type and `data`.",
    "required": ["data"],
    "properties": {
        "event": {"type": "string"},
        "data": {"type": "string"},
        "id": {"type": "string"},
        "retry": {"type": "integer"},
    },
}
"""The schema of one event of a `text/event-stream` answer (OpenAPI 3.1: `schema` is per event)."""

_BASE64: Final = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
_BLOCKS: Final = (
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "ImageBlock",
    "ToolResultBlock-Input",
    "ToolResultBlock-Output",
)

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
    503: "The session store cannot be reached (`store_unavailable`, with `Retry-After`), or the "
    "server is shutting down (`shutting_down`).",
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
    schemas: dict[str, Any] = top["$defs"]
    _precise_inputs(schemas)
    return schemas, refs


def _precise_inputs(schemas: dict[str, Any]) -> None:
    """Make the run input's schema say exactly what a run accepts, and add the examples.

    - A block's `type` tags it, so it is required (pydantic lists it as optional: it has a
      default).
    - `RunInput`: a text, one message or a list of messages of the roles system, user and
      assistant, with text, thinking and image blocks; an image has a `url`, or base64 `data`
      with its `media_type`. Tool calls and their results are accepted too when each result
      answers a call of an earlier message of the same input; no schema can say that, so the
      document leaves them out (the description says it).
    """
    for name in _BLOCKS:
        block = schemas[name]
        block["required"] = ["type", *[r for r in block.get("required", []) if r != "type"]]
    image = copy.deepcopy(schemas["ImageBlock"])
    image["properties"]["data"] = {
        "anyOf": [{"type": "string", "pattern": _BASE64}, {"type": "null"}],
        "default": None,
        "description": "Base64 image bytes (standard alphabet, padded).",
    }
    image["anyOf"] = [
        {"required": ["url"], "properties": {"url": {"type": "string"}, "data": {"type": "null"}}},
        {
            "required": ["data", "media_type"],
            "properties": {"data": {"type": "string"}, "media_type": {"type": "string"}},
        },
    ]
    image["title"] = "InputImageBlock"
    image["description"] = "An image: its `url`, or base64 `data` with its `media_type`."
    schemas["InputImageBlock"] = image
    kinds = {"text": "TextBlock", "thinking": "ThinkingBlock", "image": "InputImageBlock"}
    message = copy.deepcopy(schemas["Msg-Input"])
    message["title"] = "InputMessage"
    message["description"] = (
        "One message of a run's input. A list of messages may also hold an assistant message "
        "with `tool_use` blocks followed by `tool` messages whose `tool_result` blocks answer "
        "each call (the document's schema leaves those out: it cannot say which call a result "
        "answers)."
    )
    message["properties"]["role"] = {"enum": ["system", "user", "assistant"], "type": "string"}
    message["properties"]["content"] = {
        "anyOf": [
            {"type": "string"},
            {
                "type": "array",
                "items": {
                    "oneOf": [{"$ref": _REF.format(model=m)} for m in kinds.values()],
                    "discriminator": {
                        "propertyName": "type",
                        "mapping": {k: _REF.format(model=m) for k, m in kinds.items()},
                    },
                },
            },
        ]
    }
    message["examples"] = [{"role": "user", "content": "What is 2 + 3?"}]
    schemas["InputMessage"] = message
    ref = {"$ref": _REF.format(model="InputMessage")}
    schemas["RunInput"] = {
        "title": "RunInput",
        "description": "A user text, one message, or a non-empty list of messages.",
        "oneOf": [
            {"type": "string"},
            ref,
            {"type": "array", "items": ref, "minItems": 1},
        ],
        "examples": ["Hello!"],
    }
    run = schemas["RunRequest"]
    run["properties"]["input"] = {"$ref": _REF.format(model="RunInput")}
    run["examples"] = [{"input": "Hello!"}, {"input": "Go on.", "session_id": "chat-1"}]
    schemas["ApprovalRequest"]["examples"] = [
        {"approved": True},
        {"approved": False, "reason": "Not this amount."},
    ]
    schemas["InterruptRequest"]["examples"] = [{"reason": "Stopped by the user."}]


def _json(ref: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ref}}}


def _errors(refs: Mapping[str, Any], statuses: Iterable[int]) -> dict[str, Any]:
    answers = {str(s): _json(refs["ErrorBody"], ERROR_RESPONSES[s]) for s in statuses}
    for status in ("429", "503"):
        if status in answers:
            answers[status]["headers"] = {"Retry-After": _RETRY_AFTER}
    return answers


_RETRY_AFTER: Final[dict[str, Any]] = {
    "description": "Seconds to wait before trying again (`shutting_down` has none).",
    "schema": {"type": "string", "pattern": "^[0-9]+$"},
}

_SESSION_HEADER: Final[dict[str, Any]] = {
    "description": "The run's session.",
    "required": True,
    "schema": {"type": "string", "pattern": SESSION_ID_PATTERN},
}

_SESSION_ID: Final[dict[str, Any]] = {
    "name": "session_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": SESSION_ID_PATTERN},
}


def _params(*names: str, several_agents: bool = False) -> list[dict[str, Any]]:
    known = {
        "name": {"name": "name", "in": "path", "required": True, "schema": AGENT_NAME},
        "session_id": _SESSION_ID,
        "approval_id": {
            "name": "approval_id",
            "in": "path",
            "required": True,
            "description": "An id of the session's `pending_approvals`.",
            "schema": {"type": "string", "minLength": 1},
        },
        "agent": {
            "name": "agent",
            "in": "query",
            "required": False,
            "description": "The agent's name, when several agents have a session with this id.",
            "schema": AGENT_NAME,
        },
        "list_agent": {
            "name": "agent",
            "in": "query",
            "required": several_agents,
            "description": "The agent whose sessions to list (optional when one agent is served).",
            "schema": AGENT_NAME,
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


def _session_links(session_id: str, agent: str) -> dict[str, Any]:
    """Links from an answer that names a session to the routes that take it."""
    parameters = {"session_id": session_id, "agent": agent}
    return {
        "GetSession": {"operationId": "getSession", "parameters": parameters},
        "DeleteSession": {"operationId": "deleteSession", "parameters": parameters},
        "InterruptSession": {"operationId": "interruptSession", "parameters": parameters},
        "ListSessions": {"operationId": "listSessions", "parameters": {"agent": agent}},
    }


def _approval_links(session_id: str, approval_id: str, agent: str) -> dict[str, Any]:
    """Links from an answer that names a parked approval to the routes that decide it."""
    parameters = {"session_id": session_id, "approval_id": approval_id, "agent": agent}
    return {
        "DecideApproval": {
            "operationId": "decideApproval",
            "parameters": parameters,
            "requestBody": {"approved": True},
        },
        "DecideApprovalStream": {
            "operationId": "decideApprovalStream",
            "parameters": parameters,
            "requestBody": {"approved": False, "reason": "Not now."},
        },
    }


def _sse(description: str, refs: Mapping[str, Any], statuses: Iterable[int]) -> dict[str, Any]:
    return {
        "200": {
            "description": description,
            "headers": {"X-Session-Id": _SESSION_HEADER},
            "content": {"text/event-stream": {"schema": SSE_EVENT}},
            "links": _session_links("$response.header.X-Session-Id", "$request.path.name"),
        },
        **_errors(refs, statuses),
    }


_RUN_ERRORS: Final = (400, 401, 404, 409, 413, 415, 422, 429, 503)


def _core_paths(refs: Mapping[str, Any], several_agents: bool) -> dict[str, Any]:
    run_body = {"required": True, "content": {"application/json": {"schema": refs["RunRequest"]}}}
    session = _params("session_id", "agent")
    decision_body = {
        "required": True,
        "content": {"application/json": {"schema": refs["ApprovalRequest"]}},
    }
    run_result = _json(refs["AgentResult"], "The run's result (with `session_id`).")
    run_result["headers"] = {"X-Session-Id": _SESSION_HEADER}
    run_result["links"] = {
        **_session_links("$response.body#/session_id", "$request.path.name"),
        **_approval_links(
            "$response.body#/session_id",
            "$response.body#/pending_approvals/0",
            "$request.path.name",
        ),
    }
    listed = _json(refs["SessionList"], "The sessions, by id.")
    listed["links"] = {
        **_session_links("$response.body#/sessions/0/session_id", "$response.body#/agent"),
        **_approval_links(
            "$response.body#/sessions/0/session_id",
            "$response.body#/sessions/0/pending_approvals/0",
            "$response.body#/agent",
        ),
    }
    del listed["links"]["ListSessions"]
    decided = _json(refs["ApprovalResponse"], "The decision (and resumed result).")
    decided["links"] = {
        "GetSession": {
            "operationId": "getSession",
            "parameters": {"session_id": "$response.body#/session_id"},
        }
    }
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
                    },
                    **_errors(refs, (400,)),
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
                "responses": {"200": run_result, **_errors(refs, _RUN_ERRORS)},
            }
        },
        "/v1/agents/{name}/runs:stream": {
            "post": {
                "operationId": "runStream",
                "summary": "Run an agent, streaming its events as SSE",
                "parameters": _params("name"),
                "requestBody": run_body,
                "responses": _sse(
                    "One SSE frame per event (`event: <type>`, `data: <event JSON>`), ending "
                    "with `post_call`.",
                    refs,
                    _RUN_ERRORS,
                ),
            }
        },
        "/v1/sessions": {
            "get": {
                "operationId": "listSessions",
                "summary": "The caller's sessions of an agent",
                "parameters": _params("list_agent", "limit", several_agents=several_agents),
                "responses": {"200": listed, **_errors(refs, (400, 401, 404, 422, 503))},
            }
        },
        "/v1/sessions/{session_id}": {
            "get": {
                "operationId": "getSession",
                "summary": "Show a session's saved state",
                "parameters": session,
                "responses": {
                    "200": _json(refs["SessionInfo"], "The session."),
                    **_errors(refs, (400, 401, 404, 409, 422, 503)),
                },
            },
            "delete": {
                "operationId": "deleteSession",
                "summary": "Delete a session",
                "parameters": session,
                "responses": {
                    "200": _json(_DELETED, 'Deleted: `{"deleted": true, "session_id": ...}`.'),
                    **_errors(refs, (400, 401, 404, 409, 422, 503)),
                },
            },
        },
        "/v1/sessions/{session_id}/interrupt": {
            "post": {
                "operationId": "interruptSession",
                "summary": "Interrupt the session's run, wherever it runs",
                "description": "A session with no run in progress is a 409 `not_running`.",
                "parameters": session,
                "requestBody": {
                    "required": False,
                    "content": {"application/json": {"schema": refs["InterruptRequest"]}},
                },
                "responses": {
                    "202": _json(refs["InterruptResponse"], "The run was asked to stop."),
                    **_errors(refs, (400, 401, 404, 409, 413, 415, 422, 503)),
                },
            }
        },
        "/v1/sessions/{session_id}/approvals/{approval_id}": {
            "post": {
                "operationId": "decideApproval",
                "summary": "Approve or reject a parked tool call",
                "parameters": [*_params("session_id", "approval_id"), *_params("agent")],
                "requestBody": decision_body,
                "responses": {"200": decided, **_errors(refs, _RUN_ERRORS)},
            }
        },
        "/v1/sessions/{session_id}/approvals/{approval_id}:stream": {
            "post": {
                "operationId": "decideApprovalStream",
                "summary": "Approve or reject a parked tool call; stream the resumed run as SSE",
                "parameters": [*_params("session_id", "approval_id"), *_params("agent")],
                "requestBody": decision_body,
                "responses": {
                    "200": {
                        "description": "The resumed run's events, one SSE frame each, ending "
                        "with `post_call`; no frame while other approvals of the batch wait.",
                        "headers": {"X-Session-Id": _SESSION_HEADER},
                        "content": {"text/event-stream": {"schema": SSE_EVENT}},
                    },
                    **_errors(refs, _RUN_ERRORS),
                },
            }
        },
        "/healthz": {
            "get": {
                "operationId": "health",
                "summary": "Liveness",
                "security": [],
                "responses": {
                    "200": _json(_HEALTH, '`{"status": "ok"}`.'),
                    "503": _json(_HEALTH, '`{"status": "shutting_down"}`.'),
                    **_errors(refs, (400,)),
                },
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


_DELETED: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["deleted", "session_id"],
    "properties": {"deleted": {"const": True}, "session_id": {"type": "string"}},
}
_HEALTH: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["status"],
    "properties": {"status": {"enum": ["ok", "shutting_down"]}},
}


def openapi_document(
    extra_paths: Mapping[str, Any] | None = None,
    *,
    version: str = "",
    auth: bool = True,
    agents: Iterable[str] = (),
) -> dict[str, Any]:
    """Return the OpenAPI 3.1 document of the JSON routes, plus `extra_paths`.

    Args:
        extra_paths: More path items (from the OpenAI and UI route modules).
        version: The API version shown in `info`.
        auth: Whether the routes need a bearer token.
        agents: The served route names: every value that names an agent (a path `{name}`,
            `?agent=`, a Chat Completions `model`) is then one of them (an `enum`), and
            `GET /v1/sessions` requires `?agent=` when there are several. Without them, a name
            is any string of letters, digits and `._-`.

    Example:
        ```python
        from rxagent.server import openapi_document

        doc = openapi_document(version="1.0", agents=["bot", "desk"])
        assert doc["openapi"].startswith("3.1")
        assert "/v1/agents/{name}/runs" in doc["paths"]
        assert doc["components"]["schemas"]["AgentName"]["enum"] == ["bot", "desk"]
        ```
    """
    schemas, refs = _components()
    names = sorted(set(agents))
    agent_name: dict[str, Any] = {"type": "string", "description": "A served agent's route name."}
    if names:
        agent_name["enum"] = names
    else:
        agent_name["pattern"] = AGENT_NAME_PATTERN
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "rxagent server", "version": version or "0"},
        "paths": {**_core_paths(refs, len(names) > 1), **dict(extra_paths or {})},
        "components": {
            "schemas": {**copy.deepcopy(schemas), "AgentName": agent_name},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
    if auth:
        document["security"] = [{"bearer": []}]
    return document
