"""What `ReActAgent` refuses where it is built or called, and interrupts from another thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from rxagent import ReActAgent
from rxagent.errors import ConfigurationError, InvalidInputError
from rxagent.testing import FunctionModel, ScriptedModel


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"name": ""}, ConfigurationError, "non-empty str name"),
        ({"sys_prompt": 42}, ConfigurationError, "sys_prompt must be a str"),
        ({"max_iters": 0}, ConfigurationError, "max_iters"),
        ({"max_tool_calls": -1}, ConfigurationError, "max_tool_calls"),
        ({"max_concurrent_runs": 0}, ConfigurationError, "max_concurrent_runs"),
        ({"interrupt_tools": "kill"}, ConfigurationError, "interrupt_tools must be"),
        ({"checkpoint": "always"}, ConfigurationError, "checkpoint must be"),
        ({"max_output_retries": -1}, ConfigurationError, "max_output_retries"),
        ({"output_strategy": "json"}, ConfigurationError, "output_strategy must be one of"),
        ({"output_type": set[Callable[[], None]]}, InvalidInputError, "output_type"),
        ({"stop_when": ["not callable"]}, ConfigurationError, "stop_when items"),
    ],
)
def test_bad_constructor_arguments_are_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
):
    arguments: dict[str, Any] = {"name": "a", "sys_prompt": "", **kwargs}
    with pytest.raises(error, match=message):
        ReActAgent(model=ScriptedModel(["x"]), **arguments)


async def test_bad_call_arguments_are_refused():
    agent = ReActAgent("a", "", ScriptedModel(["x"]))
    with pytest.raises(ConfigurationError, match="session_id must be a non-empty str"):
        await agent.call("hi", session_id="")
    with pytest.raises(ConfigurationError, match="output_strategy must be one of"):
        await agent.call("hi", output_strategy="json")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="buffer"):
        agent.events("hi", buffer=0)


async def test_interrupt_from_another_thread_reaches_the_run():
    started = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.Event().wait()  # only the interrupt ends it
        return "late"

    agent = ReActAgent("a", "", FunctionModel(slow))
    task = asyncio.create_task(agent.call("hi"))
    await started.wait()
    answers: list[bool] = []
    thread = threading.Thread(target=lambda: answers.append(agent.interrupt(msg="stop")))
    thread.start()
    await asyncio.to_thread(thread.join)
    result = await task
    assert answers == [True]
    assert result.interrupted
    assert result.text == "stop"
    assert not agent.is_running()
