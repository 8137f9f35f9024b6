"""The shared formatter helpers: error classification, excerpts, retry-after, response deltas."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.errors import (
    AuthenticationError,
    ContextTooLongError,
    ErrorCode,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
)
from rxagent.formatters.base import (
    EXCERPT_CHARS,
    FINISH_REASONS,
    excerpt,
    json_body,
    malformed,
    parse_retry_after,
    provider_error,
    response_to_deltas,
    status_error,
    unsupported,
)
from rxagent.messages import Msg, TextBlock, ThinkingBlock, ToolUseBlock
from rxagent.models import ModelResponse, ResponseBuilder, Usage


@pytest.mark.parametrize(
    ("status", "cls", "recoverable"),
    [
        (400, InvalidRequestError, False),
        (401, AuthenticationError, False),
        (403, AuthenticationError, False),
        (404, InvalidRequestError, False),
        (408, ProviderError, True),
        (409, ProviderError, True),
        (413, ContextTooLongError, False),
        (422, InvalidRequestError, False),
        (429, RateLimitedError, True),
        (500, ProviderError, True),
        (503, ProviderError, True),
        (529, ProviderError, True),
    ],
)
def test_status_classification(status: int, cls: type, recoverable: bool) -> None:
    err = status_error("acme", status, b'{"x": 1}')
    assert type(err) is cls
    assert err.recoverable is recoverable
    assert (err.provider, err.status, err.source) == ("acme", status, "model")
    assert str(err).startswith(f"acme HTTP {status}")


def test_the_providers_code_overrides_the_status() -> None:
    err = status_error(
        "acme",
        400,
        b"{}",
        message="too long",
        provider_code="context_length_exceeded",
        code=ErrorCode.CONTEXT_TOO_LONG,
    )
    assert isinstance(err, ContextTooLongError)
    assert not err.recoverable
    assert err.provider_code == "context_length_exceeded"
    assert "[context_length_exceeded]" in str(err)
    quota = status_error("acme", 429, b"{}", code=ErrorCode.RATE_LIMITED)
    assert quota.recoverable
    auth_on_500 = status_error("acme", 500, b"{}", code=ErrorCode.AUTH)
    assert not auth_on_500.recoverable  # never retried, whatever the status


def test_status_error_reads_retry_after() -> None:
    err = status_error("acme", 429, b"", headers={"Retry-After": "7"})
    assert err.retry_after == 7.0
    assert "HTTP 429" in str(err)


@given(st.binary(max_size=2000))
def test_excerpt_is_short_single_line_text(body: bytes) -> None:
    text = excerpt(body)
    assert len(text) <= EXCERPT_CHARS
    assert "\n" not in text


def test_json_body_refuses_html_with_an_excerpt() -> None:
    assert json_body("acme", b'{"a": 1}') == {"a": 1}
    with pytest.raises(ProviderError, match="not JSON") as info:
        json_body("acme", b"<html>502</html>", 200)
    assert info.value.excerpt == "<html>502</html>"
    assert info.value.status == 200


def test_malformed_and_unsupported_are_typed() -> None:
    err = malformed("acme", "no choices", {"object": "list"})
    assert isinstance(err, ProviderError)
    assert err.excerpt == json.dumps({"object": "list"})
    refused = unsupported("acme", "an image in a tool result", "send it as a user message")
    assert isinstance(refused, InvalidRequestError)
    assert "send it as a user message" in str(refused)
    plain = provider_error(ErrorCode.TIMEOUT, "slow", provider="acme")
    assert plain.code == "TIMEOUT"
    assert plain.excerpt is None


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"Retry-After-Ms": "bad", "retry-after": "3"}, 3.0),
        ({"retry-after": "-1"}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # in the past: go now
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers) == expected


def test_finish_vocabulary() -> None:
    assert {"stop", "length", "tool_calls", "content_filter", "pause"} == FINISH_REASONS


def test_response_to_deltas_rebuilds_the_same_message() -> None:
    message = Msg.assistant(
        [
            ThinkingBlock(thinking="hmm", signature="sig"),
            TextBlock(text="Adding."),
            ToolUseBlock(id="c1", name="add", input={"a": 1}),
            ToolUseBlock(id="c2", name="bad", raw_input="{not json"),
        ]
    )
    response = ModelResponse(
        message=message, usage=Usage(input_tokens=3, requests=1), finish_reason="tool_calls"
    )
    builder = ResponseBuilder()
    for delta in response_to_deltas(response):
        builder.add(delta)
    rebuilt = builder.response()
    assert rebuilt.message.content == message.content
    assert rebuilt.usage == response.usage
    assert rebuilt.finish_reason == "tool_calls"
    text_only = response_to_deltas(ModelResponse(message=Msg.assistant("plain")))
    assert text_only[0].text == "plain"  # type: ignore[union-attr]
