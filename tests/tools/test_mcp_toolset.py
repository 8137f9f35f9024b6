"""MCPToolset over stdio against the demo server: results, failures, reconnects, lifecycle."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from mcp_helpers import (  # type: ignore[import-not-found]
    Beacon,
    alive,
    child_pids,
    demo_stdio,
    use,
)

from rxagent.errors import ConfigurationError, ErrorCode
from rxagent.messages import ImageBlock, TextBlock
from rxagent.tools import Toolkit
from rxagent.tools.mcp import MCPConnectionError, MCPToolset

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def demo() -> AsyncIterator[tuple[MCPToolset, Toolkit]]:
    toolset = demo_stdio(timeout=30)
    async with Toolkit([toolset]) as kit:
        yield toolset, kit


async def server_pid(kit: Toolkit) -> int:
    outcome = await kit.execute(use("pid"))
    assert outcome.ok, outcome.result.text
    return int(outcome.result.text)


async def test_tools_schemas_and_descriptions(demo: tuple[MCPToolset, Toolkit]):
    toolset, kit = demo
    assert toolset.connected
    assert set(kit.names()) == {
        "echo",
        "forecast",
        "measure",
        "chart",
        "pixel",
        "plot",
        "fail",
        "pid",
        "whoami",
        "crash",
        "hang",
    }
    echo = kit.get("echo")
    assert echo is not None
    assert echo.description == "Repeat the text."
    assert echo.timeout == 30.0
    assert echo.schema.parameters["required"] == ("text",)


async def test_text_result(demo: tuple[MCPToolset, Toolkit]):
    outcome = await demo[1].execute(use("echo", text="héllo"))
    assert outcome.ok
    assert outcome.result.output == "héllo"


async def test_text_wins_over_its_structured_twin(demo: tuple[MCPToolset, Toolkit]):
    outcome = await demo[1].execute(use("forecast", city="Oslo", days=2))
    assert outcome.ok
    assert json.loads(outcome.result.text) == {"city": "Oslo", "days": 2, "sky": "clear"}


async def test_structured_content_without_text_is_json(demo: tuple[MCPToolset, Toolkit]):
    outcome = await demo[1].execute(use("measure"))
    assert outcome.ok
    assert outcome.result.output == '{"celsius":21.5,"sensor":"hall"}'
    chart = await demo[1].execute(use("chart"))
    assert chart.ok
    assert isinstance(chart.result.output, tuple)
    data, image = chart.result.output
    assert data == TextBlock(text='{"points":[1,2]}')
    assert isinstance(image, ImageBlock)


async def test_image_result_is_content_blocks(demo: tuple[MCPToolset, Toolkit]):
    outcome = await demo[1].execute(use("pixel", caption="one pixel"))
    assert outcome.ok
    assert isinstance(outcome.result.output, tuple)
    text, image = outcome.result.output
    assert text == TextBlock(text="one pixel")
    assert isinstance(image, ImageBlock)
    assert image.media_type == "image/png"
    assert image.data is not None
    assert image.data.startswith("iVBORw0KGgo")


async def test_is_error_result(demo: tuple[MCPToolset, Toolkit]):
    outcome = await demo[1].execute(use("fail", message="the disk is full"))
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.result.is_error
    assert outcome.result.text == "Error executing tool fail: the disk is full"


async def test_nested_schema_violations_list_every_field(demo: tuple[MCPToolset, Toolkit]):
    call = use("plot", point={"x": 1, "y": "two"}, color="green", tags=["a", 2])
    outcome = await demo[1].execute(call)
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.result.text == (
        "Invalid arguments for tool 'plot': color: 'green' is not one of ['red', 'blue']; "
        "point.y: 'two' is not of type 'integer'; tags.1: 2 is not of type 'string'"
    )
    missing = await demo[1].execute(use("plot", point={"x": 1}, color="red"))
    assert missing.result.text == ("Invalid arguments for tool 'plot': tags: Field required")
    assert (await demo[1].execute(use("whoami"))).result.output == "stdio"
    fine = await demo[1].execute(use("plot", point={"x": 1, "y": 2}, color="red", tags=["a"]))
    assert fine.ok
    assert fine.result.output == "red point at 1,2 tagged a"


async def test_timeout_cancels_the_call_and_the_connection_stays(
    demo: tuple[MCPToolset, Toolkit],
):
    toolset, kit = demo
    pid = await server_pid(kit)
    async with Beacon() as beacon:
        task = asyncio.create_task(kit.execute(use("hang", port=beacon.port), timeout=60))
        await beacon.started
        task.cancel()  # as a timeout or an interrupt does
        with pytest.raises(asyncio.CancelledError):
            await task
    assert toolset.connected
    assert await server_pid(kit) == pid


async def test_server_that_dies_mid_call_gives_tool_error_then_reconnects(
    demo: tuple[MCPToolset, Toolkit],
):
    toolset, kit = demo
    first = await server_pid(kit)
    outcome = await kit.execute(use("crash"))
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.exception == "MCPConnectionError"
    assert "MCP server 'demo' disconnected during the call" in outcome.result.text
    assert "the next call reconnects" in outcome.result.text
    second = await server_pid(kit)  # the next call starts the server again
    assert second != first
    assert toolset.connected
    assert not alive(first)  # the dead one was reaped before the new one started


async def test_killed_server_fails_the_call_in_flight(demo: tuple[MCPToolset, Toolkit]):
    _toolset, kit = demo
    async with Beacon() as beacon:
        task = asyncio.create_task(kit.execute(use("hang", port=beacon.port)))
        pid = await beacon.started
        os.kill(pid, signal.SIGKILL)
        outcome = await task
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert "disconnected during the call" in outcome.result.text
    assert await server_pid(kit) != pid


async def test_server_that_died_idle_is_restarted_by_the_next_call(
    demo: tuple[MCPToolset, Toolkit],
):
    toolset, kit = demo
    pid = await server_pid(kit)
    os.kill(pid, signal.SIGKILL)
    outcomes = await asyncio.gather(*(kit.execute(use("pid", str(i))) for i in range(3)))
    # a call sent before the connection's end was seen fails; any other runs on a new server
    for outcome in outcomes:
        if outcome.ok:
            assert int(outcome.result.text) != pid
        else:
            assert "MCP server 'demo' disconnected during the call" in outcome.result.text
    assert await server_pid(kit) != pid
    assert toolset.connected


async def test_close_leaves_no_process_and_reopens():
    before, tasks = child_pids(), asyncio.all_tasks()
    toolset = demo_stdio()
    async with toolset:
        tools = {t.name: t for t in await toolset.list_tools()}
        started = child_pids() - before
        assert len(started) == 1
        assert toolset.connected
    assert not toolset.connected
    assert child_pids() <= before
    assert not any(alive(pid) for pid in started)
    assert asyncio.all_tasks() <= tasks  # the owner task and the SDK's tasks ended
    await toolset.aclose()  # idempotent
    # a tool kept from the closed toolset fails cleanly
    outcome = await Toolkit([tools["echo"]]).execute(use("echo", text="x"))
    assert outcome.result.is_error
    assert "MCP server 'demo' is closed" in outcome.result.text
    async with toolset:  # and the toolset opens again
        assert len(child_pids() - before) == 1
        assert (await Toolkit(await toolset.list_tools()).execute(use("echo", text="y"))).ok
    assert child_pids() <= before


async def test_list_tools_before_opening_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="is not open: use `async with toolset:`"):
        await demo_stdio().list_tools()


async def test_a_command_that_does_not_exist_raises_on_entering():
    toolset = MCPToolset.stdio("rxagent-no-such-mcp-server", connect_timeout=5)
    with pytest.raises(MCPConnectionError, match="'rxagent-no-such-mcp-server' could not connect"):
        await toolset.__aenter__()
    assert not toolset.connected
