"""`GuardVerdict`, what one guard stage says about one text."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["GuardVerdict"]


class GuardVerdict(BaseModel):
    """The decision of one guard stage on one text, with the evidence for it.

    Example:
        ```python
        from rxagent.guards import GuardVerdict

        verdict = GuardVerdict(flagged=True, score=0.97, reasons=("role tag",), stage="injection")
        assert verdict.flagged and "role tag" in verdict.reasons
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    flagged: bool
    """Whether the stage judges the text unsafe (its score reached the stage's threshold)."""
    score: float = Field(ge=0.0, le=1.0)
    """How strongly the stage's evidence points to an unsafe text, from 0 to 1."""
    reasons: tuple[str, ...] = ()
    """The features that fired, by name (for example `"override phrase (en)"`)."""
    stage: str
    """The stage that decided (`"injection"` for `InjectionDetector`)."""
