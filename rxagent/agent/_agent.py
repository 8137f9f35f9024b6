"""`ReActAgent`: the facade over the Rx loop."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, Self, TypeAlias

from rxagent.agent._agent_nesting import AgentNesting
from rxagent.agent._agent_sessions import AgentSessions
from rxagent.agent._checks import (
    check_agent_arguments,
    check_context_window,
    check_guards,
    check_interceptors,
    check_prices,
    stop_conditions,
)
from rxagent.agent._consume import bounded_events
from rxagent.agent._loop import run_observable, run_to_result
from rxagent.agent._selecting import check_tool_selection
from rxagent.agent._sessions import SessionRuns
from rxagent.agent._start import RunArgs, call_then_close, new_result_run, new_run
from rxagent.agent._support import Deps, LoopThread, coerce_input, resolve_model
from rxagent.context import RunContext
from rxagent.error_messages import ErrorMessages
from rxagent.errors import ConfigurationError
from rxagent.hooks import HookChain
from rxagent.messages import Msg
from rxagent.models.base import ChatModel, ModelOptions
from rxagent.state import InMemoryStore, SessionStore
from rxagent.tools import Tool, Toolkit, Toolset

if TYPE_CHECKING:
    from reactivex import Observable

    from rxagent.agent.conditions import StopCondition
    from rxagent.context import Principal
    from rxagent.error_messages import ErrorMessagesLike
    from rxagent.events import BaseEvent
    from rxagent.guards import Guard, GuardPipeline
    from rxagent.interceptors import InterceptorChain, Prices
    from rxagent.output import OutputStrategy
    from rxagent.result import AgentResult
    from rxagent.tools import ToolSelector

__all__ = ["AgentInput", "ReActAgent", "SystemPrompt"]

AgentInput: TypeAlias = str | Msg | Sequence[Msg] | None
"""What a run takes: a user text, a message, messages to append, or None (continue)."""

SystemPrompt: TypeAlias = str | Callable[[RunContext], str | Awaitable[str]]
"""A system prompt, or a function of the run context evaluated at the start of each run."""

logger: Final = logging.getLogger("rxagent.agent")

_DEFAULT_EVENT_BUFFER: Final = 256


class ReActAgent(AgentSessions, AgentNesting):
    """A tool-using agent whose runs are typed event streams.

    Args:
        name: The agent's name (in events, and the key of its sessions in stores).
        sys_prompt: The system prompt, or a function of the `RunContext` evaluated per run
            (sync or async). An empty prompt (`""`, the default, or a function returning `""`)
            sends no system message: each request starts with the conversation. Only the
            `"prompted"` structured-output strategy then adds a system message, its own
            instructions.
        model: A `ChatModel`, or a `"provider:model"` string.
        tools: Tools: functions (made tools with `@tool` rules), `Tool`s or a `Toolkit`.
        hooks: Hooks, in registration order.
        max_iters: The most reasoning steps; shorthand for `stop_when=[max_steps(max_iters)]`.
        max_tool_calls: The most tool calls per run; then tools are withdrawn.
        parallel_tool_calls: Run the tool calls of one response concurrently.
        tool_timeout: Default seconds per tool call (a tool's own `timeout` wins).
        max_concurrent_runs: The most runs of this agent at once; more wait.
        stop_when: Stop conditions checked after each step.
        store: Where sessions live (in memory by default).
        request_timeout: Seconds a whole run may take (None: no limit).
        options: Default `ModelOptions` for every request.
        interrupt_tools: On interrupt, `"cancel"` running tools or `"wait"` for them.
        lease_ttl_s: Seconds a run's session lease lives without renewal.
        checkpoint: When state is saved: `"run"` at the end of each run, `"step"` also after
            every completed step (tool results in), `"auto"` (default) `"step"` for a persistent
            store and `"run"` for the in-memory one.
        output_type: The structured output of every run (a pydantic model, dataclass,
            TypedDict, `list[...]`, union, `str` or `int`); a call's `output_type` wins. See
            "Structured output" in the docs.
        output_strategy: How the output is asked for: `"auto"` (from the model's
            capabilities), `"native"`, `"tool"` or `"prompted"`; a call's wins.
        max_output_retries: How often an answer that does not validate is sent back to the
            model with the errors before the run fails with `OUTPUT_INVALID`.
        guards: Guard stages (`rxagent.guards`), or a `GuardPipeline`: checks on the input
            (right after PreCall), on tool calls and results, and on the final reply. A
            rejected input ends the run with `GUARD_REJECTED` before memory or the model.
        tool_selector: Chooses the tools each request offers (`KeywordSelector`,
            `EmbeddingSelector`, `AllTools` or your own `ToolSelector`) from the user's latest
            message; a call to a tool not offered gets an error result.
        max_tools_per_request: The most tools one request offers. Alone, it selects with
            `KeywordSelector()`; None (the default) and no selector: every tool.
        error_messages: The text a user reads in `result.text` when a run fails without an
            answer: an `ErrorMessages`, a `{ErrorCode: template}` mapping over the English
            defaults, or a function `(error, ctx) -> str | None` (see "Observability").
        interceptors: Wrappers around every model and tool call (`rxagent.interceptors`:
            `@around_model_call`, `@around_tool_call`, `FallbackModels`, `ResponseCache`,
            `CircuitBreaker`, `UsageLimits`); lower priority runs outermost. A call's own
            `interceptors=` come after these.
        prices: The price table behind `Usage.cost` (`rxagent.interceptors.Prices`); the table
            shipped with rxagent by default.
        record_changes: Record what hooks change: each field a hook changes in an event is
            added to its `changes` as a `FieldChange(by, field, before)` (see "Seeing what hooks
            changed"). Off by default: then events carry no `changes` and nothing is copied.

    Example:
        ```python
        from rxagent import ReActAgent, tool
        from rxagent.testing import ScriptedModel, tool_call


        @tool
        def add(a: int, b: int) -> int:
            \"\"\"Add two numbers.

            Args:
                a: The first number.
                b: The second number.
            \"\"\"
            return a + b


        model = ScriptedModel([tool_call("add", a=2, b=3), "2 + 3 = 5"])
        agent = ReActAgent("calc", "You add numbers.", model, tools=[add])
        result = agent.call_sync("What is 2 + 3?")
        assert result.text == "2 + 3 = 5" and result.tools_used == ("add",)
        ```
    """  # noqa: D214 - the example tool's docstring has its own Args section

    def __init__(
        self,
        name: str,
        sys_prompt: SystemPrompt = "",
        model: ChatModel | str | None = None,
        *,
        tools: Iterable[Tool[..., Any] | Toolset | Callable[..., Any]] | Toolkit = (),
        hooks: Iterable[object] = (),
        max_iters: int = 10,
        max_tool_calls: int | None = None,
        parallel_tool_calls: bool = True,
        tool_timeout: float | None = None,
        max_concurrent_runs: int | None = None,
        stop_when: Iterable[StopCondition | Callable[[RunContext], bool]] = (),
        store: SessionStore | None = None,
        request_timeout: float | None = 120.0,
        options: ModelOptions | None = None,
        interrupt_tools: Literal["cancel", "wait"] = "cancel",
        lease_ttl_s: float = 30.0,
        checkpoint: Literal["auto", "step", "run"] = "auto",
        output_type: object | None = None,
        output_strategy: OutputStrategy = "auto",
        max_output_retries: int = 2,
        guards: GuardPipeline | Iterable[Guard] | None = None,
        tool_selector: ToolSelector | None = None,
        max_tools_per_request: int | None = None,
        error_messages: ErrorMessagesLike = None,
        interceptors: Iterable[object] = (),
        prices: Prices | None = None,
        record_changes: bool = False,
    ) -> None:
        check_agent_arguments(
            name=name,
            sys_prompt=sys_prompt,
            max_iters=max_iters,
            max_tool_calls=max_tool_calls,
            max_concurrent_runs=max_concurrent_runs,
            interrupt_tools=interrupt_tools,
            checkpoint=checkpoint,
            max_output_retries=max_output_retries,
            output_strategy=output_strategy,
            output_type=output_type,
            record_changes=record_changes,
        )
        self.name = name
        self.sys_prompt = sys_prompt
        self.model = resolve_model(model)
        self._models_by_name: dict[str, ChatModel] = {}  # per-call "provider:model" strings
        self.toolkit = tools if isinstance(tools, Toolkit) else Toolkit(tools)
        self.hooks = HookChain(
            hooks, interceptors=check_interceptors(interceptors), record_changes=record_changes
        )
        self.prices = check_prices(prices)
        self.stop_when = stop_conditions(stop_when, max_iters)
        self.max_iters = max_iters
        self.max_tool_calls = max_tool_calls
        self.parallel_tool_calls = parallel_tool_calls
        self.tool_timeout = tool_timeout
        self.max_concurrent_runs = max_concurrent_runs
        self.store: SessionStore = store if store is not None else InMemoryStore()
        self.request_timeout = request_timeout
        self.options = options or ModelOptions()
        self.interrupt_tools = interrupt_tools
        self.lease_ttl_s = lease_ttl_s
        self.checkpoint: Literal["auto", "step", "run"] = checkpoint
        self.output_type = output_type
        self.output_strategy: OutputStrategy = output_strategy
        self.max_output_retries = max_output_retries
        self.guards = check_guards(guards)
        self.tool_selector = check_tool_selection(tool_selector, max_tools_per_request)
        self.max_tools_per_request = max_tools_per_request
        self.error_messages = ErrorMessages.of(error_messages)
        self._runs = SessionRuns()  # the runs by session: queues, slots, interrupts
        check_context_window(self)

    @property
    def interceptors(self) -> InterceptorChain:
        """The agent's interceptors (`agent.hooks.interceptors`); `add()` registers one."""
        return self.hooks.interceptors

    @property
    def record_changes(self) -> bool:
        """Whether events record what hooks change (`changes`); settable, for the next events."""
        return self.hooks.record_changes

    @record_changes.setter
    def record_changes(self, value: bool) -> None:
        self.hooks.record_changes = value

    def __repr__(self) -> str:
        return f"<ReActAgent {self.name!r} model={self.model.name!r} tools={len(self.toolkit)}>"

    # -- runs ------------------------------------------------------------------------------------

    def stream(
        self,
        msg: AgentInput = None,
        *,
        session_id: str = "default",
        model: ChatModel | str | None = None,
        options: ModelOptions | None = None,
        deps: Deps = None,
        output_type: object | None = None,
        output_strategy: OutputStrategy | None = None,
        queue: bool = False,
        principal: Principal | None = None,
        interceptors: Sequence[object] = (),
    ) -> Observable[BaseEvent]:
        """Return the run as a cold Observable: each subscription is one run.

        Subscribe on the event loop's thread. Disposing the subscription cancels the run. Bad
        input and a busy session arrive as `on_error` at subscribe; a failing run arrives as an
        `ErrorEvent` and a failed `PostCallEvent`, then `on_completed`.

        Example:
            ```python
            import asyncio
            from reactivex import operators as ops
            from rxagent import ReActAgent
            from rxagent.testing import ScriptedModel

            async def main() -> list[str]:
                agent = ReActAgent("a", "", ScriptedModel(["Hello there"], chunk_size=5))
                done = asyncio.get_running_loop().create_future()
                kinds: list[str] = []
                agent.stream("hi").pipe(ops.map(lambda e: e.type)).subscribe(
                    on_next=kinds.append, on_completed=lambda: done.set_result(kinds))
                return await done

            kinds = asyncio.run(main())
            assert kinds[0] == "pre_call" and kinds[-1] == "post_call"
            assert kinds.count("reasoning_chunk") == 3
            ```
        """
        args = RunArgs(
            msg,
            session_id,
            model,
            options,
            deps,
            output_type,
            output_strategy,
            queue,
            principal=principal,
            interceptors=interceptors,
        )
        return run_observable(lambda: new_run(self, args, None))

    def events(
        self,
        msg: AgentInput = None,
        *,
        session_id: str = "default",
        model: ChatModel | str | None = None,
        options: ModelOptions | None = None,
        deps: Deps = None,
        output_type: object | None = None,
        output_strategy: OutputStrategy | None = None,
        queue: bool = False,
        principal: Principal | None = None,
        interceptors: Sequence[object] = (),
        buffer: int = _DEFAULT_EVENT_BUFFER,
    ) -> AsyncIterator[BaseEvent]:
        """Return the run as an async iterator of events, read from a bounded buffer.

        A slow consumer slows the run. Leaving the loop early (`break`, an exception) cancels
        the run. A busy session raises `SessionBusyError` when iteration starts.

        Raises:
            InvalidInputError: At once, for an input that is not str / Msg / list of Msg.

        Example:
            ```python
            import asyncio
            from rxagent import PostCallEvent, ReActAgent
            from rxagent.testing import ScriptedModel

            async def main() -> str:
                agent = ReActAgent("a", "", ScriptedModel(["Hello!"]))
                async for event in agent.events("hi"):
                    if isinstance(event, PostCallEvent):
                        return event.reply.text
                return ""

            assert asyncio.run(main()) == "Hello!"
            ```
        """
        coerce_input(msg)
        if buffer < 1:
            raise ConfigurationError("events(buffer=...) must be at least 1")
        args = RunArgs(
            msg,
            session_id,
            model,
            options,
            deps,
            output_type,
            output_strategy,
            queue,
            principal=principal,
            interceptors=interceptors,
        )
        return bounded_events(
            lambda gate: run_observable(lambda: new_run(self, args, gate)), buffer
        )

    async def call(
        self,
        msg: AgentInput = None,
        *,
        session_id: str = "default",
        model: ChatModel | str | None = None,
        options: ModelOptions | None = None,
        deps: Deps = None,
        output_type: object | None = None,
        output_strategy: OutputStrategy | None = None,
        queue: bool = False,
        principal: Principal | None = None,
        interceptors: Sequence[object] = (),
    ) -> AgentResult[Any]:
        """Run to the end and return the `AgentResult` (failures are in `result.error`).

        Raises:
            InvalidInputError: For an input that is not str / Msg / list of Msg.
            SessionBusyError: When the session already has a run (and `queue` is False).
        """
        args = RunArgs(
            msg,
            session_id,
            model,
            options,
            deps,
            output_type,
            output_strategy,
            queue,
            principal=principal,
            interceptors=interceptors,
        )
        result = await run_to_result(lambda: new_result_run(self, args))
        if result is None:  # pragma: no cover - a run without a decision ends with PostCall
            raise RuntimeError("the run ended without a PostCallEvent")
        return result

    def call_sync(self, msg: AgentInput = None, **kwargs: Any) -> AgentResult[Any]:
        """Blocking `call()` for scripts; inside a running loop (Jupyter) it runs on a private loop.

        The private loop lives on a daemon thread, so the caller's loop is never re-entered.

        Example:
            ```python
            from rxagent import ReActAgent
            from rxagent.testing import ScriptedModel

            agent = ReActAgent("a", "", ScriptedModel(["Hi!"]))
            assert agent.call_sync("hello").text == "Hi!"
            ```
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(call_then_close(self, msg, **kwargs))
        future = asyncio.run_coroutine_threadsafe(self.call(msg, **kwargs), LoopThread.get())
        return future.result()

    async def aclose(self) -> None:
        """Close the models' connection pools on the running loop, the toolsets and the guards.

        That is the agent's model and the models it resolved from per-call `model="..."`
        strings, every toolset (an MCP server's connection, say) the runs opened, the guard
        stages' connections (a Redis rate limit's) and the interceptors' (a cache's store, a
        fallback's models). The agent
        stays usable: a later run opens new connections. `async with agent:` closes them at the
        end of the block. Everything is closed even when one of them fails to; then the first
        failure is raised.
        """
        first: Exception | None = None
        for model in (self.model, *self._models_by_name.values()):
            aclose = getattr(model, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception as exc:  # one failing pool must not leave the others open
                    logger.warning("closing model %r failed", model, exc_info=exc)
                    first = first or exc
        for interceptor in self.interceptors:  # a cache's store, a fallback's models
            aclose = getattr(interceptor, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception as exc:
                    logger.warning("closing interceptor %r failed", interceptor, exc_info=exc)
                    first = first or exc
        try:
            await self.toolkit.aclose()  # toolsets (MCP servers) close; a later run reopens them
        except Exception as exc:
            first = first or exc
        if self.guards is not None:
            try:
                await self.guards.aclose()  # a rate limit's Redis client; a later run reopens it
            except Exception as exc:
                first = first or exc
        if first is not None:
            raise first

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def interrupt(self, session_id: str = "default", msg: str | Msg | None = None) -> bool:
        """Ask the session's running run to stop at its next checkpoint.

        Running tools are cancelled (or awaited, with `interrupt_tools="wait"`), a streaming model
        call stops, every tool call gets a result, and state is saved. `msg` becomes the reply.

        Returns:
            False when the session has no active run.
        """
        return self._runs.interrupt(session_id, msg)

    def is_running(self, session_id: str = "default") -> bool:
        """True while the session has a run in progress."""
        return session_id in self._runs.running

    def running_sessions(self) -> tuple[str, ...]:
        """The sessions that have a run in progress in this process, sorted."""
        return tuple(sorted(self._runs.running))

    def interrupt_all(self, msg: str | Msg | None = None) -> int:
        """Interrupt every run in progress (as `interrupt` does one); return how many there were.

        A server calls this on shutdown, then `wait_idle()`, so each run saves its state.
        """
        return sum(self.interrupt(session_id, msg) for session_id in self.running_sessions())

    async def wait_idle(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 - a bool, not a raise
        *,
        session_id: str | None = None,
    ) -> bool:
        """Wait until no run of this agent is in progress (or queued) on this event loop.

        A run counts until it has saved its state and released its session, so after a True
        the session can be loaded or run again. With `session_id`, only that session's runs
        are waited for: a server does that after a client went away and its run was cancelled.

        Returns:
            True when idle; False when `timeout` seconds passed first.

        Example:
            ```python
            import asyncio
            from rxagent import ReActAgent
            from rxagent.testing import FunctionModel

            async def slow(messages, tools, options):
                await asyncio.sleep(30)
                return "late"

            async def main() -> None:
                agent = ReActAgent("a", "", FunctionModel(slow))
                task = asyncio.create_task(agent.call("hi", session_id="s1"))
                while not agent.running_sessions():
                    await asyncio.sleep(0)
                assert agent.interrupt_all("shutting down") == 1
                assert await agent.wait_idle(timeout=5)
                assert (await task).interrupted

            asyncio.run(main())
            ```
        """
        return await self._runs.wait_idle(timeout, session_id)
