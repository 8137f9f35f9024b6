"""`UsageLimits`: hard limits on what one run may use; exceeding one ends it with `USAGE_LIMIT`."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from rxagent._validate import check_int
from rxagent.context import current_run
from rxagent.errors import ConfigurationError, UsageLimitError

if TYPE_CHECKING:
    from rxagent.context import RunContext
    from rxagent.interceptors._call import ModelCall, NextModelCall, NextToolCall, ToolCall
    from rxagent.messages import ToolResultBlock
    from rxagent.models.base import ModelResponse

__all__ = ["UsageLimits"]

_TOKEN_LIMITS = (
    ("max_input_tokens", "input_tokens", "input tokens"),
    ("max_output_tokens", "output_tokens", "output tokens"),
    ("max_total_tokens", "total_tokens", "tokens"),
)


class UsageLimits:
    """Limits on one run's model requests, tokens, tool calls and cost; None is no limit.

    Each is checked before the call it would allow: before each model request (requests,
    tokens, cost, counted over the whole run, fallbacks and retries included) and before each
    tool call. A limit of N allows exactly N: `max_requests=3` lets three requests through and
    refuses the fourth. Token and cost limits refuse the next request once the run has reached
    them (a response's size is known only after it). A refusal ends the run with `USAGE_LIMIT`:
    a refused tool call gets an error result first, so the saved state stays paired.

    The agent's own `max_tool_calls` (withdraw the tools, then answer) is separate;
    `max_tool_calls` here is a hard stop.

    Args:
        max_requests: Model requests.
        max_input_tokens: Input tokens, summed over the run.
        max_output_tokens: Output tokens, summed over the run.
        max_total_tokens: Input plus output tokens.
        max_tool_calls: Tool calls started.
        max_cost: US dollars (`Usage.cost`, from the agent's price table).
        priority: Its place in the onion (default 1000: innermost, right around the model and
            the tool, so every request counts, fallbacks and retries included; a cache hit
            makes no request and never reaches it).
        name: For `modified_by` and `ErrorEvent.source` (`"interceptor:usage_limits"`).

    Raises:
        ConfigurationError: A limit that is not a positive int (a number for `max_cost`).

    Example:
        ```python
        from rxagent import ReActAgent, tool
        from rxagent.errors import ErrorCode
        from rxagent.interceptors import UsageLimits
        from rxagent.testing import ScriptedModel, tool_call


        @tool
        def ping() -> str:
            \"\"\"Ping.\"\"\"
            return "pong"


        model = ScriptedModel([tool_call("ping"), tool_call("ping"), "done"])
        limits = UsageLimits(max_requests=2)
        agent = ReActAgent("a", "", model, tools=[ping], interceptors=[limits])
        result = agent.call_sync("go")
        assert result.error.code is ErrorCode.USAGE_LIMIT and result.usage.requests == 2
        ```
    """

    def __init__(
        self,
        *,
        max_requests: int | None = None,
        max_input_tokens: int | None = None,
        max_output_tokens: int | None = None,
        max_total_tokens: int | None = None,
        max_tool_calls: int | None = None,
        max_cost: float | None = None,
        priority: int = 1000,
        name: str = "usage_limits",
    ) -> None:
        for what, value in (
            ("max_requests", max_requests),
            ("max_input_tokens", max_input_tokens),
            ("max_output_tokens", max_output_tokens),
            ("max_total_tokens", max_total_tokens),
            ("max_tool_calls", max_tool_calls),
        ):
            check_int(f"UsageLimits({what}=...)", value, optional=True, minimum=0)
        if max_cost is not None and (
            isinstance(max_cost, bool) or not isinstance(max_cost, int | float) or max_cost < 0
        ):
            raise ConfigurationError(
                f"UsageLimits(max_cost=...) takes US dollars >= 0 or None, got {max_cost!r}"
            )
        self.max_requests = max_requests
        self.max_input_tokens = max_input_tokens
        self.max_output_tokens = max_output_tokens
        self.max_total_tokens = max_total_tokens
        self.max_tool_calls = max_tool_calls
        self.max_cost = max_cost
        self.priority = priority
        self.name = name
        # tool calls started, per run; a run's entry goes with its context
        self._tool_calls: weakref.WeakKeyDictionary[RunContext, int] = weakref.WeakKeyDictionary()

    def _refuse(self, message: str) -> UsageLimitError:
        return UsageLimitError(message, source=f"interceptor:{self.name}")

    def check_request(self, run: RunContext) -> None:
        """Raise `UsageLimitError` when the run may make no more model requests."""
        usage = run.usage
        if self.max_requests is not None and usage.requests >= self.max_requests:
            raise self._refuse(
                f"the run made {usage.requests} model requests, the limit "
                f"(UsageLimits(max_requests={self.max_requests})); raise it to allow more"
            )
        for limit_name, field, words in _TOKEN_LIMITS:
            limit = getattr(self, limit_name)
            used = getattr(usage, field)
            if limit is not None and used >= limit:
                raise self._refuse(
                    f"the run used {used} {words}, reaching UsageLimits({limit_name}={limit}); "
                    "raise it to allow more"
                )
        if self.max_cost is not None and usage.cost >= self.max_cost:
            raise self._refuse(
                f"the run cost ${usage.cost:.6f}, reaching UsageLimits(max_cost="
                f"{self.max_cost}); raise it to allow more"
            )

    async def around_model_call(self, call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        """Refuse the request when a limit is reached; otherwise make it."""
        self.check_request(current_run())
        return await call_next(call)

    async def around_tool_call(self, call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        """Refuse the tool call when `max_tool_calls` were started; otherwise count and run it."""
        run = current_run()
        started = self._tool_calls.get(run, 0)
        if self.max_tool_calls is not None and started >= self.max_tool_calls:
            raise self._refuse(
                f"the run started {started} tool calls, the limit (UsageLimits(max_tool_calls="
                f"{self.max_tool_calls})); the call {call.name!r} ({call.id}) was not executed"
            )
        self._tool_calls[run] = started + 1
        return await call_next(call)
