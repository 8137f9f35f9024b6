"""Supervisor (workers as tools) and MsgHub (broadcast group conversation)."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import BaseEvent, ReActAgent
from rxagent.errors import ConfigurationError
from rxagent.messages import Msg
from rxagent.multiagent import MsgHub, SequentialPipeline, Supervisor, default_supervisor_prompt
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call
from rxagent.tools import Toolkit, tool


@tool
def clock() -> str:
    """The time."""
    return "noon"


async def test_supervisor_delegates_to_workers_in_parallel() -> None:
    math = ReActAgent("math", "Computes sums.", ScriptedModel(["4"]))
    words = ReActAgent("words", "", ScriptedModel(["four"]))
    boss = Supervisor(
        "boss",
        model=ScriptedModel(
            [[tool_call("math", input="2+2"), tool_call("words", input="2+2")], "4, four"]
        ),
        workers=[math, words],
        tools=[clock],
    )
    assert "- math: Computes sums." in boss.sys_prompt  # type: ignore[operator]
    assert "- words: the agent 'words'" in boss.sys_prompt  # type: ignore[operator]
    assert sorted(boss.toolkit.names()) == ["clock", "math", "words"]
    events: list[BaseEvent] = [e async for e in boss.events("2+2?")]
    assert_event_protocol(events)
    assert {("boss", "math"), ("boss", "words")} <= {e.path for e in events}
    assert events[-1].reply.text == "4, four"  # type: ignore[attr-defined]


def test_supervisor_prompt_and_toolkit() -> None:
    team = SequentialPipeline([ReActAgent("a", "", ScriptedModel([]))], name="team")
    kit = Toolkit([clock])
    boss = Supervisor("boss", "Be brief.", ScriptedModel([]), workers=[team], tools=kit)
    assert boss.sys_prompt == "Be brief."
    assert kit.names() == ("clock", "team")
    assert "- team: the agent 'team'" in default_supervisor_prompt([team])
    with pytest.raises(ConfigurationError):
        Supervisor("boss", model=ScriptedModel([]), workers=[])


async def test_hub_broadcasts_each_reply_to_the_others() -> None:
    heard: dict[str, list[list[str]]] = {"alice": [], "bob": [], "carol": []}

    def speaker(name: str) -> ReActAgent:
        def fn(messages: list[Msg], tools: Any, options: Any) -> str:
            heard[name].append([m.text for m in messages])
            return f"{name} here"

        return ReActAgent(name, "", FunctionModel(fn))

    hub = MsgHub(
        [speaker("alice"), speaker("bob"), speaker("carol")], announcement="Welcome.", rounds=2
    )
    events = [e async for e in hub.events("Topic: frogs", session_id="s")]
    assert_event_protocol(events)
    assert events[-1].reply.text == "carol here"  # type: ignore[attr-defined]
    assert heard["alice"][0] == ["Welcome.", "Topic: frogs"]
    assert heard["bob"][0] == ["Welcome.", "Topic: frogs", "alice here"]
    assert heard["carol"][0][-2:] == ["alice here", "bob here"]
    # alice's second turn: she hears bob and carol since her first
    assert heard["alice"][1][-3:] == ["alice here", "bob here", "carol here"]
    # what alice and bob did not hear yet waits for the next run; no second announcement
    await hub.call("Next topic", session_id="s")
    assert heard["alice"][2][-3:] == ["bob here", "carol here", "Next topic"]
    assert "Welcome." not in heard["alice"][2][-3:]


def test_hub_arguments() -> None:
    a = ReActAgent("a", "", ScriptedModel([]))
    b = ReActAgent("b", "", ScriptedModel([]))
    with pytest.raises(ConfigurationError, match="at least 2"):
        MsgHub([a])
    with pytest.raises(ConfigurationError, match="rounds"):
        MsgHub([a, b], rounds=0)
    hub = MsgHub([a, b], announcement=Msg.user("hi"))
    assert hub.members == (a, b)
    assert hub.announcement is not None
