"""Spans from event sequences a live run rarely makes: fed to the hook by hand."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.trace import StatusCode
from telemetry_helpers import add, by_name, memory_provider, one, parent_of  # type: ignore[import-not-found]

from rxagent import (
    AgentResult,
    ErrorCode,
    ErrorEvent,
    HookChain,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReActAgent,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.hooks._chain import add_process_hook, remove_process_hook
from rxagent.models.openai import OpenAIChatModel
from rxagent.models.retry import RetryPolicy
from rxagent.telemetry import Tracing, remote_parent
from rxagent.telemetry import _tracing as tracing_module
from rxagent.testing import ScriptedModel, Turn, tool_call
from rxagent.testing.providers import FakeOpenAIServer, Fault

CALL = ToolUseBlock(id="c1", name="lookup")


def _done(run_id: str, agent: str = "a", seq: int = 99) -> PostCallEvent:
    reply = Msg.assistant("done")
    return PostCallEvent(
        run_id=run_id, agent=agent, seq=seq, reply=reply, result=AgentResult(reply=reply)
    )


def test_events_without_their_opening_event_still_end_well() -> None:
    provider, exporter = memory_provider()
    tracing = Tracing(provider)  # fed outside any event loop: no task to watch
    response = Msg.assistant("hi", metadata={"model": "gpt-4o-2024-08-06"})
    result = ToolResultBlock(id="c1", name="lookup", output="x")
    for event in [
        PreCallEvent(run_id="r0", agent="a", seq=0, input=()),
        PreCallEvent(run_id="r0", agent="a", seq=0, input=()),  # a repeat: ignored
        PostReasoningEvent(run_id="r0", agent="a", seq=1, response=response),  # no PreReasoning
        PostActingEvent(run_id="r0", agent="a", seq=2, tool_call=CALL, result=result),  # no Pre
        PreReasoningEvent(run_id="r0", agent="a", seq=3, step=1, messages=(), model="m"),
        PostReasoningEvent(run_id="r0", agent="a", seq=4, step=1, response=response),
        _done("r0"),
    ]:
        tracing.observe(event)
    spans = exporter.get_finished_spans()
    assert sorted(s.name for s in spans) == ["chat m", "invoke_agent a", "step 0", "step 1"]
    chat = one(spans, "chat m")
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.response.model"] == "gpt-4o-2024-08-06"


def test_a_tool_error_goes_to_the_first_open_call_of_that_tool() -> None:
    provider, exporter = memory_provider()
    tracing = Tracing(provider)
    other = ToolUseBlock(id="c0", name="other")
    second = ToolUseBlock(id="c2", name="lookup")
    fine = ToolResultBlock(id="c1", name="lookup", output="ok")
    for event in [
        PreCallEvent(run_id="r1", agent="a", seq=0, input=()),
        PreActingEvent(run_id="r1", agent="a", seq=1, tool_call=other),
        PreActingEvent(run_id="r1", agent="a", seq=2, tool_call=CALL),
        PreActingEvent(run_id="r1", agent="a", seq=3, tool_call=second),
        ErrorEvent(
            run_id="r1",
            agent="a",
            seq=4,
            code=ErrorCode.TOOL_TIMEOUT,
            message="slow",
            source="tool:lookup",
            recoverable=True,
        ),
        ErrorEvent(
            run_id="r1",
            agent="a",
            seq=5,
            code=ErrorCode.TOOL_ERROR,
            message="bad",
            source="tool:lookup",
            recoverable=True,
        ),
        PostActingEvent(run_id="r1", agent="a", seq=6, tool_call=CALL, result=fine),
        _done("r1"),
    ]:
        tracing.observe(event)
    spans = exporter.get_finished_spans()
    first, late = sorted(by_name(spans, "execute_tool lookup"), key=lambda s: s.end_time or 0)
    assert first.attributes is not None
    assert first.attributes["error.type"] == "TOOL_TIMEOUT"
    assert late.attributes is not None
    assert late.attributes["error.type"] == "INTERRUPTED"
    assert one(spans, "execute_tool other").status.status_code is StatusCode.ERROR


def test_a_nested_run_without_its_parent_starts_in_the_current_context() -> None:
    provider, exporter = memory_provider()
    tracing = Tracing(provider)
    header = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    tracing.observe(PreCallEvent(run_id="p2", agent="lead", path=("lead",), seq=0, input=()))
    with remote_parent(header):
        tracing.observe(
            PreCallEvent(run_id="c2", agent="sub", path=("boss", "sub"), seq=0, input=())
        )
    tracing.observe(_done("c2", "sub"))
    tracing.observe(_done("p2", "lead"))
    spans = exporter.get_finished_spans()
    sub = one(spans, "invoke_agent sub")
    assert sub.parent is not None
    assert sub.parent.is_remote
    assert parent_of(spans, one(spans, "invoke_agent lead")) is None


def test_a_nested_run_seen_between_steps_goes_under_the_step() -> None:
    provider, exporter = memory_provider()
    tracing = Tracing(provider)
    for event in [
        PreCallEvent(run_id="p3", agent="lead", path=("lead",), seq=0, input=()),
        PreReasoningEvent(run_id="p3", agent="lead", seq=1, messages=(), model="m"),
        PreCallEvent(run_id="c3", agent="sub", path=("lead", "sub"), seq=0, input=()),
        _done("c3", "sub"),
        _done("p3", "lead"),
    ]:
        tracing.observe(event)
    spans = exporter.get_finished_spans()
    assert parent_of(spans, one(spans, "invoke_agent sub")) == one(spans, "step 0")


def test_a_broken_stream_restarts_the_chat_span() -> None:
    provider, exporter = memory_provider()

    async def no_wait(_: float) -> None:
        """No time passes."""

    async def main() -> None:
        async with FakeOpenAIServer(["Hello there, friend.", "Hello again."]) as server:
            server.fail(1, Fault(mid_stream_error=2, consume_turn=True))
            model = OpenAIChatModel(
                "gpt-4o-mini",
                base_url=server.base_url,
                api_key="sk-test",
                max_retries=RetryPolicy(sleep=no_wait),
            )
            agent = ReActAgent("a", "", model, hooks=[Tracing(provider)])
            result = await agent.call("hi")
            await agent.aclose()
            assert result.ok, result.error

    asyncio.run(main())
    spans = exporter.get_finished_spans()
    broken, retried = sorted(by_name(spans, "chat gpt-4o-mini"), key=lambda s: s.start_time or 0)
    assert broken.status.status_code is StatusCode.ERROR
    assert retried.status.status_code is StatusCode.UNSET
    assert {parent_of(spans, broken), parent_of(spans, retried)} == {one(spans, "step 0")}
    openai = broken.attributes
    assert openai is not None
    assert openai["gen_ai.provider.name"] == "openai"


def test_a_cut_tool_call_is_an_event_of_the_step() -> None:
    provider, exporter = memory_provider()
    model_turns: list[Turn] = [[tool_call("add", a=1, b=2), tool_call("add", a=2, b=3)], "ok"]
    agent = ReActAgent(
        "a",
        "",
        ScriptedModel(model_turns),
        tools=[add],
        max_tool_calls=1,
        hooks=[Tracing(provider)],
    )
    agent.call_sync("go")
    spans = exporter.get_finished_spans()
    assert len(by_name(spans, "execute_tool add")) == 1
    [event] = one(spans, "step 0").events
    assert event.attributes is not None
    assert event.attributes["error.type"] == "USAGE_LIMIT"


def test_ended_runs_are_remembered_up_to_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tracing_module, "_ENDED_KEPT", 2)
    monkeypatch.setattr(tracing_module, "_ENDED", {})
    provider, exporter = memory_provider()
    tracing = Tracing(provider)
    for run_id in ("r1", "r2", "r3"):
        tracing.observe(PreCallEvent(run_id=run_id, agent="a", seq=0, input=()))
        tracing.observe(_done(run_id))
    assert list(tracing_module._ENDED) == ["r2", "r3"]
    assert len(exporter.get_finished_spans()) == 3


def test_process_hooks_are_added_and_removed_by_identity() -> None:
    chain = HookChain()
    first, second = Tracing(), Tracing()
    stranger = Tracing()
    add_process_hook(first)
    add_process_hook(second)
    try:
        remove_process_hook(stranger)  # not registered: nothing happens
        assert chain.for_event(PostCallEvent) == (first, second)
        remove_process_hook(second)
        assert chain.for_event(PostCallEvent) == (first,)
    finally:
        remove_process_hook(first)
        remove_process_hook(second)
    assert chain.for_event(PostCallEvent) == ()


def test_the_telemetry_module_lists_its_names() -> None:
    import rxagent.telemetry as telemetry

    assert sorted(dir(telemetry)) == sorted(telemetry.__all__)
    assert telemetry.TRACING_PRIORITY == 10_000
