"""`RateLimit` in process: the token bucket on an injected clock, whose bucket, bad arguments."""

from __future__ import annotations

import asyncio
import itertools
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import Principal
from rxagent.guards import GuardContext, GuardPipeline, RateLimit
from rxagent.guards._rate_limit import _LocalBuckets

ANN = Principal(user_id="ann")
BOB = Principal(user_id="bob")


class Clock:
    """A settable clock: `clock.now` is what the stage reads."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def ctx(principal: Principal = ANN, session_id: str = "s1", agent: str = "bot") -> GuardContext:
    return GuardContext("input", principal=principal, session_id=session_id, agent=agent)


async def passes(stage: RateLimit, context: GuardContext, runs: int) -> list[bool]:
    return [not (await stage.check("hi", context)).flagged for _ in range(runs)]


# -- the bucket --------------------------------------------------------------------------------


async def test_burst_defaults_to_n_then_one_token_per_interval():
    clock = Clock()
    stage = RateLimit("2/minute", clock=clock)
    assert await passes(stage, ctx(), 3) == [True, True, False]
    clock.now = 29.9
    assert await passes(stage, ctx(), 1) == [False]
    clock.now = 30.0
    assert await passes(stage, ctx(), 2) == [True, False]
    clock.now = 90.0  # 60 s more: two tokens, the bucket is full again
    assert await passes(stage, ctx(), 3) == [True, True, False]


async def test_over_the_limit_verdict_names_rate_and_caller_and_says_when_to_retry():
    clock = Clock(100.0)
    stage = RateLimit("10/minute", burst=1, clock=clock)
    assert not (await stage.check("hi", ctx())).flagged
    clock.now = 102.0
    verdict = await stage.check("hi", ctx())
    assert verdict.flagged
    assert verdict.score == 1.0
    assert verdict.stage == "rate_limit"
    assert verdict.reasons == ("rate limit 10/minute exceeded for user 'ann'",)
    assert verdict.retry_after == pytest.approx(4.0)
    clock.now += 4.0
    assert not (await stage.check("hi", ctx())).flagged


async def test_a_refused_run_takes_no_token():
    clock = Clock()
    stage = RateLimit("1/second", clock=clock)
    assert await passes(stage, ctx(), 1) == [True]
    for step in range(9):  # refused ten times within the second
        clock.now = step / 10
        assert await passes(stage, ctx(), 1) == [False]
    clock.now = 1.0
    assert await passes(stage, ctx(), 1) == [True]


async def test_burst_larger_than_n_lets_a_batch_through_then_holds_the_rate():
    clock = Clock()
    stage = RateLimit("1/second", burst=5, clock=clock)
    assert await passes(stage, ctx(), 6) == [True] * 5 + [False]
    clock.now = 2.0
    assert await passes(stage, ctx(), 3) == [True, True, False]


@pytest.mark.parametrize(
    ("rate", "per_second"),
    [
        ("5/second", 5),
        ("5/s", 5),
        ("5/sec", 5),
        ("60/minute", 1),
        ("60/min", 1),
        ("60 per minute", 1),
        ("3600/hour", 1),
        ("3600/h", 1),
        ("86400/day", 1),
        ("86400/d", 1),
        (" 60 / Minute ", 1),
    ],
)
async def test_rate_forms(rate: str, per_second: int):
    clock = Clock()
    stage = RateLimit(rate, burst=1, clock=clock)
    verdicts = [await stage.check("hi", ctx()) for _ in range(2)]
    assert [v.flagged for v in verdicts] == [False, True]
    assert verdicts[1].retry_after == pytest.approx(1 / per_second)


def test_rate_is_shown_in_its_long_form():
    assert RateLimit("60 per min").rate == "60/minute"
    assert RateLimit("3/h", burst=9).burst == 9
    assert repr(RateLimit("5/s", per="session")) == "RateLimit('5/second', per='session', burst=5)"


# -- the property ------------------------------------------------------------------------------

EPSILON = 1e-9  # float rounding of times and intervals, far below one token


USERS = [Principal(user_id=name) for name in ("ann", "bob", "cat")]


@given(
    count=st.integers(1, 20),
    period=st.sampled_from([("second", 1.0), ("minute", 60.0), ("hour", 3600.0)]),
    burst=st.one_of(st.none(), st.integers(1, 10)),
    start=st.floats(0.0, 1e6),
    requests=st.lists(
        st.tuples(st.floats(0.0, 2.0), st.integers(0, len(USERS) - 1)), min_size=1, max_size=80
    ),
    scale=st.sampled_from([0.01, 1.0, 60.0]),
)
def test_no_interval_admits_more_than_burst_plus_refill(
    count, period, burst, start, requests, scale
):
    unit, period_s = period
    clock = Clock(start)
    stage = RateLimit(f"{count}/{unit}", burst=burst, clock=clock)
    capacity = count if burst is None else burst
    refill = count / period_s  # tokens per second
    full_refill = capacity / refill

    async def run() -> dict[int, list[tuple[float, bool]]]:
        seen: dict[int, list[tuple[float, bool]]] = {}
        for gap, user in requests:
            clock.now += gap * scale
            verdict = await stage.check("hi", ctx(USERS[user]))
            seen.setdefault(user, []).append((clock.now, not verdict.flagged))
        return seen

    for history in asyncio.run(run()).values():  # each user's bucket on its own
        passed = [when for when, ok in history if ok]
        for i, first in enumerate(passed):  # every window [t, t + d] from a pass to a pass
            for j in range(i, len(passed)):
                d = passed[j] - first
                assert j - i + 1 <= capacity + refill * d + EPSILON, (first, passed[j])
        for (previous, _), (when, ok) in itertools.pairwise(history):
            if when - previous >= full_refill:
                assert ok, f"refused at {when} after a full refill since {previous}"
        assert history[0][1]


@given(
    count=st.integers(1, 10),
    burst=st.integers(1, 5),
    gaps=st.lists(st.floats(0.0, 3.0), min_size=1, max_size=40),
)
def test_waiting_retry_after_is_enough(count, burst, gaps):
    clock = Clock(1000.0)
    stage = RateLimit(f"{count}/second", burst=burst, clock=clock)

    async def run() -> None:
        for gap in gaps:
            clock.now += gap
            verdict = await stage.check("hi", ctx())
            if verdict.flagged:
                assert verdict.retry_after is not None
                assert verdict.retry_after > 0
                assert verdict.retry_after <= 1 / count + EPSILON  # one token away at most
                clock.now += verdict.retry_after * (1 + EPSILON) + EPSILON
                assert not (await stage.check("hi", ctx())).flagged

    asyncio.run(run())


# -- whose bucket ------------------------------------------------------------------------------


async def test_per_user_separates_users_and_shares_sessions():
    stage = RateLimit("1/minute", clock=Clock())
    assert await passes(stage, ctx(ANN, "s1"), 1) == [True]
    assert await passes(stage, ctx(ANN, "s2"), 1) == [False]  # same user, other session
    assert await passes(stage, ctx(BOB, "s1"), 1) == [True]


async def test_per_user_falls_back_to_key_then_anonymous():
    stage = RateLimit("1/minute", clock=Clock())
    keyed = Principal(key_id="k1")
    verdicts = [await stage.check("hi", ctx(keyed)) for _ in range(2)]
    assert verdicts[1].reasons == ("rate limit 1/minute exceeded for user 'key:k1'",)
    assert await passes(stage, ctx(Principal(key_id="k1", user_id="ann")), 1) == [True]
    assert await passes(stage, ctx(Principal()), 2) == [True, False]
    assert await passes(stage, ctx(Principal(user_id="anon")), 1) == [True]


async def test_per_key_shares_one_key_between_its_users():
    stage = RateLimit("1/minute", per="key", clock=Clock())
    assert await passes(stage, ctx(Principal(user_id="ann", key_id="k1")), 1) == [True]
    verdict = await stage.check("hi", ctx(Principal(user_id="bob", key_id="k1")))
    assert verdict.reasons == ("rate limit 1/minute exceeded for key 'k1'",)
    assert await passes(stage, ctx(Principal(user_id="bob", key_id="k2")), 1) == [True]
    assert await passes(stage, ctx(Principal(user_id="cat")), 2) == [True, False]  # anonymous


async def test_per_session_shares_one_session_between_users():
    stage = RateLimit("1/minute", per="session", clock=Clock())
    assert await passes(stage, ctx(ANN, "s1"), 1) == [True]
    verdict = await stage.check("hi", ctx(BOB, "s1"))
    assert verdict.reasons == ("rate limit 1/minute exceeded for session 's1'",)
    assert await passes(stage, ctx(ANN, "s2"), 1) == [True]


async def test_agents_have_separate_buckets():
    stage = RateLimit("1/minute", clock=Clock())
    assert await passes(stage, ctx(agent="bot"), 2) == [True, False]
    assert await passes(stage, ctx(agent="other"), 2) == [True, False]


# -- action and pipeline -----------------------------------------------------------------------


async def test_pipeline_rejects_by_default_and_flag_lets_the_run_go_on():
    rejecting = GuardPipeline([RateLimit("1/minute", clock=Clock())])
    first = await rejecting.screen("hi", ctx())
    second = await rejecting.screen("hi", ctx())
    assert first.rejected is None
    assert first.reports == ()
    assert second.rejected is not None
    assert second.rejected.retry_after == pytest.approx(60.0)
    assert [r.action for r in second.reports] == ["reject"]

    flagging = GuardPipeline([RateLimit("1/minute", clock=Clock(), action="flag")])
    await flagging.screen("hi", ctx())
    flagged = await flagging.screen("hi", ctx())
    assert flagged.rejected is None
    assert [r.action for r in flagged.reports] == ["flag"]


def test_stage_checks_the_input_only():
    stage = RateLimit()
    assert stage.name == "rate_limit"
    assert stage.targets == {"input"}
    assert stage.action == "reject"
    assert (stage.rate, stage.per, stage.burst) == ("10/minute", "user", 10)


async def test_aclose_without_redis_is_harmless():
    stage = RateLimit()
    await stage.aclose()
    assert not (await stage.check("hi", ctx())).flagged


# -- memory ------------------------------------------------------------------------------------


async def test_buckets_that_are_full_again_are_dropped():
    clock = Clock()
    stage = RateLimit("1/second", burst=3, clock=clock)
    buckets = stage._backend
    assert isinstance(buckets, _LocalBuckets)
    for n in range(50):
        await stage.check("hi", ctx(Principal(user_id=f"u{n}")))
        clock.now += 1.0  # each bucket is full 1 s after its one run
    assert len(buckets) <= 2


async def test_a_bucket_kept_past_its_refill_starts_full_not_fuller():
    clock = Clock()
    stage = RateLimit("1/second", burst=3, clock=clock)
    assert await passes(stage, ctx(BOB), 3) == [True] * 3  # bob full at 3 s, ann at 1 s:
    assert await passes(stage, ctx(ANN), 1) == [True]  # ann's entry stays behind bob's
    clock.now = 2.5
    assert await passes(stage, ctx(ANN), 4) == [True, True, True, False]


async def test_max_keys_forgets_the_least_recently_used_bucket():
    clock = Clock()
    stage = RateLimit("1/hour", clock=clock, max_keys=2)
    users = [Principal(user_id=u) for u in ("a", "b", "c")]
    assert await passes(stage, ctx(users[0]), 1) == [True]
    assert await passes(stage, ctx(users[1]), 1) == [True]
    assert await passes(stage, ctx(users[0]), 1) == [False]  # a refused: now most recent
    assert await passes(stage, ctx(users[2]), 1) == [True]  # b, least recent, is forgotten
    assert len(stage._backend) == 2  # type: ignore[arg-type]
    assert await passes(stage, ctx(users[0]), 1) == [False]  # a is remembered
    assert await passes(stage, ctx(users[1]), 1) == [True]  # b starts full again


# -- bad arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rate",
    [
        "",
        "10",
        "ten/minute",
        "0/minute",
        "-1/minute",
        "10/fortnight",
        "10/",
        "/minute",
        "1.5/s",
        10,
    ],
)
def test_bad_rate_names_rate_and_the_accepted_forms(rate: object):
    with pytest.raises(ValueError, match=r"RateLimit\(rate=\)") as raised:
        RateLimit(rate)  # type: ignore[arg-type]
    assert "'N/minute'" in str(raised.value)
    assert "'N per minute'" in str(raised.value)
    assert repr(rate) in str(raised.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"per": "ip"}, r"RateLimit\(per=\) must be 'user', 'session' or 'key', got 'ip'"),
        ({"burst": 0}, r"RateLimit\(burst=\) must be a whole number of at least 1, got 0"),
        ({"burst": 2.5}, r"RateLimit\(burst=\) .* got 2.5"),
        ({"burst": True}, r"RateLimit\(burst=\) .* got True"),
        ({"max_keys": 0}, r"RateLimit\(max_keys=\) .* got 0"),
        ({"action": "redact"}, r"RateLimit\(action=\) must be 'reject' or 'flag'"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs: dict[str, object], message: str):
    with pytest.raises(ValueError, match=message):
        RateLimit("10/minute", **kwargs)  # type: ignore[arg-type]


def test_clock_must_be_callable():
    with pytest.raises(TypeError, match=r"RateLimit\(clock=\) must be a function"):
        RateLimit(clock=3.0)  # type: ignore[arg-type]


def test_backend_must_be_a_redis_url_or_client():
    with pytest.raises(ValueError, match=r"RateLimit\(backend=\) must be a redis:// URL"):
        RateLimit(backend="http://cache:6379")
    with pytest.raises(TypeError, match=r"RateLimit\(backend=\) must be None, a redis:// URL"):
        RateLimit(backend=42)
    with pytest.raises(ValueError, match=r"RateLimit\(clock=\) applies to in-process buckets"):
        RateLimit(backend="redis://127.0.0.1:6379/15", clock=Clock())
    with pytest.raises(ValueError, match=r"RateLimit\(prefix=\) must be a non-empty str"):
        RateLimit(backend="redis://127.0.0.1:6379/15", prefix="")


def test_redis_backend_without_the_package_names_the_extra(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "redis", None)
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with pytest.raises(ImportError, match=r'pip install "rxagent\[redis\]"'):
        RateLimit(backend="redis://127.0.0.1:6379/15")
    assert RateLimit().rate == "10/minute"  # in process, no redis needed
