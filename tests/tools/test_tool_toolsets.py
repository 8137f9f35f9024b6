"""Toolsets in a toolkit: entered lazily, listed once, closed newest first, reopenable."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from rxagent import ErrorEvent, ReActAgent
from rxagent.errors import ErrorCode, ToolDefinitionError, ToolExecutionError
from rxagent.messages import ToolUseBlock
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call
from rxagent.tools import Tool, Toolkit, Toolset, tool
from rxagent.tools._toolset import is_toolset

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class FakeToolset:
    """A toolset whose tools echo, with a log of its lifecycle."""

    def __init__(
        self,
        prefix: str,
        log: list[str],
        *,
        fail_enter: int = 0,
        fail_list: bool = False,
        fail_close: bool = False,
        gate: asyncio.Event | None = None,
    ) -> None:
        self.prefix, self.log = prefix, log
        self.fail_enter, self.fail_list, self.fail_close = fail_enter, fail_list, fail_close
        self.gate = gate
        self.names = ["echo"]

    async def __aenter__(self) -> FakeToolset:
        self.log.append(f"enter {self.prefix}")
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_enter:
            self.fail_enter -= 1
            raise ConnectionError(f"{self.prefix} is down")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self.log.append(f"close {self.prefix}")
        if self.fail_close:
            raise OSError(f"{self.prefix} would not close")

    async def list_tools(self) -> Sequence[Tool[..., Any]]:
        self.log.append(f"list {self.prefix}")
        if self.fail_list:
            raise ConnectionError("listing failed")
        prefix = self.prefix

        async def run(arguments: dict[str, Any]) -> str:
            return f"{prefix}:{arguments['text']}"

        return [
            Tool.from_schema(f"{prefix}_{name}", "Echo.", SCHEMA, run, group=None)
            for name in self.names
        ]


def opened(kit: Toolkit) -> bool:
    return kit.is_open


def test_a_toolset_is_recognised_by_its_methods() -> None:
    fake = FakeToolset("a", [])
    assert isinstance(fake, Toolset)
    assert is_toolset(fake)
    assert not is_toolset(FakeToolset)  # the class is not a toolset
    assert not is_toolset(tool(lambda: "x", name="x"))


async def test_tools_arrive_on_open_and_leave_on_close_newest_first() -> None:
    log: list[str] = []
    first, second = FakeToolset("a", log), FakeToolset("b", log)

    def local() -> str:
        """A local tool."""
        return "here"

    kit = Toolkit([first, local])
    assert kit.add(second) is second
    assert kit.add(second) is second  # held once
    assert kit.toolsets == (first, second)
    assert kit.names() == ("local",)
    assert opened(kit) is False
    async with kit:
        assert opened(kit)
        assert kit.names() == ("local", "a_echo", "b_echo")
        await kit.open()  # nothing to do now
        outcome = await kit.execute(ToolUseBlock(id="1", name="b_echo", input={"text": "hi"}))
        assert outcome.result.output == "b:hi"
    assert kit.names() == ("local",)
    assert log == ["enter a", "list a", "enter b", "list b", "close b", "close a"]


async def test_concurrent_opens_enter_each_toolset_once() -> None:
    log: list[str] = []
    gate = asyncio.Event()
    kit = Toolkit([FakeToolset("a", log, gate=gate)])
    waiting = [asyncio.create_task(kit.open()) for _ in range(3)]
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(*waiting)
    assert log == ["enter a", "list a"]
    await kit.aclose()


async def test_a_failed_enter_raises_and_the_next_open_retries() -> None:
    log: list[str] = []
    kit = Toolkit([FakeToolset("a", log, fail_enter=1)])
    with pytest.raises(ToolExecutionError, match=r"could not be opened: ConnectionError: a is do"):
        await kit.open()
    assert kit.names() == ()
    await kit.open()
    assert kit.names() == ("a_echo",)
    await kit.aclose()
    assert log == ["enter a", "enter a", "list a", "close a"]


async def test_a_failed_listing_closes_the_toolset_again() -> None:
    log: list[str] = []
    kit = Toolkit([FakeToolset("a", log, fail_list=True)])
    with pytest.raises(ToolExecutionError, match="ConnectionError: listing failed") as caught:
        await kit.open()
    assert isinstance(caught.value.__cause__, ConnectionError)
    assert log == ["enter a", "list a", "close a"]
    assert not kit.is_open


async def test_a_name_clash_adds_none_of_the_toolsets_tools() -> None:
    log: list[str] = []
    clashing = FakeToolset("a", log)
    clashing.names = ["fresh", "echo"]

    def a_echo() -> str:
        """Already here."""
        return ""

    kit = Toolkit([a_echo, clashing])
    with pytest.raises(ToolDefinitionError, match=r"a tool named 'a_echo' is already"):
        await kit.open()
    assert kit.names() == ("a_echo",)
    assert log[-1] == "close a"


async def test_refresh_replaces_a_toolsets_tools() -> None:
    log: list[str] = []
    toolset = FakeToolset("a", log)
    kit = Toolkit([toolset])
    await kit.refresh()  # not open: nothing to list
    await kit.open()
    toolset.names = ["one", "two"]
    await kit.refresh()
    assert kit.names() == ("a_one", "a_two")
    await kit.aclose()


async def test_every_toolset_is_closed_even_when_one_fails_to() -> None:
    log: list[str] = []
    kit = Toolkit([FakeToolset("a", log), FakeToolset("b", log, fail_close=True)])
    await kit.open()
    with pytest.raises(OSError, match="b would not close"):
        await kit.aclose()
    assert log[-2:] == ["close b", "close a"]
    assert kit.names() == ()


async def test_closing_waits_for_an_opening_in_progress() -> None:
    log: list[str] = []
    gate = asyncio.Event()
    kit = Toolkit([FakeToolset("a", log, gate=gate)])
    opening = asyncio.create_task(kit.open())
    await asyncio.sleep(0)
    closing = asyncio.create_task(kit.aclose())
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(opening, closing)
    assert log == ["enter a", "list a", "close a"]
    assert kit.names() == ()


def test_a_toolkit_reopens_on_a_new_event_loop() -> None:
    log: list[str] = []
    kit = Toolkit([FakeToolset("a", log)])

    async def use() -> str:
        async with kit:
            outcome = await kit.execute(ToolUseBlock(id="1", name="a_echo", input={"text": "x"}))
            return str(outcome.result.output)

    assert asyncio.run(use()) == "a:x"
    assert asyncio.run(use()) == "a:x"
    assert log == ["enter a", "list a", "close a"] * 2


async def test_an_agent_enters_its_toolsets_on_the_first_run_and_closes_them_on_aclose() -> None:
    log: list[str] = []
    toolset = FakeToolset("srv", log)
    model = ScriptedModel([[tool_call("srv_echo", text="hi")], "done", "again"])
    tools: list[Any] = [toolset]  # ReActAgent(tools=[toolset]): a toolset is passed like a tool
    async with ReActAgent("t", "", model, tools=tools) as agent:
        assert log == []  # lazily: nothing happens before a run
        result = await agent.call("go")
        assert result.text == "done"
        assert result.tools_used == ("srv_echo",)
        await agent.call("more")
        assert log == ["enter srv", "list srv"]
    assert log == ["enter srv", "list srv", "close srv"]


async def test_a_toolset_that_cannot_be_entered_fails_the_run_and_the_next_run_retries() -> None:
    log: list[str] = []
    tools: list[Any] = [FakeToolset("srv", log, fail_enter=1)]
    agent = ReActAgent("f", "", ScriptedModel(["first", "second"]), tools=tools)
    events = [e async for e in agent.events("go")]
    assert_event_protocol(events)
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.code for e in errors] == [ErrorCode.TOOL_ERROR]
    assert "could not be opened: ConnectionError: srv is down" in errors[0].message
    result = await agent.call("again")
    assert result.text == "first"
    assert log == ["enter srv", "enter srv", "list srv"]
    await agent.toolkit.aclose()


async def test_an_rxagent_error_from_a_toolset_passes_unchanged() -> None:
    class Strict(FakeToolset):
        async def __aenter__(self) -> Strict:
            raise ToolDefinitionError("bad config")

    class BadList(FakeToolset):
        async def list_tools(self) -> Sequence[Tool[..., Any]]:
            raise ToolDefinitionError("bad tool")

    with pytest.raises(ToolDefinitionError, match="bad config"):
        await Toolkit([Strict("a", [])]).open()
    with pytest.raises(ToolDefinitionError, match="bad tool"):
        await Toolkit([BadList("b", [])]).open()


async def test_a_toolset_added_to_an_open_toolkit_is_entered_on_the_next_open() -> None:
    log: list[str] = []
    kit = Toolkit([FakeToolset("a", log)])
    await kit.open()
    kit.add(FakeToolset("b", log))
    assert not opened(kit)
    await kit.open()
    assert kit.names() == ("a_echo", "b_echo")
    assert log == ["enter a", "list a", "enter b", "list b"]
    await kit.aclose()
