"""Sessions that outlive the process: an agent whose conversations live in a SQLite file.

`ReActAgent(store=SQLiteStore(path))` saves each session after every step. Sessions are keyed by
the agent's name, so a new agent object with the same name (in a new process, after a restart)
continues the conversation where it stopped.

Run it:

    python -m examples.sqlite_sessions
"""

import asyncio
import tempfile
from pathlib import Path

from rxagent import ModelOptions, Msg, ReActAgent, ToolSchema
from rxagent.state import SQLiteStore
from rxagent.testing import FunctionModel, Turn

__all__ = ["main", "recall"]


def recall(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: say what the user said first, which only memory can know."""
    said = [m.text for m in messages if m.role == "user"]
    return f"Messages from you: {len(said)}. The first: {said[0]!r}"


async def main(path: Path) -> None:
    """Talk to one agent object, drop it, and continue with a new one on the same file."""
    async with SQLiteStore(path) as store:
        agent = ReActAgent("notes", "You remember.", FunctionModel(recall), store=store)
        first = await agent.call("My name is Ann.", session_id="ann")
        print("first process: ", first.text)

    async with SQLiteStore(path) as store:  # as a new process would: a new store and agent
        agent = ReActAgent("notes", "You remember.", FunctionModel(recall), store=store)
        second = await agent.call("What is my name?", session_id="ann")
        print("second process:", second.text)
        sessions = await store.list_sessions("notes")
        print("sessions in", path.name, sessions)
    assert second.text == "Messages from you: 2. The first: 'My name is Ann.'"
    assert sessions == ["ann"]


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(Path(tmp) / "sessions.db"))
