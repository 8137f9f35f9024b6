"""An aiohttp server for rxagent agents: JSON and SSE runs, sessions, metrics, OpenAPI.

`create_app(agents, store=..., auth=...)` returns an `aiohttp.web.Application`;
`run_server(...)` serves it until SIGINT / SIGTERM and shuts down gracefully. Routes:

| route | what |
|---|---|
| `POST /v1/agents/{name}/runs` | run to the end; the `AgentResult` as JSON |
| `POST /v1/agents/{name}/runs:stream` | the run's events as SSE (`event: <type>`) |
| `POST /v1/chat/completions` | OpenAI-compatible (`model` names an agent) |
| `POST /v1/agents/{name}/ui` | the Vercel AI SDK UI message stream |
| `GET`/`DELETE /v1/sessions/{id}` | show / delete a session |
| `POST /v1/sessions/{id}/interrupt` | stop its run, in this process or another |
| `POST /v1/sessions/{id}/approvals/{approval_id}` | approve or reject a parked tool call |
| `GET /healthz`, `/metrics`, `/openapi.json` | liveness, Prometheus, the OpenAPI 3.1 document |
| `GET /` | a small HTML page that links the routes (no auth, nothing secret) |

Every error is the typed JSON body, a request aiohttp's parser refuses included (`AppRunner`),
and while `run_server` serves, log records pass through `RedactingFilter`: no API key is echoed
or logged.

Example:
    ```python
    import asyncio
    from aiohttp.test_utils import TestClient, TestServer
    from rxagent import ReActAgent
    from rxagent.server import create_app
    from rxagent.testing import ScriptedModel

    async def main() -> None:
        agent = ReActAgent("bot", "", ScriptedModel(["Hi!"]))
        async with TestClient(TestServer(create_app(agent, auth=["k1"]))) as client:
            denied = await client.post("/v1/agents/bot/runs", json={"input": "hi"})
            assert denied.status == 401
            ok = await client.post(
                "/v1/agents/bot/runs", json={"input": "hi"}, headers={"Authorization": "Bearer k1"}
            )
            assert (await ok.json())["reply"]["content"][0]["text"] == "Hi!"

    asyncio.run(main())
    ```
"""

from rxagent.context import Principal as Principal
from rxagent.errors import ApiError as ApiError
from rxagent.server._app import create_app as create_app
from rxagent.server._auth import ANONYMOUS as ANONYMOUS
from rxagent.server._auth import AuthSpec as AuthSpec
from rxagent.server._auth import key_id_of as key_id_of
from rxagent.server._control import Interruptible as Interruptible
from rxagent.server._control import serve_control as serve_control
from rxagent.server._core import OWNER_KEY as OWNER_KEY
from rxagent.server._core import SERVER_KEY as SERVER_KEY
from rxagent.server._core import RunHandle as RunHandle
from rxagent.server._core import ServerConfig as ServerConfig
from rxagent.server._core import ServerContext as ServerContext
from rxagent.server._logs import RedactingFilter as RedactingFilter
from rxagent.server._logs import install_log_redaction as install_log_redaction
from rxagent.server._logs import redact_secrets as redact_secrets
from rxagent.server._metrics import ServerMetrics as ServerMetrics
from rxagent.server._openapi import openapi_document as openapi_document
from rxagent.server._playground import PLAYGROUND_CSP as PLAYGROUND_CSP
from rxagent.server._runner import AppRunner as AppRunner
from rxagent.server._runner import JsonErrorHandler as JsonErrorHandler
from rxagent.server._runs import sse_frame as sse_frame
from rxagent.server._schemas import AgentInfo as AgentInfo
from rxagent.server._schemas import AgentList as AgentList
from rxagent.server._schemas import ApprovalRequest as ApprovalRequest
from rxagent.server._schemas import ApprovalResponse as ApprovalResponse
from rxagent.server._schemas import ErrorBody as ErrorBody
from rxagent.server._schemas import InterruptRequest as InterruptRequest
from rxagent.server._schemas import InterruptResponse as InterruptResponse
from rxagent.server._schemas import RunRequest as RunRequest
from rxagent.server._schemas import SessionInfo as SessionInfo
from rxagent.server._schemas import SessionList as SessionList
from rxagent.server._schemas import SessionSummary as SessionSummary
from rxagent.server._serve import run_server as run_server
from rxagent.server._serve import serve as serve

__all__ = [
    "ANONYMOUS",
    "OWNER_KEY",
    "PLAYGROUND_CSP",
    "SERVER_KEY",
    "AgentInfo",
    "AgentList",
    "ApiError",
    "AppRunner",
    "ApprovalRequest",
    "ApprovalResponse",
    "AuthSpec",
    "ErrorBody",
    "InterruptRequest",
    "InterruptResponse",
    "Interruptible",
    "JsonErrorHandler",
    "Principal",
    "RedactingFilter",
    "RunHandle",
    "RunRequest",
    "ServerConfig",
    "ServerContext",
    "ServerMetrics",
    "SessionInfo",
    "SessionList",
    "SessionSummary",
    "create_app",
    "install_log_redaction",
    "key_id_of",
    "openapi_document",
    "redact_secrets",
    "run_server",
    "serve",
    "serve_control",
    "sse_frame",
]
