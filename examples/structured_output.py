"""Structured output: ask for a type, get a validated instance, and watch it stream in.

With `output_type=Ticket`, `result.output` is a `Ticket`. The model is asked for JSON in the way
its provider supports best (here OpenAI's native JSON-schema mode), and while the JSON streams,
each `OutputChunkEvent` carries a typed partial ticket.

Run it:

    python -m examples.structured_output
    rxagent run "The login page is down!" --agent examples.structured_output:agent
"""

import asyncio
import json
from typing import Any, Literal

from pydantic import BaseModel

from rxagent import ModelOptions, Msg, OutputChunkEvent, PostCallEvent, ReActAgent, ToolSchema
from rxagent.formatters.openai import OpenAIFormatter
from rxagent.testing import FunctionModel, Turn

__all__ = ["Ticket", "agent", "main", "triage"]


class Ticket(BaseModel):
    """A support ticket."""

    title: str
    priority: Literal["low", "high"]
    tags: list[str]


def triage(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: answer with a ticket as JSON, as the request's schema asks."""
    assert options.response_format is not None  # the schema travels with the request
    text = messages[-1].text
    priority = "high" if "!" in text else "low"
    tags = [word for word in ("login", "billing", "email") if word in text.lower()]
    return json.dumps({"title": text.rstrip("!."), "priority": priority, "tags": tags})


model = FunctionModel(triage, chunk_size=8, capabilities=OpenAIFormatter.capabilities)
agent = ReActAgent("triage", "You file tickets.", model, output_type=Ticket)


async def main() -> None:
    """File one ticket, printing each partial ticket as the JSON arrives."""
    output: Any = None
    async for event in agent.events("The login page is down!"):
        if isinstance(event, OutputChunkEvent):
            print("partial:", event.partial)
        elif isinstance(event, PostCallEvent):
            output = event.result.output
    print("ticket: ", repr(output))
    assert output == Ticket(title="The login page is down", priority="high", tags=["login"])


if __name__ == "__main__":
    asyncio.run(main())
