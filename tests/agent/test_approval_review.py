"""Review regressions for issue 6: closing what an agent opened, and resuming a stuck batch."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from rxagent import AgentState, ReActAgent, tool
from rxagent.errors import ApprovalError, ErrorCode, ToolExecutionError
from rxagent.testing import ScriptedModel, tool_call
from rxagent.tools import Tool, Toolkit

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
RAN: list[str] = []


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


class Switchable:
    """A toolset whose opening, listing and closing can be made to fail."""

    def __init__(self) -> None:
        self.fail_enter = self.fail_list = self.fail_close = False
        self.log: list[str] = []

    async def __aenter__(self) -> Switchable:
        self.log.append("enter")
        if self.fail_enter:
            raise ConnectionError("the server is down")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self.log.append("close")
        if self.fail_close:
            raise OSError("would not close")

    async def list_tools(self) -> Sequence[Tool[..., Any]]:
        if self.fail_list:
            raise ConnectionError("listing failed")

        async def run(arguments: dict[str, Any]) -> str:
            return str(arguments["text"])

        return [Tool.from_schema("echo", "Echo.", SCHEMA, run)]


@tool(needs_approval=True)
def write(path: str) -> str:
    """Write a file.

    Args:
        path: Where.
    """
    RAN.append(path)
    return f"wrote {path}"


class BrokenPool:
    """A scripted model whose connection pool fails to close."""

    def __init__(self, turns: list[Any]) -> None:
        self.inner = ScriptedModel(turns)
        self.name, self.context_window = self.inner.name, self.inner.context_window

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.stream(*args, **kwargs)

    async def aclose(self) -> None:
        raise OSError("pool broken")


async def test_agent_aclose_closes_the_toolsets_even_when_a_model_fails_to_close() -> None:
    toolset = Switchable()
    model = BrokenPool(["hi"])
    agent = ReActAgent("a", "", model, tools=[toolset])
    await agent.call("x")
    assert toolset.log == ["enter"]
    with pytest.raises(OSError, match="pool broken"):
        await agent.aclose()
    assert toolset.log == ["enter", "close"]  # no MCP server (process, task) is left behind
    assert not agent.toolkit.is_open


async def test_a_listing_failure_is_reported_even_when_closing_fails_too() -> None:
    toolset = Switchable()
    toolset.fail_list = toolset.fail_close = True
    kit = Toolkit([toolset])
    with pytest.raises(ToolExecutionError, match="listing failed") as caught:
        await kit.open()
    assert isinstance(caught.value.__cause__, ConnectionError)
    assert toolset.log == ["enter", "close"]
    assert not kit.is_open


async def test_a_batch_whose_resuming_run_failed_says_how_to_resume_and_runs_once() -> None:
    toolset = Switchable()
    model = ScriptedModel([tool_call("write", path="p"), "done"])
    agent = ReActAgent("a", "", model, tools=[write, toolset])
    parked = await agent.call("write p")
    (approval_id,) = parked.pending_approvals
    await agent.aclose()
    toolset.fail_enter = True
    failed = await agent.approve(approval_id)  # recorded, but the toolkit cannot open
    assert failed is not None
    assert failed.error is not None
    assert failed.error.code is ErrorCode.TOOL_ERROR
    assert RAN == []
    state = AgentState.model_validate(await agent.state_dict())
    assert state.parked is not None
    assert state.pending_approvals == ()
    with pytest.raises(ApprovalError, match=r"agent\.call\(None, session_id='default'\)"):
        await agent.approve(approval_id)
    toolset.fail_enter = False
    resumed = await agent.call(None)
    assert resumed.ok
    assert resumed.text == "done"
    assert RAN == ["p"]
    await agent.aclose()


async def test_an_interrupt_before_parking_pairs_the_held_call() -> None:
    gate = asyncio.Event()
    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Wait."""
        started.set()
        await gate.wait()
        return "slow done"

    model = ScriptedModel([[tool_call("slow"), tool_call("write", path="q")], "unused"])
    agent = ReActAgent("a", "", model, tools=[slow, write], parallel_tool_calls=True)
    task = asyncio.create_task(agent.call("go"))
    await started.wait()
    assert agent.interrupt(msg="stop")
    result = await task
    assert result.interrupted
    assert result.pending_approvals == ()
    state = AgentState.model_validate(await agent.state_dict())
    assert state.parked is None
    assert state.pending_approvals == ()
    tool_results = [r for m in state.memory for r in m.tool_results]
    assert [r.name for r in tool_results] == ["slow", "write"]
    assert all(r.is_error for r in tool_results)
    assert RAN == []


async def test_agent_aclose_raises_what_a_toolset_raised_on_closing() -> None:
    toolset = Switchable()
    toolset.fail_close = True
    agent = ReActAgent("a", "", ScriptedModel(["hi"]), tools=[toolset])
    await agent.call("x")
    with pytest.raises(OSError, match="would not close"):
        await agent.aclose()
    assert not agent.toolkit.is_open
