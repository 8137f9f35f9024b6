"""What an interceptor wraps: `ModelCall` and `ToolCall`, and the decorators that make one.

An interceptor is `async def f(call, call_next)`: it gets the call, may change it
(`call.model_copy(update=...)`), awaits `call_next(call)` zero, one or several times, and returns
the response (a `ModelResponse` for a model call, a `ToolResultBlock` for a tool call).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, Protocol, TypeAlias, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rxagent.errors import ConfigurationError
from rxagent.messages import FrozenDict, FrozenJsonDict, Msg, ToolResultBlock
from rxagent.models.base import ChatModel, ModelOptions, ModelResponse, ToolSchema

__all__ = [
    "DEFAULT_PRIORITY",
    "FunctionInterceptor",
    "Interceptor",
    "InterceptorKind",
    "ModelCall",
    "ModelInterceptorFunction",
    "NextModelCall",
    "NextToolCall",
    "ToolCall",
    "ToolInterceptorFunction",
    "around_model_call",
    "around_tool_call",
]

DEFAULT_PRIORITY: Final = 100
"""The priority of an interceptor that does not say: the hooks' scale (lower is outermost)."""

InterceptorKind: TypeAlias = Literal["model", "tool"]
"""What an interceptor wraps."""


class ModelCall(BaseModel):
    """One model request, as an interceptor sees it. Frozen: `model_copy(update=...)` changes it.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.interceptors import ModelCall
        from rxagent.testing import ScriptedModel

        call = ModelCall(messages=(Msg.user("hi"),), model=ScriptedModel(["Hello"]))
        warmer = call.model_copy(update={"options": call.options.merged(None)})
        assert warmer == call and call.tools == ()
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    messages: tuple[Msg, ...]
    """The request's messages (the system prompt first, when there is one)."""
    tools: tuple[ToolSchema, ...] = ()
    """The tools on offer."""
    options: ModelOptions = Field(default_factory=ModelOptions)
    """The generation options."""
    model: ChatModel
    """The model that answers (the run's model unless an interceptor passed another)."""


class ToolCall(BaseModel):
    """One tool call, as an interceptor sees it. Frozen: `model_copy(update=...)` changes it.

    Example:
        ```python
        from rxagent.interceptors import ToolCall

        call = ToolCall(id="call_1", name="search", arguments={"q": "rx"})
        wider = call.model_copy(update={"arguments": {"q": "rx", "k": 10}})
        assert wider.arguments["k"] == 10 and call.arguments == {"q": "rx"}
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """The call id the model gave (or the agent made)."""
    name: str
    """The tool's name."""
    arguments: FrozenJsonDict = Field(default_factory=FrozenDict)
    """The arguments the tool runs with."""


@runtime_checkable
class NextModelCall(Protocol):
    """The rest of the chain, as a model interceptor's `call_next`."""

    @property
    def started(self) -> bool:
        """True once a delta of this step reached subscribers: `call_next` may not run again."""
        ...

    async def __call__(self, call: ModelCall) -> ModelResponse:
        """Make `call` through the inner interceptors and the model; return its response."""
        ...


@runtime_checkable
class NextToolCall(Protocol):
    """The rest of the chain, as a tool interceptor's `call_next`."""

    async def __call__(self, call: ToolCall) -> ToolResultBlock:
        """Run `call` through the inner interceptors and the tool; return its result."""
        ...


ModelInterceptorFunction: TypeAlias = Callable[[ModelCall, NextModelCall], Awaitable[ModelResponse]]
"""`async def f(call: ModelCall, call_next: NextModelCall) -> ModelResponse`."""

ToolInterceptorFunction: TypeAlias = Callable[[ToolCall, NextToolCall], Awaitable[ToolResultBlock]]
"""`async def f(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock`."""


@runtime_checkable
class Interceptor(Protocol):
    """What the agent needs of an interceptor: a name, a priority, and one or both wrappers.

    A class may define `around_model_call`, `around_tool_call` or both (`UsageLimits` does);
    one that defines neither is refused when it is registered.

    Attributes:
        name: Recorded in `modified_by` and in `ErrorEvent.source` (`"interceptor:<name>"`).
        priority: Lower runs outermost (default 100); ties keep registration order.
    """

    name: str
    priority: int


class FunctionInterceptor:
    """An interceptor made from a function by `@around_model_call` or `@around_tool_call`.

    Calling it calls the function, so it stays usable (and testable) as one.
    """

    __slots__ = ("__wrapped__", "around_model_call", "around_tool_call", "kind", "name", "priority")

    def __init__(
        self, fn: Callable[..., Awaitable[Any]], kind: InterceptorKind, priority: int, name: str
    ) -> None:
        self.__wrapped__ = fn
        self.kind = kind
        self.priority = priority
        self.name = name
        self.around_model_call: ModelInterceptorFunction | None = fn if kind == "model" else None
        self.around_tool_call: ToolInterceptorFunction | None = fn if kind == "tool" else None

    async def __call__(self, call: Any, call_next: Any) -> Any:
        return await self.__wrapped__(call, call_next)

    def __repr__(self) -> str:
        return f"<{self.kind} interceptor {self.name!r} priority={self.priority}>"


def _decorator(
    kind: InterceptorKind, priority: int, name: str | None
) -> Callable[[Callable[..., Awaitable[Any]]], FunctionInterceptor]:
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ConfigurationError(
            f"around_{kind}_call(priority=...) takes an int (lower runs outermost), "
            f"got {priority!r}"
        )

    def wrap(fn: Callable[..., Awaitable[Any]]) -> FunctionInterceptor:
        if not inspect.iscoroutinefunction(fn):
            raise ConfigurationError(
                f"@around_{kind}_call decorates `async def f(call, call_next)`; "
                f"{getattr(fn, '__name__', fn)!r} is not an async function"
            )
        if len(inspect.signature(fn).parameters) != 2:
            raise ConfigurationError(
                f"@around_{kind}_call: {fn.__name__!r} must take two parameters, (call, call_next)"
            )
        return FunctionInterceptor(fn, kind, priority, name or fn.__name__)

    return wrap


@overload
def around_model_call(
    fn: ModelInterceptorFunction, /, *, priority: int = ..., name: str | None = ...
) -> FunctionInterceptor: ...
@overload
def around_model_call(
    fn: None = None, /, *, priority: int = ..., name: str | None = ...
) -> Callable[[ModelInterceptorFunction], FunctionInterceptor]: ...
def around_model_call(
    fn: ModelInterceptorFunction | None = None,
    /,
    *,
    priority: int = DEFAULT_PRIORITY,
    name: str | None = None,
) -> FunctionInterceptor | Callable[[ModelInterceptorFunction], FunctionInterceptor]:
    """Make `async def f(call: ModelCall, call_next) -> ModelResponse` a model interceptor.

    Args:
        fn: The function (when used without parentheses).
        priority: Lower runs outermost, on the hooks' scale; ties keep registration order.
        name: For `modified_by` and errors; the function's name by default.

    Raises:
        ConfigurationError: Not an async function of `(call, call_next)`, or a bad priority.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.interceptors import around_model_call
        from rxagent.testing import ScriptedModel


        @around_model_call(priority=10)
        async def cold(call, call_next):
            options = call.options.model_copy(update={"temperature": 0.0})
            return await call_next(call.model_copy(update={"options": options}))


        agent = ReActAgent("a", "", ScriptedModel(["Hi"]), interceptors=[cold])
        assert agent.call_sync("hello").text == "Hi"
        ```
    """
    wrap = _decorator("model", priority, name)
    return wrap(fn) if fn is not None else wrap


@overload
def around_tool_call(
    fn: ToolInterceptorFunction, /, *, priority: int = ..., name: str | None = ...
) -> FunctionInterceptor: ...
@overload
def around_tool_call(
    fn: None = None, /, *, priority: int = ..., name: str | None = ...
) -> Callable[[ToolInterceptorFunction], FunctionInterceptor]: ...
def around_tool_call(
    fn: ToolInterceptorFunction | None = None,
    /,
    *,
    priority: int = DEFAULT_PRIORITY,
    name: str | None = None,
) -> FunctionInterceptor | Callable[[ToolInterceptorFunction], FunctionInterceptor]:
    """Make `async def f(call: ToolCall, call_next) -> ToolResultBlock` a tool interceptor.

    Args:
        fn: The function (when used without parentheses).
        priority: Lower runs outermost, on the hooks' scale; ties keep registration order.
        name: For `modified_by` and errors; the function's name by default.

    Raises:
        ConfigurationError: Not an async function of `(call, call_next)`, or a bad priority.

    Example:
        ```python
        from rxagent import ReActAgent, tool
        from rxagent.interceptors import around_tool_call
        from rxagent.testing import ScriptedModel, tool_call


        asked: list[int] = []


        @tool
        def search(q: str, k: int = 3) -> str:
            \"\"\"Search.\"\"\"
            asked.append(k)
            return f"{k} hits for {q}"


        @around_tool_call
        async def more_hits(call, call_next):
            more = {**call.arguments, "k": 9}
            return await call_next(call.model_copy(update={"arguments": more}))


        model = ScriptedModel([tool_call("search", q="rx"), "done"])
        agent = ReActAgent("a", "", model, tools=[search], interceptors=[more_hits])
        assert agent.call_sync("find").ok and asked == [9]
        ```
    """
    wrap = _decorator("tool", priority, name)
    return wrap(fn) if fn is not None else wrap
