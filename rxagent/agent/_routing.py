"""Routing: a session whose conversation was handed off goes straight to its handoff tool.

A handoff tool (`rxagent.multiagent.handoff`) records its own name under `ROUTE_KEY` in the
session's `extra` state. The next run of that session with new input calls that tool first,
without asking the model, so the user's message reaches the agent the conversation is with.
The call is an ordinary tool call in the stream and in memory (PreActing, PostActing), so a
routed turn keeps the event protocol and memory stays pair-consistent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from rxagent._fast import trusted
from rxagent.agent._acting import act
from rxagent.messages import Msg, ToolUseBlock

if TYPE_CHECKING:
    from rxagent.agent._run import Run

__all__ = ["ROUTE_KEY", "route"]

ROUTE_KEY: Final = "rxagent.route"
"""The key in `AgentState.extra` naming the tool a session's next input is routed to."""


async def route(run: Run) -> None:
    """Call the session's route tool with the run's input, if the session has one.

    Nothing happens for a run without input (it continues the conversation where it is) or
    when the routed tool is no longer in the agent's toolkit.
    """
    name = run.extra.get(ROUTE_KEY)
    if not run.inputs or not isinstance(name, str) or run.agent.toolkit.get(name) is None:
        return
    call = ToolUseBlock(id=run.next_call_id(), name=name, input={})
    run.memory.append(trusted(Msg, role="assistant", content=(call,)))
    await act(run, [call], None)
    if not run.outcome.ended:  # the tool did not end the run: the model takes it from here
        run.end_step()
