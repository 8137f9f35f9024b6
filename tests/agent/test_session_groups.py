"""Setting a session's active tool groups from code."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rxagent import ReActAgent, tool
from rxagent.errors import ConfigurationError, SessionBusyError
from rxagent.testing import FunctionModel, ScriptedModel
from rxagent.tools import Toolkit


@tool(group="git")
def git_status() -> str:
    """Show the working tree status."""
    return "clean"


@tool(group="web")
def fetch(url: str) -> str:
    """Fetch a page.

    Args:
        url: The address.
    """
    return url


@tool
def now() -> str:
    """The time."""
    return "noon"


def _names(request: Any) -> set[str]:
    return {schema.name for schema in request.tools}


async def test_groups_set_from_code_last_across_runs_and_reset_to_the_defaults() -> None:
    kit = Toolkit([git_status, fetch, now], active_groups=["git"])
    model = ScriptedModel(["one", "two", "three"])
    agent = ReActAgent("dev", "", model, tools=kit)
    assert await agent.active_groups() == ("git",)
    assert await agent.set_active_groups(["web", "web"]) == ("web",)
    await agent.call("a")
    await agent.call("b")
    assert [_names(r) for r in model.requests[:2]] == [{"fetch", "now"}, {"fetch", "now"}]
    assert await agent.active_groups() == ("web",)
    assert await agent.active_groups(session_id="other") == ("git",)  # per session
    assert await agent.set_active_groups(None) == ("git",)
    await agent.call("c")
    assert _names(model.requests[2]) == {"git_status", "now"}


async def test_bad_groups_are_refused_and_change_nothing() -> None:
    agent = ReActAgent("dev", "", ScriptedModel(["x"]), tools=[git_status])
    with pytest.raises(ConfigurationError, match=r"unknown tool groups \['nope'\]"):
        await agent.set_active_groups(["nope"])
    with pytest.raises(ConfigurationError, match="list of group names"):
        await agent.set_active_groups("git")
    assert await agent.store.load("dev", "default") is None


async def test_a_busy_session_cannot_switch_groups() -> None:
    started = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.Event().wait()  # only the interrupt ends it
        return "late"

    agent = ReActAgent("dev", "", FunctionModel(slow), tools=[git_status])
    task = asyncio.create_task(agent.call("hi"))
    await started.wait()
    with pytest.raises(SessionBusyError):
        await agent.set_active_groups([])
    agent.interrupt()
    assert (await task).interrupted
