"""In-process test models: `ScriptedModel` plays a script, `FunctionModel` asks a function.

Both implement the `ChatModel` protocol, stream typed deltas with no network and no latency, and
record every request they receive in `.requests`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, final

from rxagent.errors import ScriptExhaustedError as ScriptExhaustedError
from rxagent.messages import Block, Msg, thaw
from rxagent.models.base import FinishDelta, ModelDelta, ModelOptions, ToolSchema, UsageDelta
from rxagent.testing._builders import PreparedTurn, Turn, prepare_turn

if TYPE_CHECKING:
    from rxagent.models.base import Capabilities

__all__ = [
    "FunctionModel",
    "ModelFunction",
    "ModelRequest",
    "ScriptedModel",
]

ModelFunction: TypeAlias = Callable[
    [list[Msg], list[ToolSchema], ModelOptions],
    Turn | Awaitable[Turn] | AsyncIterator[ModelDelta],
]
"""What `FunctionModel` calls: `fn(messages, tools, options)`, sync or async.

It returns one response (see `Turn`), or an async iterator of deltas that is streamed as is.
"""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request a test model received.

    Example:
        ```python
        from rxagent.messages import Msg
        from rxagent.models import ModelOptions, ToolSchema
        from rxagent.testing import ModelRequest

        req = ModelRequest((Msg.user("hi"),), (ToolSchema(name="add"),), ModelOptions())
        assert req.tool_names == ("add",) and req.messages[-1].text == "hi"
        ```
    """

    messages: tuple[Msg, ...]
    """The messages sent, system prompt first."""
    tools: tuple[ToolSchema, ...]
    """The tools offered (empty once tools are withdrawn)."""
    options: ModelOptions
    """The generation options."""

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of the tools offered, in order."""
        return tuple(t.name for t in self.tools)

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The requested `response_format` as plain JSON (the native structured-output mode).

        Example:
            ```python
            from rxagent.messages import Msg
            from rxagent.models import ModelOptions
            from rxagent.testing import ModelRequest

            options = ModelOptions(response_format={"type": "json_object"})
            req = ModelRequest((Msg.user("hi"),), (), options)
            assert req.response_format == {"type": "json_object"}
            ```
        """
        found = self.options.response_format
        return None if found is None else thaw(found)


async def _play(
    deltas: tuple[ModelDelta, ...], usage: UsageDelta, finish: FinishDelta
) -> AsyncIterator[ModelDelta]:
    for delta in deltas:
        yield delta
    yield usage
    yield finish


async def _play_slowly(
    deltas: tuple[ModelDelta, ...], usage: UsageDelta, finish: FinishDelta, delay: float
) -> AsyncIterator[ModelDelta]:
    for delta in (*deltas, usage, finish):
        await asyncio.sleep(delay)
        yield delta


async def _fail(error: Exception) -> AsyncIterator[ModelDelta]:
    nothing: tuple[ModelDelta, ...] = ()
    for delta in nothing:  # makes this an async generator that raises at its first step
        yield delta
    raise error


@final
class ScriptedModel:
    """A chat model that plays a fixed script: each call streams the next turn.

    Turns are checked and turned into deltas when the model is built, so a bad script fails at
    once and streaming costs no validation. Tool calls without an `id` stream `id=None`, and the
    agent assigns its deterministic `call_<n>`.

    Args:
        turns: The responses, in call order (see `Turn`).
        chunk_size: Characters per text, thinking or tool-argument delta.
        name: The model's name.
        context_window: The context window it declares (large, so trimming stays out of the way).
        delay: Seconds to sleep before each delta, to leave room for interrupts in tests.
        capabilities: What the model claims to support, as a provider's formatter would (it
            decides the structured-output strategy `"auto"` picks); None, the default, claims
            nothing, so `"auto"` is `"prompted"` and every explicit strategy is accepted.

    Raises:
        TypeError: When `turns` is not a list of turns, or a turn is not a model response.
        ValueError: For a bad `chunk_size` or `delay`, or a non-assistant `Msg` turn.

    Example:
        ```python
        import asyncio
        from rxagent.models import ModelOptions, ResponseBuilder
        from rxagent.messages import Msg
        from rxagent.testing import ScriptedModel, tool_call

        model = ScriptedModel([tool_call("add", a=1, b=2), "The sum is 3."], chunk_size=4)


        async def reply(messages: list[Msg]) -> Msg:
            builder = ResponseBuilder()
            async for delta in model.stream(messages, [], ModelOptions()):
                builder.add(delta)
            return builder.build()


        first = asyncio.run(reply([Msg.user("1 + 2?")]))
        assert first.tool_calls[0].name == "add"
        assert asyncio.run(reply([Msg.user("1 + 2?")])).text == "The sum is 3."
        assert model.calls == 2 and model.remaining == 0
        ```
    """

    __slots__ = (
        "_turns",
        "capabilities",
        "chunk_size",
        "context_window",
        "delay",
        "name",
        "requests",
    )

    def __init__(
        self,
        turns: Sequence[Turn],
        *,
        chunk_size: int = 8,
        name: str = "scripted",
        context_window: int = 1_000_000,
        delay: float = 0.0,
        capabilities: Capabilities | None = None,
    ) -> None:
        if isinstance(turns, str | Msg) or not isinstance(turns, Sequence):
            raise TypeError(
                f"ScriptedModel takes a list of turns, e.g. ScriptedModel(['Hello!']), "
                f"got {type(turns).__name__}"
            )
        if delay < 0:
            raise ValueError(f"delay must be >= 0 seconds, got {delay}")
        self.name = name
        self.context_window: int | None = context_window
        self.chunk_size = chunk_size
        self.delay = delay
        self.capabilities = capabilities
        self._turns: tuple[PreparedTurn, ...] = tuple(
            prepare_turn(turn, chunk_size, where=f"turn #{i + 1} of the script")
            for i, turn in enumerate(turns)
        )
        self.requests: list[ModelRequest] = []
        """Every request received since the last `reset()`, in order."""

    @property
    def calls(self) -> int:
        """How many requests the model received (including one that found the script empty)."""
        return len(self.requests)

    @property
    def remaining(self) -> int:
        """How many turns are left to play."""
        return max(0, len(self._turns) - len(self.requests))

    @property
    def turns(self) -> tuple[tuple[Block, ...], ...]:
        """The script: each turn's blocks."""
        return tuple(t.blocks for t in self._turns)

    def reset(self) -> None:
        """Rewind the script to its first turn and forget the recorded requests."""
        self.requests.clear()

    def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSchema], options: ModelOptions
    ) -> AsyncIterator[ModelDelta]:
        """Record the request and stream the next turn.

        The stream raises `ScriptExhaustedError` when no turn is left.
        """
        position = len(self.requests)
        self.requests.append(ModelRequest(tuple(messages), tuple(tools), options))
        if position >= len(self._turns):
            error = ScriptExhaustedError(self.name, scripted=len(self._turns), call=position + 1)
            return _fail(error)
        turn = self._turns[position]
        usage, finish = turn.closing(messages)
        if self.delay:
            return _play_slowly(turn.deltas, usage, finish, self.delay)
        return _play(turn.deltas, usage, finish)

    def __repr__(self) -> str:
        return f"ScriptedModel(name={self.name!r}, turns={len(self._turns)}, calls={self.calls})"


@final
class FunctionModel:
    """A chat model whose every response comes from a function you write.

    `fn(messages, tools, options)` gets the request as lists (`tools == []` once tools are
    withdrawn). It may be sync or async and returns one response: a `str`, a `Msg`, a `text()` /
    `tool_call()` value, or a list of them (several tool calls are parallel calls). It may also
    return an async iterator of `ModelDelta`s, which is streamed as is.

    Args:
        fn: The function.
        chunk_size: Characters per text, thinking or tool-argument delta.
        name: The model's name.
        context_window: The context window it declares.
        capabilities: What the model claims to support (see `ScriptedModel`).

    Example:
        ```python
        import asyncio
        from rxagent.messages import Msg
        from rxagent.models import ModelOptions, ResponseBuilder, ToolSchema
        from rxagent.testing import FunctionModel, tool_call


        def respond(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions):
            if messages[-1].role == "user" and tools:
                return [tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)]
            return "Done."


        async def reply(tools: list[ToolSchema]) -> Msg:
            builder = ResponseBuilder()
            async for delta in model.stream([Msg.user("add")], tools, ModelOptions()):
                builder.add(delta)
            return builder.build()


        model = FunctionModel(respond)
        assert len(asyncio.run(reply([ToolSchema(name="add")])).tool_calls) == 2
        assert asyncio.run(reply([])).text == "Done."
        ```
    """

    __slots__ = ("_fn", "capabilities", "chunk_size", "context_window", "name", "requests")

    def __init__(
        self,
        fn: ModelFunction,
        *,
        chunk_size: int = 8,
        name: str = "function",
        context_window: int = 1_000_000,
        capabilities: Capabilities | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"FunctionModel needs a function, got {type(fn).__name__}")
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        self._fn = fn
        self.capabilities = capabilities
        self.name = name
        self.context_window: int | None = context_window
        self.chunk_size = chunk_size
        self.requests: list[ModelRequest] = []
        """Every request received, in order."""

    @property
    def calls(self) -> int:
        """How many requests the model received."""
        return len(self.requests)

    def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSchema], options: ModelOptions
    ) -> AsyncIterator[ModelDelta]:
        """Record the request, call the function and stream its response."""
        self.requests.append(ModelRequest(tuple(messages), tuple(tools), options))
        return self._respond(list(messages), list(tools), options, len(self.requests))

    async def _respond(
        self, messages: list[Msg], tools: list[ToolSchema], options: ModelOptions, call: int
    ) -> AsyncIterator[ModelDelta]:
        result: Any = self._fn(messages, tools, options)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, AsyncIterator):
            try:
                async for delta in result:
                    yield delta
            finally:
                aclose = getattr(result, "aclose", None)
                if aclose is not None:
                    await aclose()
            return
        where = f"the response of FunctionModel {self.name!r} (call #{call})"
        turn = prepare_turn(result, self.chunk_size, where=where)
        for delta in turn.deltas:
            yield delta
        for delta in turn.closing(messages):
            yield delta

    def __repr__(self) -> str:
        fn_name = getattr(self._fn, "__name__", type(self._fn).__name__)
        return f"FunctionModel({fn_name}, name={self.name!r}, calls={self.calls})"
