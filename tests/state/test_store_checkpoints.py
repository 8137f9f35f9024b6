"""Agents on a persistent store: a checkpoint after each step, sessions that outlive a process."""

from __future__ import annotations

from pathlib import Path

from rxagent import ReActAgent, tool
from rxagent.state import SQLiteStore
from rxagent.testing import ScriptedModel, tool_call


async def test_auto_checkpoints_save_every_completed_step(tmp_path: Path):
    async with SQLiteStore(tmp_path / "s.db") as store:
        seen: list[tuple[int, list[str]] | None] = []

        @tool
        async def peek() -> str:
            """Look at what the store holds for the running session."""
            stored = await store.load("bot", "s1")
            seen.append(
                None if stored is None else (stored.version, [m.role for m in stored.state.memory])
            )
            return "ok"

        model = ScriptedModel([tool_call("peek"), tool_call("peek"), "done"])
        agent = ReActAgent("bot", "", model, tools=[peek], store=store, checkpoint="auto")
        result = await agent.call("go", session_id="s1")
        assert result.ok
        assert seen[0] is None  # the first step is still running: nothing saved yet
        assert seen[1] is not None
        assert seen[1][1] == ["user", "assistant", "tool"]  # the first step, whole
        final = await store.load("bot", "s1")
        assert final is not None
        assert final.version > seen[1][0]
        assert [m.role for m in final.state.memory] == [
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
        ]


async def test_a_session_continues_in_a_new_process(tmp_path: Path):
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as store:
        agent = ReActAgent("bot", "", ScriptedModel(["Nice to meet you, Ada."]), store=store)
        assert (await agent.call("I am Ada.", session_id="ada")).ok
    # a new store and a new agent object, as after a restart
    async with SQLiteStore(path) as store:
        model = ScriptedModel(["You are Ada."])
        agent = ReActAgent("bot", "", model, store=store)
        assert (await agent.call("Who am I?", session_id="ada")).ok
        assert [m.text for m in model.requests[0].messages] == [
            "I am Ada.",
            "Nice to meet you, Ada.",
            "Who am I?",
        ]
        assert await store.list_sessions("bot") == ["ada"]
        assert await store.lease_holder("bot", "ada") is None  # the run released its lease
