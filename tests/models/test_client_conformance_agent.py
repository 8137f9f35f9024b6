"""Agent runs over every provider client: tool calls, retries as run events, broken streams.

The same scenarios for each provider, as in `test_client_conformance`; the wire shape of what an
agent sends back (ids, signatures, message roles) is provider-specific and stays in each
`test_<provider>_client.py`.
"""

from __future__ import annotations

import pytest
from client_providers import Provider  # type: ignore[import-not-found]

from rxagent import ReActAgent, tool
from rxagent.errors import ErrorCode
from rxagent.events import (
    ErrorEvent,
    PostActingEvent,
    PostCallEvent,
    ReasoningChunkEvent,
    RetryEvent,
)
from rxagent.models.retry import RetryPolicy
from rxagent.testing import RecordingSleep, assert_event_protocol, tool_call


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


async def test_an_agent_run_with_a_tool_call_then_an_answer(provider: Provider):
    async with provider.server([tool_call("add", a=2, b=3), "2 + 3 = 5"], chunk_size=3) as server:
        async with provider.build(server) as model:
            agent = ReActAgent("calc", "You add numbers.", model, tools=[add])
            events = [e async for e in agent.events("What is 2 + 3?")]
    assert_event_protocol(events)
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.ok
    assert last.reply.text == "2 + 3 = 5"
    assert last.result.tools_used == ("add",)
    assert last.result.usage.requests == 2
    [acted] = [e for e in events if isinstance(e, PostActingEvent)]
    assert acted.result.output == "5"
    assert any(isinstance(e, ReasoningChunkEvent) for e in events)
    assert not [e for e in events if isinstance(e, ErrorEvent)]
    first, second = server.requests
    assert provider.tool_names(first.body) == ["add"]
    [(call_id, name)] = provider.sent_calls(second.body)
    assert name == "add"
    assert provider.tool_results(second.body) == [(call_id, "5")]  # answered under its call's id
    assert call_id == acted.tool_call.id  # the provider's id, or the agent's where it gave none


async def test_an_agent_built_from_a_model_string_uses_the_environment(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
):
    client = provider.client
    first, *others = client.api_key_env
    for name in others:
        monkeypatch.delenv(name, raising=False)
    async with provider.server([tool_call("add", a=2, b=3), "5"]) as server:
        monkeypatch.setenv(client.base_url_env[0], server.base_url)
        monkeypatch.setenv(first, "sk-env-0123456789abcdef")
        model = f"{provider.name}:{provider.model}"
        async with ReActAgent("calc", "Add.", model=model, tools=[add]) as agent:
            result = await agent.call("2 + 3?")
    assert result.text == "5"
    assert result.tools_used == ("add",)
    name, value = provider.key_header("sk-env-0123456789abcdef")
    assert [r.headers[name] for r in server.requests] == [value, value]


async def test_retries_are_run_events_before_the_first_chunk(provider: Provider):
    sleeps = RecordingSleep()
    async with provider.server([tool_call("add", a=1, b=2), "3"]) as server:
        server.fail(1, status=429, headers={"Retry-After": "2"})
        server.fail(2, status=503, headers={"Retry-After": "3"})
        policy = RetryPolicy(initial_delay_s=0.5, jitter=0.0, sleep=sleeps)
        async with provider.build(server, max_retries=policy) as model:
            agent = ReActAgent("calc", model=model, tools=[add])
            events = [e async for e in agent.events("1 + 2?")]
    assert_event_protocol(events)
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert [(r.attempt, r.delay_s, r.code) for r in retries] == [
        (2, 2.0, ErrorCode.RATE_LIMITED),
        (3, 3.0, ErrorCode.PROVIDER_ERROR),
    ]
    first_chunk = next(i for i, e in enumerate(events) if isinstance(e, ReasoningChunkEvent))
    assert events.index(retries[-1]) < first_chunk
    assert sleeps.delays == [2.0, 3.0]
    assert not [e for e in events if isinstance(e, ErrorEvent)]
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.reply.text == "3"
    assert len(server.requests) == 4


async def test_a_stream_broken_after_content_restarts_the_step(provider: Provider):
    async with provider.server(["first try", "second try"], chunk_size=3) as server:
        server.fail(1, mid_stream_error=provider.preamble + 2, consume_turn=True)
        async with provider.build(server, max_retries=0) as model:
            events = [e async for e in ReActAgent("a", model=model).events("go")]
    assert_event_protocol(events)
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [(e.code, e.recoverable) for e in errors] == [(ErrorCode.PROVIDER_ERROR, True)]
    assert len([e for e in events if e.type == "pre_reasoning"]) == 2  # the step started again
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.ok
    assert last.reply.text == "second try"
    assert len(server.requests) == 2
