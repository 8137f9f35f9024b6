"""`AgentState`: the versioned, serializable state of one session."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from rxagent.errors import SessionOwnerError, StateVersionError
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock
from rxagent.models.base import Usage

__all__ = [
    "OWNER_KEY",
    "SCHEMA_VERSION",
    "AgentState",
    "ParkedBatch",
    "PendingApproval",
    "consistent_state",
    "migrate_state",
    "owned_state",
    "owner_of",
    "pair_tool_calls",
    "register_migration",
]

OWNER_KEY: Final = "rxagent.owner"
"""The `AgentState.extra` key that holds the `key_id` of the API key that created the session."""

SCHEMA_VERSION: Final = 1
"""The `schema_version` this rxagent writes."""


class PendingApproval(BaseModel):
    """A tool call parked until a human approves or rejects it.

    It sits in `AgentState.pending_approvals` while it waits, and in `ParkedBatch.decided` once
    decided, until the rest of its batch is decided too.

    Example:
        ```python
        from rxagent import ToolUseBlock
        from rxagent.state import PendingApproval

        call = ToolUseBlock(id="call_1", name="delete_file", input={"path": "a.txt"})
        waiting = PendingApproval(approval_id="ap_1", tool_call_id="call_1", tool_call=call)
        assert waiting.decision is None and waiting.tool_call.input["path"] == "a.txt"
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    approval_id: str
    """The id to pass to `agent.approve()` / `agent.reject()`."""
    tool_call_id: str
    """The parked call's id."""
    tool_call: ToolUseBlock | None = None
    """The call as shown for approval: its arguments are the ones executed once approved."""
    args_hash: str = ""
    """The SHA-256 of the approved arguments' canonical JSON; a PreActing hook that changes
    them on resume makes the call need approval again."""
    idempotency_key: str = ""
    """The call's idempotency key (`<run id>:<call id>`, the run that parked it): stable across
    park and resume, so a tool can pass it on to make its own side effects idempotent."""
    decision: Literal["approved", "rejected"] | None = None
    """None while it waits; then what the human decided."""
    reason: str | None = None
    """Why it was rejected, when a reason was given."""
    nested: bool = False
    """The call runs an agent (`as_tool()`) whose own call waits for this approval: approved
    or rejected, the call runs again on resume and passes the decision on to that agent."""


class ParkedBatch(BaseModel):
    """An assistant message whose tool calls wait for human approval.

    The message stays out of memory until every call in it is decided, so memory is always
    pair-consistent; then it goes to memory with one result per call, in call order.

    Example:
        ```python
        from rxagent import AgentState, Msg, ToolUseBlock

        call = ToolUseBlock(id="call_1", name="delete_file", input={"path": "a.txt"})
        state = AgentState.model_validate(
            {"memory": [Msg.user("delete a.txt")],
             "parked": {"run_id": "r1", "message": Msg.assistant([call])}}
        )
        assert state.parked is not None and state.parked.message.tool_calls == (call,)
        assert AgentState.model_validate_json(state.model_dump_json()) == state
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    """The run that parked it (the first part of its calls' idempotency keys)."""
    message: Msg
    """The assistant message with the tool calls, as memory will keep it."""
    results: tuple[ToolResultBlock, ...] = ()
    """The results of its calls that are done (they ran before parking, or were refused)."""
    decided: tuple[PendingApproval, ...] = ()
    """Its approvals that are decided, waiting for the others."""
    started: tuple[str, ...] = ()
    """Idempotency keys of approved calls whose execution began on a resume: such a call is
    never started again, even if its result was lost with the process."""
    stop: bool = False
    """A PostActing hook asked to stop after this batch."""


class AgentState(BaseModel):
    """Everything a session needs to continue: memory, tool groups, approvals, counters.

    It is plain JSON data (`model_dump(mode="json")`), versioned by `schema_version`.

    Example:
        ```python
        from rxagent import AgentState, Msg

        state = AgentState(memory=[Msg.user("hi"), Msg.assistant("hello")])
        again = AgentState.model_validate_json(state.model_dump_json())
        assert again == state and again.schema_version == 1
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    """The layout version of this data."""
    memory: tuple[Msg, ...] = ()
    """The conversation, oldest first (no system prompt: that is built per call)."""
    active_groups: tuple[str, ...] | None = None
    """Active tool groups; None means the agent's defaults."""
    pending_approvals: tuple[PendingApproval, ...] = ()
    """Tool calls parked for approval, not decided yet."""
    parked: ParkedBatch | None = None
    """The assistant message whose tool calls wait for approval (out of memory until then)."""
    step: int = 0
    """Reasoning steps taken in this session (the step cursor)."""
    call_counter: int = 0
    """How many tool-call ids (`call_<n>`) the session has assigned."""
    runs: int = 0
    """Completed runs in this session."""
    usage: Usage = Field(default_factory=Usage)
    """Usage totals of the session."""
    extra: dict[str, JsonValue] = Field(default_factory=dict)
    """Hooks' and extensions' own state (JSON values)."""


_Migration = Callable[[dict[str, Any]], dict[str, Any]]
_MIGRATIONS: dict[int, _Migration] = {}


def register_migration(from_version: int) -> Callable[[_Migration], _Migration]:
    """Register a function that upgrades raw state data from `from_version` to the next."""

    def register(fn: _Migration) -> _Migration:
        _MIGRATIONS[from_version] = fn
        return fn

    return register


def migrate_state(data: dict[str, Any] | AgentState) -> AgentState:
    """Validate raw state data, upgrading older schema versions.

    Raises:
        StateVersionError: When the data is from a newer rxagent, or has no usable version.
    """
    if isinstance(data, AgentState):
        data = data.model_dump(mode="json")
    version = data.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise StateVersionError(
            f"state schema_version must be a positive int, got {version!r}; "
            "pass data produced by agent.state_dict()"
        )
    if version > SCHEMA_VERSION:
        raise StateVersionError(
            f"state has schema_version {version}, newer than this rxagent supports "
            f"({SCHEMA_VERSION}); upgrade rxagent to load it"
        )
    while version < SCHEMA_VERSION:
        step = _MIGRATIONS.get(version)
        if step is None:  # pragma: no cover - every released version registers one
            raise StateVersionError(f"no migration from state schema_version {version}")
        data = step(dict(data))
        version += 1
        data["schema_version"] = version
    return AgentState.model_validate(data)


_CALL_ID: Final = re.compile(r"call_(\d+)")


def consistent_state(state: AgentState) -> AgentState:
    """Return `state` ready to run: every tool call paired, and `call_<n>` ids never reused.

    State written by `agent.state_dict()` is consistent already; state built by hand or by
    another program may have an unanswered tool call or a counter behind its ids.

    Example:
        ```python
        from rxagent import AgentState, Msg, ToolUseBlock
        from rxagent.state import consistent_state

        call = ToolUseBlock(id="call_7", name="t")
        raw = AgentState(memory=[Msg.user("hi"), Msg.assistant([call])])
        fixed = consistent_state(raw)
        assert fixed.memory[-1].tool_results[0].id == "call_7" and fixed.call_counter == 7
        ```
    """
    memory = pair_tool_calls(list(state.memory), "not executed: no result in the loaded state")
    parked = (state.parked.message,) if state.parked is not None else ()
    highest = max(
        (
            int(match.group(1))
            for message in (*memory, *parked)
            for call in message.tool_calls
            if (match := _CALL_ID.fullmatch(call.id))
        ),
        default=0,
    )
    if len(memory) == len(state.memory) and highest <= state.call_counter:
        return state
    return state.model_copy(
        update={"memory": tuple(memory), "call_counter": max(state.call_counter, highest)}
    )


def pair_tool_calls(memory: list[Msg], reason: str = "interrupted", start: int = 0) -> list[Msg]:
    """Return memory where every tool call has a result.

    Results missing for a call get a synthetic error result carrying `reason`, placed after the
    last existing result of that assistant message, so memory stays valid for every provider.
    Only `memory[start:]` is examined: a run passes where it began, since what came before was
    paired already, so pairing costs O(this run) rather than O(history).

    Example:
        ```python
        from rxagent import Msg, ToolUseBlock
        from rxagent.state import pair_tool_calls

        memory = [Msg.user("hi"), Msg.assistant([ToolUseBlock(id="c1", name="t")])]
        paired = pair_tool_calls(memory, "interrupted")
        assert paired[-1].tool_results[0].id == "c1" and paired[-1].tool_results[0].is_error
        ```
    """
    head, memory = memory[:start], memory[start:]
    answered = {r.id for m in memory if m.role == "tool" for r in m.tool_results}
    out: list[Msg] = head
    pending: list[Msg] = []
    for message in memory:
        if message.role != "tool" and pending:
            out.extend(pending)
            pending = []
        out.append(message)
        if message.role == "assistant":
            pending = [
                Msg.tool(ToolResultBlock(id=c.id, name=c.name, output=reason, is_error=True))
                for c in message.tool_calls
                if c.id not in answered
            ]
    out.extend(pending)
    return out


def owner_of(state: AgentState) -> str | None:
    """The `key_id` recorded as the session's owner when it was created (None: none recorded).

    Example:
        ```python
        from rxagent.state import OWNER_KEY, AgentState, owner_of

        assert owner_of(AgentState(extra={OWNER_KEY: "k_1"})) == "k_1"
        assert owner_of(AgentState()) is None
        ```
    """
    owner = state.extra.get(OWNER_KEY)
    return owner if isinstance(owner, str) and owner else None


def owned_state(
    state: AgentState | None, key: str | None, *, agent: str, session_id: str
) -> AgentState | None:
    """The state a run of `key` (a `Principal.key_id`) starts from: ownership checked or given.

    A saved `state` is returned when it has no recorded owner, or `key` is None or its owner. A
    new session (`state` None) run under a key starts from a state that records the key as its
    owner, so the owner is written with the session's first save; without a key, None.

    Raises:
        SessionOwnerError: The saved session was created under another key.

    Example:
        ```python
        from rxagent.state import OWNER_KEY, owned_state, owner_of

        new = owned_state(None, "k_1", agent="bot", session_id="s1")
        assert new is not None and owner_of(new) == "k_1"
        assert owned_state(new, "k_1", agent="bot", session_id="s1") is new
        assert owned_state(None, None, agent="bot", session_id="s1") is None
        ```
    """
    if state is None:
        return None if key is None else AgentState(extra={OWNER_KEY: key})
    owner = owner_of(state)
    if key is not None and owner is not None and owner != key:
        raise SessionOwnerError(agent, session_id)
    return state
