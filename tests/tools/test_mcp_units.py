"""MCPToolset's pieces without a live server: options, names, argument checks, result mapping."""

from __future__ import annotations

import asyncio
import io
import re
import subprocess
import sys
from typing import Any

import mcp.types as mcp_types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import MCPError
from mcp_helpers import child_pids, demo_stdio, use  # type: ignore[import-not-found]

from rxagent.errors import ConfigurationError, ToolDefinitionError
from rxagent.messages import ImageBlock, TextBlock
from rxagent.tools import Toolkit, Toolset
from rxagent.tools._mcp_convert import argument_checker, offered_names, to_tool_result
from rxagent.tools.mcp import MCPConnectionError, MCPToolset, _errlog

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def server_tool(name: str, schema: dict[str, Any] | None = None, **extra: Any) -> mcp_types.Tool:
    return mcp_types.Tool(name=name, input_schema=schema or OBJECT, **extra)


# -- options -------------------------------------------------------------------------------------


def test_constructors_and_repr():
    stdio = MCPToolset.stdio("/usr/bin/mcp-thing", ["--flag"], {"KEY": "v"}, prefix="t")
    assert isinstance(stdio, Toolset)
    assert (stdio.name, stdio.transport, stdio.prefix) == ("mcp-thing", "stdio", "t")
    assert repr(stdio) == "<MCPToolset 'mcp-thing' (stdio)>"
    assert not stdio.connected
    http = MCPToolset.http("https://tools.example/mcp", allow=["a"], deny=["b"], timeout=3)
    assert (http.name, http.allow, http.deny, http.timeout) == (
        "https://tools.example/mcp",
        frozenset({"a"}),
        frozenset({"b"}),
        3.0,
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: MCPToolset.stdio(""), "command must be a program"),
        (lambda: MCPToolset.stdio("srv", "--flag"), r"write args=\['--flag'\]"),
        (lambda: MCPToolset.stdio("srv", allow="echo"), r"write allow=\['echo'\]"),
        (lambda: MCPToolset.stdio("srv", deny=[1]), "deny= takes a list of tool names"),  # type: ignore[list-item]
        (lambda: MCPToolset.stdio("srv", prefix=""), "prefix= must be a non-empty string"),
        (lambda: MCPToolset.http("ftp://x"), "url must be an http:// or https:// URL"),
    ],
)
def test_bad_options_are_configuration_errors(make: Any, message: str):
    with pytest.raises(ConfigurationError, match=message):
        make()


def test_bad_timeouts_are_tool_definition_errors():
    with pytest.raises(ToolDefinitionError, match="timeout must be a positive number"):
        MCPToolset.stdio("srv", timeout=0)
    with pytest.raises(ToolDefinitionError, match="timeout must be a positive number"):
        MCPToolset.http("http://127.0.0.1:1/mcp", connect_timeout=-1)


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "mcp.client.streamable_http", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'rxagent\[mcp\]'"):
        MCPToolset.stdio("mcp-server-time")


def test_stderr_of_a_stdio_server(monkeypatch: pytest.MonkeyPatch):
    mine = io.StringIO()
    assert _errlog(mine) is mine
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # no file descriptor: discard
    assert _errlog(None) == subprocess.DEVNULL  # type: ignore[comparison-overlap]


# -- names ---------------------------------------------------------------------------------------


def test_offered_names_prefix_and_invalid_characters():
    tools = [server_tool("files.read"), server_tool("files/write"), server_tool("ok")]
    offered = offered_names("S", tools, allow=None, deny=["ok"], prefix="fs")
    assert {n: t.name for n, t in offered.items()} == {
        "fs_files_read": "files.read",
        "fs_files_write": "files/write",
    }


def test_offered_names_errors():
    tools = [server_tool("a.b"), server_tool("a_b"), server_tool("x" * 64)]
    with pytest.raises(ToolDefinitionError, match=r"S has no tool 'zz' \(in deny=\)"):
        offered_names("S", tools, allow=None, deny=["zz"], prefix=None)
    with pytest.raises(ToolDefinitionError, match="would both be called 'a_b'"):
        offered_names("S", tools, allow=["a.b", "a_b"], deny=(), prefix=None)
    with pytest.raises(ToolDefinitionError, match="longer than the 64 characters"):
        offered_names("S", tools, allow=["x" * 64], deny=(), prefix="p")


# -- argument checks -----------------------------------------------------------------------------


def test_argument_checker_lists_problems_and_caps_them():
    schema = {
        "type": "object",
        "properties": {f"f{i}": {"type": "integer"} for i in range(12)},
        "required": ["f0"],
    }
    check = argument_checker(schema)
    assert check({"f0": 1}) == []
    problems = check({f"f{i}": "x" for i in range(12)})
    assert len(problems) == 11
    assert problems[-1] == "... and 2 more"
    nested = argument_checker(
        {"type": "object", "properties": {"p": {"type": "object", "required": ["x"]}}}
    )
    assert nested({"p": {}}) == ["p.x: Field required"]
    closed = argument_checker({"type": "object", "additionalProperties": False})
    assert closed({"z": 1}) == [
        "(arguments): Additional properties are not allowed ('z' was unexpected)"
    ]


def test_an_invalid_schema_checks_nothing():
    assert argument_checker({"type": "object", "properties": {"a": {"type": 5}}})({"a": 1}) == []


# -- results -------------------------------------------------------------------------------------


def result(*content: Any, **fields: Any) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=list(content), **fields)


def test_results_text_and_error():
    text = mcp_types.TextContent(type="text", text="a")
    assert to_tool_result(result(text, text)).output == "a\na"
    assert to_tool_result(result()).output == ""
    failed = to_tool_result(result(is_error=True))
    assert failed.is_error
    assert failed.output == "the tool failed without saying why"


def test_results_other_content_becomes_text_or_images():
    audio = mcp_types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav")
    link = mcp_types.ResourceLink(type="resource_link", name="doc", uri="file:///doc.md")
    described = mcp_types.ResourceLink(
        type="resource_link", name="doc", uri="file:///doc.md", description="The doc."
    )
    text = mcp_types.EmbeddedResource(
        type="resource",
        resource=mcp_types.TextResourceContents(uri="file:///a.txt", text="hello"),
    )
    png = mcp_types.EmbeddedResource(
        type="resource",
        resource=mcp_types.BlobResourceContents(
            uri="file:///a.png", blob="iVBO", mime_type="image/png"
        ),
    )
    blob = mcp_types.EmbeddedResource(
        type="resource", resource=mcp_types.BlobResourceContents(uri="file:///a.bin", blob="AA")
    )
    mapped = to_tool_result(result(audio, link, described, text, blob)).output
    assert mapped == "\n".join(
        [
            "[audio content (audio/wav) omitted: only text and images are passed on]",
            "[resource doc: file:///doc.md]",
            "[resource doc: file:///doc.md] The doc.",
            "[resource file:///a.txt]\nhello",
            "[resource file:///a.bin (binary) omitted: binary content]",
        ]
    )
    assert to_tool_result(result(png)).output == (ImageBlock(data="iVBO", media_type="image/png"),)
    caption = mcp_types.TextContent(type="text", text="a chart")
    assert to_tool_result(result(caption, png)).output == (
        TextBlock(text="a chart"),
        ImageBlock(data="iVBO", media_type="image/png"),
    )


# -- calls without a server ----------------------------------------------------------------------


async def test_a_json_rpc_error_is_an_error_result(monkeypatch: pytest.MonkeyPatch):
    toolset = MCPToolset.stdio("srv", name="srv")

    async def refuse(name: str, arguments: dict[str, Any]) -> Any:
        raise MCPError(code=-32602, message=f"Unknown tool: {name}")

    monkeypatch.setattr(toolset._client, "call_tool", refuse)
    made = toolset._tool("srv_gone", server_tool("gone"))
    answer = await made.fn({})
    assert answer.is_error
    assert answer.output == "MCP server 'srv' refused the call to 'gone': Unknown tool: gone"


async def test_connect_timeout_and_cancelled_opening_leave_no_process():
    before = child_pids()
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # never answers
    toolset = MCPToolset.stdio(silent[0], silent[1:], name="silent", connect_timeout=0.3)
    with pytest.raises(MCPConnectionError, match=r"'silent' could not connect: .*within 0\.3s"):
        await toolset.__aenter__()
    assert child_pids() <= before
    slow = MCPToolset.stdio(silent[0], silent[1:], name="silent")
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(slow.__aenter__(), 0.3)  # the opening is cancelled
    assert child_pids() <= before
    assert not slow.connected


def test_a_toolset_left_open_by_a_finished_loop_reconnects_on_the_next():
    toolset = demo_stdio()

    async def first() -> Toolkit:
        await toolset.__aenter__()  # never closed: `asyncio.run` cancels the owner task
        return Toolkit(await toolset.list_tools())

    kit = asyncio.run(first())
    outcome = asyncio.run(kit.execute(use("echo", text="next loop")))
    assert outcome.ok
    assert outcome.result.output == "next loop"
    asyncio.run(toolset.aclose())
    assert not toolset.connected


@given(
    names=st.lists(st.text("ab./_-", min_size=1, max_size=6), max_size=6, unique=True),
    data=st.data(),
    prefix=st.none() | st.sampled_from(["p", "srv-1"]),
)
def test_offered_names_invariants(names: list[str], data: st.DataObject, prefix: str | None):
    tools = [server_tool(name) for name in names]
    allow = data.draw(
        st.none() | st.lists(st.sampled_from(names), unique=True) if names else st.none()
    )
    deny = data.draw(st.lists(st.sampled_from(names), unique=True) if names else st.just([]))
    wanted = [n for n in names if (allow is None or n in allow) and n not in deny]
    made_valid = [re.sub(r"[^A-Za-z0-9_-]", "_", f"{prefix}_{n}" if prefix else n) for n in wanted]
    if len(set(made_valid)) < len(made_valid):  # two names clash once made valid
        with pytest.raises(ToolDefinitionError, match="would both be called"):
            offered_names("S", tools, allow=allow, deny=deny, prefix=prefix)
        return
    offered = offered_names("S", tools, allow=allow, deny=deny, prefix=prefix)
    assert [t.name for t in offered.values()] == wanted  # the server's order, each once
    for name in offered:
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name)
        assert prefix is None or name.startswith(f"{prefix}_")
