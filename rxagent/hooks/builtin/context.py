"""`ContextWindow`: the built-in hook that keeps every request within the model's context window.

It runs last among PreReasoning hooks (priority 1000), so messages other hooks add are counted.
It changes the request only; memory keeps everything. See `trim_to_budget` for the algorithm.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final, Literal

from rxagent._validate import check_int
from rxagent.context import current_run
from rxagent.errors import ConfigurationError, ContextTooLongError, NoActiveRunError
from rxagent.events import BaseEvent, ContextTrimmedEvent, PreReasoningEvent
from rxagent.hooks._hook import BaseHook, OnError
from rxagent.hooks.builtin._summary import (
    SUMMARY_MESSAGE_TOKENS,
    summarize_span,
    summary_message,
)
from rxagent.hooks.builtin._trim import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    TrimResult,
    reply_reserve,
    system_prompt_length,
    trim_to_budget,
)
from rxagent.hooks.builtin._truncate import MIN_TOOL_RESULT_TOKENS
from rxagent.hooks.builtin._windows import DEFAULT_CONTEXT_WINDOW, context_window_for
from rxagent.messages import Msg
from rxagent.tokens import counter_for
from rxagent.tokens._bound import request_bound, tools_bound

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.context import RunContext
    from rxagent.models.base import ChatModel, ModelOptions, ToolSchema
    from rxagent.tokens import TokenCounter

__all__ = ["DEFAULT_MAX_OUTPUT_TOKENS", "SUMMARY_MAX_TOKENS", "ContextWindow", "Strategy"]

logger: Final = logging.getLogger("rxagent.hooks.context_window")

Strategy = Literal["drop", "summarize"]
"""What happens to history left out: `"drop"` it, or `"summarize"` it into one system message."""

SUMMARY_MAX_TOKENS: Final = 1024
"""The most tokens a summary may take (and at most a quarter of the messages' budget)."""

_MIN_SUMMARY_TOKENS: Final = 64
_warned_unknown: set[str] = set()

_FROM_WINDOW: Final = "a quarter of the window"


def _unknown_window_fix(model_name: str, model: ChatModel | None) -> str:
    """How to declare a model's window, in the words of the code that makes the model."""
    provider = getattr(model, "provider", None)
    made = ""
    if isinstance(provider, str) and provider and getattr(model, "model", None) == model_name:
        made = (
            f'resolve("{provider}:{model_name}", context_window=8192), '
            f'{type(model).__name__}("{model_name}", context_window=8192), '
        )
    return (
        f"set the model's real window in tokens: {made}or ContextWindow(context_window=8192) in "
        "ReActAgent(hooks=[...]) (8192 stands for your model's window)"
    )


def _counter_for(name: str, model: ChatModel | None) -> TokenCounter:
    """The shared counter for a model: its `provider` attribute when it has one, else openai."""
    provider = getattr(model, "provider", None)
    return counter_for(name, provider=provider if isinstance(provider, str) else "openai")


class ContextWindow(BaseHook):
    """Trim each model request to the context window, without breaking the conversation.

    The messages' budget is the context window less the system prompt (the leading system
    messages), the tool schemas and the reply's max output tokens (`max_output_for`). Over
    budget, the oldest history goes first, in whole turns (phase 1), then tool interactions after
    the current user message, oldest first, keeping the newest one (phase 2), whose results are
    shortened with a visible marker if it is still too big. The system prompt and the current
    user message are never dropped: when they alone do not fit, the run fails with
    `CONTEXT_TOO_LONG` before the model is called. Whenever the request changes, a
    `ContextTrimmedEvent` follows the `PreReasoningEvent`.

    The context window is the first of: `context_window` given here, the model's
    `context_window` attribute, the table of known models (`context_window_for`), and
    `DEFAULT_CONTEXT_WINDOW` (128,000) with a logged warning once per unknown model name, which
    says how to declare the window.

    Args:
        context_window: The window in tokens; None resolves it from the model.
        max_output_tokens: Tokens kept free for the reply, unless the request's
            `ModelOptions.max_output_tokens` (or the model's own default options) say otherwise.
            None (the default) adapts to the window: a quarter of it, at most
            `DEFAULT_MAX_OUTPUT_TOKENS` (4,096).
        strategy: `"drop"` left-out history, or `"summarize"` it into one system message with
            a call to the run's model (summaries are cached in `RunContext.extra`, per span;
            a `ScriptedModel` plays one of its turns for each summary call).
        max_tool_result_tokens: Shorten any tool result message longer than this, with a
            visible marker (at least 64); None for no limit.
        max_turns: Send at most this many turns of history (a turn starts at a user message;
            the current turn comes on top); None for no limit. Memory keeps everything.

    Raises:
        ConfigurationError: For a number that is not a positive int, a window no larger than
            a `max_output_tokens` you set, or an unknown strategy.

    Example:
        ```python
        import asyncio
        from rxagent import ReActAgent
        from rxagent.events import ContextTrimmedEvent
        from rxagent.hooks.builtin import ContextWindow
        from rxagent.testing import ScriptedModel


        async def main() -> None:
            model = ScriptedModel(["Sure.", "Fine.", "Done."])
            window = ContextWindow(context_window=4_300, max_output_tokens=4_096)
            agent = ReActAgent("a", "Be brief.", model, hooks=[window])
            await agent.call("Tell me about tides. " * 20)
            await agent.call("And the moon? " * 20)
            events = [e async for e in agent.events("Thanks!")]  # the first turn must go
            trimmed = [e for e in events if isinstance(e, ContextTrimmedEvent)]
            assert len(trimmed) == 1 and len(trimmed[0].dropped) == 2
            assert trimmed[0].tokens_after <= trimmed[0].budget
            sent = model.requests[-1].messages
            assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
            assert len((await agent.state_dict())["memory"]) == 6  # memory keeps everything


        asyncio.run(main())
        ```
    """

    priority: int = 1000
    on_error: OnError = "propagate"
    events: frozenset[type[BaseEvent]] | None = frozenset({PreReasoningEvent})

    def __init__(
        self,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
        strategy: Strategy = "drop",
        max_tool_result_tokens: int | None = None,
        *,
        max_turns: int | None = None,
    ) -> None:
        check_int("ContextWindow(context_window=...)", context_window, optional=True)
        check_int("ContextWindow(max_output_tokens=...)", max_output_tokens, optional=True)
        check_int(
            "ContextWindow(max_tool_result_tokens=...)",
            max_tool_result_tokens,
            optional=True,
            minimum=MIN_TOOL_RESULT_TOKENS,
        )
        check_int("ContextWindow(max_turns=...)", max_turns, optional=True)
        if strategy not in ("drop", "summarize"):
            raise ConfigurationError(
                f"ContextWindow(strategy=...) must be 'drop' or 'summarize', got {strategy!r}"
            )
        if (
            context_window is not None
            and max_output_tokens is not None
            and context_window <= max_output_tokens
        ):
            raise ConfigurationError(
                f"ContextWindow(context_window={context_window}) leaves no room for messages "
                f"after max_output_tokens={max_output_tokens}; raise context_window or lower "
                "max_output_tokens"
            )
        self.context_window = context_window
        self.max_output_tokens = max_output_tokens
        self.strategy: Strategy = strategy
        self.max_tool_result_tokens = max_tool_result_tokens
        self.max_turns = max_turns
        self.name = "context_window"
        self._tools: tuple[Sequence[ToolSchema], TokenCounter, int] | None = None

    def __repr__(self) -> str:
        return (
            f"ContextWindow(context_window={self.context_window}, "
            f"max_output_tokens={self.max_output_tokens}, strategy={self.strategy!r}, "
            f"max_tool_result_tokens={self.max_tool_result_tokens}, max_turns={self.max_turns})"
        )

    # -- configuration -------------------------------------------------------------------------

    def window_for(self, model_name: str, model: ChatModel | None = None) -> int:
        """Return the context window used for requests to a model.

        Args:
            model_name: The model's name, looked up in the table of known models.
            model: The model, whose `context_window` attribute wins over the table.

        Example:
            ```python
            from rxagent.hooks.builtin import ContextWindow

            assert ContextWindow().window_for("gpt-4") == 8_192
            assert ContextWindow(context_window=50_000).window_for("gpt-4") == 50_000
            ```
        """
        if self.context_window is not None:
            return self.context_window
        declared = getattr(model, "context_window", None)
        if isinstance(declared, int) and not isinstance(declared, bool) and declared > 0:
            return declared
        known = context_window_for(model_name)
        if known is not None:
            return known
        if model_name not in _warned_unknown:
            _warned_unknown.add(model_name)
            logger.warning(
                "model %r has an unknown context window; assuming %s tokens. To change that, %s",
                model_name,
                f"{DEFAULT_CONTEXT_WINDOW:,}",
                _unknown_window_fix(model_name, model),
            )
        return DEFAULT_CONTEXT_WINDOW

    def validate_for(
        self,
        model: ChatModel,
        options: ModelOptions | None = None,
        *,
        system_prompt: str = "",
        tools: Sequence[ToolSchema] = (),
    ) -> int:
        """Check that requests to `model` leave room for messages; return the messages' budget.

        For the agent to call at construction, so a misconfiguration fails there and then
        rather than in every run.

        Args:
            model: The agent's model.
            options: The agent's default `ModelOptions` (their `max_output_tokens` wins).
            system_prompt: The system prompt, when it is a fixed string.
            tools: The tool schemas offered.

        Raises:
            ConfigurationError: When the window, less the system prompt, the tool schemas and
                the max output tokens, leaves no tokens for messages.

        Example:
            ```python
            from rxagent.errors import ConfigurationError
            from rxagent.hooks.builtin import ContextWindow
            from rxagent.testing import ScriptedModel

            model = ScriptedModel(["hi"], context_window=8_000)
            budget = ContextWindow().validate_for(model, system_prompt="Be brief.")
            assert 0 < budget < 8_000 - 2_000  # a quarter of the window is kept for the reply
            try:
                ContextWindow(max_output_tokens=8_000).validate_for(model)
            except ConfigurationError as exc:
                assert "max_output_tokens 8,000" in str(exc)
            else:
                raise AssertionError("a window no larger than the max output is refused")
            ```
        """
        window = self.window_for(model.name, model)
        prompt = [Msg.system(system_prompt)] if system_prompt else []
        counter = _counter_for(model.name, model)
        system = counter.count_messages(prompt)
        schemas = counter.count_tools(list(tools))
        max_output, source = self._max_output(window, options, model)
        budget = window - system - schemas - max_output
        if budget <= 0:
            raise ConfigurationError(
                f"model {model.name!r} has no room for messages: context window {window:,} - "
                f"system prompt {system:,} - tool schemas {schemas:,} - max_output_tokens "
                f"{max_output:,} (from {source}) = {budget:,}; "
                f"{'set' if source == _FROM_WINDOW else 'lower'} max_output_tokens, shorten the "
                "system prompt, offer fewer tools or declare the model's real window "
                "(context_window=...)"
            )
        return budget

    def check_room(
        self,
        model: ChatModel,
        options: ModelOptions | None = None,
        *,
        system_prompt: str = "",
        tools: Sequence[ToolSchema] = (),
    ) -> None:
        """Like `validate_for`, but skip tokenizing when a byte bound shows there is room.

        Raises:
            ConfigurationError: When requests to `model` leave no tokens for messages.
        """
        prompt = [Msg.system(system_prompt)] if system_prompt else []
        window = self.window_for(model.name, model)
        room = window - self._max_output(window, options, model)[0]
        if request_bound(prompt, tools) < room:
            return
        self.validate_for(model, options, system_prompt=system_prompt, tools=tools)

    def max_output_for(
        self, window: int, options: ModelOptions | None = None, model: ChatModel | None = None
    ) -> int:
        """Return the tokens kept free for the reply in requests to a model with this window.

        The first that is set: the request's `ModelOptions.max_output_tokens`, the model's own
        default options (`model.options`, as provider clients have), this hook's
        `max_output_tokens`. When none is, a quarter of the window, at most
        `DEFAULT_MAX_OUTPUT_TOKENS` (4,096), so a small window keeps room for messages. It is a
        reserve in the budget only: the request's options are not changed.

        Example:
            ```python
            from rxagent.hooks.builtin import ContextWindow
            from rxagent.models import ModelOptions

            assert ContextWindow().max_output_for(8_192) == 2_048
            assert ContextWindow(max_output_tokens=500).max_output_for(8_192) == 500
            assert ContextWindow().max_output_for(8_192, ModelOptions(max_output_tokens=30)) == 30
            ```
        """
        return self._max_output(window, options, model)[0]

    def _max_output(
        self, window: int, options: ModelOptions | None, model: ChatModel | None
    ) -> tuple[int, str]:
        """The reply's reserve, and where it comes from (for error messages)."""
        requested = options.max_output_tokens if options is not None else None
        if requested:
            return requested, "ModelOptions.max_output_tokens"
        declared = getattr(getattr(model, "options", None), "max_output_tokens", None)
        if isinstance(declared, int) and not isinstance(declared, bool) and declared > 0:
            return declared, "the model's options"
        if self.max_output_tokens is not None:
            return self.max_output_tokens, "ContextWindow(max_output_tokens=...)"
        return reply_reserve(window), _FROM_WINDOW

    def _tool_tokens(self, tools: Sequence[ToolSchema], counter: TokenCounter) -> int:
        if not tools:
            return 0
        cached = self._tools
        if cached is not None and cached[0] is tools and cached[1] is counter:
            return cached[2]
        tokens = counter.count_tools(list(tools))
        self._tools = (tools, counter, tokens)  # holding `tools` keeps the identity check sound
        return tokens

    # -- the hook ------------------------------------------------------------------------------

    async def on_event(self, event: PreReasoningEvent) -> PreReasoningEvent | None:
        """Trim the request to the budget; None when it fits as it is.

        Raises:
            ContextTooLongError: When the system prompt and the current user message (or the
                newest tool interaction, even shortened) do not fit.
        """
        try:
            ctx: RunContext | None = current_run()
        except NoActiveRunError:
            ctx = None
        model = ctx.model if ctx is not None else None
        name = event.model or (model.name if model is not None else "")
        window = self.window_for(name, model)
        messages = event.messages
        if self.max_turns is None and self.max_tool_result_tokens is None:
            known = ctx.request_bound(messages) if ctx is not None else None
            if known is not None:  # the request as the run built it
                bound = known + tools_bound(event.tools)
            else:  # hooks before this one changed it: bound it here
                bound = request_bound(messages, event.tools)
            if bound <= window - self._max_output(window, event.options, model)[0]:
                return None  # fits for sure, without loading a tokenizer or counting a token
        counter = _counter_for(name, model)
        start = system_prompt_length(messages)
        system = counter.count_messages(messages[:start])  # with the reply priming
        tools = self._tool_tokens(event.tools, counter)
        max_output = self._max_output(window, event.options, model)[0]
        budget = window - system - tools - max_output
        where = (
            f"context window {window:,} - system prompt {system:,} - tool schemas {tools:,} - "
            f"max output {max_output:,} = {budget:,} tokens for messages"
        )
        if budget <= 0:
            raise ContextTooLongError(
                f"the request does not fit model {name!r}: {where}; shorten the system prompt, "
                "offer fewer tools, lower max_output_tokens or raise context_window",
                source="hook:context_window",
            )
        try:
            result = trim_to_budget(
                messages,
                budget,
                counter,
                max_turns=self.max_turns,
                max_tool_result_tokens=self.max_tool_result_tokens,
            )
        except ContextTooLongError as exc:
            raise ContextTooLongError(
                f"the request does not fit model {name!r}: {exc} ({where}); shorten the "
                "current message, set max_tool_result_tokens, lower max_output_tokens or "
                "raise context_window",
                source="hook:context_window",
            ) from exc
        if not result.changed:
            return None
        trimmed, summary = result.messages, None
        if self.strategy == "summarize" and result.history and ctx is not None:
            summarized = await self._summarize(ctx, messages, result, counter, window)
            if summarized is not None:
                result, summary = summarized
                trimmed = (*result.messages[:start], summary, *result.messages[start:])
        if ctx is not None:
            gone = result.dropped
            replaced: tuple[str, ...] = ()
            if summary is not None:
                replaced = tuple(m.id for m in result.history)
                kept_apart = set(replaced)
                gone = tuple(i for i in gone if i not in kept_apart)
            ctx.emit(
                ContextTrimmedEvent,
                dropped=gone,
                truncated=result.truncated,
                summarized=replaced,
                tokens_before=result.tokens_before,
                tokens_after=result.tokens_after
                + (counter.count_message(summary) if summary is not None else 0),
                budget=budget,
                strategy="drop" if summary is None else "summarize",
            )
        return event.replace(messages=trimmed)

    async def _summarize(
        self,
        ctx: RunContext,
        messages: Sequence[Msg],
        dropping: TrimResult,
        counter: TokenCounter,
        window: int,
    ) -> tuple[TrimResult, Msg] | None:
        """Trim again leaving room for a summary, and put the summary in; None to just drop."""
        budget = dropping.budget
        room = min(SUMMARY_MAX_TOKENS, budget // 4)
        if room < _MIN_SUMMARY_TOKENS:
            logger.info("no room for a summary in a %d-token budget; dropping history", budget)
            return None
        try:
            result = trim_to_budget(
                messages,
                budget - room,
                counter,
                max_turns=self.max_turns,
                max_tool_result_tokens=self.max_tool_result_tokens,
            )
        except ContextTooLongError:
            logger.info("no room for a summary beside what must be kept; dropping history")
            return None
        span = result.history
        if not span:  # pragma: no cover - a smaller budget drops at least the same history
            return None
        try:
            text = await summarize_span(
                span,
                model=ctx.model,
                counter=counter,
                extra=ctx.extra,
                limit=room,
                window=window,
                per_message=self.max_tool_result_tokens or SUMMARY_MESSAGE_TOKENS,
            )
        except Exception as exc:
            logger.warning(
                "could not summarize %d dropped messages (%s: %s); dropping them instead",
                len(span),
                type(exc).__name__,
                exc,
            )
            return None
        summary = summary_message(text, room, counter)
        if summary is None:  # pragma: no cover - room >= 64 always holds the header
            return None
        return result, summary
