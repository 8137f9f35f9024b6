"""serve_control: the agents of a process obey the interrupts published on a control channel."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from rxagent import ReActAgent
from rxagent.errors import ErrorCode
from rxagent.server import serve_control
from rxagent.state import ControlMessage, InProcessControl
from rxagent.testing import FunctionModel, ScriptedModel

WAIT_S = 10.0


def slow_agent(name: str) -> tuple[ReActAgent, asyncio.Event]:
    started = asyncio.Event()

    async def never_answers(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    return ReActAgent(name, "", FunctionModel(never_answers)), started


async def test_serve_control_routes_each_interrupt_to_the_named_agent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first, first_started = slow_agent("first")
    second, second_started = slow_agent("second")
    idle = ReActAgent("idle", "", ScriptedModel(["unused"]))
    caplog.set_level(logging.INFO, logger="rxagent.server")
    async with InProcessControl() as channel:
        subscription = await serve_control(
            channel, {"first": first, "second": second, "idle": idle}
        )
        runs = [
            asyncio.create_task(first.call("go", session_id="x")),
            asyncio.create_task(second.call("go", session_id="x")),
        ]
        async with asyncio.timeout(WAIT_S):
            await first_started.wait()
            await second_started.wait()
        await channel.publish(ControlMessage(agent="idle", session_id="x"))  # not running
        await channel.publish(ControlMessage(agent="second", session_id="x", reason="two"))
        await channel.publish(ControlMessage(agent="first", session_id="x", reason="one"))
        async with asyncio.timeout(WAIT_S):
            results = await asyncio.gather(*runs)
        await subscription.close()
    assert [r.text for r in results] == ["one", "two"]
    assert all(r.error is not None and r.error.code == ErrorCode.INTERRUPTED for r in results)
    interrupted = [r.getMessage() for r in caplog.records if "interrupted" in r.getMessage()]
    assert len(interrupted) == 2
    assert "second/x" in interrupted[0]
