"""OpenTelemetry spans of a run: names, nesting, GenAI attributes, failures, and no leaks."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode
from telemetry_helpers import (  # type: ignore[import-not-found]
    add,
    by_name,
    children,
    explode,
    memory_provider,
    one,
    parent_of,
)

from rxagent import (
    ErrorCode,
    ErrorEvent,
    HookChain,
    ModelOptions,
    PostCallEvent,
    PreCallEvent,
    Principal,
    ReActAgent,
    Reject,
    hook,
    tool,
)
from rxagent.errors import ConfigurationError
from rxagent.events import BaseEvent
from rxagent.telemetry import TRACING_PRIORITY, Tracing, instrument
from rxagent.testing import FunctionModel, ScriptedModel, tool_call


def test_a_run_is_a_tree_of_agent_step_chat_and_tool_spans() -> None:
    provider, exporter = memory_provider()
    model = ScriptedModel([[tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)], "3 and 7"])
    agent = ReActAgent("calc", "", model, tools=[add], hooks=[Tracing(provider)])
    result = agent.call_sync("sums?", session_id="s-1", principal=Principal(user_id="ann"))
    spans = exporter.get_finished_spans()
    assert sorted(s.name for s in spans) == sorted(
        [
            "invoke_agent calc",
            "step 0",
            "step 1",
            "chat scripted",
            "chat scripted",
            "execute_tool add",
            "execute_tool add",
        ]
    )
    run = one(spans, "invoke_agent calc")
    assert parent_of(spans, run) is None
    steps = [one(spans, "step 0"), one(spans, "step 1")]
    assert children(spans, run) == steps or set(children(spans, run)) == set(steps)
    first = sorted(s.name for s in children(spans, steps[0]))
    assert first == ["chat scripted", "execute_tool add", "execute_tool add"]
    assert [s.name for s in children(spans, steps[1])] == ["chat scripted"]
    assert run.attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "calc",
        "gen_ai.conversation.id": "s-1",
        "gen_ai.request.model": "scripted",
        "gen_ai.provider.name": "_OTHER",
        "gen_ai.system": "_OTHER",
        "user.id": "ann",
        "rxagent.run_id": result.run_id,
        "rxagent.path": ("calc",),
        "gen_ai.usage.input_tokens": result.usage.input_tokens,
        "gen_ai.usage.output_tokens": result.usage.output_tokens,
        "rxagent.stop_reason": "no_tool_calls",
        "rxagent.steps": 2,
    }
    assert run.status.status_code is StatusCode.UNSET
    tools = by_name(spans, "execute_tool add")
    assert {s.attributes["gen_ai.tool.call.id"] for s in tools} == {"call_1", "call_2"}
    for span in tools:
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.name"] == "add"
        assert span.kind is trace.SpanKind.INTERNAL
    chats = by_name(spans, "chat scripted")
    assert sum(s.attributes["gen_ai.usage.output_tokens"] for s in chats) == (
        result.usage.output_tokens
    )
    assert all(s.kind is trace.SpanKind.CLIENT for s in chats)
    assert all(s.attributes["gen_ai.operation.name"] == "chat" for s in chats)
    # a span's time is its events' time: children lie inside their parents
    for span in spans:
        parent = parent_of(spans, span)
        if parent is not None:
            assert parent.start_time <= span.start_time <= span.end_time <= parent.end_time


def test_request_options_and_the_provider_of_an_http_model_are_attributes() -> None:
    provider, exporter = memory_provider()
    model = ScriptedModel(["ok"])
    agent = ReActAgent(
        "a",
        "",
        model,
        hooks=[Tracing(provider)],
        options=ModelOptions(temperature=0.2, max_output_tokens=50, seed=7),
    )
    agent.call_sync("hi")
    chat = one(exporter.get_finished_spans(), "chat scripted")
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.request.temperature"] == 0.2
    assert chat.attributes["gen_ai.request.max_tokens"] == 50
    assert chat.attributes["gen_ai.request.seed"] == 7
    assert chat.attributes["gen_ai.request.model"] == "scripted"


class GeminiLike:
    """A model that says its provider, as the HTTP clients do."""

    provider = "gemini"
    name = "gemini-2.0-flash"
    context_window: int | None = 1_000_000

    def __init__(self) -> None:
        self._inner = ScriptedModel(["ok"])

    def stream(self, messages: Any, tools: Any, options: Any) -> Any:
        return self._inner.stream(messages, tools, options)


def test_the_provider_name_follows_the_conventions() -> None:
    provider, exporter = memory_provider()
    agent = ReActAgent("g", "", GeminiLike())
    agent.hooks.add(Tracing(provider))
    agent.call_sync("hi")
    chat = one(exporter.get_finished_spans(), "chat gemini-2.0-flash")
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert chat.attributes["gen_ai.system"] == "gcp.gemini"


def test_a_failing_tool_marks_its_span_with_the_error_code() -> None:
    provider, exporter = memory_provider()
    model = ScriptedModel([tool_call("explode"), "sorry"])
    agent = ReActAgent("a", "", model, tools=[explode], hooks=[Tracing(provider)])
    assert agent.call_sync("go").ok
    spans = exporter.get_finished_spans()
    span = one(spans, "execute_tool explode")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes["error.type"] == "TOOL_ERROR"
    assert one(spans, "invoke_agent a").status.status_code is StatusCode.UNSET


def test_a_tool_the_model_invents_is_an_error_span() -> None:
    provider, exporter = memory_provider()
    model = ScriptedModel([tool_call("nope"), "sorry"])
    agent = ReActAgent("a", "", model, tools=[add], hooks=[Tracing(provider)])
    agent.call_sync("go")
    span = one(exporter.get_finished_spans(), "execute_tool nope")
    assert span.status.status_code is StatusCode.ERROR


def test_a_failing_model_ends_the_chat_span_and_fails_the_run_span() -> None:
    provider, exporter = memory_provider()

    def broken(*_: object) -> str:
        raise ConnectionError("no route")

    agent = ReActAgent("a", "", FunctionModel(broken), hooks=[Tracing(provider)])
    result = agent.call_sync("hi")
    assert result.error is not None
    spans = exporter.get_finished_spans()
    chat = one(spans, "chat function")
    run = one(spans, "invoke_agent a")
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes is not None
        assert span.attributes["error.type"] == "PROVIDER_ERROR"
    assert parent_of(spans, chat) == one(spans, "step 0")


def test_errors_elsewhere_are_span_events() -> None:
    provider, exporter = memory_provider()

    @hook(PreCallEvent, name="flaky")
    def flaky(event: PreCallEvent) -> None:
        raise ValueError("oops")

    agent = ReActAgent("a", "", ScriptedModel(["ok"]), hooks=[flaky, Tracing(provider)])
    agent.call_sync("hi")
    run = one(exporter.get_finished_spans(), "invoke_agent a")
    [event] = run.events
    assert event.name == "rxagent.error"
    assert event.attributes is not None
    assert event.attributes["rxagent.source"] == "hook:flaky"


def test_an_interrupted_run_ends_every_span() -> None:
    provider, exporter = memory_provider()
    started = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait forever."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    async def main() -> None:
        model = ScriptedModel([tool_call("wait"), "unused"])
        agent = ReActAgent("a", "", model, tools=[wait], hooks=[Tracing(provider)])
        task = asyncio.create_task(agent.call("go"))
        await started.wait()
        agent.interrupt()
        result = await task
        assert result.interrupted

    asyncio.run(main())
    spans = exporter.get_finished_spans()
    tool_span = one(spans, "execute_tool wait")
    assert tool_span.status.status_code is StatusCode.ERROR
    run = one(spans, "invoke_agent a")
    assert run.attributes is not None
    assert run.attributes["error.type"] == "INTERRUPTED"
    assert run.attributes["rxagent.stop_reason"] == "interrupted"


def test_a_run_disposed_of_without_post_call_still_ends_its_spans() -> None:
    provider, exporter = memory_provider()
    tracing = Tracing(provider)

    async def main() -> None:
        model = ScriptedModel([tool_call("add", a=1, b=2), "3"], delay=0.001)
        agent = ReActAgent("a", "", model, tools=[add], hooks=[tracing])
        async for event in agent.events("go"):
            if event.type == "reasoning_chunk":
                break  # leaving early cancels the run: no PostCall
        await asyncio.sleep(0.05)  # the cleanup task runs

    asyncio.run(main())
    spans = exporter.get_finished_spans()
    run = one(spans, "invoke_agent a")
    assert run.attributes is not None
    assert run.attributes["error.type"] == "CANCELLED"
    assert one(spans, "chat scripted").status.status_code is StatusCode.ERROR
    assert "open_runs=0" in repr(tracing)


def test_a_nested_agent_is_a_child_of_the_tool_call_that_runs_it() -> None:
    provider, exporter = memory_provider()
    inner = ReActAgent("researcher", "", ScriptedModel(["Paris"]))

    @tool
    async def research(question: str) -> str:
        """Ask the researcher.

        Args:
            question: What to ask.
        """
        return (await inner.call(question)).text

    model = ScriptedModel([tool_call("research", question="capital?"), "It is Paris."])
    outer = ReActAgent("lead", "", model, tools=[research])
    with instrument(provider):
        outer.call_sync("capital of France?")
    spans = exporter.get_finished_spans()
    child = one(spans, "invoke_agent researcher")
    assert parent_of(spans, child) == one(spans, "execute_tool research")
    assert one(spans, "invoke_agent lead").context.trace_id == child.context.trace_id


def test_nested_events_forwarded_to_the_parent_go_under_its_open_tool_span() -> None:
    """A child run whose events reach the parent's hooks (path of two names), not its own."""
    provider, exporter = memory_provider()
    tracing = Tracing(provider)
    chain = HookChain([tracing])
    common = {"session_id": "s", "timestamp": 1.0}

    async def main() -> None:
        events: list[BaseEvent] = [
            PreCallEvent(run_id="p", agent="lead", path=("lead",), seq=0, input=(), **common),
            *_tool_start("p", "lead", ("lead",)),
            PreCallEvent(run_id="c", agent="sub", path=("lead", "sub"), seq=0, input=(), **common),
            _post_call("c", "sub", ("lead", "sub")),
            _post_call("c", "sub", ("lead", "sub")),  # seen twice: traced once
            _post_call("p", "lead", ("lead",)),
        ]
        for event in events:
            await chain.dispatch(event)

    asyncio.run(main())
    spans = exporter.get_finished_spans()
    assert len(by_name(spans, "invoke_agent sub")) == 1
    assert parent_of(spans, one(spans, "invoke_agent sub")) == one(spans, "execute_tool t")


def _tool_start(run_id: str, agent: str, path: tuple[str, ...]) -> list[BaseEvent]:
    from rxagent import PreActingEvent, ToolUseBlock

    call = ToolUseBlock(id="c1", name="t")
    return [PreActingEvent(run_id=run_id, agent=agent, path=path, seq=1, tool_call=call)]


def _post_call(run_id: str, agent: str, path: tuple[str, ...]) -> PostCallEvent:
    from rxagent import AgentResult, Msg

    reply = Msg.assistant("done")
    return PostCallEvent(
        run_id=run_id, agent=agent, path=path, seq=9, reply=reply, result=AgentResult(reply=reply)
    )


def test_instrument_traces_every_agent_until_uninstrumented() -> None:
    provider, exporter = memory_provider()
    before = ReActAgent("before", "", ScriptedModel(["one", "two"]))
    handle = instrument(provider)
    states = [handle.active]
    try:
        after = ReActAgent("after", "", ScriptedModel(["one"]))
        before.call_sync("hi")
        after.call_sync("hi")
        assert [i.name for i in before.hooks.explain(PostCallEvent)] == ["tracing"]
        assert handle.tracing.priority == TRACING_PRIORITY
    finally:
        handle.uninstrument()
    handle.uninstrument()  # twice is harmless
    states.append(handle.active)
    assert states == [True, False]
    before.call_sync("again")
    names = [s.name for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert sorted(names) == ["invoke_agent after", "invoke_agent before"]
    assert before.hooks.explain(PostCallEvent) == []


def test_an_agent_traced_twice_gets_one_set_of_spans() -> None:
    provider, exporter = memory_provider()
    agent = ReActAgent("a", "", ScriptedModel(["ok"]), hooks=[Tracing(provider)])
    with instrument(provider):
        agent.call_sync("hi")
    assert len(by_name(exporter.get_finished_spans(), "invoke_agent a")) == 1


def test_the_run_continues_the_callers_span() -> None:
    provider, exporter = memory_provider()
    tracer = provider.get_tracer("app")
    agent = ReActAgent("a", "", ScriptedModel(["ok"]), hooks=[Tracing(provider)])

    async def main() -> None:
        with tracer.start_as_current_span("handle request"):
            await agent.call("hi")

    asyncio.run(main())
    spans = exporter.get_finished_spans()
    assert parent_of(spans, one(spans, "invoke_agent a")) == one(spans, "handle request")


def test_a_span_for_a_tool_is_current_while_the_tool_runs() -> None:
    provider, _exporter = memory_provider()
    seen: list[str] = []

    @tool
    def probe() -> str:
        """Look at the current span."""
        span = trace.get_current_span()
        seen.append(getattr(span, "name", ""))
        return "ok"

    model = ScriptedModel([[tool_call("probe"), tool_call("probe")], "done"])
    agent = ReActAgent("a", "", model, tools=[probe], hooks=[Tracing(provider)])
    agent.call_sync("go")
    assert seen == ["execute_tool probe", "execute_tool probe"]


def test_tracing_never_breaks_a_run(caplog: pytest.LogCaptureFixture) -> None:
    tracing = Tracing()
    tracing._tracer = None  # type: ignore[assignment]  # every span call now fails
    agent = ReActAgent("a", "", ScriptedModel(["ok"]), hooks=[tracing])
    assert agent.call_sync("hi").text == "ok"
    assert "tracing failed on pre_call" in caplog.text


def test_an_event_of_an_ended_run_opens_no_span() -> None:
    provider, exporter = memory_provider()
    tracing = Tracing(provider)
    late = ErrorEvent(run_id="r", agent="a", seq=5, code=ErrorCode.UNKNOWN, message="late")

    async def main() -> None:
        chain = HookChain([tracing])
        await chain.dispatch(PreCallEvent(run_id="r", agent="a", seq=0, input=()))
        await chain.dispatch(_post_call("r", "a", ("a",)))
        await chain.dispatch(late)

    asyncio.run(main())
    assert [s.name for s in exporter.get_finished_spans()] == ["invoke_agent a"]


def test_without_the_api_tracing_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import rxagent.telemetry as telemetry

    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    monkeypatch.delitem(sys.modules, "rxagent.telemetry._tracing", raising=False)
    monkeypatch.delattr(telemetry, "_tracing", raising=False)
    with pytest.raises(ConfigurationError, match=r'pip install "rxagent\[otel\]"'):
        instrument()
    with pytest.raises(ConfigurationError, match=r"rxagent.telemetry.Tracing needs"):
        telemetry.Tracing  # noqa: B018
    with pytest.raises(AttributeError):
        telemetry.nothing  # noqa: B018


def test_rxagent_imports_and_runs_without_the_api() -> None:
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "import rxagent, rxagent.server, rxagent.telemetry\n"
        "from rxagent.testing import ScriptedModel\n"
        "with rxagent.telemetry.remote_parent({'traceparent': '00-' + '1' * 32 + '-' + '2' * 16"
        " + '-01'}) as found:\n"
        "    assert not found\n"
        "print(rxagent.ReActAgent('a', '', ScriptedModel(['fine'])).call_sync('hi').text)\n"
        "try:\n"
        "    rxagent.telemetry.instrument()\n"
        "except rxagent.errors.ConfigurationError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.splitlines()[0] == "fine"
    assert 'pip install "rxagent[otel]"' in done.stdout


def test_a_run_refused_at_pre_call_is_still_one_failed_span() -> None:
    provider, exporter = memory_provider()

    @hook(PreCallEvent, name="gate")
    def gate(event: PreCallEvent) -> None:
        raise Reject("closed")

    agent = ReActAgent("a", "", ScriptedModel(["x"]), hooks=[gate, Tracing(provider)])
    assert agent.call_sync("hi").error is not None
    [run] = exporter.get_finished_spans()  # started by the ErrorEvent: the hook ran first
    assert run.name == "invoke_agent a"
    assert run.attributes is not None
    assert run.attributes["error.type"] == "HOOK_REJECTED"
