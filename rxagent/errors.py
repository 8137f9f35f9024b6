"""One exception tree for rxagent, and the `ErrorCode` carried by failed runs.

```text
RxAgentError
├── ConfigurationError            misuse, raised where the mistake is made
│   ├── InvalidInputError         a run input that is not str / Msg / list[Msg]
│   ├── HookDefinitionError       a bad @hook declaration (unknown event type, bad priority)
│   ├── HookContractError         a hook returned the wrong event type or changed a fixed field
│   ├── ToolDefinitionError       a tool whose signature cannot become a JSON schema
│   └── StateVersionError         saved state written by a newer rxagent
├── SessionBusyError              the session already has a run in progress
├── ConcurrentModificationError   an optimistic-version conflict in a SessionStore
├── ApprovalError                 an unknown or already decided approval id
├── StoreUnavailableError         a session store's server is down (rxagent.state)
├── MCPConnectionError            an MCP server could not be reached (rxagent.tools.mcp)
├── NoActiveRunError              current_run() called outside a run
├── HookFailedError               a hook with on_error="propagate" raised
├── Reject                        raised by a hook to refuse a call or a tool call
└── AgentRunError                 a run failure; `AgentResult.raise_for_error()` raises these
    ├── RateLimitedError          RATE_LIMITED
    ├── RunTimeoutError           TIMEOUT
    ├── ContextTooLongError       CONTEXT_TOO_LONG
    ├── AuthenticationError       AUTH
    ├── InvalidRequestError       INVALID_REQUEST
    ├── ProviderError             PROVIDER_ERROR
    ├── ToolExecutionError        TOOL_ERROR
    ├── ToolTimeoutError          TOOL_TIMEOUT
    ├── GuardRejectedError        GUARD_REJECTED
    ├── HookRejectedError         HOOK_REJECTED
    ├── RunInterruptedError       INTERRUPTED
    ├── RunCancelledError         CANCELLED
    ├── MaxIterationsError        MAX_ITERATIONS
    ├── OutputInvalidError        OUTPUT_INVALID
    ├── UsageLimitError           USAGE_LIMIT
    └── UnknownRunError           UNKNOWN
```

Misuse (`ConfigurationError`) is kept apart from runtime failure (`AgentRunError`): the first is a
bug in the calling code and is raised at once; the second is data inside a run (an `ErrorEvent`
and a failed `AgentResult`) until you ask for it with `raise_for_error()`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "AgentRunError",
    "ApprovalError",
    "AuthenticationError",
    "ConcurrentModificationError",
    "ConfigurationError",
    "ContextTooLongError",
    "ErrorCode",
    "GuardRejectedError",
    "HookContractError",
    "HookDefinitionError",
    "HookFailedError",
    "HookRejectedError",
    "InvalidInputError",
    "InvalidRequestError",
    "MaxIterationsError",
    "NoActiveRunError",
    "OutputInvalidError",
    "ProviderError",
    "RateLimitedError",
    "Reject",
    "RunCancelledError",
    "RunInterruptedError",
    "RunTimeoutError",
    "RxAgentError",
    "SessionBusyError",
    "StateVersionError",
    "ToolDefinitionError",
    "ToolExecutionError",
    "ToolTimeoutError",
    "UnknownRunError",
    "UsageLimitError",
    "error_class_for",
]


class ErrorCode(StrEnum):
    """Why a run, a model call, a tool call or a hook failed. Each value equals its name."""

    RATE_LIMITED = "RATE_LIMITED"
    TIMEOUT = "TIMEOUT"
    CONTEXT_TOO_LONG = "CONTEXT_TOO_LONG"
    AUTH = "AUTH"
    INVALID_REQUEST = "INVALID_REQUEST"
    PROVIDER_ERROR = "PROVIDER_ERROR"
    TOOL_ERROR = "TOOL_ERROR"
    TOOL_TIMEOUT = "TOOL_TIMEOUT"
    GUARD_REJECTED = "GUARD_REJECTED"
    HOOK_REJECTED = "HOOK_REJECTED"
    INTERRUPTED = "INTERRUPTED"
    CANCELLED = "CANCELLED"
    MAX_ITERATIONS = "MAX_ITERATIONS"
    OUTPUT_INVALID = "OUTPUT_INVALID"
    USAGE_LIMIT = "USAGE_LIMIT"
    UNKNOWN = "UNKNOWN"


class RxAgentError(Exception):
    """Root of every exception rxagent raises."""


# --- misuse -------------------------------------------------------------------------------------


class ConfigurationError(RxAgentError):
    """The calling code used rxagent wrongly; the message names the problem and the fix."""


class InvalidInputError(ConfigurationError, TypeError):
    """A run input is not a `str`, a `Msg` or a list of `Msg`."""


class HookDefinitionError(ConfigurationError, TypeError):
    """A hook was declared wrongly, for example for an unknown event type."""


class HookContractError(ConfigurationError):
    """A hook returned an event of another type, or changed a field it may not change.

    Attributes:
        hook: The name of the offending hook.
        field: The field it changed, when the problem is a field.
    """

    def __init__(self, message: str, *, hook: str = "", field: str | None = None) -> None:
        super().__init__(message)
        self.hook = hook
        self.field = field


class ToolDefinitionError(ConfigurationError, TypeError):
    """A function cannot be turned into a tool (for example, a parameter has no annotation)."""


class StateVersionError(ConfigurationError, ValueError):
    """Saved state has a `schema_version` this rxagent cannot read."""


# --- runtime, outside a run ---------------------------------------------------------------------


class SessionBusyError(RxAgentError):
    """The session already has a run in progress (pass `queue=True` to wait instead)."""

    def __init__(self, agent: str, session_id: str) -> None:
        super().__init__(
            f"session {session_id!r} of agent {agent!r} already has a run in progress; "
            "wait for it, interrupt it with agent.interrupt(session_id=...), "
            "or pass queue=True to wait for it to finish"
        )
        self.agent = agent
        self.session_id = session_id


class ConcurrentModificationError(RxAgentError):
    """A session was saved by someone else since it was loaded (optimistic version mismatch)."""


class ApprovalError(RxAgentError):
    """An approval id is unknown or was already decided (`agent.approve` / `agent.reject`).

    Attributes:
        approval_id: The id that was passed.
        session_id: The session it was looked for in.
    """

    def __init__(self, message: str, *, approval_id: str = "", session_id: str = "") -> None:
        super().__init__(message)
        self.approval_id = approval_id
        self.session_id = session_id


class NoActiveRunError(RxAgentError, RuntimeError):
    """`rxagent.current_run()` was called outside a run (not inside a hook, tool or model call)."""


class HookFailedError(RxAgentError):
    """A hook declared with `on_error="propagate"` raised; the original is `__cause__`.

    Attributes:
        hook: The hook's name.
    """

    def __init__(self, hook: str, exc: BaseException) -> None:
        super().__init__(f"hook {hook!r} failed: {type(exc).__name__}: {exc}")
        self.hook = hook


class Reject(RxAgentError):
    """Raised by a hook to refuse what the event describes.

    In a `PreCallEvent` hook the run ends with `ErrorCode.HOOK_REJECTED`; in a `PreActingEvent`
    hook only that tool call is refused: it gets an error result and the loop goes on.

    Example:
        ```python
        from rxagent import PreActingEvent, Reject, hook


        @hook(PreActingEvent)
        def no_deletes(event: PreActingEvent) -> None:
            if event.tool_call.name == "delete_file":
                raise Reject("deleting files is not allowed")
        ```
    """

    def __init__(self, reason: str = "rejected") -> None:
        super().__init__(reason)
        self.reason = reason
        self.hook: str | None = None
        """The name of the hook that raised it (filled in by the hook chain)."""


# --- run failures -------------------------------------------------------------------------------


class AgentRunError(RxAgentError):
    """A failed run, model call or tool call. `code` says which kind.

    Attributes:
        code: The `ErrorCode` of this failure.
        source: Where it happened: `"model"`, `"tool:<name>"`, `"hook:<name>"`, `"guard:<stage>"`
            or `"agent"`.
        recoverable: True when the run can go on after it (a retry, an error result).
        provider: For a model failure, the provider that reported it (`"openai"`, ...).
        status: The HTTP status of the failed response, when there was one.
        provider_code: The provider's own error type or code (`"context_length_exceeded"`).
        excerpt: The start of the provider's response body (at most 300 characters).
        retry_after: Seconds the provider asked to wait before a retry, when it said.
    """

    code: ClassVar[ErrorCode] = ErrorCode.UNKNOWN
    default_recoverable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        source: str = "agent",
        recoverable: bool | None = None,
        provider: str | None = None,
        status: int | None = None,
        provider_code: str | None = None,
        excerpt: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.recoverable = self.default_recoverable if recoverable is None else recoverable
        self.provider = provider
        self.status = status
        self.provider_code = provider_code
        self.excerpt = excerpt
        self.retry_after = retry_after


class RateLimitedError(AgentRunError):
    """The provider refused the request for rate or quota reasons."""

    code = ErrorCode.RATE_LIMITED
    default_recoverable = True


class RunTimeoutError(AgentRunError):
    """The whole run exceeded `request_timeout`."""

    code = ErrorCode.TIMEOUT


class ContextTooLongError(AgentRunError):
    """The request does not fit the model's context window."""

    code = ErrorCode.CONTEXT_TOO_LONG


class AuthenticationError(AgentRunError):
    """The provider rejected the credentials."""

    code = ErrorCode.AUTH


class InvalidRequestError(AgentRunError):
    """The provider rejected the request as malformed."""

    code = ErrorCode.INVALID_REQUEST


class ProviderError(AgentRunError):
    """The provider failed (5xx, a broken stream, an error event)."""

    code = ErrorCode.PROVIDER_ERROR


class ToolExecutionError(AgentRunError):
    """A tool raised."""

    code = ErrorCode.TOOL_ERROR
    default_recoverable = True


class ToolTimeoutError(AgentRunError):
    """A tool exceeded its timeout."""

    code = ErrorCode.TOOL_TIMEOUT
    default_recoverable = True


class GuardRejectedError(AgentRunError):
    """A guard stage refused the input."""

    code = ErrorCode.GUARD_REJECTED


class HookRejectedError(AgentRunError):
    """A hook raised `Reject` where that ends the run."""

    code = ErrorCode.HOOK_REJECTED


class RunInterruptedError(AgentRunError):
    """The run was interrupted with `agent.interrupt()`."""

    code = ErrorCode.INTERRUPTED


class RunCancelledError(AgentRunError):
    """The run was cancelled (its task was cancelled from outside)."""

    code = ErrorCode.CANCELLED


class MaxIterationsError(AgentRunError):
    """The step limit was reached and the final answer without tools failed."""

    code = ErrorCode.MAX_ITERATIONS


class OutputInvalidError(AgentRunError):
    """The final answer did not validate against `output_type`, repairs included.

    Attributes:
        raw_output: The last answer as the model sent it: the reply's text, or the final-answer
            tool's argument JSON.
        errors: What was wrong with it, one dict per problem with `type`, `loc` (the path to
            the offending value, a list) and `msg`, as pydantic reports validation errors.

    Example:
        ```python
        from rxagent.errors import OutputInvalidError

        err = OutputInvalidError(
            "the answer is not valid",
            raw_output="oops",
            errors=[{"type": "json_invalid", "loc": [], "msg": "not JSON"}],
        )
        assert err.code == "OUTPUT_INVALID" and err.raw_output == "oops"
        assert err.errors[0]["type"] == "json_invalid"
        ```
    """

    code = ErrorCode.OUTPUT_INVALID

    def __init__(
        self,
        message: str,
        *,
        raw_output: str | None = None,
        errors: Sequence[Mapping[str, Any]] = (),
        **details: Any,
    ) -> None:
        super().__init__(message, **details)
        self.raw_output = raw_output
        self.errors: tuple[Mapping[str, Any], ...] = tuple(errors)


class UsageLimitError(AgentRunError):
    """A usage limit (tool calls, tokens) was reached."""

    code = ErrorCode.USAGE_LIMIT


class UnknownRunError(AgentRunError):
    """A failure with no more specific code (a crashing hook with `on_error="propagate"`)."""

    code = ErrorCode.UNKNOWN


_BY_CODE: Final[dict[ErrorCode, type[AgentRunError]]] = {
    cls.code: cls
    for cls in (
        RateLimitedError,
        RunTimeoutError,
        ContextTooLongError,
        AuthenticationError,
        InvalidRequestError,
        ProviderError,
        ToolExecutionError,
        ToolTimeoutError,
        GuardRejectedError,
        HookRejectedError,
        RunInterruptedError,
        RunCancelledError,
        MaxIterationsError,
        OutputInvalidError,
        UsageLimitError,
        UnknownRunError,
    )
}


def error_class_for(code: ErrorCode) -> type[AgentRunError]:
    """Return the `AgentRunError` subclass that stands for `code`.

    Example:
        ```python
        from rxagent.errors import ErrorCode, RateLimitedError, error_class_for

        assert error_class_for(ErrorCode.RATE_LIMITED) is RateLimitedError
        ```
    """
    return _BY_CODE[code]
