"""`RunContext`: everything about one run, and `current_run()` to reach it from hooks and tools.

It is core data: tools, hooks and model clients read the current run through this module, and
the agent creates and drives the `RunContext`. How injected values are found by type
(`find_dependency`) lives here too, so `RunContext.dep()` and tool injection share one rule.
"""

from __future__ import annotations

import contextvars
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from rxagent.errors import NoActiveRunError
from rxagent.events import ActingChunkEvent, BaseEvent
from rxagent.messages import Msg, ToolUseBlock, new_id
from rxagent.models.base import ZERO_USAGE, ChatModel, ModelOptions, Usage

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Mapping

__all__ = [
    "ANONYMOUS",
    "NOT_FOUND",
    "Principal",
    "RunContext",
    "current_run",
    "current_run_or_none",
    "find_dependency",
]

T = TypeVar("T")

_CURRENT: Final[contextvars.ContextVar[RunContext | None]] = contextvars.ContextVar(
    "rxagent_current_run", default=None
)


_CURRENT_CALL: Final[contextvars.ContextVar[ToolUseBlock | None]] = contextvars.ContextVar(
    "rxagent_current_tool_call", default=None
)


def current_run() -> RunContext:
    """Return the run that is executing the calling hook, tool or model.

    Raises:
        NoActiveRunError: Outside a run.

    Example:
        ```python
        from rxagent import CustomEvent, current_run, tool


        @tool
        def lookup(key: str) -> str:
            \"\"\"Look a key up.

            Args:
                key: The key.
            \"\"\"
            current_run().emit(CustomEvent, name="lookup", data={"key": key})
            return key.upper()
        ```
    """  # noqa: D214 - the example tool's docstring has its own Args section
    run = _CURRENT.get()
    if run is None:
        raise NoActiveRunError(
            "current_run() was called outside a run; call it from a hook, a tool or a model "
            "while an agent run is executing"
        )
    return run


def current_run_or_none() -> RunContext | None:
    """Return the run executing the caller, or None outside a run.

    Example:
        ```python
        from rxagent.context import current_run_or_none

        assert current_run_or_none() is None  # no run here
        ```
    """
    return _CURRENT.get()


ANONYMOUS: Final = "anonymous"
"""The id of a caller nobody identified."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Principal:
    """Who is calling: the user, the API key they came with, and their roles.

    Pass it with `agent.call(..., principal=Principal(user_id="ann"))`; guards (rate limits per
    user, tool permissions), memory scopes and logs read it as `RunContext.principal`. The
    server fills it from the bearer key (`key_id`, a stable non-secret id of the key) and the
    user header. A run without one gets `Principal()`, the anonymous caller.

    Example:
        ```python
        from rxagent import Principal

        ann = Principal(user_id="ann", roles=frozenset({"admin"}))
        assert ann.id == "ann" and "admin" in ann.roles
        assert Principal(key_id="k_1f2e").id == "key:k_1f2e"
        assert Principal().id == "anonymous"
        ```
    """

    user_id: str | None = None
    """The end user, as your application identifies them; None when not known."""
    key_id: str | None = None
    """The id of the API key the request came with (never the key itself); None outside a
    server."""
    roles: frozenset[str] = frozenset()
    """Roles a `Permission` policy may grant tools to."""

    def __post_init__(self) -> None:
        for name in ("user_id", "key_id"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValueError(
                    f"Principal.{name} must be a non-empty string or None, got {value!r}"
                )
        roles: object = self.roles  # any collection is accepted at run time
        if not isinstance(roles, frozenset):
            if isinstance(roles, str):
                raise TypeError(
                    "Principal.roles must be a collection of role names, not one string; "
                    f"pass roles=frozenset({{{roles!r}}})"
                )
            object.__setattr__(self, "roles", frozenset(roles))  # type: ignore[call-overload]

    @property
    def id(self) -> str:
        """The caller's id: the user id, else `key:<key_id>`, else `"anonymous"`."""
        if self.user_id is not None:
            return self.user_id
        if self.key_id is not None:
            return f"key:{self.key_id}"
        return ANONYMOUS


NOT_FOUND: Final = object()
"""Returned by `find_dependency` when no value fits."""


def find_dependency(key: type[Any], inject: Mapping[type[Any], object]) -> object:
    """Return the injected value for `key`: under `key`, under a subclass of it, or an instance.

    Returns `NOT_FOUND` when none fits.

    Example:
        ```python
        from rxagent.context import NOT_FOUND, find_dependency


        class Database: ...


        class Postgres(Database): ...


        db = Postgres()
        assert find_dependency(Database, {Postgres: db}) is db
        assert find_dependency(Database, {object: db}) is db  # an instance of it
        assert find_dependency(int, {Postgres: db}) is NOT_FOUND
        ```
    """
    if key in inject:
        return inject[key]
    for candidate, value in inject.items():
        if _is_subclass(candidate, key):
            return value
    for value in inject.values():
        try:
            if isinstance(value, key):
                return value
        except TypeError:  # a Protocol that is not runtime-checkable
            continue
    return NOT_FOUND


def _is_subclass(candidate: object, key: type[Any]) -> bool:
    try:
        return isinstance(candidate, type) and issubclass(candidate, key)
    except TypeError:  # a Protocol that is not runtime-checkable
        return False


_NOBODY: Final = Principal()


class RunEngine(Protocol):
    """What a `RunContext` reads from the engine that drives its run (the agent implements it).

    The context is the public view; the engine owns the run's memory, its event queue and its
    interrupt flag, and is their only writer.
    """

    @property
    def memory(self) -> list[Msg]:
        """The session's conversation as it stands."""
        ...

    @property
    def extra(self) -> dict[str, Any]:
        """Hooks' own JSON state, saved with the session."""
        ...

    @property
    def interrupt_requested(self) -> bool:
        """True once the run was asked to stop."""
        ...

    @property
    def key_origin(self) -> str:
        """The id of the run that first saw the tool calls being executed (idempotency)."""
        ...

    def emit(self, event_type: type[BaseEvent], payload: dict[str, Any]) -> None:
        """Queue an event of a hook or tool for delivery (from any thread)."""
        ...

    def call_open(self, call_id: str) -> bool:
        """True while the tool call has had its PreActing but not yet its PostActing."""
        ...

    def request_bound(self, messages: tuple[Msg, ...]) -> int | None:
        """An upper bound on the tokens of `messages` if they are the request the run built."""
        ...

    def forward(self, event: BaseEvent) -> None:
        """Queue an event of a nested run for delivery in this run's stream, as it is."""
        ...

    def add_interrupt_listener(self, listener: Callable[[Msg | None], None]) -> Callable[[], None]:
        """Call `listener` when the run is interrupted; returns the function that removes it."""
        ...

    def stop_after_call(self, call_id: str) -> None:
        """End the run after the tool call `call_id` (as a PostActing hook's `stop=True`)."""
        ...

    def wait_for_approvals(self, call: ToolUseBlock, approval_ids: tuple[str, ...]) -> None:
        """Park the tool call `call` until the approvals (of a nested agent) are decided."""
        ...

    def decisions_for(self, call_id: str) -> tuple[tuple[str, bool, str | None], ...]:
        """The decisions a resumed tool call passes on: (approval id, approved, reason)."""
        ...

    @property
    def gate(self) -> asyncio.Event | None:
        """Cleared while nested runs' events wait for delivery in numbers; they wait on it."""
        ...


class RunContext:
    """The state of one run: who, which session, which step, what it used so far.

    Hooks and tools reach it with `rxagent.current_run()`; a tool can also take it as a
    parameter annotated `RunContext`. Attributes are read-only for users, except `extra`, which
    is saved with the session. The engine that drives the run updates `step`, `usage`,
    `tools_used` and `last_response` as the run goes.

    Attributes:
        agent: The agent's name.
        session_id: The session.
        run_id: This run's id.
        path: Agent names from the outermost agent to this one.
        model: The model this run calls.
        options: The run's base `ModelOptions`.
        deps: Objects injected into tools by type.
        output_type: The requested structured output type, if any.
        output_plan: How the run asks for and reads that output (`rxagent.output.OutputPlan`:
            the strategy chosen and why, the schema sent); None without an output type.
        principal: Who is calling (`Principal()`, the anonymous caller, unless the run was
            given one with `principal=`).
        step: The current ReAct iteration (from 0).
        usage: Usage of this run so far.
        tools_used: Names of the tools that ran so far.
        last_response: The model's latest response, once there is one.
        started_at: `time.perf_counter()` at the start.
    """

    def __init__(
        self,
        *,
        agent: str,
        session_id: str,
        model: ChatModel,
        options: ModelOptions,
        deps: Mapping[type[Any], object],
        output_type: object | None,
        path: tuple[str, ...],
        loop: asyncio.AbstractEventLoop,
        engine: RunEngine,
        output_plan: Any = None,  # an rxagent.output.OutputPlan: output sits above core
        principal: Principal | None = None,
    ) -> None:
        self.agent = agent
        self.session_id = session_id
        self.run_id = new_id()
        self.path = path
        self.model = model
        self.options = options
        self.deps: Mapping[type[Any], object] = deps
        self.output_type = output_type
        self.output_plan = output_plan
        self.principal = principal if principal is not None else _NOBODY
        self.step = 0
        self.usage = ZERO_USAGE  # frozen: shared until the first model call adds to it
        self.tools_used: list[str] = []
        self.started_at = time.perf_counter()
        self.loop = loop
        self.last_response: Msg | None = None
        self._engine = engine

    # -- read-only views -----------------------------------------------------------------------

    @property
    def memory(self) -> tuple[Msg, ...]:
        """The session's conversation as it stands (without the system prompt)."""
        return tuple(self._engine.memory)

    @property
    def extra(self) -> dict[str, Any]:
        """Hooks' own JSON state, saved with the session (`AgentState.extra`)."""
        return self._engine.extra

    @property
    def interrupted(self) -> bool:
        """True once the run has been asked to stop (interrupt or timeout)."""
        return self._engine.interrupt_requested

    @property
    def elapsed_s(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self.started_at

    def request_bound(self, messages: tuple[Msg, ...]) -> int | None:
        """An upper bound on the tokens of `messages`, when they are this step's request.

        The run keeps the bound of its memory up to date as it grows, so a trimming hook can
        tell a request that fits without counting a token. None when `messages` is not the
        tuple the run built for the current step (a hook before changed it): count it then.

        Example:
            ```python
            from rxagent import PreReasoningEvent, current_run, hook


            @hook(PreReasoningEvent)
            def report(event: PreReasoningEvent) -> None:
                bound = current_run().request_bound(event.messages)
                print("at most", bound, "tokens" if bound is not None else "unknown")
            ```
        """
        return self._engine.request_bound(messages)

    def dep(self, kind: type[T]) -> T:
        """Return the injected dependency of type `kind` (or a subclass).

        Raises:
            LookupError: When no such dependency was passed with `deps=`.
        """
        found = find_dependency(kind, self.deps)  # the rule tools are injected by
        if found is NOT_FOUND:
            raise LookupError(
                f"no dependency of type {kind.__name__} in this run; pass it with "
                f"agent.call(..., deps=[{kind.__name__}(...)])"
            )
        return found  # type: ignore[return-value]

    # -- emitting --------------------------------------------------------------------------------

    def emit(self, event_type: type[BaseEvent], **payload: Any) -> None:
        """Emit an event of your own into this run's stream.

        The framework fills the common fields (`run_id`, `seq`, ...). The event is delivered
        after the event being dispatched now (if any), in emission order, and it goes through
        hooks like any other event. Safe to call from a tool running in a worker thread.

        Example:
            ```python
            from rxagent import CustomEvent, PostActingEvent, current_run, hook


            @hook(PostActingEvent)
            def audit(event: PostActingEvent) -> None:
                current_run().emit(CustomEvent, name="audit", data=event.tool_call.name)
            ```
        """
        if not (isinstance(event_type, type) and issubclass(event_type, BaseEvent)):
            raise TypeError(f"emit() takes an event class, got {event_type!r}")
        self._engine.emit(event_type, payload)

    def record_usage(self, usage: Usage) -> None:
        """Add the usage of a model call made outside the loop (a hook's own call, say).

        It counts in the run's `AgentResult.usage` and in the session's totals.

        Args:
            usage: What the call cost (at least one request).
        """
        if usage.requests == 0:
            usage = usage + Usage(requests=1)
        self.usage = self.usage + usage

    @property
    def tool_call(self) -> ToolUseBlock | None:
        """The tool call being executed, when called from inside a tool; otherwise None."""
        return _CURRENT_CALL.get()

    @property
    def idempotency_key(self) -> str | None:
        """The idempotency key of the tool call being executed (inside a tool), else None.

        It is `<run id>:<call id>`, where the run is the one whose model made the call, so a
        call parked for approval keeps its key when another run (or process) resumes it. Pass it
        on to services that deduplicate requests, so a side effect is never done twice.

        Example:
            ```python
            from rxagent import current_run, tool


            @tool(needs_approval=True)
            def transfer(amount: int) -> str:
                \"\"\"Transfer money.\"\"\"
                key = current_run().idempotency_key  # e.g. an Idempotency-Key header
                return f"transferred {amount} (request {key})"
            ```
        """
        call = _CURRENT_CALL.get()
        return None if call is None else f"{self._engine.key_origin}:{call.id}"

    def progress(self, chunk: Any) -> None:
        """Report progress of the running tool: emits an `ActingChunkEvent` for its call.

        Args:
            chunk: The progress value (JSON-ready), delivered in order while the tool runs.

        Raises:
            RuntimeError: When called outside a tool.

        Example:
            ```python
            import asyncio
            from rxagent import ActingChunkEvent, ReActAgent, current_run, tool
            from rxagent.testing import ScriptedModel, tool_call


            @tool
            async def crawl(pages: int) -> str:
                \"\"\"Crawl some pages.

                Args:
                    pages: How many.
                \"\"\"
                for page in range(pages):
                    current_run().progress({"page": page + 1, "of": pages})
                    await asyncio.sleep(0)
                return "crawled"


            async def main() -> list[object]:
                agent = ReActAgent("a", "", ScriptedModel([tool_call("crawl", pages=3), "ok"]),
                                   tools=[crawl])
                return [e.chunk async for e in agent.events("go")
                        if isinstance(e, ActingChunkEvent)]


            assert asyncio.run(main()) == [{"page": 1, "of": 3}, {"page": 2, "of": 3},
                                           {"page": 3, "of": 3}]
            ```
        """  # noqa: D214 - the example tool's docstring has its own Args section
        call = _CURRENT_CALL.get()
        if call is None:
            raise RuntimeError("progress() reports on a running tool; call it from inside a tool")
        if not self._engine.call_open(call.id):
            return  # the call has its result already (a sync tool past its timeout): too late
        self.emit(ActingChunkEvent, tool_call_id=call.id, tool_name=call.name, chunk=chunk)

    # -- nested runs -----------------------------------------------------------------------------

    def forward(self, event: BaseEvent) -> None:
        """Deliver an event of a nested run (an agent called as a tool) in this run's stream.

        The event keeps its own `run_id`, `seq` and `path`; it is delivered after the event
        being dispatched now, in order with what this run emits, and the hooks of this run that
        asked for nested events (`nested=True`) see it. `agent.as_tool()` and the orchestrators
        of `rxagent.multiagent` forward their members' events this way.
        """
        self._engine.forward(event)

    def on_interrupt(self, listener: Callable[[Msg | None], None]) -> Callable[[], None]:
        """Call `listener(message)` when this run is interrupted (once, on the loop's thread).

        A tool that runs something of its own (a nested agent) passes the interrupt on with it.

        Returns:
            A function that removes the listener (call it when the work is done).
        """
        return self._engine.add_interrupt_listener(listener)

    def stop_after_tool(self) -> None:
        """End the run after the calling tool's call, as a PostActing hook's `stop=True` does.

        The reply is the last assistant text, or this tool's result when there is none (a
        handoff's target answered).

        Raises:
            RuntimeError: When called outside a tool.
        """
        call = _CURRENT_CALL.get()
        if call is None:
            raise RuntimeError("stop_after_tool() ends the run after a tool; call it in a tool")
        self._engine.stop_after_call(call.id)

    def wait_for_approvals(self, approval_ids: tuple[str, ...]) -> None:
        """Park the calling tool's call until `approval_ids` (a nested agent's) are decided.

        After this tool's batch, the run parks as for a tool that needs approval: each id is
        announced (`ApprovalRequestedEvent`) and is in `result.pending_approvals`. Once all are
        decided (`agent.approve(id)` / `reject`), the call runs again on resume and finds the
        decisions in `approval_decisions`, to pass them on. `as_tool()` does this for you.

        Raises:
            RuntimeError: When called outside a tool.
        """
        call = _CURRENT_CALL.get()
        if call is None:
            raise RuntimeError("wait_for_approvals() parks a tool call; call it in a tool")
        self._engine.wait_for_approvals(call, tuple(approval_ids))

    @property
    def approval_decisions(self) -> tuple[tuple[str, bool, str | None], ...]:
        """The decisions the running tool's call was resumed with (see `wait_for_approvals`).

        Each is `(approval_id, approved, reason)`, in the order they were made; empty for a
        call that is not resuming a nested agent's approvals (or outside a tool).
        """
        call = _CURRENT_CALL.get()
        return () if call is None else self._engine.decisions_for(call.id)

    def __repr__(self) -> str:
        return (
            f"<RunContext agent={self.agent!r} session={self.session_id!r} "
            f"run={self.run_id[:8]} step={self.step}>"
        )
