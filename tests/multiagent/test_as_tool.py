"""Agents as tools: nested runs in the caller's stream, hooks, interrupts, disposal."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from rxagent import (
    BaseEvent,
    ErrorEvent,
    PostActingEvent,
    PostCallEvent,
    PreCallEvent,
    ReActAgent,
    hook,
)
from rxagent.agent import child_session
from rxagent.context import current_run
from rxagent.errors import ConfigurationError, EventProtocolError
from rxagent.messages import Msg
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call


def poet(turns: list[Any] | None = None, **kwargs: Any) -> ReActAgent:
    return ReActAgent("poet", "You write haiku.", ScriptedModel(turns or ["Old pond"]), **kwargs)


def host(child: ReActAgent, turns: list[Any], **kwargs: Any) -> ReActAgent:
    return ReActAgent("host", "Delegate.", ScriptedModel(turns), tools=[child.as_tool()], **kwargs)


async def collect(agent: Any, msg: str = "go", **kwargs: Any) -> list[BaseEvent]:
    return [e async for e in agent.events(msg, **kwargs)]


async def test_child_events_arrive_inside_the_tool_call_in_order() -> None:
    child = poet()
    parent = host(child, [tool_call("poet", input="a haiku"), "Here it is"])
    events = await collect(parent)
    assert_event_protocol(events)
    paths = [e.path for e in events]
    pre_acting = next(i for i, e in enumerate(events) if e.type == "pre_acting")
    post_acting = next(i for i, e in enumerate(events) if e.type == "post_acting")
    nested = [i for i, p in enumerate(paths) if p == ("host", "poet")]
    assert nested
    assert pre_acting < min(nested)
    assert max(nested) < post_acting
    child_events = [events[i] for i in nested]
    assert [e.seq for e in child_events] == sorted(e.seq for e in child_events)
    assert isinstance(child_events[0], PreCallEvent)
    assert isinstance(child_events[-1], PostCallEvent)
    assert child_events[0].session_id == "default/poet"
    post = events[post_acting]
    assert isinstance(post, PostActingEvent)
    assert post.result.text == "Old pond"
    assert events[-1].path == ("host",)


async def test_the_child_session_is_nested_and_saved() -> None:
    child = poet()
    parent = host(child, [tool_call("poet", input="a haiku"), "ok"])
    await parent.call("go", session_id="s1")
    state = await child.state_dict(child_session("s1", "poet"))
    assert [m["role"] for m in state["memory"]] == ["user", "assistant"]
    assert (await child.state_dict("s1"))["memory"] == []


async def test_tool_name_description_and_schema() -> None:
    child = poet()
    made = child.as_tool()
    assert made.name == "poet"
    assert "poet" in made.description
    assert made.schema.parameters["required"] == ("input",)
    other = child.as_tool("haiku", "Writes haiku.")
    assert (other.name, other.description) == ("haiku", "Writes haiku.")
    assert child.as_tool().schema == made.schema  # no side effects: same tool again
    assert len(child.toolkit) == 0


class Query(BaseModel):
    topic: str
    lines: int = 3


class Poem(BaseModel):
    title: str


async def test_structured_input_and_output() -> None:
    seen: list[str] = []

    def answer(messages: list[Msg], tools: Any, options: Any) -> Any:
        seen.append(messages[-1].text)
        return '{"title": "Frogs"}'

    child = ReActAgent("poet", "", FunctionModel(answer), output_type=Poem,
                       output_strategy="prompted")  # fmt: skip
    made = child.as_tool(input_type=Query, output="output")
    assert made.schema.parameters["properties"]["input"]["required"] == ("topic",)
    parent = ReActAgent(
        "host", "", ScriptedModel([tool_call("poet", input={"topic": "frogs"}), "done"]),
        tools=[made],
    )  # fmt: skip
    events = await collect(parent)
    post = next(e for e in events if isinstance(e, PostActingEvent))
    assert post.result.text == '{"title":"Frogs"}'
    assert seen == ['{"topic":"frogs","lines":3}']


async def test_output_function_and_bad_arguments() -> None:
    child = poet(["Old pond"])
    made = child.as_tool(output=lambda result: result.text.upper())
    parent = ReActAgent("host", "", ScriptedModel([tool_call("poet", input="x"), "done"]),
                        tools=[made])  # fmt: skip
    events = await collect(parent)
    post = next(e for e in events if isinstance(e, PostActingEvent))
    assert post.result.text == "OLD POND"
    with pytest.raises(ConfigurationError, match="output"):
        child.as_tool(output="reply")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="input_type"):
        child.as_tool(input_type=object())


async def test_a_failing_child_gives_an_error_result() -> None:
    def broken(messages: Any, tools: Any, options: Any) -> str:
        raise RuntimeError("model down")

    child = ReActAgent("poet", "", FunctionModel(broken))
    parent = host(child, [tool_call("poet", input="x"), "sorry"])
    events = await collect(parent)
    assert_event_protocol(events)
    post = next(e for e in events if isinstance(e, PostActingEvent))
    assert post.result.is_error
    assert events[-1].result.ok  # type: ignore[attr-defined]


async def test_parent_hooks_see_nested_events_only_when_they_ask() -> None:
    own: list[tuple[str, ...]] = []
    nested: list[tuple[str, ...]] = []
    child_seen: list[tuple[str, ...]] = []

    @hook(PreCallEvent)
    def plain(event: PreCallEvent) -> None:
        own.append(event.path)

    @hook(PreCallEvent, nested=True)
    def deep(event: PreCallEvent) -> None:
        nested.append(event.path)

    @hook(PreCallEvent)
    def on_child(event: PreCallEvent) -> None:
        child_seen.append(event.path)

    child = poet(hooks=[on_child])
    parent = host(child, [tool_call("poet", input="x"), "ok"], hooks=[plain, deep])
    await parent.call("go")
    assert own == [("host",)]
    assert nested == [("host",), ("host", "poet")]
    assert child_seen == [("host", "poet")]


async def test_a_failing_nested_hook_is_isolated() -> None:
    @hook(PostCallEvent, nested=True)
    def broken(event: PostCallEvent) -> None:
        if event.path != ("host",):
            raise ValueError("boom")

    child = poet()
    parent = host(child, [tool_call("poet", input="x"), "ok"], hooks=[broken])
    events = await collect(parent)
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.source for e in errors] == ["hook:broken"]
    assert events[-1].result.ok  # type: ignore[attr-defined]


@pytest.mark.parametrize("interrupt_tools", ["cancel", "wait"])
async def test_an_interrupt_reaches_the_running_child(interrupt_tools: str) -> None:
    started = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    child = ReActAgent("poet", "", FunctionModel(slow))
    parent = host(child, [tool_call("poet", input="x"), "never"], interrupt_tools=interrupt_tools)
    events: list[BaseEvent] = []

    async def consume() -> None:
        events.extend([e async for e in parent.events("go", session_id="s")])

    task = asyncio.create_task(consume())
    await started.wait()
    assert parent.interrupt("s", "stop")
    await task
    assert_event_protocol(events)
    posts = [e for e in events if isinstance(e, PostCallEvent)]
    assert [p.path for p in posts] == [("host", "poet"), ("host",)]
    assert all(p.result.interrupted for p in posts)
    state = await child.state_dict("s/poet")
    assert state["memory"][0]["content"] == "x"


async def test_disposing_the_parent_disposes_the_child() -> None:
    started = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    child = ReActAgent("poet", "", FunctionModel(slow))
    parent = host(child, [tool_call("poet", input="x"), "never"])
    async for event in parent.events("go", session_id="s"):
        if event.path == ("host", "poet"):
            await started.wait()
            break
    assert await child.wait_idle(timeout=5)
    assert await parent.wait_idle(timeout=5)
    assert not child.is_running("s/poet")


async def test_the_checker_rejects_a_child_outside_the_acting_span() -> None:
    child = poet()
    parent = host(child, [tool_call("poet", input="x"), "ok"])
    events = await collect(parent)
    nested = [e for e in events if len(e.path) == 2]
    top = [e for e in events if len(e.path) == 1]
    after_acting = next(i for i, e in enumerate(top) if e.type == "post_acting") + 1
    moved = [*top[:after_acting], *nested, *top[after_acting:]]
    with pytest.raises(EventProtocolError) as info:
        assert_event_protocol(moved)
    assert info.value.invariant == "nested run inside its parent's span"
    orphan = [*top, *nested]
    with pytest.raises(EventProtocolError, match="no run at path"):
        assert_event_protocol(orphan)
    shuffled = [events[0], *[e for e in events[1:] if e.path == ("host", "poet")][::-1]]
    with pytest.raises(EventProtocolError):
        assert_event_protocol(shuffled, complete=False)


async def test_stop_after_tool_needs_a_tool() -> None:
    seen: list[str] = []

    @hook(PreCallEvent)
    def outside(event: PreCallEvent) -> None:
        try:
            current_run().stop_after_tool()
        except RuntimeError as exc:
            seen.append(str(exc))

    agent = ReActAgent("a", "", ScriptedModel(["hi"]), hooks=[outside])
    await agent.call("go")
    assert seen
    assert "tool" in seen[0]
