"""What the loop promises about tools on offer, `tools_used`, failed runs and the tool budget."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from virtual_time import VirtualTimeLoop, run_in_virtual_time  # type: ignore[import-not-found]

from rxagent import (
    ErrorEvent,
    Msg,
    PostActingEvent,
    PreReasoningEvent,
    ReActAgent,
    RunContext,
    StopDecision,
    ToolSchema,
    hook,
    max_steps,
    tool,
)
from rxagent.errors import AuthenticationError, ErrorCode
from rxagent.state import InMemoryStore
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call

ran: list[str] = []


@tool
def search(query: str) -> str:
    """Search the web.

    Args:
        query: What to look for.
    """
    ran.append(f"search:{query}")
    return f"results for {query}"


@tool
def delete_all() -> str:
    """Delete everything."""
    ran.append("delete_all")
    return "deleted"


@hook(PreReasoningEvent)
def no_deleting(event: PreReasoningEvent) -> PreReasoningEvent:
    return event.replace(tools=[t for t in event.tools if t.name != "delete_all"])


def _results(agent_memory: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for message in agent_memory
        if message["role"] == "tool"
        for block in message["content"]
    ]


async def test_a_tool_a_hook_took_off_the_request_does_not_run() -> None:
    ran.clear()
    model = ScriptedModel([[tool_call("delete_all"), tool_call("search", query="x")], "done"])
    agent = ReActAgent("a", "", model, tools=[search, delete_all], hooks=[no_deleting])
    events = [e async for e in agent.events("clean up")]
    assert [t.name for t in model.requests[0].tools] == ["search"]
    assert ran == ["search:x"]
    posts = {e.tool_call.name: e.result for e in events if isinstance(e, PostActingEvent)}
    assert posts["delete_all"].is_error
    assert posts["delete_all"].text.startswith("Tool 'delete_all' is not available in this step")
    assert not posts["search"].is_error
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.tools_used == ("search",)
    assert_event_protocol(events)


async def test_tools_used_lists_only_tools_that_exist_and_ran() -> None:
    ran.clear()
    model = ScriptedModel(
        [
            [
                tool_call("invented", x=1),
                tool_call("search", query=3),  # a bad argument: the tool never runs
                tool_call("search", query="y"),
            ],
            "ok",
        ]
    )
    agent = ReActAgent("a", "", model, tools=[search], parallel_tool_calls=False)
    result = await agent.call("go")
    assert ran == ["search:y"]
    assert result.tools_used == ("search",)


async def test_a_run_that_fails_before_the_model_answers_leaves_memory_as_it_was() -> None:
    calls: list[list[Msg]] = []
    fail = [True]

    def model_fn(messages: list[Msg], tools: list[ToolSchema], options: object) -> str:
        calls.append(list(messages))
        if fail[0]:
            raise AuthenticationError("bad key")
        return "hello again"

    agent = ReActAgent("a", "", FunctionModel(model_fn))
    await agent.call("first question")
    fail[0] = False
    before = (await agent.state_dict())["memory"]
    fail[0] = True
    failed = await agent.call("second question")
    assert not failed.ok
    assert failed.error is not None
    assert failed.error.code is ErrorCode.AUTH
    assert (await agent.state_dict())["memory"] == before
    fail[0] = False
    answered = await agent.call("third question")
    assert answered.text == "hello again"
    users = [m.text for m in calls[-1] if m.role == "user"]
    assert users == ["third question"]  # the failed runs left no user message behind


async def test_an_interrupted_run_keeps_its_paired_partial_work() -> None:
    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Wait."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    agent = ReActAgent("a", "", ScriptedModel([tool_call("slow"), "x"]), tools=[slow])
    task = asyncio.create_task(agent.call("go"))
    await started.wait()
    assert agent.interrupt()
    result = await task
    assert result.interrupted
    assert result.stop_reason == "interrupted"
    memory = (await agent.state_dict())["memory"]
    assert [m["role"] for m in memory] == ["user", "assistant", "tool"]
    assert _results(memory)[0]["output"] == "interrupted"


def _always_calls(budget_left: list[int]) -> FunctionModel:
    def model_fn(messages: list[Msg], tools: list[ToolSchema], options: object) -> Any:
        budget_left[0] += 1
        return tool_call("search", query=f"q{budget_left[0]}")

    return FunctionModel(model_fn)


async def test_a_model_that_keeps_calling_tools_past_the_budget_is_stopped_at_once() -> None:
    ran.clear()
    model_calls = [0]
    agent = ReActAgent(
        "a", "", _always_calls(model_calls), tools=[search], max_tool_calls=2, max_iters=10
    )
    events = [e async for e in agent.events("search forever")]
    result = events[-1].result  # type: ignore[attr-defined]
    assert result.stop_reason == "max_tool_calls"
    assert result.ok
    assert model_calls[0] == 3  # two calls within the budget, then one without tools
    assert ran == ["search:q1", "search:q2"]
    last = _results((await agent.state_dict())["memory"])[-1]
    assert last["is_error"]
    assert last["output"].startswith("tool call limit reached")
    limits = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.code for e in limits] == [ErrorCode.USAGE_LIMIT]
    assert_event_protocol(events)


@settings(max_examples=40)
@given(
    budget=st.integers(min_value=0, max_value=4),
    per_reply=st.integers(min_value=1, max_value=3),
    max_iters=st.integers(min_value=1, max_value=8),
)
def test_past_the_tool_budget_there_is_at_most_one_more_model_call(
    budget: int, per_reply: int, max_iters: int
) -> None:
    model_calls = [0]
    executed: list[str] = []

    @tool
    def ping(n: int) -> str:
        """Ping."""
        executed.append(str(n))
        return "pong"

    def model_fn(messages: list[Msg], tools: list[ToolSchema], options: object) -> Any:
        model_calls[0] += 1
        return [tool_call("ping", n=i) for i in range(per_reply)]

    agent = ReActAgent(
        "a",
        "",
        FunctionModel(model_fn),
        tools=[ping],
        max_tool_calls=budget,
        max_iters=max_iters,
        parallel_tool_calls=False,
    )

    async def main() -> list[Any]:
        return [e async for e in agent.events("go")]

    events = asyncio.run(main())
    assert_event_protocol(events)
    result = events[-1].result
    assert len(executed) <= budget
    batches_in_budget = -(-budget // per_reply)  # ceil
    assert model_calls[0] <= batches_in_budget + 1
    assert result.stop_reason in {"max_tool_calls", "max_iters", "error"}
    if result.stop_reason == "max_tool_calls":
        assert model_calls[0] == batches_in_budget + 1


async def test_a_stop_decision_with_final_call_asks_once_more_without_tools() -> None:
    def enough(ctx: RunContext) -> StopDecision | None:
        return StopDecision(reason="stop_condition", final_call=True) if ctx.step >= 1 else None

    def model_fn(messages: list[Msg], tools: list[ToolSchema], options: object) -> Any:
        return tool_call("search", query="q") if tools else "the summary"

    model = FunctionModel(model_fn)
    agent = ReActAgent("a", "", model, tools=[search], stop_when=[enough])
    result = await agent.call("go")
    assert [len(r.tools) for r in model.requests] == [1, 1, 0]
    assert result.stop_reason == "stop_condition"
    assert result.text == "the summary"
    assert result.ok


async def test_a_decision_with_a_reply_ends_a_step_without_tool_calls_with_that_reply() -> None:
    def polite(ctx: RunContext) -> StopDecision | None:
        last = ctx.last_response
        if last is not None and "sorry" in last.text:
            return StopDecision(reason="final_answer", reply="Let me hand you to a human.")
        return None

    agent = ReActAgent("a", "", ScriptedModel(["sorry, I cannot"]), stop_when=[polite])
    result = await agent.call("help")
    assert result.stop_reason == "final_answer"
    assert result.text == "Let me hand you to a human."


async def test_a_true_condition_on_a_step_without_tool_calls_keeps_no_tool_calls() -> None:
    agent = ReActAgent("a", "", ScriptedModel(["done"]), stop_when=[lambda ctx: True])
    result = await agent.call("hi")
    assert result.stop_reason == "no_tool_calls"
    assert result.text == "done"


def test_the_condition_classes_are_deprecated_names() -> None:
    import rxagent.agent

    with pytest.warns(DeprecationWarning, match=r"max_steps\(n\)"):
        cls = rxagent.agent.MaxSteps
    assert isinstance(max_steps(3), cls)
    with pytest.raises(AttributeError):
        _ = rxagent.agent.NoSuchThing


def test_the_run_keeps_time_on_its_event_loop_so_virtual_time_drives_it() -> None:
    renewals: list[float] = []

    class Store(InMemoryStore):
        async def renew_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
            renewals.append(asyncio.get_running_loop().time())
            return await super().renew_lease(agent, session_id, owner, ttl_s)

    @tool
    async def held() -> str:
        """Wait for ever."""
        await asyncio.Event().wait()
        return "never"

    agent = ReActAgent(
        "a",
        "",
        ScriptedModel([tool_call("held"), "x"]),
        tools=[held],
        store=Store(),
        request_timeout=600.0,  # ten minutes of the loop's clock
        lease_ttl_s=30.0,
    )

    async def main(loop: VirtualTimeLoop) -> tuple[Any, float]:
        result = await agent.call("go")
        return result, loop.time()

    # on a wall clock this would take ten minutes (pytest-timeout would stop it first)
    result, end = run_in_virtual_time(main)
    assert result.error is not None
    assert result.error.code is ErrorCode.TIMEOUT
    assert end >= 600.0  # the timeout fired on the loop's clock
    assert len(renewals) >= 600.0 / 10.0 - 1  # the lease was kept every third of its TTL
