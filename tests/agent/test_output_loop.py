"""Structured output in the loop: strategies, repair, failure, streaming, hooks and memory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from rxagent import (
    ErrorEvent,
    Msg,
    OutputChunkEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreReasoningEvent,
    ReActAgent,
    current_run,
    final_answer_marker,
    hook,
    tool,
)
from rxagent.errors import ConfigurationError, ErrorCode, InvalidInputError, OutputInvalidError
from rxagent.events import BaseEvent
from rxagent.formatters.anthropic import AnthropicFormatter
from rxagent.formatters.openai import OpenAIFormatter
from rxagent.models import ModelOptions
from rxagent.output import REPAIR_METADATA
from rxagent.result import AgentResult
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, text, tool_call

OPENAI = OpenAIFormatter.capabilities
ANTHROPIC = AnthropicFormatter.capabilities


class City(BaseModel):
    name: str
    population: int = 0


@dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str


@tool
def lookup(query: str) -> str:
    """Look something up.

    Args:
        query: What to look up.
    """
    return f"found {query}"


async def run(agent: ReActAgent, msg: str = "go", **kwargs: Any) -> list[BaseEvent]:
    events = [e async for e in agent.events(msg, **kwargs)]
    assert_event_protocol(events)
    return events


def result_of(events: list[BaseEvent]) -> AgentResult[Any]:
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    return last.result


# -- the strategies --------------------------------------------------------------------------------


async def test_prompted_is_the_default_for_models_that_declare_nothing():
    model = ScriptedModel(['{"name": "Oslo", "population": 700000}'], chunk_size=7)
    agent = ReActAgent("a", "Be exact.", model)
    events = await run(agent, output_type=City)
    result = result_of(events)
    assert result.output == City(name="Oslo", population=700000)
    assert result.stop_reason == "no_tool_calls"
    assert result.reply.text == '{"name": "Oslo", "population": 700000}'
    system = model.requests[0].messages[0]
    assert system.role == "system"
    assert system.text.startswith("Be exact.\n\n[Response Format]")
    assert model.requests[0].options.response_format is None
    assert model.requests[0].tools == ()
    # memory keeps the system prompt out and the answer as said
    memory = (await agent.state_dict())["memory"]
    assert [m["role"] for m in memory] == ["user", "assistant"]


async def test_native_sets_the_response_format_and_unwraps():
    model = FunctionModel(lambda m, t, o: '{"value": [{"name": "Lima"}]}', capabilities=OPENAI)
    result = await ReActAgent("a", "", model).call("go", output_type=list[City])
    assert result.output == [City(name="Lima")]
    assert result.text == '[{"name": "Lima"}]'  # the reply carries the unwrapped JSON
    fmt = model.requests[0].response_format
    assert fmt is not None
    assert fmt["json_schema"]["strict"] is True
    assert model.requests[0].messages[0].role == "user"  # no system prompt section


async def test_tool_strategy_runs_tools_then_answers():
    model = ScriptedModel(
        [tool_call("lookup", query="oslo"), tool_call("final_answer", name="Oslo", population=7)],
        capabilities=ANTHROPIC,
        chunk_size=5,
    )
    agent = ReActAgent("a", "", model, tools=[lookup])
    events = await run(agent, output_type=City)
    result = result_of(events)
    assert result.output == City(name="Oslo", population=7)
    assert result.stop_reason == "final_answer"
    assert result.tools_used == ("lookup",)
    assert result.text == '{"name": "Oslo", "population": 7}'
    acting = [e.tool_call.name for e in events if isinstance(e, PreActingEvent | PostActingEvent)]
    assert acting == ["lookup", "lookup"]  # the final answer is not run as a tool
    post = [e for e in events if isinstance(e, PostReasoningEvent)]
    assert post[-1].response.tool_calls[0].name == "final_answer"
    pre = [e for e in events if isinstance(e, PreReasoningEvent)]
    assert [t.name for t in pre[0].tools] == ["lookup", "final_answer"]
    assert pre[0].options.tool_choice == "required"
    chunks = [e for e in events if isinstance(e, OutputChunkEvent)]
    assert chunks
    assert chunks[-1].partial.population == 7
    assert chunks[-1].index == 0
    # memory keeps the answer as text, so a later run reads a plain assistant answer
    memory = (await agent.state_dict())["memory"]
    assert memory[-1]["content"] == [{"type": "text", "text": '{"name": "Oslo", "population": 7}'}]
    follow = ScriptedModel(["Oslo it is."])
    later = ReActAgent("a", "", follow, tools=[lookup])
    await later.load_state_dict(await agent.state_dict())
    assert (await later.call("thanks")).text == "Oslo it is."
    assert follow.requests[0].tool_names == ("lookup",)


async def test_a_final_answer_ends_the_run_and_other_calls_are_not_run():
    model = ScriptedModel(
        [[tool_call("lookup", query="x"), tool_call("final_answer", name="Rome")]],
        capabilities=ANTHROPIC,
    )
    agent = ReActAgent("a", "", model, tools=[lookup])
    events = await run(agent, output_type=City)
    assert result_of(events).output == City(name="Rome")
    assert not [e for e in events if isinstance(e, PreActingEvent)]
    memory = (await agent.state_dict())["memory"]
    tool_result = memory[-1]["content"][0]
    assert tool_result["name"] == "lookup"
    assert tool_result["is_error"]
    assert "not executed" in tool_result["output"]


async def test_a_named_choice_when_the_final_answer_tool_is_alone():
    model = ScriptedModel([tool_call("final_answer", value=3)], capabilities=ANTHROPIC)
    result = await ReActAgent("a", "", model).call("go", output_type=int)
    assert result.output == 3
    assert model.requests[0].options.tool_choice == "final_answer"
    assert model.requests[0].tools[0].parameters["required"] == ("value",)


async def test_auto_tool_choice_reads_a_text_answer_too():
    thinking = ModelOptions(extra={"thinking": {"type": "enabled", "budget_tokens": 1024}})
    caps = AnthropicFormatter().capabilities_for(thinking)
    model = ScriptedModel(['{"name": "Bern"}'], capabilities=caps)
    agent = ReActAgent("a", "Geo.", model, options=thinking)
    result = await agent.call("go", output_type=City)
    assert result.output == City(name="Bern")
    assert result.stop_reason == "no_tool_calls"
    request = model.requests[0]
    assert request.options.tool_choice is None
    assert "call the `final_answer` tool" in request.messages[0].text


async def test_agent_level_output_type_and_strategy_with_call_overrides():
    model = ScriptedModel(['{"x": 1, "y": 2}', '{"title": "Up"}', "plain"], capabilities=OPENAI)
    agent = ReActAgent("a", "", model, output_type=Point, output_strategy="prompted")
    first = await agent.call("go")
    assert first.output == Point(1, 2)
    assert model.requests[0].options.response_format is None
    second = await agent.call("go", output_type=Movie, output_strategy="native")
    assert second.output == {"title": "Up"}
    assert model.requests[1].options.response_format is not None
    third = await agent.call("go", output_type=str)
    assert third.output == "plain"


async def test_str_and_scalar_outputs():
    agent = ReActAgent("a", "", ScriptedModel(["hello", "42"]))
    assert (await agent.call("go", output_type=str)).output == "hello"
    events = await run(agent, output_type=int)
    assert result_of(events).output == 42
    chunks = [e.partial for e in events if isinstance(e, OutputChunkEvent)]
    assert chunks == [42]  # a number completes when the text ends


# -- repair ----------------------------------------------------------------------------------------


async def test_invalid_answers_are_sent_back_with_the_errors():
    model = ScriptedModel(["About Oslo.", '{"population": 3}', '{"name": "Oslo"}'])
    agent = ReActAgent("a", "", model)
    events = await run(agent, output_type=City)
    result = result_of(events)
    assert result.ok
    assert result.output == City(name="Oslo")
    assert result.steps == 3
    assert result.usage.requests == 3
    repairs = [e for e in events if isinstance(e, ErrorEvent)]
    assert [(e.code, e.source, e.recoverable) for e in repairs] == [
        (ErrorCode.OUTPUT_INVALID, "output", True)
    ] * 2
    assert "repair 1 of 2" in repairs[0].message
    second = model.requests[1].messages[-1]
    assert second.role == "user"
    assert second.metadata[REPAIR_METADATA] is True
    assert "not JSON" in second.text
    third = model.requests[2].messages[-1]
    assert "name: Field required" in third.text


async def test_repairs_run_out_into_output_invalid():
    model = ScriptedModel(["no", '{"name": 1}', "[]"])
    agent = ReActAgent("a", "", model)
    result = await agent.call("go", output_type=City)
    assert not result.ok
    assert result.output is None
    assert result.stop_reason == "error"
    error = result.error
    assert error is not None
    assert error.code == ErrorCode.OUTPUT_INVALID
    assert error.source == "output"
    assert "after 2 repairs" in error.message
    assert error.raw_output == "[]"
    assert error.output_errors[0]["type"] == "model_type"
    with pytest.raises(OutputInvalidError) as info:
        result.raise_for_error()
    assert info.value.raw_output == "[]"
    assert info.value.errors == error.output_errors
    # memory stays consistent: the next run goes on
    model = ScriptedModel(['{"name": "Oslo"}'])
    agent.model = model
    assert (await agent.call("again", output_type=City)).ok


async def test_no_retries_fails_at_once():
    agent = ReActAgent("a", "", ScriptedModel(["nope"]), max_output_retries=0)
    result = await agent.call("go", output_type=City)
    assert result.error is not None
    assert result.error.code == ErrorCode.OUTPUT_INVALID
    assert "repair" not in result.error.message


async def test_an_invalid_final_answer_is_repaired_after_the_other_calls_run():
    model = ScriptedModel(
        [
            [tool_call("lookup", query="a"), tool_call("final_answer", name=5)],
            tool_call("final_answer", name="Fixed"),
        ],
        capabilities=ANTHROPIC,
    )
    agent = ReActAgent("a", "", model, tools=[lookup], checkpoint="step")
    events = await run(agent, output_type=City)
    assert result_of(events).output == City(name="Fixed")
    assert [e.tool_call.name for e in events if isinstance(e, PostActingEvent)] == ["lookup"]
    history = model.requests[1].messages
    assert [m.role for m in history] == ["user", "assistant", "tool", "user"]
    assert history[1].text == '{"name": 5}'  # the failed answer, as text
    assert "Call the `final_answer` tool again" in history[-1].text


async def test_a_text_answer_under_the_tool_strategy_is_told_to_use_the_tool():
    model = ScriptedModel(
        ["It is Oslo.", tool_call("final_answer", name="Oslo")],
        capabilities=AnthropicFormatter().capabilities_for(
            ModelOptions(extra={"thinking": {"type": "adaptive"}})
        ),
    )
    result = await ReActAgent("a", "", model).call("go", output_type=City)
    assert result.output == City(name="Oslo")
    repair = model.requests[1].messages[-1]
    assert "do not answer in plain text" in repair.text


async def test_the_last_step_offers_only_the_final_answer_tool_and_can_be_repaired():
    model = ScriptedModel(
        [tool_call("lookup", query="a"), "not it", tool_call("final_answer", name="Oslo")],
        capabilities=ANTHROPIC,
    )
    agent = ReActAgent("a", "", model, tools=[lookup], max_iters=1)
    events = await run(agent, output_type=City)
    result = result_of(events)
    assert result.output == City(name="Oslo")
    assert result.stop_reason == "final_answer"
    assert model.requests[1].tool_names == ("final_answer",)
    assert model.requests[1].options.tool_choice == "final_answer"
    assert model.requests[2].tool_names == ("final_answer",)


async def test_the_last_step_without_a_valid_answer_fails_as_output_invalid():
    model = ScriptedModel([tool_call("lookup", query="a"), tool_call("lookup", query="b")])
    agent = ReActAgent("a", "", model, tools=[lookup], max_iters=1, max_output_retries=0)
    result = await agent.call("go", output_type=City)
    assert result.error is not None
    assert result.error.code == ErrorCode.OUTPUT_INVALID
    memory = (await agent.state_dict())["memory"]
    assert memory[-1]["role"] == "tool"  # the unanswered call is paired


# -- hooks -----------------------------------------------------------------------------------------


async def test_a_post_reasoning_hook_can_repair_the_answer():
    @hook(PostReasoningEvent)
    def fix(event: PostReasoningEvent) -> PostReasoningEvent:
        return event.replace(response=Msg.assistant(event.response.text.replace("'", '"')))

    agent = ReActAgent("a", "", ScriptedModel(["{'name': 'Oslo'}"]), hooks=[fix])
    result = await agent.call("go", output_type=City)
    assert result.output == City(name="Oslo")
    assert result.usage.requests == 1


async def test_a_post_call_edit_is_read_again():
    @hook(PostCallEvent)
    def edit(event: PostCallEvent) -> PostCallEvent:
        return event.replace(reply=Msg.assistant('{"name": "Edited"}'))

    model = ScriptedModel([tool_call("final_answer", name="Oslo")], capabilities=ANTHROPIC)
    result = await ReActAgent("a", "", model, hooks=[edit]).call("go", output_type=City)
    assert result.output == City(name="Edited")

    @hook(PostCallEvent)
    def spoil(event: PostCallEvent) -> PostCallEvent:
        return event.replace(reply=Msg.assistant("spoiled"))

    agent = ReActAgent("a", "", ScriptedModel(['{"name": "Oslo"}']), hooks=[spoil])
    events = await run(agent, output_type=City)
    failed = result_of(events)
    assert failed.error is not None
    assert failed.error.code == ErrorCode.OUTPUT_INVALID
    assert failed.error.raw_output == "spoiled"
    assert failed.error.source == "output"
    assert failed.output is None


async def test_a_hook_stop_reads_the_output_from_the_reply():
    @hook(PostReasoningEvent)
    def stop(event: PostReasoningEvent) -> PostReasoningEvent:
        return event.replace(stop=True)

    model = ScriptedModel([[text('{"name": "Kyiv"}'), tool_call("lookup", query="x")]])
    agent = ReActAgent("a", "", model, tools=[lookup], hooks=[stop])
    result = await agent.call("go", output_type=City)
    assert result.stop_reason == "hook_stop"
    assert result.output == City(name="Kyiv")
    bad = ReActAgent("a", "", ScriptedModel(["nope"]), hooks=[stop])
    failed = await bad.call("go", output_type=City)
    assert failed.error is not None
    assert "ended by 'hook_stop'" in failed.error.message
    assert failed.error.code == ErrorCode.OUTPUT_INVALID


async def test_the_plan_is_on_the_run_context():
    seen: list[Any] = []

    @hook(PreReasoningEvent)
    def look(event: PreReasoningEvent) -> None:
        seen.append(current_run().output_plan)

    agent = ReActAgent("a", "", ScriptedModel(['{"name": "x"}', "hi"]), hooks=[look])
    await agent.call("go", output_type=City)
    await agent.call("go")
    assert seen[0].strategy == "prompted"
    assert seen[0].output_type is City
    assert seen[1] is None


async def test_a_final_answer_marker_reads_the_text_after_it():
    model = ScriptedModel(['Thinking... ANSWER: {"name": "Quito"}'])
    agent = ReActAgent("a", "", model, stop_when=[final_answer_marker("ANSWER:")])
    result = await agent.call("go", output_type=City)
    assert result.output == City(name="Quito")
    assert result.text == '{"name": "Quito"}'


# -- misuse ----------------------------------------------------------------------------------------


async def test_bad_output_types_and_strategies_are_refused_at_the_call():
    class Plain:
        pass

    agent = ReActAgent("a", "", ScriptedModel(["x"], capabilities=ANTHROPIC))
    with pytest.raises(InvalidInputError, match="output_type"):
        await agent.call("go", output_type=set[Callable[[], None]])
    with pytest.raises(InvalidInputError, match="output_type"):
        await agent.call("go", output_type=Plain)
    with pytest.raises(InvalidInputError, match="output_strategy='native' needs"):
        await agent.call("go", output_type=City, output_strategy="native")
    with pytest.raises(ConfigurationError, match="output_strategy must be one of"):
        await agent.call("go", output_type=City, output_strategy="json")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="response_format"):
        await ReActAgent("b", "", ScriptedModel(["x"])).call(
            "go",
            output_type=City,
            output_strategy="native",
            options=ModelOptions(response_format={"type": "json_object"}),
        )
    assert agent.model.calls == 0  # type: ignore[attr-defined]


def test_bad_agent_settings_are_refused_at_construction():
    model = ScriptedModel(["x"])
    with pytest.raises(ConfigurationError, match="max_output_retries"):
        ReActAgent("a", "", model, max_output_retries=-1)
    with pytest.raises(ConfigurationError, match="output_strategy"):
        ReActAgent("a", "", model, output_strategy="fast")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="output_type"):
        ReActAgent("a", "", model, output_type=set[Callable[[], None]])


async def test_unhashable_output_types_still_work():
    from typing import Annotated

    from pydantic import Field

    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

    tp = Annotated[int, Field(ge=0), Unhashable()]
    result = await ReActAgent("a", "", ScriptedModel(["5"])).call("go", output_type=tp)
    assert result.output == 5


async def test_output_chunks_serialize_as_the_json_of_their_fields():
    from rxagent import EVENT_ADAPTER

    model = ScriptedModel(['{"name": "Oslo", "population": 5}'], chunk_size=9)
    events = await run(ReActAgent("a", "", model), output_type=City)
    chunks = [e for e in events if isinstance(e, OutputChunkEvent)]
    last = EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(chunks[-1]))
    assert isinstance(last, OutputChunkEvent)
    assert last.partial == {"name": "Oslo", "population": 5}


async def test_a_repair_with_tool_calls_stops_for_an_interrupt_or_a_hook():
    script = [[tool_call("lookup", query="a"), tool_call("final_answer", name=5)]]

    @hook(PostReasoningEvent)
    def interrupt(event: PostReasoningEvent) -> None:
        current_run()  # inside the run
        agent.interrupt(msg="enough")

    agent = ReActAgent(
        "a", "", ScriptedModel(script, capabilities=ANTHROPIC), tools=[lookup], hooks=[interrupt]
    )
    result = await agent.call("go", output_type=City)
    assert result.interrupted
    assert result.output is None

    @hook(PostActingEvent)
    def stop(event: PostActingEvent) -> PostActingEvent:
        return event.replace(stop=True)

    stopping = ReActAgent(
        "a", "", ScriptedModel(script, capabilities=ANTHROPIC), tools=[lookup], hooks=[stop]
    )
    events = await run(stopping, output_type=City)
    ended = result_of(events)
    assert ended.error is not None
    assert ended.error.code == ErrorCode.OUTPUT_INVALID
    assert "ended by 'hook_stop'" in ended.error.message
