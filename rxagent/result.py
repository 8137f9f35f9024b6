"""`AgentResult`, what a run returns, and `ErrorInfo`, the failure it may carry.

`AgentError` is a deprecated alias of `ErrorInfo`: reading it warns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from rxagent._lazy import lazy_exports
from rxagent.errors import AgentRunError, ErrorCode, OutputInvalidError, error_class_for
from rxagent.messages import FrozenJsonDict, Msg
from rxagent.models.base import Usage

__all__ = ["AgentResult", "ErrorInfo", "StopReason"]

OutputT = TypeVar("OutputT")

StopReason: TypeAlias = Literal[
    "no_tool_calls",
    "final_answer",
    "max_iters",
    "stop_condition",
    "hook_stop",
    "max_tool_calls",
    "interrupted",
    "approval_pending",
    "error",
]
"""Why a run ended."""


class ErrorInfo(BaseModel):
    """The failure of a run, as data (see `AgentResult.raise_for_error()` for the exception).

    Example:
        ```python
        from rxagent import ErrorCode, ErrorInfo

        info = ErrorInfo(code=ErrorCode.TOOL_ERROR, message="disk full", source="tool:save")
        assert info.code == "TOOL_ERROR" and info.failure_text().endswith("disk full")
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: ErrorCode
    """What kind of failure."""
    message: str
    """What went wrong, and where possible how to fix it."""
    source: str = "agent"
    """Where it happened: `"model"`, `"tool:<name>"`, `"hook:<name>"`, `"guard:<stage>"`, ..."""
    exception: str | None = None
    """The type name of the underlying exception, when there was one."""
    raw_output: str | None = None
    """For `OUTPUT_INVALID`: the last answer as the model sent it (text or tool arguments)."""
    output_errors: tuple[FrozenJsonDict, ...] = ()
    """For `OUTPUT_INVALID`: what was wrong with it (`type`, `loc`, `msg` per problem)."""
    retry_after: float | None = None
    """For a `GUARD_REJECTED` by a rate limit: seconds until the same request would pass."""

    def failure_text(self) -> str:
        """The reply of a run that failed with this error and produced no answer of its own.

        Example:
            ```python
            from rxagent.errors import ErrorCode
            from rxagent.result import ErrorInfo

            error = ErrorInfo(code=ErrorCode.AUTH, message="bad key")
            assert error.failure_text() == "The run failed (AUTH): bad key"
            ```
        """
        return f"The run failed ({self.code}): {self.message}"

    def to_exception(self) -> AgentRunError:
        """Return the typed exception for this failure (not raised).

        Example:
            ```python
            from rxagent.errors import ErrorCode, OutputInvalidError
            from rxagent.result import ErrorInfo

            error = ErrorInfo(
                code=ErrorCode.OUTPUT_INVALID, message="bad", raw_output="{",
                output_errors=({"type": "json_invalid", "loc": [], "msg": "EOF"},),
            )
            exc = error.to_exception()
            assert isinstance(exc, OutputInvalidError) and exc.raw_output == "{"
            ```
        """
        cls = error_class_for(self.code)
        if issubclass(cls, OutputInvalidError):
            return cls(
                self.message,
                source=self.source,
                raw_output=self.raw_output,
                errors=self.output_errors,
            )
        return cls(self.message, source=self.source, retry_after=self.retry_after)


class AgentResult(BaseModel, Generic[OutputT]):
    """What a run returns.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.testing import ScriptedModel

        agent = ReActAgent("demo", "Be brief.", ScriptedModel(["Hello!"]))
        result = agent.call_sync("hi")
        assert result.ok and result.text == "Hello!" and result.stop_reason == "no_tool_calls"
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    reply: Msg
    """The final reply (after PostCall hooks)."""
    ok: bool = True
    """False when the run failed or was interrupted."""
    output: OutputT | None = None
    """The validated structured output, when an `output_type` was asked for."""
    error: ErrorInfo | None = None
    """The failure, when `ok` is False."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and requests used by this run."""
    tools_used: tuple[str, ...] = ()
    """Names of the tools called, in call order (with repeats)."""
    stop_reason: StopReason = "no_tool_calls"
    """Why the run ended."""
    pending_approvals: tuple[str, ...] = ()
    """Approval ids the run is parked on."""
    interrupted: bool = False
    """True when the run was interrupted (or timed out)."""
    steps: int = 0
    """Reasoning steps taken."""
    duration_ms: float = 0.0
    """Wall time of the run."""
    run_id: str = ""
    """The run's id."""
    session_id: str = ""
    """The session the run belonged to."""

    @property
    def text(self) -> str:
        """The reply's text."""
        return self.reply.text

    def raise_for_error(self) -> AgentResult[OutputT]:
        """Raise the typed `AgentRunError` if the run failed; return self otherwise.

        Example:
            ```python
            import pytest
            from rxagent import AgentResult, Msg
            from rxagent.errors import ErrorCode, RunInterruptedError
            from rxagent.result import ErrorInfo

            failed = AgentResult(reply=Msg.assistant("stopped"), ok=False,
                                 error=ErrorInfo(code=ErrorCode.INTERRUPTED, message="stop"))
            with pytest.raises(RunInterruptedError):
                failed.raise_for_error()
            ```
        """
        if self.error is not None:
            raise self.error.to_exception()
        return self


if TYPE_CHECKING:
    AgentError = ErrorInfo
    """Deprecated: the earlier name of `ErrorInfo`."""

__getattr__, __dir__ = lazy_exports(__name__, globals(), {}, deprecated={"AgentError": "ErrorInfo"})
