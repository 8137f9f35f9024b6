"""Permissions as a hook: a tool taken off the request cannot run, even if the model calls it.

A `PreReasoningEvent` hook decides which tools a request offers (here: who the caller is, from
the run's `deps`). A call to a tool that was not offered in that request gets an error result,
"Tool 'x' is not available in this step", and the tool never runs, so a hook is a permission.

Run it:

    python -m examples.tool_permissions
"""

import asyncio
from dataclasses import dataclass

from rxagent import (
    ModelOptions,
    Msg,
    PreReasoningEvent,
    ReActAgent,
    ToolSchema,
    current_run,
    hook,
    tool,
)
from rxagent.testing import FunctionModel, Turn, tool_call

__all__ = ["Caller", "main"]

deleted: list[str] = []


@dataclass(frozen=True)
class Caller:
    """Who is asking."""

    name: str
    admin: bool


@tool
def delete_branch(name: str) -> str:
    """Delete a git branch.

    Args:
        name: The branch.
    """
    deleted.append(name)
    return f"deleted {name}"


@tool
def list_branches() -> str:
    """List the git branches."""
    return "main, old-feature"


@hook(PreReasoningEvent, priority=10)
def admins_only(event: PreReasoningEvent) -> PreReasoningEvent | None:
    """Offer `delete_branch` to admins only."""
    if current_run().dep(Caller).admin:
        return None
    return event.replace(tools=[t for t in event.tools if t.name != "delete_branch"])


def eager(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play a model that deletes the branch whatever it was offered."""
    last = messages[-1]
    if last.role == "tool":
        return last.tool_results[0].text
    return tool_call("delete_branch", name="old-feature")


async def main() -> None:
    """The same request from a guest and from an admin."""
    agent = ReActAgent(
        "git", "", FunctionModel(eager), tools=[delete_branch, list_branches], hooks=[admins_only]
    )
    guest = await agent.call("Delete old-feature.", deps=[Caller("ann", admin=False)])
    print("guest:", repr(guest.text), "ran:", guest.tools_used)
    admin = await agent.call("Delete old-feature.", deps=[Caller("bob", admin=True)])
    print("admin:", repr(admin.text), "ran:", admin.tools_used)
    assert deleted == ["old-feature"]  # once: for the admin


if __name__ == "__main__":
    asyncio.run(main())
