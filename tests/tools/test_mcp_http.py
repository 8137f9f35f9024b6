"""MCPToolset over streamable HTTP, against the demo server started on 127.0.0.1 (a free port)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from mcp_helpers import Beacon, demo_http_server, use  # type: ignore[import-not-found]

from rxagent.errors import ErrorCode
from rxagent.messages import ImageBlock
from rxagent.tools import Toolkit
from rxagent.tools.mcp import MCPConnectionError, MCPToolset

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def url() -> AsyncIterator[str]:
    async with demo_http_server() as (_, address):
        yield address


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kit(url: str) -> AsyncIterator[Toolkit]:
    toolset = MCPToolset.http(
        url,
        {"Authorization": "Bearer s3cret"},
        allow=["echo", "forecast", "pixel", "whoami", "fail", "hang"],
        prefix="demo",
    )
    async with Toolkit([toolset]) as opened:
        yield opened


async def test_tools_are_listed_with_prefix_and_allow(kit: Toolkit):
    assert set(kit.names()) == {
        "demo_echo",
        "demo_forecast",
        "demo_pixel",
        "demo_whoami",
        "demo_fail",
        "demo_hang",
    }


async def test_calls_and_results(kit: Toolkit):
    echo = await kit.execute(use("demo_echo", text="over http"))
    assert echo.ok
    assert echo.result.output == "over http"
    forecast = await kit.execute(use("demo_forecast", city="Lima", days=3))
    assert json.loads(forecast.result.text) == {"city": "Lima", "days": 3, "sky": "clear"}
    pixel = await kit.execute(use("demo_pixel"))
    assert isinstance(pixel.result.output[1], ImageBlock)
    failed = await kit.execute(use("demo_fail", message="nope"))
    assert failed.error_code is ErrorCode.TOOL_ERROR
    assert failed.result.text.endswith("nope")


async def test_headers_are_sent_with_every_request(kit: Toolkit):
    outcome = await kit.execute(use("demo_whoami"))
    assert outcome.result.output == "Bearer s3cret"


async def test_concurrent_calls(kit: Toolkit):
    outcomes = await asyncio.gather(
        *(kit.execute(use("demo_echo", str(i), text=str(i))) for i in range(6))
    )
    assert [o.result.output for o in outcomes] == [str(i) for i in range(6)]


async def test_server_that_dies_mid_call_gives_tool_error_and_close_is_clean():
    async with demo_http_server() as (process, address), Beacon() as beacon:
        toolset = MCPToolset.http(address, name="short-lived")
        async with toolset:
            kit = Toolkit(await toolset.list_tools())
            assert (await kit.execute(use("echo", text="up"))).ok
            call = asyncio.create_task(kit.execute(use("hang", port=beacon.port)))
            assert await beacon.started == process.pid
            process.kill()
            outcome = await call
            assert outcome.error_code is ErrorCode.TOOL_ERROR
            assert outcome.exception == "MCPConnectionError"
            assert "MCP server 'short-lived'" in outcome.result.text
            await process.wait()
            # the server is gone: the next call tries to reconnect, and says it could not
            later = await kit.execute(use("echo", text="down"))
            assert later.error_code is ErrorCode.TOOL_ERROR
            assert "MCP server 'short-lived' could not connect" in later.result.text
            port = int(address.split(":")[2].split("/")[0])
            async with demo_http_server(port) as (restarted, _):  # back on the same address
                again = await kit.execute(use("pid"))
                assert again.ok
                assert int(again.result.text) == restarted.pid
        assert not toolset.connected


async def test_nothing_listening_raises_on_entering():
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    toolset = MCPToolset.http(f"http://127.0.0.1:{port}/mcp", connect_timeout=10)
    with pytest.raises(MCPConnectionError, match="could not connect") as info:
        await toolset.__aenter__()
    assert "ConnectError" in str(info.value)
    await toolset.aclose()
