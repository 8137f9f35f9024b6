"""Failures and retries, alike for every provider client (see `test_client_conformance`).

HTTP errors, errors inside a stream, dropped and unfinished streams, timeouts and proxy pages:
what is retried (only before the first delta), after which wait, and the typed error raised.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest
from client_providers import KEY, SLOW, Provider, collect, texts  # type: ignore[import-not-found]

from rxagent.errors import (
    AgentRunError,
    AuthenticationError,
    ContextTooLongError,
    ErrorCode,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
)
from rxagent.messages import Msg
from rxagent.models import ModelDelta, Usage
from rxagent.models.retry import RetryPolicy
from rxagent.testing import RecordingSleep
from rxagent.testing.providers import FakeProviderServer, Fault, Reply
from rxagent.testing.providers._base import RecordedRequest, ScriptedResponse

ANSWER = "a long enough answer"
"""Streamed with `chunk_size=2`: "a ", "lo", "ng", ..."""
TIMEOUT = 0.25


def backoff(sleeps: RecordingSleep, retries: int = 3) -> RetryPolicy:
    """Waits of 0.5 s, 1 s, 2 s ... (no jitter), recorded instead of slept."""
    return RetryPolicy(max_retries=retries, initial_delay_s=0.5, jitter=0.0, sleep=sleeps)


def end_streams_after(server: FakeProviderServer, frames: int) -> None:
    """Make `server` end each stream cleanly after `frames` frames, without the provider's end."""
    full = server.render_stream

    def cut(response: ScriptedResponse, request: RecordedRequest) -> Iterator[bytes]:
        return itertools.islice(full(response, request), frames)

    server.render_stream = cut  # type: ignore[method-assign]


async def test_429_then_a_server_error_are_retried_after_the_providers_wait(provider: Provider):
    sleeps = RecordingSleep()
    async with provider.server([Reply("ok", usage=provider.usage)]) as server:
        server.fail(1, status=429, headers={"Retry-After": "2"})
        server.fail(2, status=503)
        async with provider.build(server, max_retries=backoff(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert sleeps.delays == [2.0, 1.0]  # the provider's wait, then the second backoff step
    assert len(server.requests) == 3
    assert response.usage == provider.usage + Usage(requests=2)  # failed requests count too


async def test_server_errors_and_proxy_pages_are_retried_with_backoff(provider: Provider):
    sleeps = RecordingSleep()
    async with provider.server(["ok"]) as server:
        server.fail(1, status=500, message="boom")
        server.fail(2, status=502, body=b"<html>Bad Gateway</html>", content_type="text/html")
        async with provider.build(server, max_retries=backoff(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert sleeps.delays == [0.5, 1.0]
    assert len(server.requests) == 3


async def test_retries_run_out_and_the_last_error_is_raised(provider: Provider):
    sleeps = RecordingSleep()
    async with provider.server(["never"]) as server:
        for n in (1, 2):
            server.fail(n, status=429, message=f"slow down {n}", headers={"Retry-After": "1"})
        async with provider.build(server, max_retries=backoff(sleeps, retries=1)) as model:
            with pytest.raises(RateLimitedError) as info:
                await model.complete([Msg.user("hi")])
    err = info.value
    assert "slow down 2" in str(err)
    assert (err.status, err.retry_after, err.recoverable) == (429, 1.0, True)
    assert (err.provider, err.provider_code) == (provider.name, provider.rate_limit_code)
    assert sleeps.delays == [1.0]
    assert len(server.requests) == 2


CLIENT_ERRORS: dict[str, tuple[Callable[[Provider], Fault], type[AgentRunError]]] = {
    "bad_request": (lambda p: Fault(status=400, message="bad field"), InvalidRequestError),
    "unauthorized": (lambda p: Fault(status=401, message="no key"), AuthenticationError),
    "forbidden": (lambda p: Fault(status=403, message="forbidden"), AuthenticationError),
    "not_found": (lambda p: Fault(status=404, message="no such model"), InvalidRequestError),
    "context_too_long": (lambda p: p.context_too_long, ContextTooLongError),
}


@pytest.mark.parametrize(("fault_of", "error"), CLIENT_ERRORS.values(), ids=CLIENT_ERRORS.keys())
async def test_client_errors_are_typed_and_never_retried(
    provider: Provider, fault_of: Callable[[Provider], Fault], error: type[AgentRunError]
):
    fault = fault_of(provider)
    sleeps = RecordingSleep()
    async with provider.server(["never"]) as server:
        server.fail(1, fault)
        async with provider.build(server, max_retries=backoff(sleeps)) as model:
            with pytest.raises(error) as info:
                await model.complete([Msg.user("hi")])
    err = info.value
    assert type(err) is error
    assert (err.status, err.provider, err.recoverable) == (fault.status, provider.name, False)
    assert fault.message in str(err)
    assert sleeps.delays == []
    assert len(server.requests) == 1


async def test_an_error_event_before_the_first_delta_is_retried(provider: Provider):
    sleeps = RecordingSleep()
    async with provider.server([Reply("fine", usage=provider.usage)]) as server:
        server.fail(1, mid_stream_error=provider.preamble)  # after all that comes before content
        async with provider.build(server, max_retries=backoff(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "fine"
    assert sleeps.delays == [0.5]
    assert len(server.requests) == 2
    assert response.usage == provider.usage + Usage(requests=1)  # no tokens of the failed one


async def test_an_error_event_after_the_first_delta_is_recoverable_and_not_retried(
    provider: Provider,
):
    sleeps = RecordingSleep()
    seen: list[ModelDelta] = []
    async with provider.server([ANSWER], chunk_size=2) as server:
        server.fail(1, mid_stream_error=provider.preamble + 2, message="the model crashed")
        async with provider.build(server, max_retries=backoff(sleeps)) as model:
            with pytest.raises(ProviderError, match="the model crashed") as info:
                await collect(model, seen)
    assert texts(seen) == ["a ", "lo"]
    assert (info.value.code, info.value.recoverable) == (ErrorCode.PROVIDER_ERROR, True)
    assert info.value.provider == provider.name
    assert sleeps.delays == []
    assert len(server.requests) == 1


async def test_a_dropped_connection_before_any_delta_is_retried(provider: Provider):
    sleeps = RecordingSleep()
    async with provider.server(["ok"]) as server:
        server.fail(1, drop_after=provider.preamble)
        async with provider.build(server, max_retries=backoff(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert sleeps.delays == [0.5]
    assert len(server.requests) == 2


async def test_a_dropped_connection_after_content_is_recoverable_and_not_retried(
    provider: Provider,
):
    sleeps = RecordingSleep()
    seen: list[ModelDelta] = []
    async with provider.server([ANSWER], chunk_size=2) as server:
        server.fail(1, drop_after=provider.preamble + 2)
        async with provider.build(server, max_retries=backoff(sleeps)) as model:
            with pytest.raises(ProviderError) as info:
                await collect(model, seen)
    assert texts(seen) == ["a ", "lo"]
    assert (info.value.code, info.value.recoverable) == (ErrorCode.PROVIDER_ERROR, True)
    assert info.value.provider == provider.name
    assert sleeps.delays == []
    assert len(server.requests) == 1


async def test_a_stream_that_ends_without_its_end_is_recoverable_and_not_retried(
    provider: Provider,
):
    sleeps = RecordingSleep()
    seen: list[ModelDelta] = []
    async with provider.server([ANSWER], chunk_size=2) as server:
        end_streams_after(server, provider.preamble + 2)
        async with provider.build(server, max_retries=backoff(sleeps)) as model:
            with pytest.raises(ProviderError, match="ended early") as info:
                await collect(model, seen)
    assert texts(seen) == ["a ", "lo"]
    assert info.value.recoverable
    assert sleeps.delays == []
    assert len(server.requests) == 1


async def test_a_slow_first_byte_times_out(provider: Provider):
    async with provider.server(["late"]) as server:
        server.fail(1, first_byte_delay=SLOW)
        async with provider.build(server, timeout=TIMEOUT, max_retries=0) as model:
            with pytest.raises(ProviderError, match="timeout") as info:
                await model.complete([Msg.user("hi")])
    assert info.value.recoverable
    assert info.value.provider == provider.name


async def test_a_slow_first_byte_is_retried_after_the_timeout(provider: Provider):
    sleeps = RecordingSleep()
    async with provider.server(["late but fine"]) as server:
        server.fail(1, first_byte_delay=SLOW)
        model = provider.build(server, timeout=TIMEOUT, max_retries=backoff(sleeps))
        async with model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "late but fine"
    assert sleeps.delays == [0.5]
    assert len(server.requests) == 2


async def test_an_html_error_page_from_a_proxy_is_typed(provider: Provider):
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    async with provider.server(["x"]) as server:
        server.fail(1, status=502, body=page, content_type="text/html")
        async with provider.build(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await model.complete([Msg.user("hi")])
    err = info.value
    assert (err.status, err.provider, err.recoverable) == (502, provider.name, True)
    assert "502 Bad Gateway" in (err.excerpt or "")


@pytest.mark.parametrize(
    ("stream", "problem"),
    [(True, "expected a stream"), (False, "not JSON")],
    ids=["stream", "whole"],
)
async def test_a_200_html_page_instead_of_an_answer_is_typed(
    provider: Provider, stream: bool, problem: str
):
    async with provider.server(["x"]) as server:
        server.fail(1, status=200, body=b"<html>login page</html>", content_type="text/html")
        async with provider.build(server, stream=stream, max_retries=0) as model:
            with pytest.raises(ProviderError, match=problem) as info:
                await model.complete([Msg.user("hi")])
    assert info.value.excerpt == "<html>login page</html>"
    assert info.value.provider == provider.name


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_provider_error_that_echoes_the_key_is_redacted(provider: Provider, stream: bool):
    echo = Fault(status=401, message=f"bad key: Bearer {KEY}")  # as some providers do
    async with provider.server([]) as server:
        server.fail(1, echo)
        async with provider.build(server, max_retries=0, stream=stream) as model:
            with pytest.raises(AgentRunError) as caught:
                await model.complete([Msg.user("hi")])
    error = caught.value
    assert KEY not in str(error)
    assert KEY not in error.message
    assert error.excerpt is not None
    assert KEY not in error.excerpt
    assert "bad key: Bearer [redacted]" in error.message + error.excerpt
