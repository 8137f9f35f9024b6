"""Properties of the loop: what a request offers is all that runs, and a run that fails before
the model answered leaves memory as it was."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent import Msg, PreReasoningEvent, ReActAgent, ToolSchema, hook, tool
from rxagent.errors import AuthenticationError, RateLimitedError
from rxagent.testing import FunctionModel, assert_event_protocol, tool_call

NAMES = ("alpha", "beta", "gamma", "delta")


def _tools(ran: list[str]) -> list[Any]:
    def make(name: str) -> Any:
        def fn() -> str:
            ran.append(name)
            return name

        fn.__name__ = name
        fn.__doc__ = f"The {name} tool."
        return tool(fn)

    return [make(name) for name in NAMES]


@settings(max_examples=60)
@given(
    hidden=st.sets(st.sampled_from(NAMES)),
    batches=st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3), max_size=3),
    parallel=st.booleans(),
)
def test_only_tools_the_request_offered_run(
    hidden: set[str], batches: list[list[str]], parallel: bool
) -> None:
    ran: list[str] = []
    script = iter(batches)

    @hook(PreReasoningEvent)
    def hide(event: PreReasoningEvent) -> PreReasoningEvent:
        return event.replace(tools=[t for t in event.tools if t.name not in hidden])

    def model_fn(messages: list[Msg], tools: list[ToolSchema], options: object) -> Any:
        batch = next(script, None)
        return "done" if batch is None else [tool_call(name) for name in batch]

    agent = ReActAgent(
        "a",
        "",
        FunctionModel(model_fn),
        tools=_tools(ran),
        hooks=[hide],
        parallel_tool_calls=parallel,
    )

    async def main() -> list[Any]:
        return [e async for e in agent.events("go")]

    events = asyncio.run(main())
    assert_event_protocol(events)
    called = [name for batch in batches for name in batch]
    assert ran == [name for name in called if name not in hidden]
    assert list(events[-1].result.tools_used) == ran


@settings(max_examples=40)
@given(
    turns=st.integers(min_value=0, max_value=3),
    failure=st.sampled_from(["auth", "rate", "reject", "sys_prompt"]),
)
def test_a_run_that_fails_before_the_model_answers_leaves_memory_as_it_was(
    turns: int, failure: str
) -> None:
    failing = [False]

    def model_fn(messages: list[Msg], tools: list[ToolSchema], options: object) -> str:
        if failing[0] and failure == "auth":
            raise AuthenticationError("bad key")
        if failing[0] and failure == "rate":
            raise RateLimitedError("slow down")
        return f"answer {len(messages)}"

    @hook(PreReasoningEvent)
    def refuse(event: PreReasoningEvent) -> None:
        if failing[0] and failure == "reject":
            from rxagent import Reject

            raise Reject("not now")

    def prompt(ctx: Any) -> str:
        if failing[0] and failure == "sys_prompt":
            raise RuntimeError("no prompt today")
        return "Be brief."

    agent = ReActAgent(
        "a", prompt, FunctionModel(model_fn), hooks=[refuse], options=None, max_iters=3
    )

    async def main() -> None:
        for i in range(turns):
            assert (await agent.call(f"question {i}")).ok
        before = (await agent.state_dict())["memory"]
        failing[0] = True
        result = await agent.call("the failing question")
        assert not result.ok
        assert result.stop_reason == "error"
        assert (await agent.state_dict())["memory"] == before

    asyncio.run(main())
