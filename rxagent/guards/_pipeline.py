"""`Guard`, the base of every stage, and `GuardPipeline`, which runs stages in order.

A stage looks at one text (the run's input, a tool call's arguments, a tool's result, or the
final reply) and returns a `GuardVerdict`. The pipeline turns each flagged verdict into an
action (the stage's `action_for(target)`): `flag` records it, `reject` refuses, and `redact`,
`quarantine` or `replace` rewrite the text with the stage's `rewrite`. The engine publishes what
the pipeline reports as `GuardEvent`s and applies the outcome; the pipeline itself has no
events and no run, so it can be used (and tested) on its own.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, get_args

from rxagent.context import Principal
from rxagent.events import GuardAction, GuardTarget, GuardVerdict

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from rxagent.context import RunContext
    from rxagent.messages import Msg, ToolUseBlock

__all__ = ["Guard", "GuardContext", "GuardPipeline", "GuardReport", "Screened"]

logger: Final = logging.getLogger("rxagent.guards")

TARGETS: Final[tuple[GuardTarget, ...]] = get_args(GuardTarget)
REWRITES: Final = frozenset({"redact", "quarantine", "replace"})
_ALLOWED: Final[dict[GuardTarget, frozenset[str]]] = {
    "input": frozenset({"reject", "flag"}),
    "tool_call": frozenset({"reject", "flag"}),
    "tool_result": frozenset({"reject", "flag", "quarantine", "replace"}),
    "output": frozenset({"reject", "flag", "redact"}),
    "retrieved": frozenset({"reject", "flag", "quarantine", "replace"}),
}


@dataclass(frozen=True, slots=True)
class GuardContext:
    """What a stage knows about the text it checks: where it comes from, and who is calling.

    Example:
        ```python
        from rxagent import Principal
        from rxagent.guards import GuardContext

        ctx = GuardContext("input", principal=Principal(user_id="ann"), session_id="s1")
        assert ctx.principal.id == "ann" and ctx.run is None
        ```
    """

    target: GuardTarget
    """What the text is: the run's `input`, a `tool_call`'s arguments (as JSON), a
    `tool_result`, or the final reply (`output`)."""
    principal: Principal = field(default_factory=Principal)
    """Who is calling."""
    session_id: str = ""
    """The session (empty outside a run)."""
    agent: str = ""
    """The agent's name (empty outside a run)."""
    run: RunContext | None = None
    """The run, when the stage runs inside one."""
    system_prompt: str = ""
    """The run's system prompt, as sent to the model (what `SystemPromptLeak` compares with)."""
    tool_call: ToolUseBlock | None = None
    """The tool call, for a `tool_call` or `tool_result` target."""
    messages: tuple[Msg, ...] = ()
    """The input messages, for an `input` target."""


class Guard:
    """The base of a guard stage: subclass it, set `name` and `targets`, write `check`.

    A stage's `check` returns a `GuardVerdict` (`self.verdict(...)` builds one with the stage's
    name). When the verdict is flagged, `action_for(target)` says what happens: `"reject"`
    (the default `action`), `"flag"` (recorded in a `GuardEvent`, the run goes on), or a
    rewrite (`"redact"` for the reply, `"quarantine"` or `"replace"` for a tool result), which
    calls `rewrite`.

    Example:
        ```python
        import asyncio
        from rxagent.guards import Guard, GuardContext, GuardPipeline, GuardVerdict


        class NoShouting(Guard):
            name = "no_shouting"

            async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
                loud = text.isupper()
                return self.verdict(loud, 1.0 if loud else 0.0, "all capitals" if loud else None)


        screened = asyncio.run(GuardPipeline([NoShouting()]).screen("HELLO", GuardContext("input")))
        assert screened.rejected is not None and screened.rejected.reasons == ("all capitals",)
        ```
    """

    name: str = "guard"
    """The stage's name, in `GuardVerdict.stage`, `GuardEvent.stage` and `"guard:<name>"`."""
    targets: frozenset[GuardTarget] = frozenset({"input"})
    """What the stage checks."""
    action: GuardAction = "reject"
    """What a flagged verdict does (for every target, unless `action_for` says otherwise)."""

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        """Judge `text`; a flagged verdict triggers the stage's action."""
        raise NotImplementedError(f"{type(self).__name__} must implement check()")

    def action_for(self, target: GuardTarget) -> GuardAction:
        """What a flagged verdict on `target` does (by default, `self.action`)."""
        return self.action

    def rewrite(self, text: str, verdict: GuardVerdict, ctx: GuardContext) -> str:
        """The text to use instead of a flagged one, for a `redact`, `quarantine` or `replace`."""
        raise NotImplementedError(
            f"{type(self).__name__} has a rewriting action but does not implement rewrite()"
        )

    def permits(self, principal: Principal, tool: str) -> bool:
        """Whether `principal` may call `tool` (tools it may not call are not offered)."""
        return True

    async def aclose(self) -> None:
        """Release what the stage holds (a connection); `ReActAgent.aclose()` calls it."""
        return None

    def verdict(
        self,
        flagged: bool,
        score: float | None = None,
        *reasons: str | None,
        retry_after: float | None = None,
    ) -> GuardVerdict:
        """A verdict of this stage: `score` defaults to 1.0 when flagged, 0.0 otherwise."""
        if score is None:
            score = 1.0 if flagged else 0.0
        return GuardVerdict(
            flagged=flagged,
            score=score,
            reasons=tuple(r for r in reasons if r),
            stage=self.name,
            retry_after=retry_after,
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


@dataclass(frozen=True, slots=True)
class GuardReport:
    """One verdict the pipeline reports, with what came of it (a `GuardEvent` in a run)."""

    stage: str
    verdict: GuardVerdict
    action: GuardAction


@dataclass(frozen=True, slots=True)
class Screened:
    """What the pipeline made of one text.

    Attributes:
        text: The text to use: the original, or a stage's rewrite.
        reports: The verdicts to publish, in stage order.
        rejected: The verdict that rejected the text, or None.
    """

    text: str
    reports: tuple[GuardReport, ...] = ()
    rejected: GuardVerdict | None = None

    @property
    def changed(self) -> bool:
        """True when a stage rewrote the text."""
        return any(r.action in REWRITES for r in self.reports)


@dataclass(slots=True)
class _Plan:
    stages: tuple[Guard, ...] = ()
    permissions: tuple[Guard, ...] = ()
    by_target: dict[GuardTarget, tuple[Guard, ...]] = field(default_factory=dict)


class GuardPipeline:
    """Guard stages run in order; the first rejection ends the screening.

    Args:
        stages: The stages, in the order they run (`RateLimit` first is cheapest).
        report_passes: Publish a `GuardEvent` for passing verdicts too (an audit trail of
            every check); by default only flagged verdicts are published.
        on_error: What a stage that raises means: `"reject"` (fail closed, the default) or
            `"pass"` (fail open). Either way the failure is reported, with the exception in
            the verdict's reasons.

    Raises:
        TypeError: A stage is not a `Guard`.
        ValueError: A stage's action does not apply to one of its targets.

    Example:
        ```python
        import asyncio
        from rxagent.guards import GuardContext, GuardPipeline, InputValidation

        pipeline = GuardPipeline([InputValidation(max_chars=20)])
        screened = asyncio.run(pipeline.screen("x" * 50, GuardContext("input")))
        assert screened.rejected is not None and screened.rejected.stage == "input_validation"
        ```
    """

    def __init__(
        self,
        stages: Iterable[Guard] = (),
        *,
        report_passes: bool = False,
        on_error: Literal["reject", "pass"] = "reject",
    ) -> None:
        if on_error not in ("reject", "pass"):
            raise ValueError(
                f"GuardPipeline(on_error=) must be 'reject' or 'pass', got {on_error!r}"
            )
        self.report_passes = report_passes
        self.on_error = on_error
        self._plan = _plan(tuple(stages))

    @classmethod
    def of(cls, guards: GuardPipeline | Sequence[Guard] | None) -> GuardPipeline | None:
        """A pipeline from what `ReActAgent(guards=...)` takes; None for no stages."""
        if guards is None:
            return None
        pipeline = guards if isinstance(guards, GuardPipeline) else cls(guards)
        return pipeline if pipeline.stages else None

    @property
    def stages(self) -> tuple[Guard, ...]:
        """The stages, in order."""
        return self._plan.stages

    def watches(self, target: GuardTarget) -> bool:
        """True when a stage checks `target` (the engine skips targets nobody checks)."""
        return target in self._plan.by_target

    @property
    def restricts_tools(self) -> bool:
        """True when a stage decides which tools a caller may use (`Permission`)."""
        return bool(self._plan.permissions)

    def permits(self, principal: Principal, tool: str) -> bool:
        """Whether every stage lets `principal` call `tool`."""
        return all(stage.permits(principal, tool) for stage in self._plan.permissions)

    async def aclose(self) -> None:
        """Close every stage (a Redis connection, say); each is closed even if one fails.

        Raises:
            Exception: The first stage's failure to close, after trying them all.
        """
        first: Exception | None = None
        for stage in self.stages:
            try:
                await stage.aclose()
            except Exception as exc:  # one failing stage must not leave the others open
                logger.warning("closing guard stage %r failed", stage.name, exc_info=exc)
                first = first or exc
        if first is not None:
            raise first

    async def screen(self, text: str, ctx: GuardContext) -> Screened:
        """Run the stages that check `ctx.target` on `text`, in order."""
        stages = self._plan.by_target.get(ctx.target)
        if not stages:
            return Screened(text)
        reports: list[GuardReport] = []
        for stage in stages:
            try:
                verdict = await stage.check(text, ctx)
            except Exception as exc:  # a failing stage is reported, and decides by on_error
                logger.warning("guard stage %r failed: %s", stage.name, exc, exc_info=exc)
                failed = self.on_error == "reject"
                verdict = stage.verdict(
                    failed, 1.0 if failed else 0.0, f"stage failed: {type(exc).__name__}: {exc}"
                )
                action: GuardAction = "reject" if failed else "pass"
            else:
                if not verdict.flagged:
                    if self.report_passes:
                        reports.append(GuardReport(stage.name, verdict, "pass"))
                    continue
                action = stage.action_for(ctx.target)
            if action in REWRITES:
                text = stage.rewrite(text, verdict, ctx)
            reports.append(GuardReport(stage.name, verdict, action))
            if action == "reject":
                return Screened(text, tuple(reports), verdict)
        return Screened(text, tuple(reports))

    def __repr__(self) -> str:
        return f"GuardPipeline({list(self.stages)!r})"


def _plan(stages: tuple[Guard, ...]) -> _Plan:
    by_target: dict[GuardTarget, list[Guard]] = {}
    for stage in stages:
        if not isinstance(stage, Guard):
            raise TypeError(
                f"guards must be Guard stages (RateLimit(), InputValidation(), ...), got {stage!r}"
            )
        for target in stage.targets:
            if target not in TARGETS:
                raise ValueError(f"{stage!r}: unknown target {target!r}; use one of {TARGETS}")
            action = stage.action_for(target)
            if action not in _ALLOWED[target]:
                allowed = ", ".join(sorted(_ALLOWED[target]))
                raise ValueError(
                    f"{stage!r}: action {action!r} does not apply to target {target!r} "
                    f"(use {allowed})"
                )
            by_target.setdefault(target, []).append(stage)
    permissions = tuple(s for s in stages if type(s).permits is not Guard.permits)
    return _Plan(stages, permissions, {t: tuple(s) for t, s in by_target.items()})
