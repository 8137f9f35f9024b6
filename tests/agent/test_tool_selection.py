"""ReActAgent(tool_selector=..., max_tools_per_request=N): only the selected tools are offered."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rxagent import Msg, PreReasoningEvent, ReActAgent, hook
from rxagent.errors import ConfigurationError, ErrorCode
from rxagent.guards import Permission
from rxagent.models.base import ToolSchema
from rxagent.testing import ScriptedModel, tool_call
from rxagent.tools import AllTools, KeywordSelector, Tool, Toolkit


def _tool(name: str, description: str) -> Tool[..., Any]:
    async def run(arguments: dict[str, Any]) -> str:
        return f"{name} ran"

    schema = {"type": "object", "properties": {}}
    return Tool.from_schema(name, description, schema, run)


TOOLS = [
    _tool("send_email", "Send an email message to someone."),
    _tool("get_weather", "The weather forecast in a city."),
    _tool("convert_currency", "Convert an amount between currencies."),
    _tool("search_docs", "Search the product documentation."),
    _tool("create_ticket", "Open a support ticket."),
]


async def test_a_limit_alone_offers_the_best_keyword_matches_in_toolkit_order():
    model = ScriptedModel(["It is sunny."])
    agent = ReActAgent("a", "", model, tools=TOOLS, max_tools_per_request=2)
    assert isinstance(agent.tool_selector, KeywordSelector)
    await agent.call("What is the weather forecast? Also send me an email")
    assert model.requests[0].tool_names == ("send_email", "get_weather")


async def test_no_selector_and_no_limit_offers_every_tool():
    model = ScriptedModel(["ok"])
    agent = ReActAgent("a", "", model, tools=TOOLS)
    assert agent.tool_selector is None
    await agent.call("weather")
    assert len(model.requests[0].tool_names) == len(TOOLS)


async def test_a_call_to_a_tool_not_selected_gets_an_error_result():
    model = ScriptedModel([tool_call("create_ticket"), "sorry"])
    agent = ReActAgent("a", "", model, tools=TOOLS, max_tools_per_request=1)
    result = await agent.call("weather in Oslo")
    assert model.requests[0].tool_names == ("get_weather",)
    (tool_msg,) = [m for m in model.requests[1].messages if m.role == "tool"]
    (block,) = tool_msg.tool_results
    assert block.is_error
    assert "Tool 'create_ticket' is not available in this step" in block.text
    assert result.ok
    assert result.tools_used == ()


async def test_every_step_selects_from_the_latest_user_message():
    model = ScriptedModel([tool_call("get_weather"), "sunny", "sent"])
    agent = ReActAgent("a", "", model, tools=TOOLS, max_tools_per_request=1)
    await agent.call("weather please", session_id="s")
    await agent.call("now send an email", session_id="s")
    names = [r.tool_names for r in model.requests]
    assert names == [("get_weather",), ("get_weather",), ("send_email",)]


async def test_hooks_see_the_selection_and_may_narrow_it():
    seen: list[tuple[str, ...]] = []

    @hook(PreReasoningEvent)
    def record(event: PreReasoningEvent) -> None:
        seen.append(tuple(t.name for t in event.tools))

    model = ScriptedModel(["ok"])
    agent = ReActAgent(
        "a",
        "",
        model,
        tools=TOOLS,
        hooks=[record],
        tool_selector=AllTools(),
        max_tools_per_request=3,
    )
    await agent.call("anything")
    assert seen == [("send_email", "get_weather", "convert_currency")]


class _Rogue:
    """Returns tools the request cannot offer, duplicates, and more than the limit."""

    async def select(self, query, tools, limit):
        return [ToolSchema(name="rm_rf"), tools[4], tools[4], tools[0], tools[2], tools[1]]


async def test_the_agent_keeps_only_candidates_at_most_the_limit_in_toolkit_order():
    model = ScriptedModel(["ok"])
    agent = ReActAgent("a", "", model, tools=TOOLS, tool_selector=_Rogue(), max_tools_per_request=3)
    await agent.call("x")
    assert model.requests[0].tool_names == ("send_email", "convert_currency", "create_ticket")


async def test_a_selector_without_a_limit_decides_alone():
    class Two:
        async def select(self, query, tools, limit):
            assert limit is None
            return tools[-2:]

    model = ScriptedModel(["ok"])
    await ReActAgent("a", "", model, tools=TOOLS, tool_selector=Two()).call("x")
    assert model.requests[0].tool_names == ("search_docs", "create_ticket")


async def test_a_failing_selector_fails_the_run_naming_it():
    class Broken:
        async def select(self, query, tools, limit):
            raise RuntimeError("index offline")

    model = ScriptedModel(["never"])
    agent = ReActAgent("a", "", model, tools=TOOLS, tool_selector=Broken())
    result = await agent.call("x")
    assert not result.ok
    assert result.error is not None
    assert result.error.code == ErrorCode.UNKNOWN
    assert result.error.source == "tool_selector"
    assert "index offline" in result.error.message
    assert model.calls == 0


async def test_selection_chooses_among_the_tools_the_caller_may_use():
    guards = [Permission(lambda principal, name: name != "send_email")]
    model = ScriptedModel(["ok"])
    agent = ReActAgent("a", "", model, tools=TOOLS, guards=guards, max_tools_per_request=1)
    await agent.call("send an email about the weather")
    assert model.requests[0].tool_names == ("get_weather",)


async def test_a_toolless_agent_never_asks_the_selector():
    class Loud:
        async def select(self, query, tools, limit):
            raise AssertionError("asked")

    result = await ReActAgent("a", "", ScriptedModel(["ok"]), tool_selector=Loud()).call("x")
    assert result.ok


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_tools_per_request": 0}, "max_tools_per_request must be an int >= 1"),
        ({"max_tools_per_request": True}, "max_tools_per_request must be an int >= 1"),
        ({"tool_selector": "keywords"}, "tool_selector= takes a ToolSelector"),
    ],
)
def test_bad_selection_arguments_are_refused(kwargs, match):
    with pytest.raises(ConfigurationError, match=match):
        ReActAgent("a", "", ScriptedModel(["ok"]), tools=TOOLS, **kwargs)


names = st.lists(
    st.from_regex(r"[a-z]{1,8}(_[a-z]{1,8})?", fullmatch=True),
    min_size=1,
    max_size=12,
    unique=True,
)
words = st.lists(st.sampled_from(["get", "send", "weather", "mail", "ticket", "doc", "x"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=names, query=words, limit=st.integers(1, 6), descriptions=st.data())
async def test_offered_tools_are_a_stable_subset_of_at_most_the_limit(
    names, query, limit, descriptions
):
    kit = Toolkit([_tool(n, " ".join(descriptions.draw(words, label=n))) for n in names])
    model = ScriptedModel(["a", "b"])
    agent = ReActAgent("a", "", model, tools=kit, max_tools_per_request=limit)
    text = " ".join(query)
    await agent.call(Msg.user(text), session_id="one")
    await agent.call(Msg.user(text), session_id="two")
    first, second = (r.tool_names for r in model.requests)
    assert first == second  # the same message and tools: the same selection
    assert set(first) <= set(names)
    assert len(first) == min(limit, len(names))
    order = [n for n in names if n in first]
    assert list(first) == order  # the toolkit's order


async def test_the_group_tool_is_always_offered_and_counts_toward_the_limit():
    grouped = [
        *TOOLS,
        Tool.from_schema("git_log", "Show the git log.", {"type": "object"}, _tool("x", "").fn),
    ]
    kit = Toolkit(grouped, groups={"git": "Git tools."}, group_tool=True)
    model = ScriptedModel(["a", "b"])
    agent = ReActAgent("a", "", model, tools=kit, max_tools_per_request=2)
    await agent.call("the weather")
    assert model.requests[0].tool_names == ("get_weather", "manage_tool_groups")
    one = ReActAgent("a", "", model, tools=kit, max_tools_per_request=1)
    await one.call("the weather")
    assert model.requests[1].tool_names == ("manage_tool_groups",)
