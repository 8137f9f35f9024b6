"""A supervisor and two workers: the workers are its tools, their runs nested in its stream.

`Supervisor` is a `ReActAgent` whose workers are offered as tools (`worker.as_tool()`). When its
model calls both in one response they run at once, each in its own session nested under the
supervisor's (`<session>/<worker>`), and every event of their runs arrives in the supervisor's
stream as it happens, with `path == ("lead", worker)`, inside the tool call's Pre/PostActing.

Run it:

    python -m examples.team_supervisor
"""

import asyncio

from rxagent import PostCallEvent, PreActingEvent, PreCallEvent, ReActAgent
from rxagent.multiagent import Supervisor
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call

__all__ = ["main"]

researcher = ReActAgent(
    "researcher", "You find facts.", ScriptedModel(["Frogs are amphibians."], chunk_size=6)
)
poet = ReActAgent("poet", "You write one-line poems.", ScriptedModel(["A frog, a pond, a leap."]))
lead = Supervisor(
    "lead",
    model=ScriptedModel(
        [
            [tool_call("researcher", input="What are frogs?"), tool_call("poet", input="frogs")],
            "Frogs are amphibians. A frog, a pond, a leap.",
        ]
    ),
    workers=[researcher, poet],
)


async def main() -> None:
    """Print the runs as a tree: who starts, who calls whom, who answers."""
    events = [event async for event in lead.events("Tell me about frogs, with a poem.")]
    assert_event_protocol(events)  # every nested run inside its tool call, paired and closed
    for event in events:
        indent = "  " * (len(event.path) - 1)
        if isinstance(event, PreCallEvent):
            print(f"{indent}{'/'.join(event.path)} starts (session {event.session_id!r})")
        elif isinstance(event, PreActingEvent):
            print(f"{indent}  calls {event.tool_call.name}")
        elif isinstance(event, PostCallEvent):
            print(f"{indent}{'/'.join(event.path)} answers: {event.reply.text}")
    assert events[-1].path == ("lead",)
    assert isinstance(events[-1], PostCallEvent)
    worker_state = await researcher.state_dict("default/researcher")
    print("researcher's session keeps", len(worker_state["memory"]), "messages")


if __name__ == "__main__":
    asyncio.run(main())
