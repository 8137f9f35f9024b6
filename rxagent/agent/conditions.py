"""Stop conditions for `ReActAgent(stop_when=[...])`, and the decisions they return.

After each step the run asks its stop conditions, in order. A condition is any
`callable(ctx) -> bool | StopDecision | None`:

- `False` or `None`: go on;
- `True`: end the run after this step (`stop_reason="stop_condition"`);
- a `StopDecision`: end it with that reason and reply, or, with `final_call=True`, after one
  last model call without tools that gives the answer.

The first condition that decides wins. A step whose response has no tool calls ends the run
anyway (`"no_tool_calls"`, the response is the reply); there, only a decision that carries a
`reply` changes how it ends. `max_steps(n)` and `final_answer_marker(marker)` make the two
built-in conditions; `ReActAgent(max_iters=n)` is shorthand for `stop_when=[max_steps(n)]`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rxagent.context import RunContext
    from rxagent.result import StopReason

__all__ = [
    "StopCondition",
    "StopDecision",
    "final_answer_marker",
    "max_steps",
]


@dataclass(frozen=True, slots=True)
class StopDecision:
    """A stop condition's decision to end the run after the current step.

    Attributes:
        reason: The run's `stop_reason`.
        reply: The reply text, instead of the model's last answer (None: keep that).
        final_call: Make one last model call without tools, whose answer is the reply.

    Example:
        ```python
        from rxagent import ReActAgent, RunContext
        from rxagent.agent.conditions import StopDecision
        from rxagent.testing import ScriptedModel, tool_call


        def budget(ctx: RunContext) -> StopDecision | None:
            if ctx.usage.requests >= 2:
                return StopDecision(reply="Out of budget; here is what I have.")
            return None


        model = ScriptedModel([tool_call("nope"), tool_call("nope"), "never asked"])
        agent = ReActAgent("a", "", model, stop_when=[budget])
        result = agent.call_sync("go")
        assert result.stop_reason == "stop_condition"
        assert result.text == "Out of budget; here is what I have."
        ```
    """

    reason: StopReason = "stop_condition"
    reply: str | None = None
    final_call: bool = False


@runtime_checkable
class StopCondition(Protocol):
    """Decides, after each step, whether the run should end. Any such callable works."""

    def __call__(self, ctx: RunContext) -> bool | StopDecision | None:
        """Return True or a `StopDecision` to end the run after the current step."""
        ...


@dataclass(frozen=True, slots=True)
class MaxSteps:
    """The step limit made by `max_steps(n)`."""

    n: int

    def __post_init__(self) -> None:
        if not isinstance(self.n, int) or isinstance(self.n, bool) or self.n < 1:
            raise ValueError(f"max_steps needs a positive int, got {self.n!r}")

    def __call__(self, ctx: RunContext) -> StopDecision | None:
        """After `n` steps: one last model call without tools gives the answer."""
        if ctx.step + 1 >= self.n:
            return _AT_MAX_STEPS
        return None


_AT_MAX_STEPS = StopDecision(reason="max_iters", final_call=True)


@dataclass(frozen=True, slots=True)
class FinalAnswerMarker:
    """The marker condition made by `final_answer_marker(marker)`."""

    marker: str

    def __post_init__(self) -> None:
        if not self.marker:
            raise ValueError("final_answer_marker needs a non-empty marker, e.g. 'FINAL_ANSWER:'")

    def answer(self, text: str) -> str | None:
        """Return the text after the marker, or None when the marker is absent."""
        _, found, tail = text.partition(self.marker)
        return tail.strip() if found else None

    def __call__(self, ctx: RunContext) -> StopDecision | None:
        """End with the text after the marker, when the last response has it."""
        last = ctx.last_response
        answer = self.answer(last.text) if last is not None else None
        return None if answer is None else StopDecision(reason="final_answer", reply=answer)


def max_steps(n: int) -> StopCondition:
    """Stop after `n` reasoning steps (then one last answer without tools).

    Example:
        ```python
        from rxagent import ReActAgent, max_steps
        from rxagent.testing import ScriptedModel

        agent = ReActAgent("a", "", ScriptedModel(["ok"]), stop_when=[max_steps(15)])
        ```
    """
    return MaxSteps(n)


def final_answer_marker(marker: str = "FINAL_ANSWER:") -> StopCondition:
    """Stop when the model writes `marker`; the reply is what follows it.

    Example:
        ```python
        from rxagent import ReActAgent, final_answer_marker
        from rxagent.testing import ScriptedModel

        agent = ReActAgent("a", "", ScriptedModel(["Thinking... FINAL_ANSWER: 42"]),
                           stop_when=[final_answer_marker("FINAL_ANSWER:")])
        assert agent.call_sync("?").text == "42"
        ```
    """
    return FinalAnswerMarker(marker)


def decision_of(value: object) -> StopDecision | None:
    """A condition's return value as a decision: True is the default one, falsy is none."""
    if isinstance(value, StopDecision):
        return value
    return _STOP if value else None


_STOP = StopDecision()


def has_step_limit(conditions: Iterable[object]) -> bool:
    """Whether `conditions` hold a step limit made by `max_steps()`."""
    return any(isinstance(c, MaxSteps) for c in conditions)


def marked_answer(conditions: Iterable[object], text: str) -> str | None:
    """The text after a final-answer marker of `conditions` in `text`, if any."""
    for condition in conditions:
        if isinstance(condition, FinalAnswerMarker):
            answer = condition.answer(text)
            if answer is not None:
                return answer
    return None
