"""UsageLimits: every limit allows exactly N, then ends the run with USAGE_LIMIT, state paired."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent import ErrorEvent, PostCallEvent, ReActAgent, tool
from rxagent.errors import ConfigurationError, ErrorCode
from rxagent.events import BaseEvent
from rxagent.interceptors import ModelPrice, Prices, UsageLimits
from rxagent.models.base import Usage
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call
from rxagent.testing.strategies import scripts
from rxagent.testing.tools import add, echo


@tool
def ping() -> str:
    """Ping."""
    return "pong"


def paired(memory: list[dict[str, Any]]) -> bool:
    """Every tool call in memory has its result, and every result its call."""
    calls = [
        b["id"]
        for m in memory
        if m["role"] == "assistant" and not isinstance(m["content"], str)
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    results = [b["id"] for m in memory if m["role"] == "tool" for b in m["content"]]
    return sorted(calls) == sorted(results)


async def run(
    agent: ReActAgent, session: str = "default"
) -> tuple[list[BaseEvent], dict[str, Any]]:
    events = [e async for e in agent.events("go", session_id=session)]
    assert_event_protocol(events)
    state = await agent.state_dict(session_id=session)
    assert paired(state["memory"])
    return events, state


def result_of(events: list[BaseEvent]) -> Any:
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    return last.result


async def test_max_requests_allows_exactly_n():
    model = ScriptedModel([tool_call("ping")] * 5 + ["done"])
    agent = ReActAgent("a", "", model, tools=[ping], interceptors=[UsageLimits(max_requests=3)])
    events, state = await run(agent)
    result = result_of(events)
    assert result.usage.requests == 3
    assert result.error.code is ErrorCode.USAGE_LIMIT
    assert result.error.source == "interceptor:usage_limits"
    assert "max_requests=3" in result.error.message
    assert state["usage"]["requests"] == 3
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.recoverable for e in errors] == [False]


async def test_max_tool_calls_is_a_hard_stop_with_paired_state():
    model = ScriptedModel([[tool_call("ping"), tool_call("ping")], [tool_call("ping")] * 2, "done"])
    limits = UsageLimits(max_tool_calls=3)
    agent = ReActAgent("a", "", model, tools=[ping], interceptors=[limits])
    events, state = await run(agent)
    result = result_of(events)
    assert result.tools_used == ("ping", "ping", "ping")
    assert result.error.code is ErrorCode.USAGE_LIMIT
    refused = [m for m in state["memory"] if m["role"] == "tool" and m["content"][0]["is_error"]]
    assert len(refused) == 1
    assert "max_tool_calls=3" in refused[0]["content"][0]["output"]


async def test_the_count_is_per_run():
    model = ScriptedModel([tool_call("ping"), "one", tool_call("ping"), "two"])
    agent = ReActAgent("a", "", model, tools=[ping], interceptors=[UsageLimits(max_tool_calls=1)])
    assert (await agent.call("go")).text == "one"
    assert (await agent.call("go")).text == "two"


@pytest.mark.parametrize(
    ("limit", "words"),
    [
        ({"max_input_tokens": 1}, "input tokens"),
        ({"max_output_tokens": 1}, "output tokens"),
        ({"max_total_tokens": 1}, "tokens"),
    ],
)
async def test_token_limits_refuse_the_next_request_once_reached(limit: dict[str, int], words: str):
    model = ScriptedModel([tool_call("ping"), "done"])
    limits = UsageLimits(**limit)  # type: ignore[arg-type]
    agent = ReActAgent("a", "", model, tools=[ping], interceptors=[limits])
    events, _ = await run(agent)
    result = result_of(events)
    assert result.usage.requests == 1
    assert result.error.code is ErrorCode.USAGE_LIMIT
    assert words in result.error.message


async def test_max_cost_uses_the_agents_prices():
    def priced(messages: Any, tools: Any, options: Any) -> Any:
        return tool_call("ping")

    model = FunctionModel(priced, name="m")
    prices = Prices({"m": ModelPrice(input=1_000_000.0, output=0.0)})  # $1 a token
    limits = UsageLimits(max_cost=5.0)
    agent = ReActAgent("a", "", model, tools=[ping], interceptors=[limits], prices=prices)
    events, _ = await run(agent)
    result = result_of(events)
    assert result.error.code is ErrorCode.USAGE_LIMIT
    assert "max_cost=5.0" in result.error.message
    assert result.usage.cost >= 5.0
    assert result.usage.cost == result.usage.input_tokens * 1.0


async def test_a_limit_of_zero_refuses_the_first_request():
    agent = ReActAgent("a", "", ScriptedModel(["x"]), interceptors=[UsageLimits(max_requests=0)])
    events, state = await run(agent)
    assert result_of(events).usage.requests == 0
    assert state["memory"] == []  # failed before the model answered: memory as it was


async def test_without_limits_nothing_is_refused():
    agent = ReActAgent("a", "", ScriptedModel(["x"]), interceptors=[UsageLimits()])
    assert (await agent.call("go")).ok


@pytest.mark.parametrize(
    "kw",
    [{"max_requests": -1}, {"max_tool_calls": 1.5}, {"max_cost": -1}, {"max_cost": True}],
)
def test_bad_limits_are_refused(kw: dict[str, Any]):
    with pytest.raises(ConfigurationError, match="UsageLimits"):
        UsageLimits(**kw)


@settings(max_examples=25, deadline=None)
@given(
    script=scripts(max_tool_turns=4, max_parallel=3),
    max_requests=st.none() | st.integers(min_value=0, max_value=5),
    max_tool_calls=st.none() | st.integers(min_value=0, max_value=6),
    parallel=st.booleans(),
)
def test_limits_are_never_exceeded_and_state_stays_paired(
    script: list[Any], max_requests: int | None, max_tool_calls: int | None, parallel: bool
):
    import asyncio

    async def main() -> None:
        limits = UsageLimits(max_requests=max_requests, max_tool_calls=max_tool_calls)
        agent = ReActAgent(
            "a",
            "",
            ScriptedModel(script),
            tools=[add, echo],
            interceptors=[limits],
            parallel_tool_calls=parallel,
        )
        events, _ = await run(agent)
        result = result_of(events)
        if max_requests is not None:
            assert result.usage.requests <= max_requests
        if max_tool_calls is not None:
            assert len(result.tools_used) <= max_tool_calls
        if result.error is not None:
            assert result.error.code is ErrorCode.USAGE_LIMIT
        else:  # it finished: every scripted turn was asked for
            assert result.ok
            assert result.usage.requests == len(script)

    asyncio.run(main())


def test_usage_adds_cost():
    assert (Usage(cost=0.5) + Usage(cost=0.25)).cost == 0.75
