"""Helpers for the MCP toolset tests: the demo server, child processes, a call beacon."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from rxagent.messages import ToolUseBlock
from rxagent.tools.mcp import MCPToolset

DEMO = Path(__file__).with_name("mcp_demo_server.py")


def demo_stdio(**options: Any) -> MCPToolset:
    """The demo server over stdio."""
    return MCPToolset.stdio(sys.executable, [str(DEMO), "stdio"], name="demo", **options)


def use(name: str, call_id: str = "call_1", **arguments: Any) -> ToolUseBlock:
    return ToolUseBlock(id=call_id, name=name, input=arguments)


def child_pids() -> set[int]:
    """The processes whose parent is this one (zombies included: they are not reaped yet)."""
    me = os.getpid()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended meanwhile
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after it
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@asynccontextmanager
async def demo_http_server(
    port: int = 0,
) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """Start the demo server over streamable HTTP on 127.0.0.1; yield it and its MCP URL."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(DEMO), "http", str(port), stdout=asyncio.subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        port = int((await process.stdout.readline()).decode())
        yield process, f"http://127.0.0.1:{port}/mcp"
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


class Beacon:
    """A local TCP listener the demo server's `hang` tool reports to once its call started."""

    def __init__(self) -> None:
        self.started: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    @property
    def port(self) -> int:
        assert self._server is not None
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def __aenter__(self) -> Beacon:
        self._server = await asyncio.start_server(self._connected, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        for writer in self._writers:
            writer.close()
        self._server.close()
        await self._server.wait_closed()

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        line = await reader.readline()
        if not self.started.done():
            self.started.set_result(int(line))
