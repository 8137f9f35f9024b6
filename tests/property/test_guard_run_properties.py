"""Properties of guards in runs: whatever the stages decide, the protocol holds, a refused
input never reaches the model or memory, and a refused tool never runs."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent import ErrorEvent, GuardEvent, Msg, Principal, ReActAgent, ToolSchema, tool
from rxagent.errors import ErrorCode
from rxagent.events import GuardAction, GuardTarget, GuardVerdict
from rxagent.guards import Guard, GuardContext, GuardPipeline, Permission
from rxagent.testing import FunctionModel, assert_event_protocol, tool_call

NAMES = ("alpha", "beta", "gamma")
ACTIONS: dict[GuardTarget, tuple[GuardAction, ...]] = {
    "input": ("reject", "flag"),
    "tool_call": ("reject", "flag"),
    "tool_result": ("reject", "flag", "quarantine", "replace"),
    "output": ("reject", "flag", "redact"),
}


class Decides(Guard):
    """Flags every text of its target; raises instead when `fails`."""

    def __init__(self, index: int, target: GuardTarget, action: GuardAction, fails: bool) -> None:
        self.name = f"s{index}"
        self.targets = frozenset({target})
        self.action = action
        self.fails = fails

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        if self.fails:
            raise RuntimeError("stage down")
        return self.verdict(True, 1.0, "decided")

    def rewrite(self, text: str, verdict: GuardVerdict, ctx: GuardContext) -> str:
        return f"[{self.name} rewrote]"


stages = st.lists(
    st.sampled_from(tuple(ACTIONS)).flatmap(
        lambda target: st.tuples(st.just(target), st.sampled_from(ACTIONS[target]), st.booleans())
    ),
    max_size=4,
)


@settings(max_examples=80)
@given(
    plan=stages,
    on_error=st.sampled_from(["reject", "pass"]),
    batches=st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2), max_size=2),
    granted=st.sets(st.sampled_from(NAMES)),
    parallel=st.booleans(),
)
def test_guards_keep_the_protocol_the_model_and_memory_safe(
    plan: list[tuple[GuardTarget, GuardAction, bool]],
    on_error: str,
    batches: list[list[str]],
    granted: set[str],
    parallel: bool,
) -> None:
    ran: list[str] = []
    script = iter(batches)

    def make(name: str) -> Any:
        def fn() -> str:
            ran.append(name)
            return name

        fn.__name__ = name
        fn.__doc__ = f"The {name} tool."
        return tool(fn)

    def model_fn(messages: list[Msg], tools: list[ToolSchema], options: object) -> Any:
        batch = next(script, None)
        return "the answer" if batch is None else [tool_call(name) for name in batch]

    guarded = [Decides(i, *step) for i, step in enumerate(plan)]
    pipeline = GuardPipeline(
        [*guarded, Permission({"*": sorted(granted)})],
        on_error=on_error,  # type: ignore[arg-type]
    )
    agent = ReActAgent(
        "a",
        "",
        FunctionModel(model_fn),
        tools=[make(n) for n in NAMES],
        guards=pipeline,
        parallel_tool_calls=parallel,
    )

    async def main() -> list[Any]:
        await agent.call("before", principal=Principal(user_id="u"))  # may itself be refused
        before = await agent.store.load("a", "default")
        events = [e async for e in agent.events("hello", principal=Principal(user_id="u"))]
        after = await agent.store.load("a", "default")
        refused_input = any(
            isinstance(e, GuardEvent) and e.target == "input" and e.action == "reject"
            for e in events
        )
        if refused_input:
            assert [e.type for e in events[-2:]] == ["error", "post_call"]
            assert isinstance(events[-2], ErrorEvent)
            assert events[-2].code == ErrorCode.GUARD_REJECTED
            assert not any(e.type == "pre_reasoning" for e in events)
            assert before is not None
            assert after is not None
            assert after.state.memory == before.state.memory
        return events

    events = asyncio.run(main())
    assert_event_protocol(events)
    assert set(ran) <= granted  # a tool the caller may not use never ran
    # an input stage refuses when it flags with "reject", or fails and the pipeline fails closed
    refuses = [
        s
        for s in guarded
        if "input" in s.targets
        and ((s.fails and on_error == "reject") or (not s.fails and s.action == "reject"))
    ]
    refused = any(
        isinstance(e, GuardEvent) and e.target == "input" and e.action == "reject" for e in events
    )
    assert refused == bool(refuses)
