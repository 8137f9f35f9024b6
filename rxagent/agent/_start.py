"""Starting runs: a call's arguments checked and resolved into a new `Run` of the agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from rxagent.agent._checks import (
    check_input_history,
    check_interceptors,
    check_principal,
    check_strategy,
)
from rxagent.agent._run import Run
from rxagent.agent._support import (
    coerce_deps,
    coerce_input,
    plan_output,
    resolve_model,
    running_loop,
)
from rxagent.errors import ConfigurationError, SessionBusyError
from rxagent.events import BaseEvent, PostCallEvent
from rxagent.guards import GuardPipeline

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Sequence

    from rxagent.agent._agent import AgentInput, ReActAgent
    from rxagent.agent._approval import Decision
    from rxagent.agent._support import Deps
    from rxagent.context import Principal
    from rxagent.models.base import ChatModel, ModelOptions
    from rxagent.output import OutputStrategy
    from rxagent.result import AgentResult

__all__ = ["RESULT_ONLY", "RunArgs", "call_model", "call_then_close", "new_result_run", "new_run"]

RESULT_ONLY: Final[frozenset[type[BaseEvent]]] = frozenset({PostCallEvent})
"""What a caller that reads only the result is delivered."""


@dataclass(frozen=True, slots=True)
class RunArgs:
    """What one call of `stream`, `events` or `call` asks for (checked when the run starts)."""

    msg: AgentInput
    session_id: str
    model: ChatModel | str | None
    options: ModelOptions | None
    deps: Deps
    output_type: object | None
    output_strategy: OutputStrategy | None
    queue: bool
    decision: Decision | None = None
    principal: Principal | None = None
    interceptors: Sequence[object] = ()
    parent_path: tuple[str, ...] = ()  # the run this one is nested in (as_tool, a team)


def new_run(agent: ReActAgent, args: RunArgs, gate: asyncio.Event | None) -> Run:
    """Check a call's arguments and make its run, the session's newest (on the running loop).

    Raises:
        InvalidInputError: A bad input or output type, or a strategy the model cannot do.
        ConfigurationError: A bad session id or strategy, or no running event loop.
        SessionBusyError: The session has a run and `queue` is False.
    """
    inputs = coerce_input(args.msg)
    check_input_history(inputs)
    output_type = agent.output_type if args.output_type is None else args.output_type
    strategy = agent.output_strategy if args.output_strategy is None else args.output_strategy
    check_strategy(strategy)
    session_id = args.session_id
    if not isinstance(session_id, str) or not session_id:
        raise ConfigurationError("session_id must be a non-empty str")
    loop = running_loop()
    if loop is None:
        raise ConfigurationError(
            "subscribe to agent.stream(...) on the event loop's thread (inside a coroutine); "
            "use agent.call_sync(...) from synchronous code"
        )
    tail = agent._runs.tails.get(session_id)
    if tail is not None and not args.queue:
        raise SessionBusyError(agent.name, session_id)
    chat_model = agent.model if args.model is None else call_model(agent, args.model)
    run_options = agent.options.merged(args.options)
    plan = plan_output(
        output_type,
        strategy,
        model=chat_model,
        options=run_options,
        tool_names=agent.toolkit.names(),
        has_tools=(bool(len(agent.toolkit)) or bool(agent.toolkit.toolsets))
        and agent.max_tool_calls != 0,
    )
    run = Run(
        agent,
        inputs,
        session_id=session_id,
        model=chat_model,
        options=run_options,
        deps=_with_guards(coerce_deps(args.deps), agent),
        output_type=output_type,
        output_plan=plan,
        loop=loop,
        gate=gate,
        decision=args.decision,
        principal=check_principal(args.principal),
        interceptors=check_interceptors(args.interceptors),
        parent_path=args.parent_path,
    )
    if tail is not None:
        run.predecessor = tail
    agent._runs.tails[session_id] = run
    return run


def new_result_run(agent: ReActAgent, args: RunArgs) -> Run:
    """`new_run` for a caller that reads only the result (`call()`).

    Its subscriber gets the PostCallEvent alone; every other event is still built for the
    hooks that see it, and an event that no hook sees (a streamed chunk) is not built at all.

    Raises:
        InvalidInputError: As `new_run`.
        ConfigurationError: As `new_run`.
        SessionBusyError: As `new_run`.
    """
    run = new_run(agent, args, None)
    run.events.only = RESULT_ONLY
    return run


def call_model(agent: ReActAgent, model: ChatModel | str) -> ChatModel:
    """A per-call model; a string is resolved once and kept, so its connections are reused."""
    if not isinstance(model, str):
        return resolve_model(model)
    found = agent._models_by_name.get(model)
    if found is None:
        found = agent._models_by_name[model] = resolve_model(model)
    return found


async def call_then_close(agent: ReActAgent, msg: AgentInput, **kwargs: Any) -> AgentResult[Any]:
    """`call()` on a loop that ends with it: the model's connections close with the loop."""
    try:
        return await agent.call(msg, **kwargs)
    finally:
        await agent.aclose()


def _with_guards(deps: dict[type[Any], object], agent: ReActAgent) -> dict[type[Any], object]:
    """The run's deps, holding the agent's `GuardPipeline` unless the caller gave one.

    Hooks that put retrieved text into the request (`Retrieve`, `LongTermMemory`) find the
    agent's guards there, to screen that text as they would a tool result.
    """
    if agent.guards is not None and GuardPipeline not in deps:
        deps[GuardPipeline] = agent.guards
    return deps
