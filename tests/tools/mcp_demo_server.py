"""An MCP server for the MCP toolset tests, made with the official SDK's `MCPServer`.

- `python mcp_demo_server.py stdio` serves over stdin/stdout.
- `python mcp_demo_server.py http [PORT]` binds 127.0.0.1 on PORT (default: a free one), prints
  the port as its first line on stdout, then serves streamable HTTP at `/mcp` until terminated.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from typing import Literal

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel

# a 1x1 transparent PNG
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)

server = MCPServer("demo", log_level="WARNING")


class Point(BaseModel):
    x: int
    y: int


class Forecast(BaseModel):
    city: str
    days: int
    sky: str


@server.tool()
def echo(text: str) -> str:
    """Repeat the text."""
    return text


@server.tool()
def forecast(city: str, days: int = 1) -> Forecast:
    """Forecast the weather (structured output)."""
    return Forecast(city=city, days=days, sky="clear")


@server.tool()
def measure() -> CallToolResult:
    """Measure the temperature (structured content only, no text)."""
    return CallToolResult(content=[], structured_content={"celsius": 21.5, "sensor": "hall"})


@server.tool()
def chart() -> CallToolResult:
    """A chart: an image and its data as structured content."""
    image = Image(data=PIXEL, format="png").to_image_content()
    return CallToolResult(content=[image], structured_content={"points": [1, 2]})


@server.tool()
def pixel(caption: str = "") -> list[Image | str]:
    """Return a tiny image, with a caption."""
    return [caption or "a pixel", Image(data=PIXEL, format="png")]


@server.tool()
def plot(point: Point, color: Literal["red", "blue"], tags: list[str]) -> str:
    """Plot a point (a nested schema, to test argument checks)."""
    return f"{color} point at {point.x},{point.y} tagged {','.join(tags)}"


@server.tool()
def fail(message: str) -> str:
    """Fail with the message (an isError result)."""
    raise ToolError(message)


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def whoami(ctx: Context) -> str:
    """The Authorization header of the HTTP request (over stdio: "stdio")."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    return "stdio" if headers is None else str(headers.get("authorization", "none"))


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@server.tool()
async def hang(port: int) -> str:
    """Tell 127.0.0.1:port that the call started, then never answer."""
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"{os.getpid()}\n".encode())
    await writer.drain()
    await asyncio.Event().wait()
    return "unreachable"


async def serve_http(port: int) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)  # connections wait in the backlog until uvicorn accepts them
    print(sock.getsockname()[1], flush=True)
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1] == "http":
        asyncio.run(serve_http(int(sys.argv[2]) if len(sys.argv) > 2 else 0))
    else:
        server.run("stdio")
