"""Tool groups: offered while active, switched per session by the model, kept in AgentState."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import PreReasoningEvent, ReActAgent
from rxagent.errors import ToolDefinitionError
from rxagent.messages import ToolUseBlock
from rxagent.testing import ScriptedModel, tool_call
from rxagent.tools import GroupChange, Tool, Toolkit, tool


@tool(group="git")
def git_status() -> str:
    """Show the working tree status."""
    return "clean"


@tool(group="git")
def git_log(limit: int = 3) -> str:
    """Show recent commits."""
    return f"{limit} commits"


@tool(group="web")
def fetch(url: str) -> str:
    """Fetch a page."""
    return f"page {url}"


@tool
def echo(text: str) -> str:
    """Echo text."""
    return text


def kit(**kwargs: Any) -> Toolkit:
    return Toolkit(
        [echo, git_status, git_log, fetch],
        groups={"git": "Work with the repository.", "web": "Browse the web."},
        **kwargs,
    )


def names(toolkit: Toolkit, active: Any = None) -> list[str]:
    return [s.name for s in toolkit.schemas(active)]


def test_all_groups_are_active_by_default_and_active_groups_narrows_them() -> None:
    assert names(kit()) == ["echo", "git_status", "git_log", "fetch"]
    assert names(kit(active_groups=["web"])) == ["echo", "fetch"]
    assert names(kit(active_groups=["web"]), ["git"]) == ["echo", "git_status", "git_log"]
    assert names(kit(), ()) == ["echo"]
    assert kit(active_groups=["web"]).default_groups == ("web",)


def test_groups_lists_declared_groups_and_groups_of_tools() -> None:
    @tool(group="math")
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    toolkit = Toolkit([add], groups={"git": "Repo."})
    assert dict(toolkit.groups()) == {"git": "Repo.", "math": ""}
    assert toolkit.active(["math", "nope", "math"]) == ("math",)


def test_unknown_default_groups_and_bad_group_names_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match=r"unknown tool group 'gti'.*known groups: git"):
        kit(active_groups=["gti"])
    with pytest.raises(ToolDefinitionError, match=r"group must be None or a name"):
        tool(echo.fn, group="has space")
    assert tool(git_status, group="vcs").group == "vcs"


def test_the_group_tool_lists_groups_and_which_are_active() -> None:
    toolkit = kit(active_groups=["git"], group_tool=True)
    schema = toolkit.schemas()[-1]
    assert schema.name == "manage_tool_groups"
    assert "- git (active): Work with the repository." in schema.description
    assert "- web: Browse the web." in schema.description
    assert schema.parameters["properties"]["activate"]["items"]["enum"] == ("git", "web")
    assert "manage_tool_groups" not in names(Toolkit([echo], group_tool=True))


async def test_the_group_tool_returns_a_change_and_the_tools_it_adds() -> None:
    toolkit = kit(active_groups=(), group_tool=True)
    call = ToolUseBlock(id="1", name="manage_tool_groups", input={"activate": ["git"]})
    outcome = await toolkit.execute(call)
    assert outcome.ok
    assert outcome.group_change == GroupChange(activate=("git",))
    assert outcome.result.output == (
        "Active tool groups: git. Tools now available: git_status, git_log."
    )
    assert toolkit.switch_groups(None, outcome.group_change) == ("git",)
    off = ToolUseBlock(id="2", name="manage_tool_groups", input={"deactivate": ["git"]})
    outcome = await toolkit.execute(off, active_groups=["git"])
    assert outcome.result.output == "Active tool groups: none."


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"activate": ["gti"]}, "activate: unknown group 'gti'; groups: git, web"),
        ({"activate": "git"}, "activate: Input should be a list of group names"),
        ({"activate": ["git"], "deactivate": ["git"]}, "'git': cannot be activated and deact"),
        ({"enable": ["git"]}, "enable: Extra inputs are not permitted"),
    ],
)
async def test_invalid_group_switches_are_error_results(
    arguments: dict[str, Any], problem: str
) -> None:
    toolkit = kit(group_tool=True)
    outcome = await toolkit.execute(
        ToolUseBlock(id="1", name="manage_tool_groups", input=arguments)
    )
    assert outcome.result.is_error
    assert outcome.group_change is None
    assert problem in outcome.result.text


async def test_a_call_to_a_tool_of_an_inactive_group_is_refused() -> None:
    with_switch = kit(active_groups=(), group_tool=True)
    outcome = await with_switch.execute(ToolUseBlock(id="1", name="fetch", input={"url": "x"}))
    assert outcome.result.is_error
    assert outcome.result.text == (
        "Tool 'fetch' is in tool group 'web', not active now; activate it with "
        "manage_tool_groups first."
    )
    plain = kit(active_groups=())
    outcome = await plain.execute(ToolUseBlock(id="1", name="fetch", input={"url": "x"}))
    assert outcome.result.text.endswith("available tools: echo.")
    outcome = await plain.execute(ToolUseBlock(id="2", name="nope", input={}))
    assert outcome.result.text == "Tool 'nope' not found. Available tools: echo."
    ok = await plain.execute(
        ToolUseBlock(id="3", name="fetch", input={"url": "x"}), active_groups=["web"]
    )
    assert ok.result.output == "page x"


def test_a_tool_may_not_shadow_the_group_tool() -> None:
    def manage_tool_groups() -> str:
        """Pretend."""
        return ""

    with pytest.raises(ToolDefinitionError, match=r"already in this toolkit"):
        Toolkit([manage_tool_groups], group_tool=True)
    assert "manage_tool_groups" in Toolkit([manage_tool_groups])  # without the group tool: fine


def test_group_change_applies_in_order() -> None:
    change = GroupChange(activate=("b", "a"), deactivate=("c",))
    assert change.apply(("c", "a")) == ("a", "b")
    toolkit = Toolkit(groups={"a": "", "b": "", "c": ""})
    assert toolkit.switch_groups(("c",), change) == ("a", "b")  # in declared order


def test_schema_tools_and_presets_keep_their_group() -> None:
    made = Tool.from_schema("t", "T.", {"type": "object"}, lambda a: "", group="web")
    assert made.group == "web"
    assert made.with_preset(x=1).group == "web"
    assert git_log.with_preset(limit=1).group == "git"


# -- per session, in an agent --------------------------------------------------------------------


async def test_the_model_switches_groups_and_the_session_keeps_them() -> None:
    toolkit = kit(active_groups=(), group_tool=True)
    model = ScriptedModel(
        [
            [tool_call("git_status")],  # not offered yet: an error result
            [tool_call("manage_tool_groups", activate=["git"])],
            [tool_call("git_status")],
            "clean tree",
            "again",
        ]
    )
    agent = ReActAgent("g", "", model, tools=toolkit)
    offered: list[list[str]] = []
    async for event in agent.events("status?", session_id="s1"):
        if isinstance(event, PreReasoningEvent):
            offered.append([t.name for t in event.tools])
    assert offered[0] == ["echo", "manage_tool_groups"]
    assert offered[1] == ["echo", "manage_tool_groups"]
    assert offered[2] == ["echo", "git_status", "git_log", "manage_tool_groups"]
    stored = await agent.store.load("g", "s1")
    assert stored is not None
    assert stored.state.active_groups == ("git",)
    results = [m.content[0] for m in stored.state.memory if m.role == "tool"]
    assert [r.is_error for r in results] == [True, False, False]  # type: ignore[union-attr]
    # the next run of the session starts with git active; another session has the defaults
    events = [e async for e in agent.events("more", session_id="s1")]
    first = next(e for e in events if isinstance(e, PreReasoningEvent))
    assert [t.name for t in first.tools][:3] == ["echo", "git_status", "git_log"]


async def test_two_switches_in_one_parallel_batch_both_apply() -> None:
    toolkit = kit(active_groups=(), group_tool=True)
    model = ScriptedModel(
        [
            [
                tool_call("manage_tool_groups", activate=["git"]),
                tool_call("manage_tool_groups", activate=["web"]),
            ],
            "done",
        ]
    )
    agent = ReActAgent("g2", "", model, tools=toolkit)
    await agent.call("both", session_id="s")
    stored = await agent.store.load("g2", "s")
    assert stored is not None
    assert stored.state.active_groups == ("git", "web")


def test_schemas_are_cached_per_active_set_and_the_cache_stays_small() -> None:
    groups = {f"g{i}": "" for i in range(7)}
    toolkit = Toolkit(groups=groups)
    subsets = [[g for j, g in enumerate(groups) if mask >> j & 1] for mask in range(128)]
    for subset in subsets:
        assert toolkit.schemas(subset) == ()
    assert toolkit.schemas(["g1"]) is toolkit.schemas(["g1"])


async def test_not_found_lists_the_group_tool_with_the_offered_tools() -> None:
    toolkit = kit(active_groups=["web"], group_tool=True)
    outcome = await toolkit.execute(ToolUseBlock(id="1", name="nope", input={}))
    assert outcome.result.text == (
        "Tool 'nope' not found. Available tools: echo, fetch, manage_tool_groups."
    )
