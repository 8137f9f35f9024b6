"""Tools from an MCP server: the reference `mcp-server-time`, run over stdio.

`MCPToolset.stdio(command, args)` starts a Model Context Protocol server as a subprocess and
offers its tools to the agent like any other tool: the server's names (here with a prefix),
descriptions and input schemas. Needs `pip install 'rxagent[mcp]' mcp-server-time`.

Run it:

    python -m examples.mcp_tools
"""

import asyncio
import json
import sys

from rxagent import ModelOptions, Msg, ReActAgent, ToolSchema
from rxagent.testing import FunctionModel, Turn, tool_call
from rxagent.tools.mcp import MCPToolset

__all__ = ["main", "tell_time"]


def tell_time(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: ask the server for Tokyo's time, then read its JSON answer."""
    last = messages[-1]
    if last.role == "tool":
        now = json.loads(last.tool_results[0].text)
        return f"In {now['timezone']} it is {now['datetime'][11:16]}."
    return tool_call("time_get_current_time", timezone="Asia/Tokyo")


async def main() -> None:
    """Start the server, list its tools as the model sees them, and use one."""
    time = MCPToolset.stdio(
        sys.executable,
        ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        name="time",
        prefix="time",
        timeout=10,
    )
    agent = ReActAgent("clock", "You tell the time.", FunctionModel(tell_time), tools=[time])
    async with time, agent:
        print("the server offers:", sorted(t.name for t in await time.list_tools()))
        result = await agent.call("What time is it in Tokyo?")
    print(result.text)
    assert result.ok, result.error
    assert result.tools_used == ("time_get_current_time",)
    assert result.text.startswith("In Asia/Tokyo it is ")
    assert not time.connected  # the server process has stopped


if __name__ == "__main__":
    asyncio.run(main())
