"""The OpenAPI description of the OpenAI-compatible routes (merged into the server's document)."""

from __future__ import annotations

from typing import Any

from rxagent.server._openapi import AGENT_NAME, SSE_EVENT
from rxagent.server._schemas import SESSION_ID_PATTERN

__all__ = ["openapi_paths"]


def _error_responses(*statuses: int) -> dict[str, Any]:
    reasons = {
        400: "An unsupported parameter (client-side tools, n > 1, ...) or a refused input",
        401: "A missing or wrong bearer token",
        404: "`model` names no agent (`code: model_not_found`)",
        409: "The session named by X-Session-Id already has a run in progress, or a stateless "
        "run parked on a tool approval (`approval_required`: send X-Session-Id)",
        413: "The body is larger than the server's limit",
        415: "The body is not JSON: send `Content-Type: application/json`",
        422: "A parameter of the wrong type or value (`param` names it)",
        429: "Too many runs in progress for this API key, or the agent's provider is rate limited",
        500: "The run failed on the server",
        502: "The agent's model provider failed",
        503: "The server is shutting down",
        504: "The run exceeded its time limit",
    }
    return {
        str(status): {
            "description": reasons[status],
            "content": {"application/json": {"schema": _ERROR}},
        }
        for status in statuses
    }


_ERROR: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type", "param", "code"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}

_BASE64_URL = (
    r"^(?:(?!data:[^,]*;base64,)[\s\S]*|data:[^,]*;base64,"
    r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$"
)
"""An image URL; a base64 data URL holds valid base64."""

_TEXT_PART: dict[str, Any] = {
    "type": "object",
    "required": ["type", "text"],
    "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
}

_IMAGE_PART: dict[str, Any] = {
    "type": "object",
    "required": ["type", "image_url"],
    "properties": {
        "type": {"const": "image_url"},
        "image_url": {
            "type": "object",
            "required": ["url"],
            "properties": {"url": {"type": "string", "pattern": _BASE64_URL}},
        },
    },
}


def _message(roles: list[str], parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["role", "content"],
        "properties": {
            "role": {"enum": roles},
            "content": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "array", "items": parts[0] if len(parts) == 1 else {"anyOf": parts}},
                ]
            },
            "name": {"type": ["string", "null"]},
        },
    }


_USER_MESSAGE: dict[str, Any] = _message(["user"], [_TEXT_PART, _IMAGE_PART])

_MESSAGES: dict[str, Any] = {
    "type": "array",
    "minItems": 1,
    "description": (
        "The conversation, ending with the user's message. Assistant messages, and `tool` "
        "messages that answer an assistant message's `tool_calls`, are accepted too where they "
        "follow one another as OpenAI's API requires; the schema describes system, developer "
        "and user messages only (it cannot say which message is last, or which call a tool "
        "message answers)."
    ),
    "items": {"oneOf": [_message(["system", "developer"], [_TEXT_PART]), _USER_MESSAGE]},
    "contains": {"type": "object", "required": ["role"], "properties": {"role": {"const": "user"}}},
    "examples": [[{"role": "user", "content": "What is 2 + 3?"}]],
}

_RESPONSE_FORMAT: dict[str, Any] = {
    "oneOf": [
        {"type": "null"},
        {
            "type": "object",
            "required": ["type"],
            "properties": {"type": {"enum": ["text", "json_object"]}},
        },
        {
            "type": "object",
            "required": ["type", "json_schema"],
            "properties": {
                "type": {"const": "json_schema"},
                "json_schema": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "schema": {"type": ["object", "null"]},
                    },
                },
            },
        },
    ]
}

_REQUEST: dict[str, Any] = {
    "type": "object",
    "required": ["model", "messages"],
    "additionalProperties": True,
    "properties": {
        "model": {**AGENT_NAME, "description": "The name of one of the server's agents."},
        "messages": _MESSAGES,
        "stream": {"type": ["boolean", "null"]},
        "stream_options": {
            "type": ["object", "null"],
            "properties": {"include_usage": {"type": ["boolean", "null"]}},
        },
        "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
        "max_tokens": {"type": ["integer", "null"], "minimum": 1, "maximum": 2**31 - 1},
        "max_completion_tokens": {"type": ["integer", "null"], "minimum": 1, "maximum": 2**31 - 1},
        "stop": {
            "oneOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}},
                {"type": "null"},
            ]
        },
        "seed": {"type": ["integer", "null"]},
        "response_format": _RESPONSE_FORMAT,
        "n": {"enum": [1, None]},
        "tools": {
            "type": ["array", "null"],
            "maxItems": 0,
            "description": "Refused when not empty.",
        },
        "functions": {
            "type": ["array", "null"],
            "maxItems": 0,
            "description": "Refused when not empty.",
        },
        "tool_choice": {"enum": ["auto", "none", None]},
        "function_call": {"enum": ["auto", "none", None]},
        "logprobs": {"enum": [False, None]},
        "top_logprobs": {"type": "null"},
        "audio": {"type": "null"},
        "modalities": {"anyOf": [{"type": "null"}, {"const": ["text"]}]},
    },
}

_USAGE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompt_tokens": {"type": "integer"},
        "completion_tokens": {"type": "integer"},
        "total_tokens": {"type": "integer"},
        "prompt_tokens_details": {
            "type": "object",
            "properties": {"cached_tokens": {"type": "integer"}},
        },
    },
}

_EXTENSION: dict[str, Any] = {
    "type": "object",
    "description": "rxagent's run details: session, stop reason, tools used, tool progress.",
    "properties": {
        "session_id": {"type": ["string", "null"]},
        "run_id": {"type": "string"},
        "stop_reason": {"type": "string"},
        "tools_used": {"type": "array", "items": {"type": "string"}},
        "pending_approvals": {"type": "array", "items": {"type": "string"}},
        "events": {"type": "array", "items": {"type": "object", "additionalProperties": True}},
    },
}

_COMPLETION: dict[str, Any] = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices"],
    "properties": {
        "id": {"type": "string"},
        "object": {"type": "string", "enum": ["chat.completion"]},
        "created": {"type": "integer"},
        "model": {"type": "string"},
        "choices": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "index": {"type": "integer"},
                    "message": {
                        "type": "object",
                        "properties": {
                            "role": {"type": "string", "enum": ["assistant"]},
                            "content": {"type": "string"},
                            "reasoning_content": {"type": "string"},
                        },
                    },
                    "finish_reason": {
                        "type": "string",
                        "enum": ["stop", "length", "content_filter"],
                    },
                },
            },
        },
        "usage": _USAGE,
        "rxagent": _EXTENSION,
    },
}

_MODEL: dict[str, Any] = {
    "type": "object",
    "required": ["id", "object", "created", "owned_by"],
    "properties": {
        "id": {"type": "string"},
        "object": {"type": "string", "enum": ["model"]},
        "created": {"type": "integer"},
        "owned_by": {"type": "string"},
    },
}

_SESSION_HEADER: dict[str, Any] = {
    "name": "X-Session-Id",
    "in": "header",
    "required": False,
    "description": "Run on this session (created if new) instead of statelessly.",
    "schema": {"type": "string", "pattern": SESSION_ID_PATTERN},
}


def openapi_paths() -> dict[str, Any]:
    """The OpenAPI 3 `paths` of the OpenAI-compatible routes.

    Example:
        ```python
        from rxagent.server._openai import openapi_paths

        paths = openapi_paths()
        assert set(paths) == {"/v1/chat/completions", "/v1/models", "/v1/models/{model}"}
        assert "text/event-stream" in paths["/v1/chat/completions"]["post"]["responses"]["200"][
            "content"]
        ```
    """
    return {
        "/v1/chat/completions": {
            "post": {
                "operationId": "createChatCompletion",
                "summary": "Run an agent, OpenAI Chat Completions style (model = agent name)",
                "tags": ["openai"],
                "parameters": [_SESSION_HEADER],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _REQUEST}},
                },
                "responses": {
                    "200": {
                        "description": "A `chat.completion`, or with `stream: true` an SSE "
                        "stream of `chat.completion.chunk` objects ending with `data: [DONE]`",
                        "content": {
                            "application/json": {"schema": _COMPLETION},
                            "text/event-stream": {"schema": SSE_EVENT},
                        },
                    },
                    **_error_responses(400, 401, 404, 409, 413, 415, 422, 429, 500, 502, 503, 504),
                },
            }
        },
        "/v1/models": {
            "get": {
                "operationId": "listModels",
                "summary": "The agents, as OpenAI model objects",
                "tags": ["openai"],
                "responses": {
                    "200": {
                        "description": "The model list",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "object": {"type": "string", "enum": ["list"]},
                                        "data": {"type": "array", "items": _MODEL},
                                    },
                                }
                            }
                        },
                    },
                    **_error_responses(400, 401),
                },
            }
        },
        "/v1/models/{model}": {
            "get": {
                "operationId": "retrieveModel",
                "summary": "One agent, as an OpenAI model object",
                "tags": ["openai"],
                "parameters": [
                    {"name": "model", "in": "path", "required": True, "schema": AGENT_NAME}
                ],
                "responses": {
                    "200": {
                        "description": "The model",
                        "content": {"application/json": {"schema": _MODEL}},
                    },
                    **_error_responses(400, 401, 404),
                },
            }
        },
    }
