"""One exception tree for rxagent, and the `ErrorCode` carried by failed runs.

```text
RxAgentError
├── ConfigurationError                misuse, raised where the mistake is made
│   ├── InvalidInputError             a run input that is not str / Msg / list[Msg]
│   ├── HookDefinitionError           a bad @hook declaration (unknown event type, bad priority)
│   ├── HookContractError             a hook returned the wrong event type or changed a fixed field
│   ├── InterceptorContractError      an interceptor returned the wrong type or retried too late
│   ├── ToolDefinitionError           a tool whose signature cannot become a JSON schema
│   ├── StateVersionError             saved state written by a newer rxagent
│   ├── ControlMessageTooLargeError   a control message over its channel's limit (rxagent.state)
│   ├── EmbedderMismatchError         a collection opened with another embedder (rxagent.rag)
│   ├── MissingDependencyError        an optional package a feature needs is not installed
│   └── UnsupportedSchemaError        a tool schema the test strategies cannot draw arguments from
├── SessionBusyError                  the session already has a run in progress
├── SessionOwnerError                 the session was created under another API key
├── ConcurrentModificationError       an optimistic-version conflict in a SessionStore
├── ApprovalError                     an unknown or already decided approval id
├── StoreUnavailableError             a session store's server is down (rxagent.state)
│   └── ConnectionLostError           a control channel's listening connection was lost
├── MCPConnectionError                an MCP server could not be reached (rxagent.tools.mcp)
├── NoActiveRunError                  current_run() called outside a run
├── HookFailedError                   a hook with on_error="propagate" raised
├── InterceptorFailedError            an interceptor raised (rxagent.interceptors)
├── Reject                            raised by a hook to refuse a call or a tool call
├── ApiError                          an HTTP error answer of the server (rxagent.server)
├── CliError                          what the `rxagent` command reports in one line (rxagent.cli)
├── EventProtocolError                events that break the event protocol (rxagent.testing)
├── BenchError                        a benchmark run or phase failed its checks (`rxagent bench`)
└── AgentRunError                     a run failure; `AgentResult.raise_for_error()` raises these
    ├── RateLimitedError              RATE_LIMITED
    ├── RunTimeoutError               TIMEOUT
    ├── ContextTooLongError           CONTEXT_TOO_LONG
    ├── AuthenticationError           AUTH
    ├── InvalidRequestError           INVALID_REQUEST
    │   └── MemoryScopeError          a user-scoped memory in a run without a user (rxagent.memory)
    ├── ProviderError                 PROVIDER_ERROR
    │   └── ScriptExhaustedError      a ScriptedModel called once too often (rxagent.testing)
    ├── ToolExecutionError            TOOL_ERROR
    ├── ToolTimeoutError              TOOL_TIMEOUT
    ├── GuardRejectedError            GUARD_REJECTED
    ├── HookRejectedError             HOOK_REJECTED
    ├── RunInterruptedError           INTERRUPTED
    ├── RunCancelledError             CANCELLED
    ├── MaxIterationsError            MAX_ITERATIONS
    ├── OutputInvalidError            OUTPUT_INVALID
    ├── UsageLimitError               USAGE_LIMIT
    └── UnknownRunError               UNKNOWN
```

Misuse (`ConfigurationError`) is kept apart from runtime failure (`AgentRunError`): the first is a
bug in the calling code and is raised at once; the second is data inside a run (an `ErrorEvent`
and a failed `AgentResult`) until you ask for it with `raise_for_error()`.

Some are also a built-in exception, so code that expects that one catches them too:
`InvalidInputError`, `HookDefinitionError` and `ToolDefinitionError` are `TypeError`s,
`StateVersionError` and `UnsupportedSchemaError` are `ValueError`s, `MissingDependencyError` is an
`ImportError`, `NoActiveRunError` is a
`RuntimeError`, `MCPConnectionError` is a `ConnectionError` and `EventProtocolError` is an
`AssertionError` (pytest reports it as a failed assertion). The modules named in the tree
re-export their exceptions, so `from rxagent.state import StoreUnavailableError` works too.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rxagent.events import BaseEvent

__all__ = [
    "AgentRunError",
    "ApiError",
    "ApprovalError",
    "AuthenticationError",
    "BenchError",
    "CliError",
    "ConcurrentModificationError",
    "ConfigurationError",
    "ConnectionLostError",
    "ContextTooLongError",
    "ControlMessageTooLargeError",
    "EmbedderMismatchError",
    "ErrorCode",
    "EventProtocolError",
    "GuardRejectedError",
    "HookContractError",
    "HookDefinitionError",
    "HookFailedError",
    "HookRejectedError",
    "InterceptorContractError",
    "InterceptorFailedError",
    "InvalidInputError",
    "InvalidRequestError",
    "MCPConnectionError",
    "MaxIterationsError",
    "MemoryScopeError",
    "MissingDependencyError",
    "NoActiveRunError",
    "OutputInvalidError",
    "ProviderError",
    "RateLimitedError",
    "Reject",
    "RunCancelledError",
    "RunInterruptedError",
    "RunTimeoutError",
    "RxAgentError",
    "ScriptExhaustedError",
    "SessionBusyError",
    "SessionOwnerError",
    "StateVersionError",
    "StoreUnavailableError",
    "ToolDefinitionError",
    "ToolExecutionError",
    "ToolTimeoutError",
    "UnknownRunError",
    "UnsupportedSchemaError",
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


class InterceptorContractError(ConfigurationError):
    """An interceptor broke its contract (wrong return type, a retry too late, a changed id).

    It returned the wrong type, changed a tool call's id, or called `call_next` again after the
    first delta of the step reached subscribers.

    Attributes:
        interceptor: The name of the offending interceptor.
    """

    def __init__(self, message: str, *, interceptor: str = "") -> None:
        super().__init__(message)
        self.interceptor = interceptor


class ToolDefinitionError(ConfigurationError, TypeError):
    """A function cannot be turned into a tool (for example, a parameter has no annotation)."""


class StateVersionError(ConfigurationError, ValueError):
    """Saved state has a `schema_version` this rxagent cannot read."""


class ControlMessageTooLargeError(ConfigurationError):
    """A control message is too large for the channel (PostgreSQL NOTIFY: under 8000 bytes).

    Example:
        ```python
        from rxagent.errors import ConfigurationError, ControlMessageTooLargeError

        assert issubclass(ControlMessageTooLargeError, ConfigurationError)
        ```
    """


class EmbedderMismatchError(ConfigurationError):
    """A knowledge base collection was made with another embedder than the one it is opened with.

    Vectors of two models are not comparable, so a collection remembers the embedder (name and
    dimensions, or none for sparse only) that filled it; the message names both and the fix.

    Example:
        ```python
        from rxagent.errors import ConfigurationError, EmbedderMismatchError

        assert issubclass(EmbedderMismatchError, ConfigurationError)
        ```
    """


class MissingDependencyError(ConfigurationError, ImportError):
    """An optional package that a feature needs is not installed; the message says what to install.

    Raised where the feature is set up (`LocalEmbedder()` without its weights, say), not later
    when it is first used.

    Example:
        ```python
        from rxagent.errors import ConfigurationError, MissingDependencyError

        assert issubclass(MissingDependencyError, ConfigurationError)
        assert issubclass(MissingDependencyError, ImportError)
        ```
    """


class UnsupportedSchemaError(ConfigurationError, ValueError):
    """A tool's parameter schema uses JSON Schema the test strategies cannot draw values for.

    Raised by `rxagent.testing.strategies.tool_args` and `scripts(tools=...)` when the strategy
    is made; the message names the tool, where in the schema, and the keyword.

    Example:
        ```python
        import pytest
        from rxagent.errors import UnsupportedSchemaError
        from rxagent.testing.strategies import tool_args
        from rxagent.tools import Tool

        odd = Tool.from_schema(
            name="odd",
            description="Takes a multiple of 3.",
            parameters={"type": "object", "properties": {"n": {"multipleOf": 3}}},
            fn=lambda arguments: arguments["n"],
        )
        with pytest.raises(UnsupportedSchemaError, match="multipleOf"):
            tool_args(odd)
        ```
    """


# --- runtime, outside a run ---------------------------------------------------------------------


class SessionOwnerError(RxAgentError):
    """The session was created under another API key (`Principal.key_id`) than the run's.

    A run with `principal=Principal(key_id=...)` that creates a session records the key as its
    owner, in the same save; a later run of the session under another key is refused with this
    error (the server answers it as a 404, without saying the session exists).
    """

    def __init__(self, agent: str, session_id: str) -> None:
        super().__init__(
            f"session {session_id!r} of agent {agent!r} belongs to another API key; "
            "use a session id of your own"
        )
        self.agent = agent
        self.session_id = session_id


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


class StoreUnavailableError(RxAgentError):
    """A session store (or its control channel) cannot be reached now: retry later.

    Its server is down, restarting, unreachable or out of connections. The message names the
    store (password redacted) and the underlying error; the server answers it with a 503
    `store_unavailable`, without those details.

    Example:
        ```python
        from rxagent.errors import RxAgentError, StoreUnavailableError

        assert issubclass(StoreUnavailableError, RxAgentError)
        ```
    """


class ConnectionLostError(StoreUnavailableError):
    """A control channel's listening connection is gone, or stopped answering.

    The channel's listener reconnects on its own; only a first `subscribe()` whose connection is
    lost before it listens raises it.
    """


class MCPConnectionError(RxAgentError, ConnectionError):
    """An MCP server could not be reached, or its connection failed during a call.

    Entering a toolset raises it when the server cannot be started or reached. Inside a run it
    is never raised: a call whose connection fails gets a `TOOL_ERROR` result naming it.

    Example:
        ```python
        from rxagent.errors import MCPConnectionError

        assert issubclass(MCPConnectionError, ConnectionError)
        ```
    """


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


class InterceptorFailedError(RxAgentError):
    """An interceptor raised something other than a typed run failure.

    The original is `__cause__`. The run fails with `UNKNOWN` and
    `source="interceptor:<name>"`.

    Attributes:
        interceptor: The interceptor's name.
    """

    def __init__(self, interceptor: str, exc: BaseException) -> None:
        super().__init__(f"interceptor {interceptor!r} failed: {type(exc).__name__}: {exc}")
        self.interceptor = interceptor


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


class ApiError(RxAgentError):
    """An error the server answers with: an HTTP status and a typed JSON body.

    The routes raise it, and so may your own routes (`ServerContext.authenticate`,
    `parse_body` and `open_run` raise it too): the server's middleware answers it with
    `body()` as JSON, the status and the headers. The OpenAI route renders the same error in
    OpenAI's error body instead.

    Attributes:
        status: The HTTP status.
        code: The error's code in the body (`"session_busy"`).
        message: What went wrong, and how to fix it.
        field: The request field at fault, when there is one.
        headers: Headers of the answer (`Retry-After`, `Allow`).

    Example:
        ```python
        from rxagent.errors import ApiError

        error = ApiError(404, "agent_not_found", "no agent 'x'", field="name")
        assert error.body() == {
            "error": {"code": "agent_not_found", "message": "no agent 'x'", "field": "name"}
        }
        ```
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers: dict[str, str] = dict(headers or {})

    def body(self) -> dict[str, Any]:
        """The typed JSON body."""
        return {"error": {"code": self.code, "message": self.message, "field": self.field}}


class CliError(RxAgentError):
    """A problem the `rxagent` command reports in one line naming the fix, with an exit code.

    Args:
        message: What is wrong and how to fix it.
        exit_code: 2 for a usage problem (the default), 1 for a failure at run time.

    Example:
        ```python
        from rxagent.errors import CliError

        assert CliError("--store: no such scheme").exit_code == 2
        ```
    """

    def __init__(self, message: str, *, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class BenchError(RxAgentError, RuntimeError):
    """A benchmark run or phase failed its checks, or its fake server did not start.

    `rxagent bench` and `bench/http_overhead.py` check every run they time (its final text, its
    tool calls, the server's request counters); a run that fails them raises this, so a figure
    is never reported for work that was not done.

    Example:
        ```python
        from rxagent.errors import BenchError

        assert issubclass(BenchError, RuntimeError)
        ```
    """


class EventProtocolError(RxAgentError, AssertionError):
    """A sequence of events breaks the event protocol (`rxagent.testing.assert_event_protocol`).

    It is an `AssertionError`, so pytest reports it as a failed assertion.

    Attributes:
        invariant: The name of the broken invariant (see `assert_event_protocol`).
        position: The offending event's position in the sequence (None when the sequence is empty).
        event: The offending event, when there is one.

    Example:
        ```python
        from rxagent.errors import EventProtocolError
        from rxagent.events import PreReasoningEvent
        from rxagent.testing import assert_event_protocol

        try:
            assert_event_protocol([PreReasoningEvent(messages=[], seq=0)])
        except EventProtocolError as exc:
            assert exc.invariant == "exactly one PreCall, first" and exc.position == 0
        ```
    """

    def __init__(
        self, invariant: str, message: str, *, position: int | None, event: BaseEvent | None
    ) -> None:
        super().__init__(message)
        self.invariant = invariant
        self.position = position
        self.event = event


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


class MemoryScopeError(InvalidRequestError):
    """A long-term memory scoped by user was used in a run that names no user.

    `LongTermMemory(scope="user")` reads the user id from the run's `principal` (or from its
    own `user_id=` function); without one it refuses rather than share one anonymous memory
    among every caller. Inside a run it fails the run (`INVALID_REQUEST`) or, from the
    `remember` and `recall` tools, gives the model an error result.
    """


class ProviderError(AgentRunError):
    """The provider failed (5xx, a broken stream, an error event)."""

    code = ErrorCode.PROVIDER_ERROR


class ScriptExhaustedError(ProviderError):
    """A `rxagent.testing.ScriptedModel` was called more times than it has turns.

    It is a `ProviderError`, so inside a run it fails the run with `ErrorCode.PROVIDER_ERROR`.

    Attributes:
        model: The model's name.
        scripted: How many turns the script has.
        call: The failing call's number, from 1.

    Example:
        ```python
        from rxagent.errors import ErrorCode, ScriptExhaustedError

        err = ScriptExhaustedError("scripted", scripted=1, call=2)
        assert err.code is ErrorCode.PROVIDER_ERROR and "has 1 scripted turn" in str(err)
        ```
    """

    def __init__(self, model: str, *, scripted: int, call: int) -> None:
        turns = "turn" if scripted == 1 else "turns"
        super().__init__(
            f"ScriptedModel {model!r} has {scripted} scripted {turns}, but model call #{call} "
            f"asked for turn #{call}; add turns to the script, or call reset() to replay it",
            source="model",
            recoverable=False,
        )
        self.model = model
        self.scripted = scripted
        self.call = call


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
