"""Interceptors in runs: onion order, retries, synthesized responses, modified_by, failures."""

from __future__ import annotations

from typing import Any

from rxagent import (
    ErrorEvent,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    ReActAgent,
    ReasoningChunkEvent,
    ToolResultBlock,
    tool,
)
from rxagent.errors import ErrorCode, ProviderError
from rxagent.events import BaseEvent
from rxagent.interceptors import (
    ModelCall,
    NextModelCall,
    NextToolCall,
    ToolCall,
    around_model_call,
    around_tool_call,
)
from rxagent.models.base import ModelResponse, Usage
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool(needs_approval=True)
def transfer(amount: int) -> str:
    """Move money.

    Args:
        amount: How much.
    """
    return f"moved {amount}"


async def run_events(agent: ReActAgent, msg: Any = "go", **kw: Any) -> list[BaseEvent]:
    events = [e async for e in agent.events(msg, **kw)]
    assert_event_protocol(events)
    return events


def post_call(events: list[BaseEvent]) -> PostCallEvent:
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    return last


def recorder(log: list[str], name: str, priority: int) -> Any:
    @around_model_call(priority=priority, name=name)
    async def record(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        log.append(f"{name}>")
        response = await call_next(call)
        log.append(f"<{name}")
        return response

    return record


async def test_onion_order_with_mixed_priorities_and_per_call_interceptors():
    log: list[str] = []
    agent = ReActAgent(
        "a",
        "",
        ScriptedModel(["hi"]),
        interceptors=[
            recorder(log, "mid", 50),
            recorder(log, "outer", 10),
            recorder(log, "tie", 50),
        ],
    )
    events = await run_events(agent, interceptors=[recorder(log, "call", 50)])
    assert log == ["outer>", "mid>", "tie>", "call>", "<call", "<tie", "<mid", "<outer"]
    post = next(e for e in events if isinstance(e, PostReasoningEvent))
    assert post.modified_by == ()  # nobody changed the request or the response
    log.clear()
    await agent.call("again", interceptors=())  # the call's own are for that call only
    assert log == ["outer>", "mid>", "tie>"]  # the agent's own; the script ran out


async def test_an_interceptor_that_retries_before_the_first_delta():
    attempts = {"n": 0}

    def flaky(messages: Any, tools: Any, options: Any) -> str:
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise ProviderError("busy", status=503, recoverable=True)
        return "second time lucky"

    @around_model_call
    async def retry(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        try:
            return await call_next(call)
        except ProviderError:
            assert not call_next.started
            return await call_next(call)

    agent = ReActAgent("a", "", FunctionModel(flaky), interceptors=[retry])
    events = await run_events(agent)
    result = post_call(events).result
    assert result.text == "second time lucky"
    assert attempts["n"] == 2
    assert result.usage.requests == 1  # the failed attempt produced no response
    post = next(e for e in events if isinstance(e, PostReasoningEvent))
    assert post.modified_by == ()


async def test_call_next_after_the_first_delta_fails_the_run_with_a_typed_error():
    @around_model_call(name="greedy")
    async def greedy(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        await call_next(call)
        return await call_next(call)

    agent = ReActAgent("a", "", ScriptedModel(["one", "two"]), interceptors=[greedy])
    events = await run_events(agent)
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.code is ErrorCode.UNKNOWN
    assert error.source == "interceptor:greedy"
    assert "after the first delta" in error.message
    assert not post_call(events).result.ok


async def test_a_synthesized_response_is_replayed_as_chunks():
    @around_model_call(name="canned")
    async def canned(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        message = Msg(
            role="assistant",
            content=(
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "canned answer"},
            ),
        )
        return ModelResponse(message=message)

    agent = ReActAgent("a", "", ScriptedModel([]), interceptors=[canned])
    events = await run_events(agent)
    chunks = [e for e in events if isinstance(e, ReasoningChunkEvent)]
    assert [c.index for c in chunks] == [0, 1]
    assert chunks[1].delta.text == "canned answer"  # type: ignore[union-attr]
    post = next(e for e in events if isinstance(e, PostReasoningEvent))
    assert post.modified_by == ("canned",)
    assert post.usage == Usage()
    assert post_call(events).result.text == "canned answer"


async def test_a_synthesized_tool_call_gets_this_sessions_ids_and_runs():
    cached = Msg(
        role="assistant",
        content=({"type": "tool_use", "id": "call_99", "name": "add", "input": {"a": 2, "b": 2}},),
    )
    state = {"n": 0}

    @around_model_call
    async def from_cache(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        state["n"] += 1
        if state["n"] in (1, 3):
            return ModelResponse(message=cached)
        return await call_next(call)

    model = ScriptedModel(["4", "4 again"])
    agent = ReActAgent("a", "", model, tools=[add], interceptors=[from_cache])
    events = await run_events(agent)
    acted = next(e for e in events if isinstance(e, PostActingEvent))
    assert acted.tool_call.id == "call_99"  # its own id
    events = await run_events(agent)
    acted = next(e for e in events if isinstance(e, PostActingEvent))
    assert acted.tool_call.id == "call_1"  # call_99 is taken in this session: a new one
    assert acted.result.text == "4"


async def test_a_response_changed_after_streaming_is_named_in_modified_by():
    @around_model_call(name="shout")
    async def shout(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        response = await call_next(call)
        loud = response.message.model_copy(update={"content": response.message.text.upper()})
        return response.model_copy(update={"message": loud})

    @around_model_call(priority=200, name="rewrite_request")
    async def rewrite_request(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        extra = Msg.system("be loud")
        return await call_next(call.model_copy(update={"messages": (*call.messages, extra)}))

    seen: list[list[Msg]] = []

    def model(messages: list[Msg], tools: Any, options: Any) -> str:
        seen.append(list(messages))
        return "quiet"

    agent = ReActAgent("a", "", FunctionModel(model), interceptors=[shout, rewrite_request])
    events = await run_events(agent)
    post = next(e for e in events if isinstance(e, PostReasoningEvent))
    assert post.modified_by == ("rewrite_request", "shout")
    assert post.response.text == "QUIET"
    assert seen[0][-1].text == "be loud"
    chunks = "".join(e.delta.text for e in events if isinstance(e, ReasoningChunkEvent))  # type: ignore[union-attr]
    assert chunks == "quiet"  # the chunks are what the model streamed


async def test_a_failing_interceptor_fails_the_run_naming_it():
    @around_model_call(name="broken")
    async def broken(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        raise RuntimeError("oops")

    agent = ReActAgent("a", "", ScriptedModel(["x"]), interceptors=[broken])
    events = await run_events(agent)
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.source == "interceptor:broken"
    assert error.code is ErrorCode.UNKNOWN
    assert "RuntimeError: oops" in error.message


async def test_an_interceptor_returning_the_wrong_type_fails_the_run():
    @around_model_call(name="wrong")
    async def wrong(call: ModelCall, call_next: Any) -> Any:
        return "text"

    agent = ReActAgent("a", "", ScriptedModel(["x"]), interceptors=[wrong])
    result = post_call(await run_events(agent)).result
    assert result.error is not None
    assert result.error.source == "interceptor:wrong"
    assert "return a ModelResponse" in result.error.message


async def test_passing_the_wrong_call_type_to_call_next_fails_the_run():
    @around_model_call(name="confused")
    async def confused(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        return await call_next({"messages": []})  # type: ignore[arg-type]

    agent = ReActAgent("a", "", ScriptedModel(["x"]), interceptors=[confused])
    result = post_call(await run_events(agent)).result
    assert result.error is not None
    assert "pass a ModelCall" in result.error.message


async def test_a_model_failure_passes_through_interceptors_unchanged():
    def down(messages: Any, tools: Any, options: Any) -> str:
        raise ValueError("no model")

    agent = ReActAgent("a", "", FunctionModel(down), interceptors=[recorder([], "r", 1)])
    result = post_call(await run_events(agent)).result
    assert result.error is not None
    assert result.error.code is ErrorCode.PROVIDER_ERROR
    assert "ValueError: no model" in result.error.message


async def test_a_broken_stream_after_chunks_restarts_the_step_through_interceptors():
    calls = {"n": 0}

    async def breaks_once(messages: Any, tools: Any, options: Any) -> Any:
        calls["n"] += 1
        return "fine"

    model = ScriptedModel(["partial answer", "full answer"], chunk_size=4)
    broken = {"done": False}

    @around_model_call
    async def cut(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        response = await call_next(call)
        if not broken["done"]:
            broken["done"] = True
            raise ProviderError("stream cut", recoverable=True)
        return response

    agent = ReActAgent("a", "", model, interceptors=[cut])
    events = await run_events(agent)
    restarts = [e for e in events if isinstance(e, ErrorEvent) and e.recoverable]
    assert len(restarts) == 1
    assert post_call(events).result.text == "full answer"


async def test_tool_interceptors_change_arguments_and_results_and_are_named():
    @around_tool_call(name="double")
    async def double(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        args = {k: v * 2 for k, v in call.arguments.items()}
        return await call_next(call.model_copy(update={"arguments": args}))

    @around_tool_call(priority=10, name="annotate")
    async def annotate(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        result = await call_next(call)
        return result.model_copy(update={"output": f"{result.text} (checked)"})

    model = ScriptedModel([tool_call("add", a=1, b=2), "done"])
    agent = ReActAgent("a", "", model, tools=[add], interceptors=[double, annotate])
    events = await run_events(agent)
    acted = next(e for e in events if isinstance(e, PostActingEvent))
    assert acted.result.text == "6 (checked)"
    assert acted.modified_by == ("double", "annotate")
    assert acted.tool_call.input == {"a": 1, "b": 2}  # the model's call, as asked
    assert post_call(events).result.tools_used == ("add",)


async def test_a_tool_interceptor_may_answer_without_running_the_tool():
    @around_tool_call(name="stub")
    async def stub(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        return ToolResultBlock(id=call.id, name=call.name, output="stubbed")

    model = ScriptedModel([tool_call("add", a=1, b=2), tool_call("add", a=1, b=1), "done"])
    agent = ReActAgent("a", "", model, tools=[add], interceptors=[stub], parallel_tool_calls=True)
    events = await run_events(agent)
    results = [e.result.text for e in events if isinstance(e, PostActingEvent)]
    assert results == ["stubbed", "stubbed"]
    assert post_call(events).result.tools_used == ()  # the tool never ran


async def test_tool_interceptor_contract_errors_end_the_run_paired():
    @around_tool_call(name="renamer")
    async def renamer(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        return await call_next(call.model_copy(update={"id": "other"}))

    @around_tool_call(name="liar")
    async def liar(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        return ToolResultBlock(id="other", name=call.name, output="x")

    for bad, words in ((renamer, "changed the tool call's id"), (liar, "keep result.id")):
        model = ScriptedModel([tool_call("add", a=1, b=2), "done"])
        agent = ReActAgent("a", "", model, tools=[add], interceptors=[bad])
        events = await run_events(agent)
        result = post_call(events).result
        assert result.error is not None
        assert words in result.error.message
        assert result.error.code is ErrorCode.UNKNOWN
        memory = (await agent.state_dict())["memory"]
        assert memory[-1]["role"] == "tool"
        assert memory[-1]["content"][0]["is_error"]


async def test_a_tool_interceptor_that_raises_ends_the_run_after_the_batch():
    @around_tool_call(name="crash")
    async def crash(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        raise KeyError("nope")

    model = ScriptedModel([tool_call("add", a=1, b=2), "done"])
    agent = ReActAgent("a", "", model, tools=[add], interceptors=[crash])
    result = post_call(await run_events(agent)).result
    assert result.error is not None
    assert result.error.source == "interceptor:crash"


async def test_changed_arguments_of_an_approved_call_need_approval_again():
    @around_tool_call(name="inflate")
    async def inflate(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        return await call_next(call.model_copy(update={"arguments": {"amount": 1000}}))

    model = ScriptedModel([tool_call("transfer", amount=5), "done"])
    agent = ReActAgent("a", "", model, tools=[transfer], interceptors=[inflate])
    parked = await agent.call("pay")
    assert parked.pending_approvals
    resumed = await agent.approve(parked.pending_approvals[0])
    assert resumed is not None
    assert resumed.stop_reason == "approval_pending"  # parked again, with the changed call
    assert resumed.tools_used == ()
    state = await agent.state_dict()
    pending = state["pending_approvals"]
    assert [p["tool_call"]["input"] for p in pending] == [{"amount": 1000}]
    assert all(m["role"] != "tool" for m in state["memory"])  # memory waits, paired
    done = await agent.approve(resumed.pending_approvals[0])
    assert done is not None
    assert done.ok
    assert done.tools_used == ("transfer",)  # the human approved 1000: it runs as approved
    memory = (await agent.state_dict())["memory"]
    result = next(m for m in memory if m["role"] == "tool")["content"][0]
    assert result["output"] == "moved 1000"
    call = next(m for m in memory if m["role"] == "assistant")["content"][0]
    assert call["input"] == {"amount": 1000}  # memory holds the call that ran


async def test_arguments_changed_into_ones_that_need_approval_park_the_batch():
    @tool(needs_approval=lambda args: args["amount"] > 100)
    def pay(amount: int) -> str:
        """Pay.

        Args:
            amount: How much.
        """
        return f"paid {amount}"

    @around_tool_call(name="inflate")
    async def inflate(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        return await call_next(call.model_copy(update={"arguments": {"amount": 500}}))

    model = ScriptedModel([[tool_call("pay", amount=5), tool_call("pay", amount=6)], "done"])
    agent = ReActAgent(
        "a", "", model, tools=[pay], interceptors=[inflate], parallel_tool_calls=False
    )
    events = await run_events(agent, "pay")
    result = post_call(events).result
    assert result.stop_reason == "approval_pending"
    assert len(result.pending_approvals) == 2
    acted = [e.result.text for e in events if isinstance(e, PostActingEvent)]
    assert all(text.startswith("awaiting approval again") for text in acted)
    first = await agent.approve(result.pending_approvals[0])
    assert first is None  # one more to decide
    done = await agent.approve(result.pending_approvals[1])
    assert done is not None
    assert done.ok
    assert done.tools_used == ("pay", "pay")


async def test_unchanged_arguments_of_an_approved_call_run():
    @around_tool_call(name="watch")
    async def watch(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
        return await call_next(call)

    model = ScriptedModel([tool_call("transfer", amount=5), "done"])
    agent = ReActAgent("a", "", model, tools=[transfer], interceptors=[watch])
    parked = await agent.call("pay")
    resumed = await agent.approve(parked.pending_approvals[0])
    assert resumed is not None
    assert resumed.tools_used == ("transfer",)


async def test_an_interrupt_mid_stream_ends_the_step_through_interceptors():
    agent: ReActAgent

    @around_model_call
    async def watch(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        return await call_next(call)

    def stop_after_first_chunk(event: Any) -> None:
        agent.interrupt(msg="stop")

    from rxagent import hook

    stopper = hook(ReasoningChunkEvent)(stop_after_first_chunk)
    model = ScriptedModel(["a long answer in pieces"], chunk_size=2)
    agent = ReActAgent("a", "", model, interceptors=[watch], hooks=[stopper])
    events = await run_events(agent)
    result = post_call(events).result
    assert result.interrupted
    assert sum(isinstance(e, ReasoningChunkEvent) for e in events) == 1


async def test_an_interrupt_while_the_model_is_awaited_ends_the_run():
    import asyncio

    started = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    agent = ReActAgent("a", "", FunctionModel(slow), interceptors=[recorder([], "r", 1)])
    task = asyncio.create_task(run_events(agent))
    await started.wait()
    assert agent.interrupt(msg="enough")
    result = post_call(await task).result
    assert result.interrupted
    assert result.text == "enough"


async def test_events_emitted_inside_the_model_call_keep_their_order():
    from rxagent import CustomEvent, current_run

    async def chatty(messages: Any, tools: Any, options: Any) -> str:
        current_run().emit(CustomEvent, name="from_model")
        import asyncio

        await asyncio.sleep(0)
        return "ok"

    @around_model_call(name="after")
    async def after(call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        response = await call_next(call)
        current_run().emit(CustomEvent, name="from_interceptor")
        return response

    agent = ReActAgent("a", "", FunctionModel(chatty), interceptors=[after])
    events = await run_events(agent)
    names = [e.name if isinstance(e, CustomEvent) else e.type for e in events]
    assert names.index("from_model") < names.index("reasoning_chunk")
    assert names.index("reasoning_chunk") < names.index("from_interceptor")
    assert names.index("from_interceptor") < names.index("post_reasoning")


async def test_a_model_without_usage_counts_one_request():
    class Bare:
        name: str = "bare"
        context_window: int | None = 100_000

        async def stream(self, messages: Any, tools: Any, options: Any) -> Any:
            from rxagent.models.base import TextDelta

            yield TextDelta(text="hi")

    agent = ReActAgent("a", "", Bare(), interceptors=[recorder([], "r", 1)])
    result = post_call(await run_events(agent)).result
    assert result.usage.requests == 1


async def test_structured_output_streams_partials_through_interceptors():
    from pydantic import BaseModel

    from rxagent import OutputChunkEvent

    class City(BaseModel):
        name: str
        people: int

    model = ScriptedModel(['{"name": "Oslo", "people": 700000}'], chunk_size=5)
    agent = ReActAgent(
        "a", "", model, interceptors=[recorder([], "r", 1)], output_strategy="prompted"
    )
    events = await run_events(agent, output_type=City)
    assert any(isinstance(e, OutputChunkEvent) for e in events)
    assert post_call(events).result.output == City(name="Oslo", people=700000)
