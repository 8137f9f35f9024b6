"""CircuitBreaker with an injected clock: open, refuse, half-open trial, close."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rxagent import FallbackEvent, Msg, ReActAgent
from rxagent.errors import ConfigurationError, ErrorCode, InvalidRequestError, ProviderError
from rxagent.interceptors import CircuitBreaker, FallbackModels, ModelCall
from rxagent.testing import FunctionModel, ScriptedModel


class Flaky:
    """A model function that fails while `down` is set, counting calls."""

    def __init__(self) -> None:
        self.down = True
        self.calls = 0
        self.error: Exception = ProviderError("down", status=502)

    def __call__(self, messages: Any, tools: Any, options: Any) -> str:
        self.calls += 1
        if self.down:
            raise self.error
        return "up again"


async def test_the_circuit_opens_refuses_then_lets_one_trial_through():
    now = [0.0]
    flaky = Flaky()
    breaker = CircuitBreaker(failures=2, reset_after=30, clock=lambda: now[0])
    agent = ReActAgent("a", "", FunctionModel(flaky, name="m"), interceptors=[breaker])
    for _ in range(2):
        assert (await agent.call("hi")).error is not None
    assert breaker.state("m") == "open"
    refused = await agent.call("hi")
    assert flaky.calls == 2  # refused without calling the model
    assert refused.error is not None
    assert refused.error.code is ErrorCode.PROVIDER_ERROR
    assert "circuit of model 'm' is open" in refused.error.message
    now[0] = 30.0
    assert breaker.state("m") == "half_open"
    assert (await agent.call("hi")).error is not None  # the trial failed: open again
    assert breaker.state("m") == "open"
    now[0] = 61.0
    flaky.down = False
    assert (await agent.call("hi")).text == "up again"
    assert breaker.state("m") == "closed"


async def test_a_bad_request_does_not_count():
    flaky = Flaky()
    flaky.error = InvalidRequestError("bad", status=400)
    breaker = CircuitBreaker(failures=1)
    agent = ReActAgent("a", "", FunctionModel(flaky, name="m"), interceptors=[breaker])
    await agent.call("hi")
    await agent.call("hi")
    assert breaker.state("m") == "closed"
    assert flaky.calls == 2


async def test_an_open_circuit_sends_fallback_models_to_the_backup():
    now = [0.0]
    flaky = Flaky()
    breaker = CircuitBreaker(failures=1, reset_after=30, clock=lambda: now[0])
    backup = ScriptedModel(["b1", "b2"], name="backup")
    fallback = FallbackModels([backup])
    agent = ReActAgent("a", "", FunctionModel(flaky, name="m"), interceptors=[breaker, fallback])
    assert (await agent.call("hi")).text == "b1"
    events = [e async for e in agent.events("hi")]
    moved = [e for e in events if isinstance(e, FallbackEvent)]
    assert [m.code for m in moved] == [ErrorCode.PROVIDER_ERROR]
    assert "circuit" in moved[0].message
    assert flaky.calls == 1  # the open circuit kept the second request from the model


async def test_a_trial_in_flight_refuses_other_calls():
    now = [0.0]
    breaker = CircuitBreaker(failures=1, reset_after=1, clock=lambda: now[0])
    flaky = Flaky()
    agent = ReActAgent("a", "", FunctionModel(flaky, name="m"), interceptors=[breaker])
    await agent.call("hi")
    now[0] = 2.0
    seen: list[str] = []

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        # while the trial runs, a second call to the same model is refused
        other = await agent.call("again", session_id="other")
        seen.append(other.error.message if other.error else "")
        return "trial ok"

    agent.model = FunctionModel(slow, name="m")
    result = await agent.call("hi")
    assert result.text == "trial ok"
    assert "is open" in seen[0]
    assert breaker.state("m") == "closed"


async def test_cancellation_ends_a_trial():
    now = [0.0]
    breaker = CircuitBreaker(failures=1, reset_after=1, clock=lambda: now[0])
    call = ModelCall(messages=(Msg.user("hi"),), model=ScriptedModel([], name="m"))

    async def failing(call: ModelCall) -> Any:
        raise ProviderError("down", status=500)

    async def cancelled(call: ModelCall) -> Any:
        raise asyncio.CancelledError

    with pytest.raises(ProviderError):
        await breaker.around_model_call(call, failing)  # type: ignore[arg-type]
    now[0] = 2.0
    with pytest.raises(asyncio.CancelledError):
        await breaker.around_model_call(call, cancelled)  # type: ignore[arg-type]
    assert breaker.state("m") == "half_open"  # the trial ended without a verdict: try again
    with pytest.raises(ProviderError):
        await breaker.around_model_call(call, failing)  # type: ignore[arg-type]
    assert breaker.state("m") == "open"


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"failures": 0}, "failures"),
        ({"reset_after": -1}, "seconds >= 0"),
        ({"reset_after": "1"}, "seconds"),
    ],
)
def test_bad_arguments_are_refused(kw: dict[str, Any], words: str):
    with pytest.raises(ConfigurationError, match=words):
        CircuitBreaker(**kw)
