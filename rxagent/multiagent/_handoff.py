"""`handoff(target)`: a tool that hands the conversation over to another agent.

When the model calls it, a `HandoffEvent` marks the switch and the target runs nested in the
tool call with the user's current turn; its reply is the run's reply (the tool ends the run).
The session records the handoff (`ROUTE_KEY` in its state), so the next user message goes
straight to the target, through the same tool, without asking the model. The target hands
the conversation back with a handoff to an agent above it in the path: the route is cleared
and that agent's model takes over again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rxagent.agent import ROUTE_KEY, AgentLike, run_nested
from rxagent.context import RunContext, current_run
from rxagent.errors import ConfigurationError
from rxagent.events import BaseEvent, HandoffEvent
from rxagent.tools import Tool

if TYPE_CHECKING:
    from rxagent.messages import Msg

__all__ = ["handoff"]

_PARAMETERS = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "description": "Why the conversation moves, in one line."}
    },
}


def handoff(
    target: AgentLike, description: str | None = None, *, name: str | None = None
) -> Tool[[dict[str, Any]], Any]:
    """A tool that hands the conversation over to `target` (named `transfer_to_<target>`).

    Args:
        target: The agent (or team) that takes the conversation.
        description: When the model should call it (default: "Hand the conversation to ...").
        name: The tool's name (default: `transfer_to_<target name>`).

    Raises:
        ConfigurationError: When `target` is not an agent or a team.

    Example:
        ```python
        from rxagent import HandoffEvent, ReActAgent
        from rxagent.multiagent import handoff
        from rxagent.testing import ScriptedModel, tool_call

        billing = ReActAgent("billing", "You do refunds.", ScriptedModel(["Refunded.", "Done."]))
        triage = ReActAgent(
            "triage",
            "Route the user.",
            ScriptedModel([tool_call("transfer_to_billing", reason="refund")]),
            tools=[handoff(billing, "Refunds and invoices.")],
        )
        assert triage.call_sync("I want a refund", session_id="s").text == "Refunded."
        # the session stays with billing: the next message goes to it directly
        assert triage.call_sync("Thanks!", session_id="s").text == "Done."
        ```
    """
    if not isinstance(target, AgentLike):
        raise ConfigurationError(f"handoff() takes an agent or a team, got {target!r}")
    tool_name = name if name is not None else f"transfer_to_{target.name}"
    about = (
        description if description is not None else f"Hand the conversation over to {target.name}."
    )

    async def transfer(arguments: dict[str, Any]) -> str:
        ctx = current_run()
        reason = str(arguments.get("reason") or "")
        call = ctx.tool_call
        call_id = call.id if call is not None else None
        if target.name in ctx.path[:-1]:  # back to an agent above: it takes over again
            ctx.emit(
                HandoffEvent,
                from_agent=ctx.agent,
                to_agent=target.name,
                reason=reason,
                tool_call_id=call_id,
            )
            ctx.extra.pop(ROUTE_KEY, None)
            ctx.stop_after_tool()
            return f"Handed the conversation back to {target.name}."
        routed = ctx.extra.get(ROUTE_KEY) == tool_name and not reason
        ctx.emit(
            HandoffEvent,
            from_agent=ctx.agent,
            to_agent=target.name,
            reason=reason or ("the conversation is with " + target.name if routed else ""),
            tool_call_id=call_id,
        )
        ctx.extra[ROUTE_KEY] = tool_name
        child_path = (*ctx.path, target.name)
        handed_back: list[BaseEvent] = []

        def watch(event: BaseEvent) -> None:
            if (
                isinstance(event, HandoffEvent)
                and event.path == child_path
                and event.to_agent == ctx.agent
            ):
                handed_back.append(event)

        result = await run_nested(target, _current_turn(ctx), ctx, watch=watch)
        if handed_back:  # the target gave the conversation back: this agent's model goes on
            ctx.extra.pop(ROUTE_KEY, None)
            return f"{target.name} handed the conversation back. It said: {result.text}"
        ctx.stop_after_tool()
        return result.text

    return Tool.from_schema(tool_name, about, _PARAMETERS, transfer)


def _current_turn(ctx: RunContext) -> list[Msg]:
    """The user's messages of the current turn (after the previous assistant message)."""
    memory = ctx.memory
    end = len(memory)
    while end and memory[end - 1].role != "user":
        end -= 1
    start = end
    while start and memory[start - 1].role == "user":
        start -= 1
    return list(memory[start:end])
