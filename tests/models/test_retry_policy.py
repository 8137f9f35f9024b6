"""RetryPolicy: backoff growth, jitter bounds, caps, and what is never retried."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.errors import (
    AuthenticationError,
    ConfigurationError,
    ContextTooLongError,
    ErrorCode,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
    RunCancelledError,
)
from rxagent.formatters.base import status_error
from rxagent.models.retry import RetryPolicy


@given(
    retry=st.integers(1, 12),
    initial=st.floats(0.0, 5.0),
    multiplier=st.floats(1.0, 4.0),
    cap=st.floats(0.0, 60.0),
    jitter=st.floats(0.0, 0.99),
    u=st.floats(0.0, 0.999999),
)
def test_backoff_stays_within_the_jitter_band_and_under_the_cap(
    retry: int, initial: float, multiplier: float, cap: float, jitter: float, u: float
) -> None:
    policy = RetryPolicy(
        initial_delay_s=initial,
        multiplier=multiplier,
        max_delay_s=cap,
        jitter=jitter,
        random=lambda: u,
    )
    base = initial * multiplier ** (retry - 1)
    delay = policy.backoff(retry)
    assert 0 <= delay <= cap + 1e-9
    assert delay >= min(cap, base * (1 - jitter)) - 1e-9
    assert delay <= base * (1 + jitter) + 1e-9


def test_default_jitter_is_plus_minus_25_percent() -> None:
    low = RetryPolicy(initial_delay_s=1.0, random=lambda: 0.0)
    high = RetryPolicy(initial_delay_s=1.0, random=lambda: 0.9999999)
    assert low.backoff(1) == pytest.approx(0.75)
    assert high.backoff(1) == pytest.approx(1.25, abs=1e-6)
    assert low.backoff(3) == pytest.approx(3.0)  # 1 * 2**2 * 0.75


def test_the_cap_bounds_a_long_backoff() -> None:
    policy = RetryPolicy(initial_delay_s=1.0, max_delay_s=5.0, jitter=0.0)
    assert [policy.backoff(n) for n in range(1, 6)] == [1.0, 2.0, 4.0, 5.0, 5.0]


@pytest.mark.parametrize(
    "error",
    [
        AuthenticationError("no", recoverable=True),
        InvalidRequestError("bad", recoverable=True),
        ContextTooLongError("long", recoverable=True),
        RunCancelledError("cancelled", recoverable=True),
        RateLimitedError("quota used up", recoverable=False),
        ValueError("not an agent error"),
    ],
)
def test_never_retried(error: BaseException) -> None:
    assert not RetryPolicy(max_retries=5).should_retry(error, retries_done=0)


@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 502, 503, 504, 529])
def test_transient_statuses_are_retried(status: int) -> None:
    policy = RetryPolicy(max_retries=1)
    error = status_error("p", status, b"{}")
    assert policy.should_retry(error, retries_done=0)
    assert not policy.should_retry(error, retries_done=1)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_client_statuses_are_not_retried(status: int) -> None:
    assert not RetryPolicy().should_retry(status_error("p", status, b"{}"), retries_done=0)


def test_the_providers_wait_wins_and_a_too_long_one_is_not_waited_for() -> None:
    policy = RetryPolicy(max_retry_after_s=30.0)
    short = RateLimitedError("slow down", retry_after=12.0)
    assert policy.should_retry(short, retries_done=0)
    assert policy.delay_for(short, retry=1) == 12.0
    assert not policy.should_retry(RateLimitedError("later", retry_after=31.0), retries_done=0)
    assert policy.delay_for(ProviderError("x", recoverable=True), retry=1) > 0


def test_coerce() -> None:
    assert RetryPolicy.coerce(None) == RetryPolicy()
    assert RetryPolicy.coerce(5).max_retries == 5
    custom = RetryPolicy(max_retries=1)
    assert RetryPolicy.coerce(custom) is custom
    for bad in (True, "3", 1.5):
        with pytest.raises(ConfigurationError, match="max_retries"):
            RetryPolicy.coerce(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_retries": -1}, "max_retries"),
        ({"initial_delay_s": -1.0}, "initial_delay_s"),
        ({"max_delay_s": -1.0}, "max_delay_s"),
        ({"max_retry_after_s": -1.0}, "max_retry_after_s"),
        ({"multiplier": 0.5}, "multiplier"),
        ({"jitter": 1.0}, "jitter"),
        ({"jitter": -0.1}, "jitter"),
    ],
)
def test_bad_settings_name_the_field(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ConfigurationError, match=field):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_a_retry_outside_a_run_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    from rxagent.models.retry import emit_retry

    with caplog.at_level("WARNING", logger="rxagent.models.retry"):
        emit_retry(2, 0.5, ProviderError("boom", recoverable=True))
    assert "attempt 2" in caplog.text
    assert ErrorCode.PROVIDER_ERROR in caplog.text


def test_the_elapsed_budget_uses_the_injected_clock() -> None:
    now = [100.0]
    policy = RetryPolicy(max_elapsed_s=10.0, clock=lambda: now[0])
    assert policy.within_budget(100.0, 9.0)
    now[0] = 105.0
    assert policy.within_budget(100.0, 5.0)
    assert not policy.within_budget(100.0, 5.5)
    assert RetryPolicy().within_budget(0.0, 1e9)  # no budget
    with pytest.raises(ConfigurationError, match="max_elapsed_s"):
        RetryPolicy(max_elapsed_s=-1.0)
