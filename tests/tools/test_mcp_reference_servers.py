"""MCPToolset against the reference servers `mcp-server-time` and `mcp-server-git`, over stdio.

Each server is started once for the module (a module-scoped loop and toolkit).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp_helpers import child_pids, use  # type: ignore[import-not-found]

from rxagent.errors import ErrorCode, ToolDefinitionError
from rxagent.tools import Toolkit
from rxagent.tools.mcp import MCPToolset

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module", autouse=True)
def _servers_installed() -> None:
    """Skip without the reference servers (they come with the dev extra); under CI=true, fail."""
    if shutil.which("mcp-server-time") and shutil.which("mcp-server-git"):
        return
    reason = "the reference MCP servers are not installed: pip install -e '.[dev]'"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def time_kit() -> AsyncIterator[Toolkit]:
    toolset = MCPToolset.stdio(
        "mcp-server-time", ["--local-timezone", "UTC"], prefix="time", deny=["convert_time"]
    )
    async with Toolkit([toolset]) as kit:
        yield kit


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repo")
    git = ["git", "-C", str(path), "-c", "user.name=Ada", "-c", "user.email=ada@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (path / "notes.txt").write_text("first\n")
    subprocess.run([*git, "add", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "Add the notes"], check=True)
    (path / "notes.txt").write_text("first\nsecond\n")
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def git_kit(repo: Path) -> AsyncIterator[Toolkit]:
    toolset = MCPToolset.stdio(
        "mcp-server-git", ["--repository", str(repo)], allow=["git_status", "git_log", "git_add"]
    )
    async with Toolkit([toolset]) as kit:
        yield kit


async def test_time_tools_are_listed_with_the_servers_schemas(time_kit: Toolkit):
    assert time_kit.names() == ("time_get_current_time",)  # prefixed; convert_time denied
    (schema,) = time_kit.schemas()
    assert schema.parameters["required"] == ("timezone",)
    assert schema.parameters["properties"]["timezone"]["type"] == "string"
    assert "IANA timezone" in schema.parameters["properties"]["timezone"]["description"]
    assert schema.description.startswith("Get current time")


async def test_time_structured_content_becomes_json(time_kit: Toolkit):
    outcome = await time_kit.execute(use("time_get_current_time", timezone="Europe/Paris"))
    assert outcome.ok, outcome.result.text
    data = json.loads(outcome.result.text)
    assert data["timezone"] == "Europe/Paris"
    assert set(data) == {"timezone", "datetime", "day_of_week", "is_dst"}


async def test_time_is_error_result_is_a_tool_error(time_kit: Toolkit):
    outcome = await time_kit.execute(use("time_get_current_time", timezone="Mars/Olympus"))
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.result.is_error
    assert "Invalid timezone" in outcome.result.text


async def test_schema_violations_are_listed_by_field(time_kit: Toolkit):
    wrong_type = await time_kit.execute(use("time_get_current_time", timezone=3))
    assert wrong_type.error_code is ErrorCode.TOOL_ERROR
    assert wrong_type.result.text.startswith("Invalid arguments for tool 'time_get_current_time'")
    assert "timezone: " in wrong_type.result.text
    missing = await time_kit.execute(use("time_get_current_time"))
    assert missing.result.is_error
    assert "timezone: Field required" in missing.result.text


async def test_concurrent_calls_share_the_connection(time_kit: Toolkit):
    zones = ["UTC", "Asia/Tokyo", "America/New_York", "Europe/London"]
    outcomes = await asyncio.gather(
        *(
            time_kit.execute(use("time_get_current_time", str(i), timezone=z))
            for i, z in enumerate(zones)
        )
    )
    assert [json.loads(o.result.text)["timezone"] for o in outcomes] == zones
    assert [o.result.id for o in outcomes] == ["0", "1", "2", "3"]


async def test_git_status_and_log_in_a_temporary_repository(git_kit: Toolkit, repo: Path):
    assert git_kit.names() == ("git_status", "git_add", "git_log")  # the server's order
    status = await git_kit.execute(use("git_status", repo_path=str(repo)))
    assert status.ok
    assert "notes.txt" in status.result.text
    log = await git_kit.execute(use("git_log", repo_path=str(repo), max_count=1))
    assert log.ok
    assert "Add the notes" in log.result.text
    assert "Ada" in log.result.text


async def test_git_denied_tool_is_not_found(git_kit: Toolkit, repo: Path):
    outcome = await git_kit.execute(use("git_reset", repo_path=str(repo)))
    assert outcome.result.is_error
    assert outcome.result.text.startswith("Tool 'git_reset' not found")


async def test_unknown_allowed_name_fails_the_opening_and_stops_the_server():
    before = child_pids()
    kit = Toolkit([MCPToolset.stdio("mcp-server-time", allow=["get_current_tiem"])])
    with pytest.raises(ToolDefinitionError, match="has no tool 'get_current_tiem'") as info:
        await kit.open()
    assert "its tools: get_current_time, convert_time" in str(info.value)
    assert kit.names() == ()
    assert child_pids() <= before
