"""The demo agent answers the question it is asked, from real tool results, offline."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_demo_question import (  # type: ignore[import-not-found]
    EXPRESSIONS,
    accepted_by_calculator,
)

from rxagent import Msg, PostActingEvent, PostCallEvent, ReActAgent, ToolResultBlock, ToolUseBlock
from rxagent._demo import (
    CAPABILITIES,
    DEMO_EXPRESSION,
    DEMO_QUERY,
    DEMO_QUESTION,
    DemoModel,
    Question,
    build_demo_agent,
    calculator,
    compose_answer,
    evaluate_arithmetic,
    format_number,
    plan_turn,
    search_docs,
)
from rxagent.models import ModelOptions
from rxagent.testing import assert_event_protocol


async def _run(agent: ReActAgent, text: str, session_id: str = "default") -> list[Any]:
    return [event async for event in agent.events(text, session_id=session_id)]


def _tool_results(events: list[Any]) -> dict[str, list[ToolResultBlock]]:
    found: dict[str, list[ToolResultBlock]] = {}
    for event in events:
        if isinstance(event, PostActingEvent):
            found.setdefault(event.tool_call.name, []).append(event.result)
    return found


def test_the_demo_question_is_read_into_the_demo_query_and_expression() -> None:
    question = Question.read(DEMO_QUESTION)
    assert question.query == DEMO_QUERY
    assert question.expressions == (DEMO_EXPRESSION,)


async def test_pure_arithmetic_calls_only_the_calculator() -> None:
    events = await _run(build_demo_agent(), "What is 2 + 2?")
    assert_event_protocol(events)
    result = events[-1].result
    assert result.ok
    assert result.tools_used == ("calculator",)
    assert result.text == "The calculator computed 2 + 2 = 4."
    assert "Hooks" not in result.text


async def test_a_question_without_math_searches_the_docs_with_its_words() -> None:
    events = await _run(build_demo_agent(), "How are tools run in parallel?")
    result = events[-1].result
    assert result.tools_used == ("search_docs",)
    (searched,) = [e for e in events if isinstance(e, PostActingEvent)]
    assert dict(searched.tool_call.input) == {"query": "tools run parallel", "limit": 3}
    hits = json.loads(searched.result.text)
    assert hits == search_docs("tools run parallel", limit=3)  # the real search
    assert hits[0]["source"] in result.text
    assert hits[0]["snippet"] in result.text


async def test_both_tools_run_in_parallel_and_the_answer_quotes_both() -> None:
    events = await _run(build_demo_agent(), DEMO_QUESTION)
    result = events[-1].result
    assert result.tools_used == ("search_docs", "calculator")
    starts = [i for i, e in enumerate(events) if e.type == "pre_acting"]
    first_end = next(i for i, e in enumerate(events) if e.type == "post_acting")
    assert len(starts) == 2
    assert max(starts) < first_end  # one batch
    assert f"{DEMO_EXPRESSION} = 395" in result.text
    assert _tool_results(events)["calculator"][0].output == "395"


async def test_a_question_with_neither_gets_an_honest_answer_without_tools() -> None:
    events = await _run(build_demo_agent(), "Hello!")
    assert_event_protocol(events)
    result = events[-1].result
    assert result.ok
    assert result.tools_used == ()
    assert result.steps == 1
    assert result.text == (
        f"There is no arithmetic here and no keyword to search the docs for. {CAPABILITIES}"
    )
    assert "rxagent chat --model" in result.text


async def test_each_chat_turn_answers_the_latest_message() -> None:
    agent = build_demo_agent()
    first = (await _run(agent, "What is 17 * 23?", "chat"))[-1].result
    second = (await _run(agent, "What are hooks?", "chat"))[-1].result
    third = (await _run(agent, "And 6 * 7?", "chat"))[-1].result
    assert first.text == "The calculator computed 17 * 23 = 391."
    assert second.tools_used == ("search_docs",)
    assert "391" not in second.text  # not the earlier turn's results
    assert third.text == "The calculator computed 6 * 7 = 42."
    memory = (await agent.state_dict(session_id="chat"))["memory"]
    assert [m["role"] for m in memory].count("user") == 3


async def test_only_offered_tools_are_called() -> None:
    agent = ReActAgent("d", "", DemoModel(), tools=[calculator])  # no docs search
    assert (await agent.call("What are hooks?")).text.startswith(
        "The tools this question needs are not offered in this request."
    )
    both = await agent.call(DEMO_QUESTION)
    assert both.tools_used == ("calculator",)


def test_the_plan_names_the_tools_that_apply() -> None:
    offered = ["search_docs", "calculator"]
    plan = plan_turn(Question.read("What is 1 + 1 and 2 * 3?"), offered)
    assert [block.type for block in plan] == ["thinking", "text", "tool_use", "tool_use"]
    assert plan[0].thinking.startswith("The question is arithmetic: 1 + 1 and 2 * 3.")
    assert plan[1].text == "Let me compute that."
    search = plan_turn(Question.read("What are hooks?"), offered)
    assert search[1].text == "Let me search the docs."
    assert "'hooks'" in search[0].thinking


def test_a_failed_docs_search_is_reported_as_it_is() -> None:
    call = ToolUseBlock(id="c1", name="search_docs", input={"query": "hooks"})
    failed = ToolResultBlock(id="c1", name="search_docs", output="boom", is_error=True)
    other = ToolResultBlock(id="c2", name="word_count", output="3")
    messages = [Msg.user("hooks?"), Msg.assistant([call]), Msg.tool(failed), Msg.tool(other)]
    answer = compose_answer(messages, [], ModelOptions())
    assert answer == "The docs search for 'hooks' failed: boom\n\nword_count returned: 3"
    garbled = ToolResultBlock(id="c1", name="search_docs", output="not json")
    messages = [Msg.user("hooks?"), Msg.assistant([call]), Msg.tool(garbled)]
    assert "found nothing" in compose_answer(messages, [], ModelOptions())


def test_one_hit_is_one_section() -> None:
    call = ToolUseBlock(id="c1", name="search_docs", input={"query": "x"})
    hit = {"source": "docs/a.md", "heading": "A", "snippet": "alpha"}
    result = ToolResultBlock(id="c1", name="search_docs", output=json.dumps([hit]))
    answer = compose_answer([Msg.assistant([call]), Msg.tool(result)], [], ModelOptions())
    assert answer == (
        "The docs search for 'x' found 1 section. The best match is docs/a.md, \"A\", which "
        'says: "alpha"'
    )


async def test_one_model_serves_many_sessions_and_keeps_no_requests() -> None:
    agent = build_demo_agent()
    results = await asyncio.gather(
        *(agent.call(f"What is {n} * 3?", session_id=f"s{n}") for n in range(5))
    )
    expected = [f"The calculator computed {n} * 3 = {n * 3}." for n in range(5)]
    assert [r.text for r in results] == expected
    assert not hasattr(agent.model, "requests")


def test_the_demo_model_refuses_a_negative_delay() -> None:
    with pytest.raises(ValueError, match="delay must be >= 0"):
        DemoModel(delay=-0.5)


async def test_a_delay_paces_the_stream() -> None:
    result = await build_demo_agent(delay=0.0001).call("What is 1 + 2?")
    assert result.text == "The calculator computed 1 + 2 = 3."


# -- properties ------------------------------------------------------------------------------


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expression=EXPRESSIONS.filter(accepted_by_calculator))
def test_for_any_expression_the_calculator_accepts_the_answer_has_its_result(
    expression: str,
) -> None:
    result = build_demo_agent().call_sync(f"What is {expression}?")
    assert result.ok
    assert result.tools_used == ("calculator",)
    assert calculator(expression) == format_number(evaluate_arithmetic(expression))
    assert f" = {calculator(expression)}." in result.text


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(max_size=120), min_size=1, max_size=3))
def test_any_text_is_a_valid_run_that_never_raises(texts: list[str]) -> None:
    agent = build_demo_agent()

    async def chat() -> None:
        for text in texts:
            events = await _run(agent, text, "property")
            assert_event_protocol(events)
            last = events[-1]
            assert isinstance(last, PostCallEvent)
            assert last.result.ok, last.result.error
            assert last.result.text

    asyncio.run(chat())
