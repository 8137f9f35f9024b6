"""The ReAct loop: event order, tools, hooks' edits, limits and stop conditions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rxagent import (
    CustomEvent,
    ErrorCode,
    ErrorEvent,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReActAgent,
    ReasoningChunkEvent,
    Reject,
    RunContext,
    current_run,
    final_answer_marker,
    hook,
    max_steps,
    tool,
)
from rxagent.errors import HookRejectedError, InvalidInputError, MaxIterationsError
from rxagent.events import BaseEvent
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, text, tool_call


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool
async def echo(value: str) -> str:
    """Echo a value.

    Args:
        value: What to echo.
    """
    return value


async def collect(agent: ReActAgent, msg: Any = "hi", **kw: Any) -> list[BaseEvent]:
    return [ev async for ev in agent.events(msg, **kw)]


def types(events: list[BaseEvent]) -> list[str]:
    return [e.type for e in events]


async def test_text_only_run_emits_the_protocol_and_stores_memory():
    agent = ReActAgent("a", "Be brief.", ScriptedModel(["Hello there!"], chunk_size=4))
    events = await collect(agent)
    assert_event_protocol(events)
    assert types(events) == [
        "pre_call",
        "pre_reasoning",
        *["reasoning_chunk"] * 3,
        "post_reasoning",
        "post_call",
    ]
    pre = events[1]
    assert isinstance(pre, PreReasoningEvent)
    assert pre.messages[0].role == "system"
    assert pre.messages[0].text == "Be brief."
    assert "".join(e.delta.text for e in events if isinstance(e, ReasoningChunkEvent)) == (  # type: ignore[union-attr]
        "Hello there!"
    )
    post = events[-1]
    assert isinstance(post, PostCallEvent)
    assert post.result.ok
    assert post.result.text == "Hello there!"
    assert post.result.stop_reason == "no_tool_calls"
    assert post.result.reply == post.reply
    state = await agent.state_dict()
    assert [m["role"] for m in state["memory"]] == ["user", "assistant"]


async def test_parallel_tool_calls_keep_result_order_and_pair_in_memory():
    model = ScriptedModel(
        [[text("Adding."), tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)], "3 and 7"]
    )
    agent = ReActAgent("a", "", model, tools=[add])
    events = await collect(agent)
    assert_event_protocol(events)
    pre_acting = [e for e in events if isinstance(e, PreActingEvent)]
    post_acting = [e for e in events if isinstance(e, PostActingEvent)]
    assert [e.tool_call.id for e in pre_acting] == ["call_1", "call_2"]
    assert [e.result.output for e in post_acting] == ["3", "7"]
    second_request = model.requests[1].messages
    assert [m.role for m in second_request] == ["user", "assistant", "tool", "tool"]
    assert [m.tool_results[0].id for m in second_request[2:]] == ["call_1", "call_2"]
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.tools_used == ("add", "add")
    assert result.steps == 2


async def test_tool_call_ids_continue_across_runs_of_a_session():
    model = ScriptedModel([tool_call("add", a=1, b=1), "2", tool_call("add", a=2, b=2), "4"])
    agent = ReActAgent("a", "", model, tools=[add])
    await agent.call("one")
    events = await collect(agent, "two")
    assert [e.tool_call.id for e in events if isinstance(e, PreActingEvent)] == ["call_2"]


async def test_sequential_tools_when_parallel_is_off():
    order: list[str] = []
    both_started = asyncio.Event()

    @tool
    async def slow(name: str) -> str:
        """Record start and end.

        Args:
            name: A label.
        """
        order.append(f"start {name}")
        await asyncio.sleep(0.01)  # the behaviour: time in which a parallel call would start
        order.append(f"end {name}")
        return name

    @tool
    async def meet(name: str) -> str:
        """Record the start, wait until both calls started, record the end.

        Args:
            name: A label.
        """
        order.append(f"start {name}")
        if sum(entry.startswith("start") for entry in order) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 5)  # fails unless the calls overlap
        order.append(f"end {name}")
        return name

    model = ScriptedModel([[tool_call("slow", name="x"), tool_call("slow", name="y")], "done"])
    agent = ReActAgent("a", "", model, tools=[slow], parallel_tool_calls=False)
    await agent.call()
    assert order == ["start x", "end x", "start y", "end y"]
    order.clear()
    model = ScriptedModel([[tool_call("meet", name="x"), tool_call("meet", name="y")], "done"])
    parallel = ReActAgent("b", "", model, tools=[meet])
    assert (await parallel.call()).ok
    assert order[:2] == ["start x", "start y"]
    assert sorted(order[2:]) == ["end x", "end y"]  # each saw the other start


async def test_unknown_tool_and_bad_arguments_become_error_results_the_model_sees():
    model = ScriptedModel([[tool_call("nope", x=1), tool_call("add", a="many", b=2)], "sorry"])
    agent = ReActAgent("a", "", model, tools=[add])
    events = await collect(agent)
    assert_event_protocol(events)
    results = [e.result for e in events if isinstance(e, PostActingEvent)]
    assert results[0].is_error
    assert results[0].text.startswith("Tool 'nope' not found")
    assert results[1].is_error
    assert "Invalid arguments for tool 'add'" in results[1].text
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert {e.source for e in errors} == {"tool:nope", "tool:add"}
    assert all(e.recoverable and e.code == ErrorCode.TOOL_ERROR for e in errors)
    seen = model.requests[1].messages
    assert [m.tool_results[0].is_error for m in seen if m.role == "tool"] == [True, True]
    assert events[-1].result.ok  # type: ignore[attr-defined]


async def test_pre_reasoning_edits_change_the_request_not_memory():
    @hook(PreReasoningEvent, priority=10)
    def add_rule(event: PreReasoningEvent) -> PreReasoningEvent:
        return event.replace(messages=[*event.messages, Msg.system("rule")])

    model = ScriptedModel(["ok"])
    agent = ReActAgent("a", "", model, hooks=[add_rule])
    events = await collect(agent)
    pre = next(e for e in events if isinstance(e, PreReasoningEvent))
    assert pre.modified_by == ("add_rule",)
    assert model.requests[0].messages[-1].text == "rule"
    state = await agent.state_dict()
    assert [m["role"] for m in state["memory"]] == ["user", "assistant"]


async def test_post_reasoning_edit_is_what_memory_stores_and_the_reply():
    @hook(PostReasoningEvent)
    def shout(event: PostReasoningEvent) -> PostReasoningEvent:
        return event.replace(response=Msg.assistant(event.response.text.upper()))

    agent = ReActAgent("a", "", ScriptedModel(["quiet"]), hooks=[shout])
    result = await agent.call()
    assert result.text == "QUIET"
    state = await agent.state_dict()
    assert state["memory"][-1]["content"] == "QUIET"


async def test_pre_acting_edit_changes_executed_arguments():
    @hook(PreActingEvent)
    def double(event: PreActingEvent) -> PreActingEvent:
        call = event.tool_call
        new_input = {"a": call.input["a"] * 2, "b": call.input["b"]}
        return event.replace(tool_call=call.model_copy(update={"input": new_input}))

    model = ScriptedModel([tool_call("add", a=5, b=1), "done"])
    agent = ReActAgent("a", "", model, tools=[add], hooks=[double])
    events = await collect(agent)
    post = next(e for e in events if isinstance(e, PostActingEvent))
    assert post.result.output == "11"
    assert post.tool_call.input["a"] == 10


async def test_reject_in_pre_acting_refuses_one_call_and_the_loop_goes_on():
    @hook(PreActingEvent)
    def guard(event: PreActingEvent) -> None:
        if event.tool_call.input.get("a") == 666:
            raise Reject("not that number")

    model = ScriptedModel([[tool_call("add", a=666, b=1), tool_call("add", a=1, b=1)], "ok"])
    agent = ReActAgent("a", "", model, tools=[add], hooks=[guard])
    events = await collect(agent)
    assert_event_protocol(events)
    results = [e.result for e in events if isinstance(e, PostActingEvent)]
    assert results[0].is_error
    assert "not that number" in results[0].text
    assert "guard" in results[0].text
    assert results[1].output == "2"
    assert events[-1].result.ok  # type: ignore[attr-defined]


async def test_reject_in_pre_call_ends_the_run_with_hook_rejected():
    @hook(PreCallEvent)
    def gate(event: PreCallEvent) -> None:
        raise Reject("closed")

    model = ScriptedModel(["never"])
    agent = ReActAgent("a", "", model, hooks=[gate])
    events = await collect(agent)
    assert_event_protocol(events)
    assert types(events) == ["pre_call", "error", "post_call"]
    result = events[-1].result  # type: ignore[attr-defined]
    assert not result.ok
    assert result.error.code == ErrorCode.HOOK_REJECTED
    assert result.error.source == "hook:gate"
    assert model.calls == 0
    with pytest.raises(HookRejectedError):
        result.raise_for_error()
    assert (await agent.state_dict())["memory"] == []


async def test_failing_hook_is_isolated_as_an_error_event_after_the_event():
    @hook(PreReasoningEvent, priority=1)
    def broken(event: PreReasoningEvent) -> None:
        raise ValueError("boom")

    @hook(PreReasoningEvent, priority=2)
    def tag(event: PreReasoningEvent) -> PreReasoningEvent:
        return event.replace(options=event.options.model_copy(update={"seed": 1}))

    agent = ReActAgent("a", "", ScriptedModel(["fine"]), hooks=[broken, tag])
    events = await collect(agent)
    assert_event_protocol(events)
    index = types(events).index("pre_reasoning")
    error = events[index + 1]
    assert isinstance(error, ErrorEvent)
    assert error.source == "hook:broken"
    assert error.recoverable
    assert "boom" in error.message
    assert error.seq == events[index].seq + 1
    assert events[index].modified_by == ("tag",)
    assert events[-1].result.ok  # type: ignore[attr-defined]


async def test_propagating_hook_fails_the_run():
    @hook(PostReasoningEvent, on_error="propagate")
    def strict(event: PostReasoningEvent) -> None:
        raise RuntimeError("strict failure")

    agent = ReActAgent("a", "", ScriptedModel(["x"]), hooks=[strict])
    result = await agent.call()
    assert not result.ok
    assert result.error is not None
    assert result.error.source == "hook:strict"
    assert "strict failure" in result.error.message


async def test_hook_returning_wrong_event_type_is_reported_with_the_fix():
    @hook(PreReasoningEvent)
    def wrong(event: PreReasoningEvent) -> Any:
        return PreCallEvent(input=())

    agent = ReActAgent("a", "", ScriptedModel(["x"]), hooks=[wrong])
    events = await collect(agent)
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.exception == "HookContractError"
    assert "returned PreCallEvent" in error.message
    assert "event.replace" in error.message


async def test_post_acting_stop_ends_the_run_with_the_tool_result():
    @hook(PostActingEvent)
    def stop_after_tool(event: PostActingEvent) -> PostActingEvent:
        return event.replace(stop=True)

    model = ScriptedModel([tool_call("add", a=20, b=22), "unused"])
    agent = ReActAgent("a", "", model, tools=[add], hooks=[stop_after_tool])
    result = await agent.call()
    assert result.ok
    assert result.stop_reason == "hook_stop"
    assert result.text == "42"
    assert model.calls == 1


async def test_post_reasoning_stop_skips_tools_but_pairs_them():
    @hook(PostReasoningEvent)
    def stop(event: PostReasoningEvent) -> PostReasoningEvent:
        return event.replace(stop=True)

    model = ScriptedModel([[text("Let me add."), tool_call("add", a=1, b=1)]])
    agent = ReActAgent("a", "", model, tools=[add], hooks=[stop])
    events = await collect(agent)
    assert_event_protocol(events)
    assert "pre_acting" not in types(events)
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.stop_reason == "hook_stop"
    assert result.text == "Let me add."
    memory = (await agent.state_dict())["memory"]
    assert memory[-1]["role"] == "tool"
    assert memory[-1]["content"][0]["is_error"]


async def test_post_call_edit_changes_reply_result_and_memory():
    @hook(PostCallEvent)
    def sign(event: PostCallEvent) -> PostCallEvent:
        return event.replace(reply=event.reply.model_copy(update={"content": "signed"}))

    agent = ReActAgent("a", "", ScriptedModel(["draft"]), hooks=[sign])
    events = await collect(agent)
    post = events[-1]
    assert isinstance(post, PostCallEvent)
    assert post.reply.text == "signed"
    assert post.result.text == "signed"
    assert post.modified_by == ("sign",)
    assert (await agent.state_dict())["memory"][-1]["content"] == "signed"


async def test_max_iters_makes_one_last_call_without_tools():
    model = FunctionModel(
        lambda messages, tools, options: tool_call("add", a=1, b=1) if tools else "final answer"
    )
    agent = ReActAgent("a", "", model, tools=[add], max_iters=3)
    result = await agent.call()
    assert result.ok
    assert result.stop_reason == "max_iters"
    assert result.text == "final answer"
    assert model.calls == 4
    assert [len(r.tools) for r in model.requests] == [1, 1, 1, 0]


async def test_max_iters_fails_when_the_last_answer_has_no_text():
    model = FunctionModel(lambda messages, tools, options: tool_call("add", a=1, b=1))
    agent = ReActAgent("a", "", model, tools=[add], max_iters=2)
    result = await agent.call()
    assert not result.ok
    assert result.error is not None
    assert result.error.code == ErrorCode.MAX_ITERATIONS
    with pytest.raises(MaxIterationsError):
        result.raise_for_error()
    memory = (await agent.state_dict())["memory"]
    calls = {
        b["id"]
        for m in memory
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    }
    answered = {m["content"][0]["id"] for m in memory if m["role"] == "tool"}
    assert calls == answered


async def test_max_tool_calls_cuts_the_batch_and_withdraws_tools():
    model = FunctionModel(
        lambda messages, tools, options: (
            [tool_call("add", a=1, b=i) for i in range(3)] if tools else "no more tools"
        )
    )
    agent = ReActAgent("a", "", model, tools=[add], max_tool_calls=2)
    events = await collect(agent)
    assert_event_protocol(events)
    assert len([e for e in events if isinstance(e, PreActingEvent)]) == 2
    limit = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(limit) == 1
    assert limit[0].code == ErrorCode.USAGE_LIMIT
    assert [len(r.tools) for r in model.requests] == [1, 0]
    tool_msgs = [m for m in model.requests[1].messages if m.role == "tool"]
    assert [m.tool_results[0].is_error for m in tool_msgs] == [False, False, True]
    assert "tool call limit reached" in tool_msgs[2].tool_results[0].text
    assert events[-1].result.text == "no more tools"  # type: ignore[attr-defined]


async def test_final_answer_marker_stops_with_the_text_after_it():
    model = ScriptedModel([[text("thinking FINAL_ANSWER: 42"), tool_call("add", a=1, b=1)], "x"])
    agent = ReActAgent("a", "", model, tools=[add], stop_when=[final_answer_marker()])
    result = await agent.call()
    assert result.stop_reason == "final_answer"
    assert result.text == "42"
    assert model.calls == 1


async def test_callable_stop_condition_and_explicit_max_steps():
    seen_steps: list[int] = []

    def after_two(ctx: RunContext) -> bool:
        seen_steps.append(ctx.step)
        return ctx.step >= 1

    model = FunctionModel(lambda m, t, o: tool_call("add", a=1, b=1))
    agent = ReActAgent("a", "", model, tools=[add], stop_when=[after_two, max_steps(50)])
    result = await agent.call()
    assert result.stop_reason == "stop_condition"
    assert seen_steps == [0, 1]
    assert result.text == "2"  # no assistant text: the last tool result is the reply


async def test_sys_prompt_callable_sees_the_run_context():
    def prompt(ctx: RunContext) -> str:
        return f"session={ctx.session_id} agent={ctx.agent}"

    model = ScriptedModel(["ok"])
    agent = ReActAgent("bot", prompt, model)
    await agent.call(session_id="s9")
    assert model.requests[0].messages[0].text == "session=s9 agent=bot"


async def test_list_input_is_appended_to_memory():
    model = ScriptedModel(["one", "two"])
    agent = ReActAgent("a", "", model)
    await agent.call("first")
    await agent.call([Msg.user("second"), Msg.user("third")])
    texts = [m.text for m in model.requests[1].messages]
    assert texts == ["first", "one", "second", "third"]


@pytest.mark.parametrize("bad", [42, {"role": "user"}, [Msg.user("ok"), "text"], b"bytes"])
async def test_bad_input_is_a_typed_error_naming_the_fix(bad: Any):
    agent = ReActAgent("a", "", ScriptedModel(["x"]))
    with pytest.raises(InvalidInputError, match="Msg"):
        await agent.call(bad)
    with pytest.raises(InvalidInputError):
        agent.events(bad)
    errors: list[Exception] = []
    agent.stream(bad).subscribe(on_error=errors.append)
    assert isinstance(errors[0], InvalidInputError)


async def test_model_failure_is_data_error_event_then_failed_post_call():
    async def broken(messages, tools, options):
        raise ConnectionError("socket closed")

    agent = ReActAgent("a", "", FunctionModel(broken))
    events = await collect(agent)
    assert_event_protocol(events)
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.source == "model"
    assert error.code == ErrorCode.PROVIDER_ERROR
    assert not error.recoverable
    assert "socket closed" in error.message
    assert not events[-1].result.ok  # type: ignore[attr-defined]


async def test_current_run_emit_from_tool_and_hook():
    @tool
    async def noisy(x: int) -> int:
        """Emit and return.

        Args:
            x: A value.
        """
        current_run().emit(CustomEvent, name="tool-note", data={"x": x})
        return x

    @hook(PostActingEvent)
    def audit(event: PostActingEvent) -> None:
        current_run().emit(CustomEvent, name="audit", data=event.tool_call.name)

    model = ScriptedModel([tool_call("noisy", x=7), "done"])
    agent = ReActAgent("a", "", model, tools=[noisy], hooks=[audit])
    events = await collect(agent)
    assert_event_protocol(events)
    customs = [e for e in events if isinstance(e, CustomEvent)]
    assert [(c.name, c.data) for c in customs] == [("tool-note", {"x": 7}), ("audit", "noisy")]
    post_acting = next(e for e in events if isinstance(e, PostActingEvent))
    assert customs[0].seq < post_acting.seq < customs[1].seq
    assert customs[1].seq == post_acting.seq + 1


class Database:
    def __init__(self) -> None:
        self.rows = {"k": "v"}


async def test_run_context_is_injected_into_tools_with_deps():
    seen: dict[str, Any] = {}

    @tool
    def lookup(key: str, ctx: RunContext, db: Database) -> str:
        """Look up a key.

        Args:
            key: The key.
            ctx: Injected.
            db: Injected.
        """
        seen["session"] = ctx.session_id
        return db.rows[key]

    assert "ctx" not in lookup.schema.parameters["properties"]
    model = ScriptedModel([tool_call("lookup", key="k"), "found"])
    agent = ReActAgent("a", "", model, tools=[lookup])
    events = await collect(agent, session_id="s1", deps=[Database()])
    post = next(e for e in events if isinstance(e, PostActingEvent))
    assert post.result.output == "v"
    assert seen["session"] == "s1"


async def test_output_type_validates_the_reply():
    from pydantic import BaseModel

    class Answer(BaseModel):
        value: int

    # an invalid answer is sent back max_output_retries (2) times before the run fails
    agent = ReActAgent("a", "", ScriptedModel(['{"value": 3}', "not json", "no", "still no"]))
    good = await agent.call(output_type=Answer)
    assert good.output == Answer(value=3)
    bad = await agent.call(output_type=Answer)
    assert not bad.ok
    assert bad.error is not None
    assert bad.error.code == ErrorCode.OUTPUT_INVALID


async def test_one_agent_serves_sessions_concurrently():
    sessions = 8
    arrived = 0
    all_arrived = asyncio.Event()
    met: list[int] = []

    @tool
    async def wait() -> int:
        """Wait until every session's run is in this tool."""
        nonlocal arrived
        arrived += 1
        if arrived == sessions:
            all_arrived.set()
        await asyncio.wait_for(all_arrived.wait(), 5)  # fails unless the runs overlap
        met.append(arrived)
        return arrived

    model = FunctionModel(
        lambda messages, tools, options: (
            "done" if messages[-1].role == "tool" else tool_call("wait")
        )
    )
    agent = ReActAgent("a", "", model, tools=[wait])
    runs = (agent.call(f"q{i}", session_id=f"s{i}") for i in range(sessions))
    results = await asyncio.gather(*runs)
    assert all(r.ok and r.text == "done" for r in results)
    assert {r.session_id for r in results} == {f"s{i}" for i in range(sessions)}
    assert met == [sessions] * sessions


async def test_chunk_index_is_block_position():
    model = ScriptedModel(
        [[text("ab"), tool_call("add", a=1, b=2), text("cd")], "ok"], chunk_size=1
    )
    agent = ReActAgent("a", "", model, tools=[add])
    events = await collect(agent)
    chunks = [e for e in events if isinstance(e, ReasoningChunkEvent) and e.step == 0]
    assert sorted({c.index for c in chunks}) == [0, 1, 2]
    assert {c.index for c in chunks if c.delta.type == "tool_call_delta"} == {1}


@pytest.mark.parametrize("parallel", [False, True])
async def test_tool_progress_is_delivered_while_the_tool_runs(parallel: bool):
    seen_by_consumer = asyncio.Event()

    @tool
    async def long_job(n: int) -> str:
        """Report progress, then wait until the consumer has seen it.

        Args:
            n: A label.
        """
        current_run().emit(CustomEvent, name="progress", data=n)
        await asyncio.wait_for(seen_by_consumer.wait(), 2.0)
        return "finished"

    calls = [tool_call("long_job", n=1)] + ([tool_call("long_job", n=2)] if parallel else [])
    model = ScriptedModel([calls, "done"])
    agent = ReActAgent("a", "", model, tools=[long_job])
    events = []
    async for event in agent.events("go"):
        events.append(event)
        if isinstance(event, CustomEvent):
            seen_by_consumer.set()
    assert_event_protocol(events)
    results = [e.result for e in events if isinstance(e, PostActingEvent)]
    assert all(r.output == "finished" for r in results)
    progress = [e for e in events if isinstance(e, CustomEvent)]
    first_post = next(e for e in events if isinstance(e, PostActingEvent))
    assert progress[0].seq < first_post.seq


async def test_a_stream_broken_after_chunks_restarts_the_step():
    from rxagent.errors import ProviderError
    from rxagent.models import TextDelta

    attempts = 0

    async def flaky(messages, tools, options):
        nonlocal attempts
        attempts += 1
        if attempts == 1:

            async def broken() -> Any:
                yield TextDelta(index=0, text="Hal")
                raise ProviderError("connection reset", recoverable=True)

            return broken()
        return "Hello"

    agent = ReActAgent("a", "", FunctionModel(flaky))
    events = await collect(agent)
    assert_event_protocol(events)
    assert types(events) == [
        "pre_call",
        "pre_reasoning",
        "reasoning_chunk",
        "error",
        "pre_reasoning",
        "reasoning_chunk",
        "post_reasoning",
        "post_call",
    ]
    error = events[3]
    assert isinstance(error, ErrorEvent)
    assert error.recoverable
    assert error.source == "model"
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.ok
    assert result.text == "Hello"
    assert result.steps == 1


async def test_a_stream_that_keeps_breaking_fails_the_run():
    from rxagent.errors import ProviderError
    from rxagent.models import TextDelta

    async def always_broken(messages, tools, options):
        async def broken() -> Any:
            yield TextDelta(index=0, text="x")
            raise ProviderError("reset", recoverable=True)

        return broken()

    events = await collect(ReActAgent("a", "", FunctionModel(always_broken)))
    assert_event_protocol(events)
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.recoverable for e in errors] == [True, True, False]
    assert not events[-1].result.ok  # type: ignore[attr-defined]


class Cache:
    pass


class RedisCache(Cache):
    pass


async def test_run_context_dep_finds_dependencies_by_type_like_tools_do():
    seen: dict[str, Any] = {}

    @hook(PreCallEvent)
    def look(event: PreCallEvent) -> None:
        seen["cache"] = current_run().dep(Cache)
        try:
            current_run().dep(Database)
        except LookupError as exc:
            seen["missing"] = str(exc)

    cache = RedisCache()
    agent = ReActAgent("a", "", ScriptedModel(["x"]), hooks=[look])
    await agent.call("go", deps=[cache])
    assert seen["cache"] is cache
    assert "deps=[Database(...)]" in seen["missing"]
