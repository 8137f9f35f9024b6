"""Nested runs: an agent (or a team) run inside a tool call of another run.

`run_nested` subscribes to the child's nested stream and forwards each of its events into the
parent run's stream as it arrives (`RunContext.forward`), so the parent's subscribers see the
child's run, in order, inside the tool call's Pre/PostActing, at `path == (*parent, child)`.
An interrupt of the parent is passed on to the child, which ends at its next checkpoint with
its own PostCall before the tool call closes; a parent that goes away disposes of the child.

`agent_tool` makes the tool of `as_tool()`: one `input` argument, the child's reply (or its
structured output) as the result. It has no side effects, so calling `as_tool()` twice is
harmless.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import BaseModel, TypeAdapter

from rxagent.context import current_run
from rxagent.errors import ConfigurationError
from rxagent.events import BaseEvent, PostCallEvent
from rxagent.tools import Tool, ToolResult

if TYPE_CHECKING:
    from reactivex import Observable

    from rxagent.context import Principal, RunContext
    from rxagent.messages import Msg
    from rxagent.result import AgentResult

__all__ = [
    "AgentLike",
    "Resumable",
    "ToolOutput",
    "agent_tool",
    "child_session",
    "resume_nested",
    "run_nested",
]

ToolOutput: TypeAlias = Literal["text", "output"] | Callable[["AgentResult[Any]"], object]
"""What an agent's tool returns: its reply text, its structured `output`, or a function of its
`AgentResult`."""

_INPUT_DOC: Final = "The request for {name}: everything it needs to know, in one message."


@runtime_checkable
class AgentLike(Protocol):
    """What runs as a member of a team or as a tool: a `ReActAgent`, or any orchestrator.

    Each of them has a `name`, a nested stream (its run inside another run's), `interrupt`,
    approvals, and its sessions' state.
    """

    name: str

    def nested_stream(
        self,
        msg: str | Msg | Sequence[Msg] | None,
        *,
        session_id: str,
        parent_path: tuple[str, ...],
        principal: Principal | None = None,
        gate: asyncio.Event | None = None,
    ) -> Observable[BaseEvent]:
        """The run as a cold Observable whose events have `path == (*parent_path, name)`.

        With `gate`, the run waits while it is clear (the outermost consumer is full).
        """
        ...

    def interrupt(self, session_id: str = "default", msg: str | Msg | None = None) -> bool:
        """Ask the session's running run to stop at its next checkpoint."""
        ...

    async def approve(
        self, approval_id: str, *, session_id: str = "default", principal: Principal | None = None
    ) -> AgentResult[Any] | None:
        """Approve a parked tool call of the session (a team: of the member that waits)."""
        ...

    async def reject(
        self,
        approval_id: str,
        reason: str | None = None,
        *,
        session_id: str = "default",
        principal: Principal | None = None,
    ) -> AgentResult[Any] | None:
        """Reject a parked tool call of the session."""
        ...

    async def state_dict(self, session_id: str = "default") -> dict[str, Any]:
        """The session's state, JSON-ready."""
        ...

    async def load_state_dict(self, state: Any, session_id: str = "default") -> None:
        """Load what `state_dict` returned."""
        ...

    async def aclose(self) -> None:
        """Close the connections it holds (models, toolsets)."""
        ...


@runtime_checkable
class Resumable(AgentLike, Protocol):
    """An agent whose parked calls a caller can decide, nested (a `ReActAgent`, or a team)."""

    def nested_decision_stream(
        self,
        approval_id: str,
        approved: bool,
        reason: str | None,
        *,
        session_id: str,
        parent_path: tuple[str, ...],
        principal: Principal | None = None,
    ) -> Observable[BaseEvent]:
        """Record a decision nested in another run; the batch's last resumes the agent."""
        ...


def child_session(parent_session: str, child: str) -> str:
    """The session of a nested run: `<parent session>/<child name>`.

    Example:
        ```python
        from rxagent.agent import child_session

        assert child_session("s1", "researcher") == "s1/researcher"
        ```
    """
    return f"{parent_session}/{child}"


async def run_nested(
    child: AgentLike,
    msg: str | Msg | Sequence[Msg] | None,
    ctx: RunContext,
    *,
    session_id: str | None = None,
    watch: Callable[[BaseEvent], None] | None = None,
) -> AgentResult[Any]:
    """Run `child` inside the run `ctx`, forwarding its events into that run's stream.

    Args:
        child: The agent or team to run.
        msg: Its input.
        ctx: The parent run (`current_run()` inside a tool).
        session_id: The child's session (default: nested under the parent's).
        watch: Called with each of the child's events before it is forwarded.

    Returns:
        The child's result (its top-level PostCall's).

    Raises:
        SessionBusyError: The child's session is taken elsewhere.
    """
    session = child_session(ctx.session_id, child.name) if session_id is None else session_id
    observable = child.nested_stream(
        msg,
        session_id=session,
        parent_path=ctx.path,
        principal=ctx.principal,
        gate=ctx._engine.gate,  # a slow consumer of the caller slows the child too
    )
    result = await _forward(child, observable, ctx, session, watch)
    if result is None:  # pragma: no cover - a nested run always ends with its PostCall
        raise RuntimeError(f"the nested run of {child.name!r} ended without a PostCall")
    return result


async def resume_nested(
    child: Resumable, decisions: Sequence[tuple[str, bool, str | None]], ctx: RunContext
) -> AgentResult[Any] | None:
    """Pass decisions on to a parked nested agent; the last one's resumed run is forwarded.

    Returns:
        The resumed run's result; None when the decisions did not decide the agent's whole
        batch (it still waits).
    """
    session = child_session(ctx.session_id, child.name)
    result: AgentResult[Any] | None = None
    for approval_id, approved, reason in decisions:
        observable = child.nested_decision_stream(
            approval_id,
            approved,
            reason,
            session_id=session,
            parent_path=ctx.path,
            principal=ctx.principal,
        )
        result = await _forward(child, observable, ctx, session, None)
    return result


async def _forward(
    child: AgentLike,
    observable: Observable[BaseEvent],
    ctx: RunContext,
    session: str,
    watch: Callable[[BaseEvent], None] | None,
) -> AgentResult[Any] | None:
    """Subscribe to a nested run and forward its events; its result, or None without a run."""
    path = (*ctx.path, child.name)
    done: asyncio.Future[AgentResult[Any] | None] = ctx.loop.create_future()
    last: list[AgentResult[Any]] = []

    def on_next(event: BaseEvent) -> None:
        if type(event) is PostCallEvent and event.path == path:
            last.append(event.result)
        if watch is not None:
            watch(event)
        ctx.forward(event)

    def on_error(exc: Exception) -> None:  # a child that cannot start (a busy team session)
        done.set_exception(exc)

    def on_completed() -> None:
        done.set_result(last[-1] if last else None)

    remove = ctx.on_interrupt(lambda reason: _interrupt(child, session, reason))
    subscription = observable.subscribe(on_next, on_error, on_completed)
    try:
        if ctx.interrupted:  # asked to stop before the child started: it stops at once
            _interrupt(child, session, None)
        return await _outlive_interrupt(done, ctx, lambda: _interrupt(child, session, None))
    except asyncio.CancelledError:
        subscription.dispose()  # the parent went away: so does the child, silently
        raise
    finally:
        remove()


def _interrupt(child: AgentLike, session: str, reason: Msg | None) -> None:
    child.interrupt(session, reason)


async def _outlive_interrupt(
    done: asyncio.Future[AgentResult[Any] | None],
    ctx: RunContext,
    interrupt: Callable[[], None],
) -> AgentResult[Any] | None:
    """Wait for the child; an interrupt that cancels the waiting tool lets the child finish.

    The child ends at its next checkpoint with its own PostCall (delivered before the tool
    call's PostActing), then the cancellation goes on. A cancellation that is not an interrupt
    (the parent's subscriber went away) propagates at once.
    """
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        if not ctx.interrupted:
            raise
        interrupt()
        await asyncio.shield(done)  # a second cancellation (disposal) is not absorbed
        raise


def agent_tool(
    child: AgentLike,
    name: str | None = None,
    description: str | None = None,
    *,
    input_type: object = str,
    output: ToolOutput = "text",
) -> Tool[[dict[str, Any]], Any]:
    """Make the tool that runs `child` nested in the calling run (what `as_tool()` returns).

    Raises:
        ConfigurationError: For an `output` that is not "text", "output" or a function, or an
            `input_type` pydantic cannot make a schema of.
    """
    if output not in ("text", "output") and not callable(output):
        raise ConfigurationError(
            f"as_tool(output=...) must be 'text', 'output' or a function of the AgentResult, "
            f"got {output!r}"
        )
    tool_name = name if name is not None else child.name
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(input_type)  # type: ignore[arg-type]
        schema = adapter.json_schema()
    except Exception as exc:
        raise ConfigurationError(
            f"as_tool(input_type=...) must be a type pydantic can validate (str, a model, a "
            f"TypedDict, ...), got {input_type!r}: {exc}"
        ) from exc
    schema.setdefault("description", _INPUT_DOC.format(name=child.name))
    parameters = {"type": "object", "properties": {"input": schema}, "required": ["input"]}
    about = description if description is not None else f"Ask the agent {child.name!r}."

    async def call_child(arguments: dict[str, Any]) -> object:
        value = adapter.validate_python(arguments["input"])
        text = value if isinstance(value, str) else _as_json(value)
        ctx = current_run()
        decisions = ctx.approval_decisions
        if decisions and isinstance(
            child, Resumable
        ):  # resumed: the decisions go to the parked child
            resumed = await resume_nested(child, decisions, ctx)
            if resumed is None:  # pragma: no cover - every approval of the child was decided
                raise RuntimeError(f"{child.name} was not resumed by the decisions")
            result = resumed
        else:
            result = await run_nested(child, text, ctx)
        if result.pending_approvals:  # the child parked: so does its caller, when it can
            waiting = ", ".join(result.pending_approvals)
            if isinstance(child, Resumable):
                ctx.wait_for_approvals(result.pending_approvals)
                return f"{child.name} waits for approval of {waiting}"
            session = child_session(ctx.session_id, child.name)
            return ToolResult(
                f"{child.name} is waiting for a human to approve {waiting} (session "
                f"{session!r}); it goes on once they are decided",
                is_error=True,
            )
        if not result.ok:
            return ToolResult(result.text or f"{child.name} failed", is_error=True)
        if output == "text":
            return result.text
        if output == "output":
            return result.output
        return output(result)

    return Tool.from_schema(tool_name, about, parameters, call_child)


def _as_json(value: object) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(TypeAdapter(type(value)).dump_python(value, mode="json"))
