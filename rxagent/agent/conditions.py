"""Composable stop conditions for `ReActAgent(stop_when=[...])`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from rxagent.context import RunContext

__all__ = ["FinalAnswerMarker", "MaxSteps", "StopCondition", "final_answer_marker", "max_steps"]


@runtime_checkable
class StopCondition(Protocol):
    """Decides, after each step, whether the run should end. Any `callable(ctx) -> bool` works."""

    def __call__(self, ctx: RunContext) -> bool:
        """Return True to end the run after the current step."""
        ...


@dataclass(frozen=True, slots=True)
class MaxSteps:
    """End after `n` reasoning steps; one last model call without tools gives the answer.

    `ReActAgent(max_iters=n)` is shorthand for `stop_when=[max_steps(n)]`.
    """

    n: int

    def __post_init__(self) -> None:
        if not isinstance(self.n, int) or isinstance(self.n, bool) or self.n < 1:
            raise ValueError(f"max_steps needs a positive int, got {self.n!r}")

    def __call__(self, ctx: RunContext) -> bool:
        """True once `n` steps have run."""
        return ctx.step + 1 >= self.n


@dataclass(frozen=True, slots=True)
class FinalAnswerMarker:
    """End when the model's text contains `marker`; the reply is the text after it."""

    marker: str

    def __post_init__(self) -> None:
        if not self.marker:
            raise ValueError("final_answer_marker needs a non-empty marker, e.g. 'FINAL_ANSWER:'")

    def answer(self, text: str) -> str | None:
        """Return the text after the marker, or None when the marker is absent."""
        _, found, tail = text.partition(self.marker)
        return tail.strip() if found else None

    def __call__(self, ctx: RunContext) -> bool:
        """True when the last response contains the marker."""
        last = ctx.last_response
        return last is not None and self.marker in last.text


def max_steps(n: int) -> MaxSteps:
    """Stop after `n` reasoning steps (then one last answer without tools).

    Example:
        ```python
        from rxagent import ReActAgent, max_steps
        from rxagent.testing import ScriptedModel

        agent = ReActAgent("a", "", ScriptedModel(["ok"]), stop_when=[max_steps(15)])
        ```
    """
    return MaxSteps(n)


def final_answer_marker(marker: str = "FINAL_ANSWER:") -> FinalAnswerMarker:
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
