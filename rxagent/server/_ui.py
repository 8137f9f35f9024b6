"""`POST /v1/agents/{name}/ui`: a run as the Vercel AI SDK's UI message stream (protocol v1).

The body is the AI SDK `useChat` body or rxagent's run body (`rxagent.server._ui_body`); the
answer is SSE `data: <chunk JSON>` frames (`rxagent.server._ui_chunks` maps the events),
keep-alive comments while the run is quiet, and `data: [DONE]` at the end. The response
header `X-Session-Id` names the session (also in the `start` chunk's `messageMetadata`).

A client that goes away is noticed at the next frame or keep-alive; leaving `open_run` then
cancels the run, which saves consistent state and frees the session.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web

from rxagent.server._core import SERVER_KEY
from rxagent.server._errors import server_failure
from rxagent.server._openapi import AGENT_NAME, ERROR_RESPONSES, SSE_EVENT
from rxagent.server._runs import KEEPALIVE_FRAME
from rxagent.server._schemas import SESSION_ID_PATTERN
from rxagent.server._ui_body import UIRunBody
from rxagent.server._ui_chunks import UIMessageStreamTranslator
from rxagent.server._ui_wire import DONE_FRAME, UI_STREAM_HEADERS, encode_ui_chunks

if TYPE_CHECKING:
    from rxagent.server._core import RunHandle

__all__ = ["UI_PATH", "openapi_paths", "setup_ui_routes", "ui_stream"]

UI_PATH: Final = "/v1/agents/{name}/ui"
"""The route of the UI message stream."""


def setup_ui_routes(app: web.Application) -> None:
    """Add `POST /v1/agents/{name}/ui` to `app` (an application made by `create_app`).

    Example:
        ```python
        from aiohttp import web
        from rxagent.server._ui import UI_PATH, setup_ui_routes

        app = web.Application()
        setup_ui_routes(app)
        assert [r.resource.canonical for r in app.router.routes()] == [UI_PATH]
        ```
    """
    app.router.add_post(UI_PATH, ui_stream)


async def ui_stream(request: web.Request) -> web.StreamResponse:
    """Run the agent and stream the run as one assistant `UIMessage`."""
    ctx = request.app[SERVER_KEY]
    principal = ctx.authenticate(request)
    agent = ctx.agent(request.match_info["name"])
    body = await ctx.parse_body(request, UIRunBody)
    inputs, session_id = body.run_input()
    async with ctx.open_run(request, principal, agent, inputs, session_id) as handle:
        headers = {**UI_STREAM_HEADERS, "X-Session-Id": handle.session_id}
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        try:
            await _send_run(request, response, handle, ctx.config.keepalive_s)
        except ConnectionResetError:  # the client left while we wrote
            return response
    with contextlib.suppress(ConnectionResetError):  # the client left as the run ended
        await response.write_eof()
    return response


async def _send_run(
    request: web.Request, response: web.StreamResponse, handle: RunHandle, keepalive_s: float
) -> None:
    translator = UIMessageStreamTranslator()
    try:
        async for batch in handle.batches(keepalive_s):
            if request.transport is None or request.transport.is_closing():
                return  # the client left: leaving `open_run` cancels the run
            if not batch:
                await response.write(KEEPALIVE_FRAME)
                continue
            chunks = [chunk for event in batch for chunk in translator.translate(event)]
            if chunks:  # one write per batch of events
                await response.write(encode_ui_chunks(chunks))
    except ConnectionResetError:
        raise
    except Exception as exc:  # the run's events broke off: still end the message properly
        failure = server_failure(exc, f"the UI message stream of agent {handle.agent!r}")
        tail = translator.close(failure.message)
        await response.write(encode_ui_chunks(tail) + DONE_FRAME)
        return
    await response.write(encode_ui_chunks(translator.close()) + DONE_FRAME)


def openapi_paths() -> dict[str, Any]:
    """The OpenAPI path item of the UI route (merged into the server's document).

    Example:
        ```python
        from rxagent.server._ui import UI_PATH, openapi_paths

        post = openapi_paths()[UI_PATH]["post"]
        assert "text/event-stream" in post["responses"]["200"]["content"]
        ```
    """
    error = {"$ref": "#/components/schemas/ErrorBody"}
    errors = {
        str(status): {
            "description": ERROR_RESPONSES[status],
            "content": {"application/json": {"schema": error}},
        }
        for status in (400, 401, 404, 409, 413, 415, 422, 429, 503)
    }
    return {
        UI_PATH: {
            "post": {
                "operationId": "uiMessageStream",
                "summary": "Run an agent, streaming a Vercel AI SDK UI message stream (v1)",
                "description": (
                    "The body is the AI SDK `useChat` body (`id` = session id; the last message, "
                    "the user's, is the input) or rxagent's run body (`input`, `session_id`). "
                    "The answer is SSE `data: <UIMessageChunk JSON>` frames ending with "
                    "`data: [DONE]`, with the header `x-vercel-ai-ui-message-stream: v1`."
                ),
                "parameters": [
                    {"name": "name", "in": "path", "required": True, "schema": AGENT_NAME}
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _BODY_SCHEMA}},
                },
                "responses": {
                    "200": {
                        "description": "The run as one assistant UIMessage, chunk by chunk.",
                        "headers": {
                            "x-vercel-ai-ui-message-stream": {
                                "description": "The UI message stream protocol version.",
                                "schema": {"type": "string", "const": "v1"},
                            },
                            "X-Session-Id": {
                                "description": "The run's session.",
                                "required": True,
                                "schema": {"type": "string", "pattern": SESSION_ID_PATTERN},
                            },
                        },
                        "content": {"text/event-stream": {"schema": SSE_EVENT}},
                        "links": {
                            "GetSession": {
                                "operationId": "getSession",
                                "parameters": {
                                    "session_id": "$response.header.X-Session-Id",
                                    "agent": "$request.path.name",
                                },
                            }
                        },
                    },
                    **errors,
                },
            }
        }
    }


_TEXT_PART: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["type", "text"],
    "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
}
_IMAGE_PART: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["type", "mediaType", "url"],
    "properties": {
        "type": {"const": "file"},
        "mediaType": {"type": "string", "pattern": "^image/"},
        "url": {"type": "string", "minLength": 1},
    },
}
_IGNORED_PART: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {
            "anyOf": [
                {"enum": ["step-start", "reasoning", "source-url", "source-document"]},
                {"type": "string", "pattern": "^data-"},
            ]
        }
    },
}

_UI_MESSAGE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "description": (
        "An AI SDK `UIMessage`. The server reads the last message only, which must be the "
        "user's, with a text or image part; the document describes every message that way."
    ),
    "required": ["role", "parts"],
    "properties": {
        "id": {"type": "string"},
        "role": {"const": "user"},
        "parts": {
            "type": "array",
            "items": {"anyOf": [_TEXT_PART, _IMAGE_PART, _IGNORED_PART]},
            "contains": {
                "anyOf": [
                    {
                        **_TEXT_PART,
                        "properties": {
                            "type": {"const": "text"},
                            "text": {"type": "string", "minLength": 1},
                        },
                    },
                    _IMAGE_PART,
                ]
            },
        },
    },
}

_SESSION: Final[dict[str, Any]] = {
    "anyOf": [{"type": "string", "pattern": SESSION_ID_PATTERN}, {"type": "null"}]
}

_BODY_SCHEMA: Final[dict[str, Any]] = {
    "oneOf": [
        {
            "title": "UseChatRequest",
            "description": "The body of the AI SDK's `DefaultChatTransport` (`useChat`).",
            "type": "object",
            "required": ["messages"],
            "properties": {
                "id": {**_SESSION, "description": "The chat id: the session id."},
                "messages": {"type": "array", "items": _UI_MESSAGE_SCHEMA, "minItems": 1},
                "trigger": {"enum": ["submit-message", "regenerate-message", None]},
                "messageId": {"type": ["string", "null"]},
                "session_id": {
                    **_SESSION,
                    "description": "Overrides the chat id as the session id.",
                },
                "input": {"type": "null"},
            },
            "examples": [
                {
                    "id": "chat-1",
                    "trigger": "submit-message",
                    "messages": [
                        {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Hi"}]}
                    ],
                }
            ],
        },
        {
            "title": "UIRunRequest",
            "description": "rxagent's run body, as on `POST /v1/agents/{name}/runs`.",
            "type": "object",
            "required": ["input"],
            "properties": {
                "input": {"$ref": "#/components/schemas/RunInput"},
                "session_id": _SESSION,
                "id": _SESSION,
                "messages": {"type": "null"},
                "trigger": {"enum": ["submit-message", "regenerate-message", None]},
                "messageId": {"type": ["string", "null"]},
            },
            "examples": [{"input": "Hello!"}],
        },
    ]
}
