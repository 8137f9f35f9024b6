"""The JSON bodies of the server's routes, as pydantic models (they also feed the OpenAPI)."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from rxagent.messages import Msg
from rxagent.result import AgentResult
from rxagent.state import AgentState

__all__ = [
    "SESSION_ID_PATTERN",
    "ApprovalRequest",
    "ApprovalResponse",
    "ErrorBody",
    "ErrorDetail",
    "InterruptRequest",
    "InterruptResponse",
    "RunInput",
    "RunRequest",
    "SessionInfo",
]

SESSION_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
"""What a client-chosen session id looks like: 1 to 128 of letters, digits and `._:-`."""


def _input_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "(text)"
    if isinstance(value, dict | Msg):
        return "(message)"
    if isinstance(value, list):
        return "(messages)"
    return None


RunInput = Annotated[
    Annotated[str, Tag("(text)")]
    | Annotated[Msg, Tag("(message)")]
    | Annotated[list[Msg], Tag("(messages)"), Field(min_length=1)],
    Discriminator(
        _input_kind,
        custom_error_type="invalid_input",
        custom_error_message="input must be a string, a message object or a list of messages",
    ),
]
"""A run's input: a user text, one message, or a non-empty list of messages."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class RunRequest(BaseModel):
    """The body of `POST /v1/agents/{name}/runs` and `.../runs:stream`.

    Example:
        ```python
        from rxagent.server import RunRequest

        request = RunRequest.model_validate({"input": "hi", "session_id": "chat-1"})
        assert request.input == "hi" and request.session_id == "chat-1"
        ```
    """

    model_config = _FROZEN

    input: RunInput
    """A user text, a message (`{"role": "user", "content": "..."}`) or a list of messages."""
    session_id: str | None = Field(default=None, pattern=SESSION_ID_PATTERN)
    """The session to continue or create; null starts a fresh one (its id is in the answer)."""


class InterruptRequest(BaseModel):
    """The (optional) body of `POST /v1/sessions/{id}/interrupt`.

    Example:
        ```python
        from rxagent.server import InterruptRequest

        assert InterruptRequest.model_validate_json(b"{}").reason is None
        ```
    """

    model_config = _FROZEN

    reason: str | None = Field(default=None, max_length=10_000)
    """The interrupt message; it becomes the interrupted run's reply."""


class InterruptResponse(BaseModel):
    """The answer of `POST /v1/sessions/{id}/interrupt` (202).

    Example:
        ```python
        from rxagent.server import InterruptResponse

        assert InterruptResponse(where="remote").model_dump() == {
            "interrupted": True, "where": "remote"
        }
        ```
    """

    model_config = _FROZEN

    interrupted: Literal[True] = True
    """Always true: the run was asked to stop."""
    where: Literal["local", "remote"]
    """Whether the run is in this process or was reached through the store's control channel."""


class ApprovalRequest(BaseModel):
    """The body of `POST /v1/sessions/{id}/approvals/{approval_id}`.

    Example:
        ```python
        from rxagent.server import ApprovalRequest

        decision = ApprovalRequest.model_validate({"approved": False, "reason": "too risky"})
        assert not decision.approved and decision.reason == "too risky"
        ```
    """

    model_config = _FROZEN

    approved: bool
    """Whether the parked tool call may run."""
    reason: str | None = Field(default=None, max_length=10_000)
    """Why it was rejected (given to the model as the call's result)."""


class ApprovalResponse(BaseModel):
    """The answer of `POST /v1/sessions/{id}/approvals/{approval_id}`.

    Example:
        ```python
        from rxagent.server import ApprovalResponse

        answer = ApprovalResponse(session_id="s1", approval_id="a1", approved=True, result=None)
        assert answer.model_dump()["result"] is None
        ```
    """

    model_config = _FROZEN

    session_id: str
    """The session."""
    approval_id: str
    """The decided approval."""
    approved: bool
    """The decision."""
    result: AgentResult[Any] | None
    """The resumed run's result once the last approval of its batch is decided, else null."""


class SessionInfo(BaseModel):
    """The answer of `GET /v1/sessions/{id}`.

    Example:
        ```python
        from rxagent import AgentState
        from rxagent.server import SessionInfo

        info = SessionInfo(session_id="s1", agent="bot", version=1, running=False,
                           state=AgentState())
        assert SessionInfo.model_validate_json(info.model_dump_json()) == info
        ```
    """

    model_config = _FROZEN

    session_id: str
    """The session."""
    agent: str
    """The agent's route name."""
    version: int
    """The state's optimistic version (every save increments it)."""
    running: bool
    """Whether a run is in progress, in this process or another."""
    state: AgentState
    """The saved state: memory, pending approvals, counters, usage, extra."""


class ErrorDetail(BaseModel):
    """What went wrong: a stable `code`, a `message`, and the `field` at fault."""

    model_config = _FROZEN

    code: str
    """A stable machine-readable code, e.g. `session_busy`."""
    message: str
    """What happened and how to fix it."""
    field: str | None = None
    """The request field at fault (dotted path), when there is one."""


class ErrorBody(BaseModel):
    """Every error answer: `{"error": {"code", "message", "field"}}`.

    Example:
        ```python
        from rxagent.server import ApiError, ErrorBody

        body = ErrorBody.model_validate(ApiError(409, "session_busy", "busy").body())
        assert body.error.code == "session_busy" and body.error.field is None
        ```
    """

    model_config = _FROZEN

    error: ErrorDetail
    """The error."""
