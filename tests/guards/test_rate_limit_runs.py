"""`RateLimit` in real agent runs: refused runs never reach the model and leave memory alone."""

from __future__ import annotations

from typing import Any

from test_rate_limit import ANN, BOB, Clock  # type: ignore[import-not-found]

from rxagent import (
    AgentState,
    ErrorCode,
    ErrorEvent,
    PostCallEvent,
    PreCallEvent,
    ReActAgent,
    Reject,
    hook,
)
from rxagent.events import BaseEvent
from rxagent.guards import GuardEvent, RateLimit
from rxagent.testing import ScriptedModel, assert_event_protocol


async def collect(agent: ReActAgent, msg: str, **kw: Any) -> list[BaseEvent]:
    events = [e async for e in agent.events(msg, **kw)]
    assert_event_protocol(events)
    return events


async def memory(agent: ReActAgent, session_id: str = "default") -> list[tuple[str, str]]:
    state = AgentState.model_validate(await agent.state_dict(session_id))
    return [(m.role, m.text) for m in state.memory]


async def test_third_call_in_a_minute_is_rejected_before_the_model():
    clock = Clock()
    model = ScriptedModel(["one", "two", "three"])
    agent = ReActAgent("bot", "Be brief.", model, guards=[RateLimit("2/minute", clock=clock)])

    assert (await agent.call("a", principal=ANN)).reply.text == "one"
    assert (await agent.call("b", principal=ANN)).reply.text == "two"
    before = await memory(agent)
    assert before == [("user", "a"), ("assistant", "one"), ("user", "b"), ("assistant", "two")]

    events = await collect(agent, "c", principal=ANN)
    assert [type(e) for e in events] == [PreCallEvent, GuardEvent, ErrorEvent, PostCallEvent]
    guard = events[1]
    assert isinstance(guard, GuardEvent)
    assert (guard.stage, guard.action, guard.target) == ("rate_limit", "reject", "input")
    assert guard.verdict.flagged
    assert guard.verdict.reasons == ("rate limit 2/minute exceeded for user 'ann'",)
    assert guard.verdict.retry_after is not None
    assert guard.verdict.retry_after > 0
    error = events[2]
    assert isinstance(error, ErrorEvent)
    assert error.source == "guard:rate_limit"
    assert error.code == ErrorCode.GUARD_REJECTED
    post = events[3]
    assert isinstance(post, PostCallEvent)
    assert not post.result.ok
    assert model.calls == 2  # the model was not called a third time
    assert await memory(agent) == before

    clock.now = 30.0  # a token is back
    assert (await agent.call("d", principal=ANN)).reply.text == "three"


async def test_principals_have_separate_buckets():
    model = ScriptedModel(["ann 1", "bob 1", "anon 1"])
    agent = ReActAgent("bot", "", model, guards=[RateLimit("1/minute", clock=Clock())])

    assert (await agent.call("hi", principal=ANN)).ok
    refused = await agent.call("again", principal=ANN)
    assert not refused.ok
    assert refused.error is not None
    assert refused.error.code == ErrorCode.GUARD_REJECTED
    assert refused.error.retry_after == 60.0
    assert (await agent.call("hi", principal=BOB, session_id="bob")).reply.text == "bob 1"
    assert (await agent.call("hi", session_id="anon")).reply.text == "anon 1"
    assert not (await agent.call("again", session_id="anon2")).ok  # anonymous: one bucket
    assert model.calls == 3


async def test_flag_action_records_the_verdict_and_the_run_goes_on():
    model = ScriptedModel(["one", "two"])
    stage = RateLimit("1/hour", clock=Clock(), action="flag")
    agent = ReActAgent("bot", "", model, guards=[stage])

    assert (await agent.call("a", principal=ANN)).ok
    events = await collect(agent, "b", principal=ANN)
    guards = [e for e in events if isinstance(e, GuardEvent)]
    assert [(g.stage, g.action) for g in guards] == [("rate_limit", "flag")]
    assert events[-1].result.ok  # type: ignore[attr-defined]
    assert model.calls == 2


async def test_per_session_limits_each_session_of_one_user():
    model = ScriptedModel(["s1", "s2"])
    agent = ReActAgent(
        "bot", "", model, guards=[RateLimit("1/minute", per="session", clock=Clock())]
    )
    assert (await agent.call("hi", principal=ANN, session_id="s1")).ok
    assert not (await agent.call("hi", principal=ANN, session_id="s1")).ok
    assert (await agent.call("hi", principal=ANN, session_id="s2")).ok
    assert model.calls == 2


async def test_a_run_a_pre_call_hook_refuses_has_used_its_token():
    @hook(PreCallEvent)
    def refuse_first(event: PreCallEvent) -> None:
        if not refused:
            refused.append(event)
            raise Reject("not now")

    refused: list[PreCallEvent] = []
    model = ScriptedModel(["never"])
    agent = ReActAgent(
        "bot", "", model, hooks=[refuse_first], guards=[RateLimit("1/minute", clock=Clock())]
    )
    first = await agent.call("hi", principal=ANN)
    assert first.error is not None
    assert first.error.code == ErrorCode.HOOK_REJECTED
    second = await agent.call("hi", principal=ANN)  # the input stages decided before the hook
    assert second.error is not None
    assert second.error.code == ErrorCode.GUARD_REJECTED
    assert model.calls == 0
