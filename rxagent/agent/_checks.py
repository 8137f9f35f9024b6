"""Checking what `ReActAgent` is built with, where it is built, so mistakes fail early."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from rxagent._validate import check_int
from rxagent.agent._support import check_output_type
from rxagent.agent.conditions import StopCondition, has_step_limit, max_steps
from rxagent.context import Principal
from rxagent.errors import ConfigurationError, InvalidInputError
from rxagent.guards import Guard, GuardPipeline
from rxagent.interceptors import Prices
from rxagent.messages import ImageBlock, ToolResultBlock, ToolUseBlock
from rxagent.output import OUTPUT_STRATEGIES

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rxagent.agent._agent import ReActAgent
    from rxagent.context import RunContext
    from rxagent.messages import Block, Msg

__all__ = [
    "check_agent_arguments",
    "check_context_window",
    "check_input_history",
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
    record_changes: object = False,
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
    if not isinstance(record_changes, bool):
        raise ConfigurationError(
            f"record_changes must be True or False, got {type(record_changes).__name__}"
        )


def check_guards(guards: object) -> GuardPipeline | None:
    """The agent's guard pipeline (None without stages).

    Raises:
        ConfigurationError: Not a list of `Guard` stages or a `GuardPipeline`, or a stage whose
            action does not fit its targets.
    """
    if guards is None or isinstance(guards, GuardPipeline):
        return GuardPipeline.of(guards)
    if isinstance(guards, Guard) or not isinstance(guards, Iterable):
        raise ConfigurationError(
            f"guards= takes a list of guard stages or a GuardPipeline, got {guards!r}; "
            "write guards=[...]"
        )
    try:
        return GuardPipeline.of(list(guards))
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"guards=: {exc}") from None


def check_principal(principal: object) -> Principal | None:
    """The run's caller, checked.

    Raises:
        ConfigurationError: Not a `Principal`.
    """
    if principal is None or isinstance(principal, Principal):
        return principal
    raise ConfigurationError(
        f"principal= takes an rxagent.Principal, got {type(principal).__name__}; write "
        "principal=Principal(user_id=...)"
    )


def check_interceptors(interceptors: object) -> tuple[object, ...]:
    """A call's own interceptors, as a tuple (each is checked when the run's chain is made).

    Raises:
        ConfigurationError: Not a list of interceptors.
    """
    if interceptors is None:
        return ()
    if isinstance(interceptors, str | bytes) or not isinstance(interceptors, Iterable):
        raise ConfigurationError(
            f"interceptors= takes a list of interceptors, got {interceptors!r}; write "
            "interceptors=[...]"
        )
    if hasattr(interceptors, "around_model_call") or hasattr(interceptors, "around_tool_call"):
        raise ConfigurationError(
            f"interceptors= takes a list of interceptors, got one: {interceptors!r}; write "
            "interceptors=[...]"
        )
    return tuple(interceptors)


def check_prices(prices: object) -> Prices:
    """The agent's price table: the shipped one for None.

    Raises:
        ConfigurationError: Not a `Prices`.
    """
    if prices is None:
        return Prices.default()
    if isinstance(prices, Prices):
        return prices
    raise ConfigurationError(
        f"prices= takes an rxagent.interceptors.Prices, got {type(prices).__name__}; write "
        "prices=Prices.default().with_prices({...})"
    )


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
    """The agent's stop conditions: `stop_when`, with `max_steps(max_iters)` unless it has one.

    Raises:
        ConfigurationError: An item that is not callable.
    """
    conditions = list(stop_when)
    if not has_step_limit(conditions):
        conditions.append(max_steps(max_iters))
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


def check_input_history(messages: Sequence[Msg]) -> None:
    """Refuse a run input whose messages would save unpaired or unreadable history.

    Memory is always pair-consistent, so every tool result in an input must answer a call of
    an earlier assistant message of the same input, and every such call needs its result
    before the next message that is not a tool message. Tool-call arguments must be JSON, and
    image data valid base64.

    Raises:
        InvalidInputError: Naming the message (`input[2]`) and what to fix.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.agent._checks import check_input_history
        from rxagent.errors import InvalidInputError

        try:
            check_input_history([Msg.user("hi"), Msg(role="tool", content="")])
        except InvalidInputError as exc:
            assert str(exc).startswith("input[1]: a tool message must hold tool_result blocks")
        ```
    """
    pending: dict[str, int] = {}  # an unanswered call id -> the index of its message
    for i, message in enumerate(messages):
        where = f"input[{i}]"
        blocks = () if isinstance(message.content, str) else message.content
        if message.role == "tool":
            results = [b for b in blocks if isinstance(b, ToolResultBlock)]
            if not results:
                raise InvalidInputError(
                    f"{where}: a tool message must hold tool_result blocks that answer the "
                    "tool calls of an assistant message before it in the input"
                )
            for result in results:
                if pending.pop(result.id, None) is None:
                    raise InvalidInputError(
                        f"{where}: the tool result {result.id!r} answers no tool call of an "
                        "assistant message before it in the input; send the call with it, "
                        "or leave the result out"
                    )
        elif pending:
            raise _unanswered(pending)
        if message.role == "assistant":
            pending = {call.id: i for call in message.tool_calls}
        _check_blocks(blocks, where)
    if pending:
        raise _unanswered(pending)


def _unanswered(pending: dict[str, int]) -> InvalidInputError:
    return InvalidInputError(
        f"input[{min(pending.values())}]: the tool calls {', '.join(map(repr, sorted(pending)))} "
        "have no tool message with their results after them; add the results, or leave the "
        "calls out"
    )


def _check_blocks(blocks: Sequence[Block], where: str) -> None:
    for block in blocks:
        if isinstance(block, ToolUseBlock):
            try:
                json.dumps(block.input, allow_nan=False)
                if block.raw_input is not None:
                    raise ValueError("raw_input holds arguments that did not parse")
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(
                    f"{where}: the arguments of tool call {block.id!r} are not JSON ({exc}); "
                    "pass a JSON object of the arguments"
                ) from None
        elif isinstance(block, ImageBlock) and block.data is not None:
            try:
                base64.b64decode(block.data, validate=True)
            except (binascii.Error, ValueError):
                raise InvalidInputError(
                    f"{where}: the image data is not valid base64; encode the image bytes "
                    "with base64 (standard alphabet, padded)"
                ) from None
        elif isinstance(block, ToolResultBlock) and not isinstance(block.output, str):
            _check_blocks(block.output, where)
