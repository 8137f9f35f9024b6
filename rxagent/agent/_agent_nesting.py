"""The nesting methods of `ReActAgent`: its runs inside other runs, and the agent as a tool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from rxagent.agent._approval import Decision
from rxagent.agent._loop import run_observable
from rxagent.agent._nesting import ToolOutput, agent_tool
from rxagent.agent._start import RunArgs, new_run

if TYPE_CHECKING:
    import asyncio

    from reactivex import Observable

    from rxagent.agent._agent import AgentInput, ReActAgent
    from rxagent.context import Principal
    from rxagent.events import BaseEvent
    from rxagent.tools import Tool

__all__ = ["AgentNesting"]


class AgentNesting:
    """The nesting methods of `ReActAgent` (its base class; see `ReActAgent`)."""

    name: str

    def nested_stream(
        self,
        msg: AgentInput,
        *,
        session_id: str,
        parent_path: tuple[str, ...],
        principal: Principal | None = None,
        gate: asyncio.Event | None = None,
    ) -> Observable[BaseEvent]:
        """The run nested in another run: its events have `path == (*parent_path, name)`.

        What `as_tool()` and the orchestrators of `rxagent.multiagent` subscribe to; runs of
        one nested session queue behind each other instead of failing as busy. With `gate`
        (the outermost consumer's), the run waits while the consumer is full.
        """
        args = RunArgs(
            msg, session_id, None, None, None, None, None, True, principal=principal,
            parent_path=parent_path,
        )  # fmt: skip
        return run_observable(lambda: new_run(cast("ReActAgent", self), args, gate))

    def nested_decision_stream(
        self,
        approval_id: str,
        approved: bool,
        reason: str | None,
        *,
        session_id: str,
        parent_path: tuple[str, ...],
        principal: Principal | None = None,
    ) -> Observable[BaseEvent]:
        """Record a decision on a parked call, nested in another run (what `as_tool()` uses).

        The last decision of the session's batch resumes it: that run's events have
        `path == (*parent_path, name)`. Earlier ones complete without events.
        """
        decision = Decision(approval_id, approved=approved, reason=None if approved else reason)
        args = RunArgs(
            None, session_id, None, None, None, None, None, True, decision=decision,
            principal=principal, parent_path=parent_path,
        )  # fmt: skip
        return run_observable(lambda: new_run(cast("ReActAgent", self), args, None))

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        input_type: object = str,
        output: ToolOutput = "text",
    ) -> Tool[[dict[str, Any]], Any]:
        """This agent as a tool of another agent: it runs nested in the caller's run.

        The tool takes one argument, `input` (of `input_type`, a text by default), and runs
        this agent in its own session nested under the caller's (`<session>/<name>`). Its
        events appear in the caller's stream as they happen, in order, at
        `path == (*caller_path, name)`; an interrupt of the caller reaches it. No side
        effects: calling `as_tool()` twice is harmless.

        Args:
            name: The tool's name (default: the agent's).
            description: What the model is told the tool does.
            input_type: The type of `input` (`str`, or a pydantic model, sent as JSON).
            output: What the tool returns: `"text"` (the reply), `"output"` (the structured
                `AgentResult.output`), or a function of the `AgentResult`.

        Example:
            ```python
            from rxagent import ReActAgent
            from rxagent.testing import ScriptedModel, tool_call

            poet = ReActAgent("poet", "You write haiku.", ScriptedModel(["Old pond, a frog"]))
            host = ReActAgent(
                "host",
                "Delegate poems.",
                ScriptedModel([tool_call("poet", input="a haiku"), "Here: Old pond, a frog"]),
                tools=[poet.as_tool(description="Writes haiku.")],
            )
            result = host.call_sync("A haiku, please")
            assert result.text == "Here: Old pond, a frog" and result.tools_used == ("poet",)
            ```
        """
        agent = cast("ReActAgent", self)
        return agent_tool(agent, name, description, input_type=input_type, output=output)
