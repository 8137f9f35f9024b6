"""MCPToolset over the SDK's in-memory transport, against a low-level server in this process.

Fast and deterministic: pagination, JSON-RPC errors, results that break the tool's output
schema, and closing with calls in flight.
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp.types as mcp_types
from mcp import MCPError
from mcp.client._memory import InMemoryTransport
from mcp.server import Server, ServerRequestContext
from mcp_helpers import use  # type: ignore[import-not-found]

from rxagent.errors import ErrorCode
from rxagent.tools import Toolkit
from rxagent.tools.mcp import MCPToolset

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    mcp_types.Tool(name="first", description="On page one.", input_schema=OBJECT),
    mcp_types.Tool(name="refuse", input_schema=OBJECT),
    mcp_types.Tool(
        name="bad_output",
        title="Breaks its output schema",
        input_schema=OBJECT,
        output_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    ),
    mcp_types.Tool(name="wait", input_schema=OBJECT),
]


def make_server(started: asyncio.Event) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        if params is None or params.cursor is None:  # two pages
            return mcp_types.ListToolsResult(tools=TOOLS[:1], next_cursor="page-2")
        return mcp_types.ListToolsResult(tools=TOOLS[1:])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        if params.name == "refuse":
            raise MCPError(code=-32602, message="arguments refused")
        if params.name == "bad_output":
            return mcp_types.CallToolResult(content=[], structured_content={"n": "x"})
        if params.name == "wait":
            started.set()
            await asyncio.Event().wait()
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=params.name)]
        )

    return Server("memory", on_list_tools=list_tools, on_call_tool=call_tool)


def memory_toolset(started: asyncio.Event, **options: Any) -> MCPToolset:
    server = make_server(started)
    return MCPToolset(
        lambda: InMemoryTransport(server), name="memory", transport="memory", **options
    )


async def test_pages_errors_and_broken_output():
    toolset = memory_toolset(asyncio.Event())
    assert repr(toolset) == "<MCPToolset 'memory' (memory)>"
    async with toolset:
        assert await toolset.__aenter__() is toolset  # entering again changes nothing
        tools = await toolset.list_tools()
        assert [t.name for t in tools] == ["first", "refuse", "bad_output", "wait"]
        assert [t.description for t in tools[:3]] == [
            "On page one.",
            "",
            "Breaks its output schema",
        ]
        kit = Toolkit(tools)
        assert (await kit.execute(use("first"))).result.output == "first"
        refused = await kit.execute(use("refuse"))
        assert refused.error_code is ErrorCode.TOOL_ERROR
        assert refused.result.text == (
            "MCP server 'memory' refused the call to 'refuse': arguments refused"
        )
        broken = await kit.execute(use("bad_output"))
        assert broken.error_code is ErrorCode.TOOL_ERROR
        assert broken.exception == "RuntimeError"
        assert "Invalid structured content returned by tool bad_output" in broken.result.text
        assert toolset.connected  # none of these broke the connection
    assert not toolset.connected


async def test_closing_fails_the_calls_in_flight():
    started = asyncio.Event()
    toolset = memory_toolset(started)
    async with toolset:
        kit = Toolkit(await toolset.list_tools())
        calls = [asyncio.create_task(kit.execute(use("wait", str(i)))) for i in range(2)]
        await started.wait()
    outcomes = await asyncio.gather(*calls)
    for outcome in outcomes:
        assert outcome.error_code is ErrorCode.TOOL_ERROR
        assert outcome.result.text == (
            "MCPConnectionError: MCP server 'memory' was closed during the call"
        )


async def test_per_call_timeout_gives_tool_timeout_and_cancels_the_call():
    started = asyncio.Event()
    async with memory_toolset(started, timeout=0.2) as toolset:
        kit = Toolkit(await toolset.list_tools())
        outcome = await kit.execute(use("wait"))
        assert started.is_set()
        assert outcome.error_code is ErrorCode.TOOL_TIMEOUT
        assert outcome.result.text == "Tool 'wait' timed out after 0.2s"
        assert (await kit.execute(use("first"))).ok
        assert toolset.connected
