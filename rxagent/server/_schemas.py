"""The JSON bodies of the server's routes, as pydantic models (they also feed the OpenAPI)."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from rxagent.messages import Msg
from rxagent.models.base import Usage
from rxagent.result import AgentResult
from rxagent.state import AgentState

__all__ = [
    "SESSION_ID_PATTERN",
    "AgentInfo",
    "AgentList",
    "ApprovalRequest",
    "ApprovalResponse",
    "ErrorBody",
    "ErrorDetail",
    "InterruptRequest",
    "InterruptResponse",
    "RunInput",
    "RunRequest",
    "SessionInfo",
    "SessionList",
    "SessionSummary",
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


class SessionSummary(BaseModel):
    """One session in `GET /v1/sessions`: enough to list it, without its messages."""

    model_config = _FROZEN

    session_id: str
    """The session."""
    agent: str
    """The agent's route name."""
    version: int
    """The state's optimistic version (every save increments it)."""
    running: bool
    """Whether a run is in progress, in this process or another."""
    messages: int
    """How many messages its memory holds."""
    runs: int
    """How many runs it has had."""
    pending_approvals: tuple[str, ...]
    """The approval ids its parked tool calls wait for."""
    usage: Usage
    """What its runs cost, summed."""
    title: str
    """The start of its first user message (at most 80 characters), or empty."""


class SessionList(BaseModel):
    """The answer of `GET /v1/sessions?agent=NAME`: the caller's sessions of that agent.

    Example:
        ```python
        from rxagent.server import SessionList

        listed = SessionList.model_validate({"agent": "bot", "sessions": [], "truncated": False})
        assert listed.sessions == ()
        ```
    """

    model_config = _FROZEN

    agent: str
    """The agent's route name."""
    sessions: tuple[SessionSummary, ...]
    """The sessions, by id."""
    truncated: bool
    """True when the store holds more sessions than `limit` (ask for a larger `limit`)."""


class AgentInfo(BaseModel):
    """One agent (or team) the server serves, as `GET /v1/agents` describes it."""

    model_config = _FROZEN

    name: str
    """The route name (`/v1/agents/{name}/...`)."""
    kind: Literal["agent", "team"]
    """A `ReActAgent`, or a team of `rxagent.multiagent`."""
    description: str
    """The agent's system prompt, or the team's kind and members."""
    model: str | None
    """The model's name (None for a team)."""
    tools: tuple[str, ...]
    """The names of its tools."""
    members: tuple[str, ...]
    """A team's members, in order (empty for an agent)."""
    record_changes: bool
    """Whether its events carry `changes` (what each hook changed)."""


class AgentList(BaseModel):
    """The answer of `GET /v1/agents`.

    Example:
        ```python
        from rxagent.server import AgentList

        listed = AgentList.model_validate({"agents": []})
        assert listed.agents == ()
        ```
    """

    model_config = _FROZEN

    agents: tuple[AgentInfo, ...]
    """The agents, by route name."""


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
