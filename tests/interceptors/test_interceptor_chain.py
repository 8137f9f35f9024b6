"""Interceptor ordering, registration checks and `explain`."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import PreReasoningEvent, ReActAgent, hook
from rxagent.errors import ConfigurationError
from rxagent.interceptors import (
    FallbackModels,
    InterceptorChain,
    ModelCall,
    ToolCall,
    UsageLimits,
    around_model_call,
    around_tool_call,
    order_interceptors,
)
from rxagent.testing import ScriptedModel


async def passthrough(call: Any, call_next: Any) -> Any:
    return await call_next(call)


@given(st.lists(st.integers(min_value=-5, max_value=5), max_size=12))
def test_order_is_a_permutation_stable_and_by_priority(prios: list[int]):
    made = [around_model_call(priority=p, name=f"i{n}")(passthrough) for n, p in enumerate(prios)]
    ordered = order_interceptors(made)
    assert sorted(i.name for i in ordered) == sorted(i.name for i in made)
    assert [i.priority for i in ordered] == sorted(prios)
    positions = {i.name: n for n, i in enumerate(made)}
    for a, b in itertools.pairwise(ordered):
        if a.priority == b.priority:
            assert positions[a.name] < positions[b.name]
    chain = InterceptorChain(made)
    assert [i.name for i in chain.explain("model")] == [i.name for i in ordered]
    assert [name for name, _ in chain.layers("model")] == [i.name for i in ordered]
    assert chain.explain("tool") == []


def test_explain_lists_each_kind_and_the_agents_hooks_explain_them():
    @around_tool_call(priority=5)
    async def audit(call: ToolCall, call_next: Any) -> Any:
        return await call_next(call)

    limits = UsageLimits(max_requests=3)
    backup = ScriptedModel(["b"], name="backup")
    agent = ReActAgent(
        "a", "", ScriptedModel(["x"]), interceptors=[limits, audit, FallbackModels([backup])]
    )
    model_chain = agent.hooks.explain(ModelCall)
    assert [(i.position, i.name, i.priority) for i in model_chain] == [
        (0, "fallback_models", 50),
        (1, "usage_limits", 1000),
    ]
    assert [i.name for i in agent.hooks.explain(ToolCall)] == ["audit", "usage_limits"]
    assert str(agent.interceptors.explain("tool")[0]) == "0. audit (priority 5, around tool call)"
    assert agent.interceptors is agent.hooks.interceptors
    assert len(agent.interceptors) == 3
    assert [i.name for i in agent.interceptors] == ["audit", "fallback_models", "usage_limits"]
    agent.interceptors.remove(audit)
    assert agent.hooks.explain(ToolCall)[0].name == "usage_limits"
    # hooks still explain as before
    agent.hooks.add(hook(PreReasoningEvent, name="h")(lambda e: None))
    assert "h" in [i.name for i in agent.hooks.explain(PreReasoningEvent)]


def test_the_function_stays_callable_and_has_a_repr():
    made = around_model_call(passthrough)
    assert made.name == "passthrough"
    assert made.priority == 100
    assert made.kind == "model"
    assert made.around_tool_call is None
    assert "model interceptor" in repr(made)


async def test_calling_the_interceptor_calls_the_function():
    async def call_next(call: int) -> int:
        return call + 1

    assert await around_tool_call(passthrough)(1, call_next) == 2


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: around_model_call(lambda call, call_next: None), "not an async function"),  # type: ignore[arg-type,return-value]
        (lambda: around_tool_call(priority="high"), "takes an int"),  # type: ignore[call-overload]
        (lambda: around_tool_call(priority=True), "takes an int"),
    ],
)
def test_bad_declarations_are_refused(make: Any, words: str):
    with pytest.raises(ConfigurationError, match=words):
        make()


def test_a_function_of_the_wrong_arity_is_refused():
    async def one(call: Any) -> Any:
        return call

    with pytest.raises(ConfigurationError, match="two parameters"):
        around_model_call(one)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [object(), "name", passthrough])
def test_registering_something_that_is_not_an_interceptor_fails(bad: object):
    with pytest.raises(ConfigurationError, match="interceptors= takes interceptors"):
        InterceptorChain([bad])


@pytest.mark.parametrize("bad", [UsageLimits(), "x", 3])
def test_interceptors_must_be_a_list(bad: object):
    with pytest.raises(ConfigurationError, match="takes a list of interceptors"):
        ReActAgent("a", "", ScriptedModel([]), interceptors=bad)  # type: ignore[arg-type]


async def test_a_calls_bad_interceptors_refuse_the_run():
    agent = ReActAgent("a", "", ScriptedModel(["x"]))
    with pytest.raises(ConfigurationError, match="interceptors= takes interceptors"):
        await agent.call("hi", interceptors=[object()])
    with pytest.raises(ConfigurationError, match="takes a list of interceptors"):
        await agent.call("hi", interceptors=UsageLimits())  # type: ignore[arg-type]


def test_remove_an_unknown_interceptor_raises():
    with pytest.raises(ValueError):  # noqa: PT011 - list.remove's own error
        InterceptorChain().remove(UsageLimits())
    assert not InterceptorChain()
