"""FallbackModels against the fake OpenAI server: each error kind, and when it must not move on."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import ErrorEvent, FallbackEvent, PostCallEvent, ReActAgent, ReasoningChunkEvent
from rxagent.errors import (
    AuthenticationError,
    ConfigurationError,
    ErrorCode,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
    RunTimeoutError,
)
from rxagent.events import BaseEvent
from rxagent.interceptors import FallbackModels, failure_kind
from rxagent.models import OpenAIChatModel
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol
from rxagent.testing.providers import FakeOpenAIServer, Fault


def client(server: FakeOpenAIServer, name: str = "gpt-4o-mini", **kw: Any) -> OpenAIChatModel:
    return OpenAIChatModel(name, base_url=server.base_url, api_key="sk-test", max_retries=0, **kw)


async def run(agent: ReActAgent) -> list[BaseEvent]:
    events = [e async for e in agent.events("hi")]
    assert_event_protocol(events)
    await agent.aclose()
    return events


FAULTS = [
    pytest.param(Fault(status=429), ErrorCode.RATE_LIMITED, id="rate_limit"),
    pytest.param(
        Fault(status=529, error_type="overloaded_error"), ErrorCode.PROVIDER_ERROR, id="overloaded"
    ),
    pytest.param(Fault(status=503), ErrorCode.PROVIDER_ERROR, id="unavailable"),
    pytest.param(Fault(status=500), ErrorCode.PROVIDER_ERROR, id="server_error"),
]


@pytest.mark.parametrize(("fault", "code"), FAULTS)
async def test_each_error_kind_moves_on_to_the_backup(fault: Fault, code: ErrorCode):
    async with FakeOpenAIServer(["primary"]) as primary, FakeOpenAIServer(["backup"]) as backup:
        primary.fail(1, fault)
        agent = ReActAgent(
            "a",
            "",
            client(primary),
            interceptors=[FallbackModels([client(backup, "gpt-4o")])],
        )
        events = await run(agent)
    fallbacks = [e for e in events if isinstance(e, FallbackEvent)]
    assert [(f.from_model, f.to_model, f.code) for f in fallbacks] == [
        ("gpt-4o-mini", "gpt-4o", code)
    ]
    first_chunk = next(i for i, e in enumerate(events) if isinstance(e, ReasoningChunkEvent))
    assert events.index(fallbacks[0]) < first_chunk  # it comes before the backup's chunks
    result = events[-1]
    assert isinstance(result, PostCallEvent)
    assert result.result.text == "backup"
    assert len(primary.requests) == 1
    assert len(backup.requests) == 1


async def test_a_timeout_moves_on():
    async with FakeOpenAIServer(["slow"]) as primary, FakeOpenAIServer(["fast"]) as backup:
        primary.fail(1, first_byte_delay=5.0)
        agent = ReActAgent(
            "a",
            "",
            client(primary, timeout=0.2),
            interceptors=[FallbackModels([client(backup, "gpt-4o")])],
        )
        events = await run(agent)
    assert any(isinstance(e, FallbackEvent) for e in events)
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.text == "fast"


async def test_a_failure_after_the_first_delta_does_not_move_on():
    async with FakeOpenAIServer(["a long answer"] * 3, chunk_size=2) as primary:
        primary.fail(1, mid_stream_error=2)
        backup = ScriptedModel(["backup"], name="backup")
        agent = ReActAgent("a", "", client(primary), interceptors=[FallbackModels([backup])])
        events = await run(agent)
    assert not any(isinstance(e, FallbackEvent) for e in events)
    restarted = [e for e in events if isinstance(e, ErrorEvent) and e.recoverable]
    assert len(restarted) == 1  # the step starts again on the same model
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.text == "a long answer"


async def test_a_bad_request_does_not_move_on():
    async with FakeOpenAIServer(["x"]) as primary:
        primary.fail(1, status=400)
        backup = ScriptedModel(["backup"], name="backup")
        agent = ReActAgent("a", "", client(primary), interceptors=[FallbackModels([backup])])
        events = await run(agent)
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.error is not None
    assert last.result.error.code is ErrorCode.INVALID_REQUEST


async def test_every_model_failing_fails_with_the_last_error():
    def limited(messages: Any, tools: Any, options: Any) -> str:
        raise RateLimitedError("429", status=429)

    def down(messages: Any, tools: Any, options: Any) -> str:
        raise ProviderError("down", status=502)

    chain = FallbackModels([FunctionModel(down, name="second")])
    agent = ReActAgent("a", "", FunctionModel(limited, name="first"), interceptors=[chain])
    events = await run(agent)
    moves = [(e.from_model, e.to_model) for e in events if isinstance(e, FallbackEvent)]
    assert moves == [("first", "second")]
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.error is not None
    assert last.result.error.message == "down"


async def test_on_takes_kinds_or_a_predicate():
    def limited(messages: Any, tools: Any, options: Any) -> str:
        raise RateLimitedError("429", status=429)

    backup = ScriptedModel(["backup"], name="backup")
    only_5xx = FallbackModels([backup], on=["server_error"])
    agent = ReActAgent("a", "", FunctionModel(limited), interceptors=[only_5xx])
    assert (await agent.call("hi")).error is not None
    anything = FallbackModels([backup], on=lambda exc: True)
    agent = ReActAgent("a", "", FunctionModel(limited), interceptors=[anything])
    assert (await agent.call("hi")).text == "backup"


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (RateLimitedError("x"), "rate_limit"),
        (ProviderError("x", status=529), "overloaded"),
        (ProviderError("x", provider_code="overloaded_error"), "overloaded"),
        (ProviderError("x", status=500), "server_error"),
        (RunTimeoutError("x"), "timeout"),
        (ProviderError("x", provider_code="circuit_open", status=503), "circuit_open"),
        (InvalidRequestError("x", status=400), None),
        (AuthenticationError("x", status=401), None),
        (ValueError("x"), None),
    ],
)
def test_failure_kinds(exc: BaseException, kind: str | None):
    assert failure_kind(exc) == kind


def test_failure_kinds_read_the_cause():
    timed_out = ProviderError("x", recoverable=True)
    timed_out.__cause__ = TimeoutError()
    dropped = ProviderError("x", recoverable=True)
    dropped.__cause__ = ConnectionResetError()
    assert failure_kind(timed_out) == "timeout"
    assert failure_kind(dropped) == "connection"


@pytest.mark.parametrize(
    ("args", "kw", "words"),
    [
        ((), {}, "non-empty list"),
        (["gpt"], {}, "non-empty list"),
        ([ScriptedModel([])], {"on": ["typo"]}, "unknown failure kinds"),
    ],
)
def test_bad_arguments_are_refused(args: Any, kw: dict[str, Any], words: str):
    with pytest.raises(ConfigurationError, match=words):
        FallbackModels(args, **kw)
