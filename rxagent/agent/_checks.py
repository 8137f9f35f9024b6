"""Checking what `ReActAgent` is built with, where it is built, so mistakes fail early."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rxagent._validate import check_int
from rxagent.agent._support import check_output_type
from rxagent.agent.conditions import MaxSteps, StopCondition
from rxagent.errors import ConfigurationError
from rxagent.output import OUTPUT_STRATEGIES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from rxagent.agent._agent import ReActAgent
    from rxagent.agent.context import RunContext

__all__ = [
    "check_agent_arguments",
    "check_context_window",
    "check_strategy",
    "stop_conditions",
]


def check_agent_arguments(
    *,
    name: object,
    sys_prompt: object,
    max_iters: int,
    max_tool_calls: int | None,
    max_concurrent_runs: int | None,
    interrupt_tools: object,
    checkpoint: object,
    max_output_retries: int,
    output_strategy: object,
    output_type: object,
) -> None:
    """Refuse a bad argument of `ReActAgent(...)`, naming it and what it takes.

    Raises:
        ConfigurationError: A bad name, system prompt, limit or policy.
        InvalidInputError: An `output_type` that cannot be validated from JSON.
    """
    if not isinstance(name, str) or not name:
        raise ConfigurationError(
            "ReActAgent needs a non-empty str name, e.g. ReActAgent('helper', ...)"
        )
    if not (isinstance(sys_prompt, str) or callable(sys_prompt)):
        raise ConfigurationError(
            "sys_prompt must be a str or a function of the RunContext returning a str"
        )
    check_int("max_iters", max_iters, optional=False)
    check_int("max_tool_calls", max_tool_calls, optional=True, minimum=0)
    check_int("max_concurrent_runs", max_concurrent_runs, optional=True)
    if interrupt_tools not in ("cancel", "wait"):
        raise ConfigurationError("interrupt_tools must be 'cancel' or 'wait'")
    if checkpoint not in ("auto", "step", "run"):
        raise ConfigurationError(f"checkpoint must be 'auto', 'step' or 'run', got {checkpoint!r}")
    check_int("max_output_retries", max_output_retries, optional=False, minimum=0)
    check_strategy(output_strategy)
    check_output_type(output_type)


def check_strategy(strategy: object) -> None:
    """Refuse an unknown `output_strategy` (of the agent, or of one call).

    Raises:
        ConfigurationError: Naming the strategies there are.
    """
    if strategy not in OUTPUT_STRATEGIES:
        raise ConfigurationError(
            f"output_strategy must be one of {', '.join(map(repr, OUTPUT_STRATEGIES))}, "
            f"got {strategy!r}"
        )


def stop_conditions(
    stop_when: Iterable[StopCondition | Callable[[RunContext], bool]], max_iters: int
) -> tuple[StopCondition | Callable[[RunContext], bool], ...]:
    """The agent's stop conditions: `stop_when`, with `MaxSteps(max_iters)` unless it has one.

    Raises:
        ConfigurationError: An item that is not callable.
    """
    conditions = list(stop_when)
    if not any(isinstance(c, MaxSteps) for c in conditions):
        conditions.append(MaxSteps(max_iters))
    for condition in conditions:
        if not callable(condition):
            raise ConfigurationError(
                f"stop_when items must be callables of the RunContext, got {condition!r}"
            )
    return tuple(conditions)


def check_context_window(agent: ReActAgent) -> None:
    """Register the default `ContextWindow` unless one was given, and check its budget."""
    from rxagent.hooks.builtin import ContextWindow

    window = next((h for h in agent.hooks if isinstance(h, ContextWindow)), None)
    if window is None:
        window = ContextWindow()
        agent.hooks.add(window)
    prompt = agent.sys_prompt if isinstance(agent.sys_prompt, str) else ""
    window.check_room(
        agent.model, agent.options, system_prompt=prompt, tools=agent.toolkit.schemas()
    )
