"""Pipelines and a group chat: `concat`, `merge` and broadcast, each a run of its own.

- `SequentialPipeline`: each member gets the previous member's reply.
- `ParallelPipeline`: the members answer the same input at once; a merger builds the reply.
- `MsgHub`: participants speak in turn, and each reply reaches the others' memory.

Every team starts with its own PreCall and ends with its own PostCall at `path == (name,)`;
its members' events are nested at `(name, member)`. Teams nest: the parallel pipeline below is
the second member of the sequential one.

Run it:

    python -m examples.team_pipelines
"""

import asyncio

from rxagent import Msg, PostCallEvent, ReActAgent
from rxagent.multiagent import MsgHub, ParallelPipeline, SequentialPipeline
from rxagent.testing import FunctionModel, ScriptedModel

__all__ = ["main"]


def agent(name: str, reply: str) -> ReActAgent:
    return ReActAgent(name, "", ScriptedModel([reply]))


async def pipelines() -> None:
    """A draft, two reviews at once, then an editor's merge of the reviews."""
    reviews = ParallelPipeline(
        [agent("style", "Shorter sentences."), agent("facts", "Frogs are amphibians.")],
        merger=agent("editor", "Revised: frogs are amphibians. Short and true."),
        name="reviews",
    )
    desk = SequentialPipeline(
        [agent("writer", "Frogs are reptiles, I think."), reviews], name="desk"
    )
    async for event in desk.events("Write a line about frogs."):
        if isinstance(event, PostCallEvent):
            print(f"{' > '.join(event.path):<25} {event.reply.text}")
    result = await desk.state_dict()
    assert result["members"]["reviews"]["members"]["style"]["memory"][0]["content"] == (
        "Frogs are reptiles, I think."
    )


def speaker(name: str) -> ReActAgent:
    def answer(messages: list[Msg], tools: object, options: object) -> str:
        others = [m.name for m in messages if m.name]
        return f"{name} has heard {', '.join(others) or 'nobody yet'}."

    return ReActAgent(name, "", FunctionModel(answer))


async def group_chat() -> None:
    """Three participants, two rounds: everyone hears everyone."""
    hub = MsgHub(
        [speaker("ann"), speaker("bob"), speaker("cid")],
        announcement="Let us plan the picnic.",
        rounds=2,
    )
    async for event in hub.events("Where shall we go?"):
        if isinstance(event, PostCallEvent) and len(event.path) == 2:
            print(f"{event.path[-1]}: {event.reply.text}")
    final = await hub.call("And when?")
    print("hub:", final.text)
    assert final.text.startswith("cid has heard")
    assert final.steps == 6


async def main() -> None:
    """The pipelines, then the group chat."""
    await pipelines()
    await group_chat()


if __name__ == "__main__":
    asyncio.run(main())
