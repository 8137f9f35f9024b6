"""Checkpoints after each step, and the agent-wide interrupt/wait used by servers on shutdown."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rxagent import AgentState, ReActAgent, tool
from rxagent.errors import ConfigurationError, ErrorCode
from rxagent.events import ErrorEvent
from rxagent.state import InMemoryStore
from rxagent.testing import EventRecorder, FunctionModel, ScriptedModel, tool_call


@tool
def echo(text: str) -> str:
    """Echo the text.

    Args:
        text: What to echo.
    """
    return text


class RecordingStore(InMemoryStore):
    """An in-memory store that says it is persistent and keeps every saved state."""

    persistent = True

    def __init__(self, *, fail_saves: int = 0) -> None:
        super().__init__()
        self.saved: list[AgentState] = []
        self.fail_saves = fail_saves

    async def save(self, agent: str, session_id: str, state: AgentState, **kw: Any) -> int:
        if self.fail_saves:
            self.fail_saves -= 1
            raise OSError("disk full")
        self.saved.append(state)
        return await super().save(agent, session_id, state, **kw)


def _three_step_model() -> ScriptedModel:
    return ScriptedModel([tool_call("echo", text="a"), tool_call("echo", text="b"), "done"])


async def test_persistent_store_is_saved_after_every_completed_step() -> None:
    store = RecordingStore()
    agent = ReActAgent("a", "", _three_step_model(), tools=[echo], store=store)
    result = await agent.call("go")
    assert result.ok
    assert result.text == "done"
    # two tool steps checkpointed, then the save at the end of the run
    assert len(store.saved) == 3
    for state in store.saved[:2]:  # every checkpoint is pair-consistent
        calls = {c.id for m in state.memory for c in m.tool_calls}
        results = {r.id for m in state.memory for r in m.tool_results}
        assert calls == results
        assert state.memory[-1].role == "tool"
    assert [len(s.memory) for s in store.saved] == [3, 5, 6]
    assert [s.runs for s in store.saved] == [0, 0, 1]


@pytest.mark.parametrize(
    ("store", "policy", "saves"),
    [
        (InMemoryStore(), "auto", 1),
        (InMemoryStore(), "step", 3),
        (None, "run", 1),
    ],
)
async def test_checkpoint_policy(store: InMemoryStore | None, policy: Any, saves: int) -> None:
    recording = RecordingStore()
    if store is not None:
        recording.persistent = store.persistent
    agent = ReActAgent(
        "a", "", _three_step_model(), tools=[echo], store=recording, checkpoint=policy
    )
    assert (await agent.call("go")).ok
    assert len(recording.saved) == saves


async def test_a_failing_checkpoint_is_a_recoverable_error_and_the_run_goes_on() -> None:
    store = RecordingStore(fail_saves=1)
    recorder = EventRecorder()
    agent = ReActAgent("a", "", _three_step_model(), tools=[echo], store=store, hooks=[recorder])
    result = await agent.call("go")
    assert result.ok
    assert result.text == "done"
    errors = recorder.of_type(ErrorEvent)
    assert [(e.source, e.recoverable) for e in errors] == [("store", True)]
    assert "disk full" in errors[0].message
    assert len((await store.load("a", "default")).state.memory) == 6  # type: ignore[union-attr]


async def test_a_version_conflict_at_a_checkpoint_fails_the_run() -> None:
    async def model(messages: Any, tools: Any, options: Any) -> Any:
        if len(messages) == 1:
            return tool_call("echo", text="x")
        return "never"

    class Interloper(RecordingStore):
        async def save(self, agent: str, session_id: str, state: AgentState, **kw: Any) -> int:
            await InMemoryStore.save(self, agent, session_id, AgentState())  # a foreign write
            return await super().save(agent, session_id, state, **kw)

    store = Interloper()
    agent = ReActAgent("a", "", FunctionModel(model), tools=[echo], store=store)
    result = await agent.call("go")
    assert not result.ok
    assert result.error is not None
    assert result.error.source == "store"
    assert result.error.code is ErrorCode.UNKNOWN


def test_bad_checkpoint_policy_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="checkpoint must be"):
        ReActAgent("a", "", ScriptedModel(["x"]), checkpoint="always")  # type: ignore[arg-type]


async def test_interrupt_all_and_wait_idle() -> None:
    started = asyncio.Event()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.Event().wait()  # only the interrupt ends it
        return "late"

    agent = ReActAgent("a", "", FunctionModel(slow))
    assert agent.running_sessions() == ()
    assert agent.interrupt_all() == 0
    assert await agent.wait_idle(timeout=0.01)
    tasks = [asyncio.create_task(agent.call("hi", session_id=s)) for s in ("s2", "s1")]
    await started.wait()
    while len(agent.running_sessions()) < 2:
        await asyncio.sleep(0)
    assert agent.running_sessions() == ("s1", "s2")
    assert not await agent.wait_idle(timeout=0.01)  # still running
    assert agent.interrupt_all("bye") == 2
    assert await agent.wait_idle(timeout=10)
    results = await asyncio.gather(*tasks)
    assert all(r.interrupted and r.text == "bye" for r in results)
    assert agent.running_sessions() == ()


async def test_wait_idle_for_one_session() -> None:
    started: set[str] = set()

    async def slow(messages: Any, tools: Any, options: Any) -> str:
        started.add(messages[-1].text)
        await asyncio.Event().wait()  # only the interrupt ends it
        return "late"

    agent = ReActAgent("a", "", FunctionModel(slow))
    tasks = {s: asyncio.create_task(agent.call(s, session_id=s)) for s in ("s1", "s2")}
    while started != {"s1", "s2"}:
        await asyncio.sleep(0)
    assert agent.interrupt("s1")
    assert await agent.wait_idle(timeout=10, session_id="s1")
    assert agent.running_sessions() == ("s2",)  # the other session's run goes on
    assert tasks["s1"].done()
    assert not await agent.wait_idle(timeout=0.01, session_id="s2")
    assert await agent.wait_idle(timeout=0.01, session_id="nobody")
    agent.interrupt("s2")
    assert (await tasks["s2"]).interrupted


async def test_a_store_that_fails_to_save_and_release_does_not_hang_the_run() -> None:
    class Broken(InMemoryStore):
        async def save(self, agent: str, session_id: str, state: AgentState, **kw: Any) -> int:
            raise OSError("store down")

        async def release_lease(self, agent: str, session_id: str, owner: str) -> None:
            raise OSError("store down")

    async def boom(messages: Any, tools: Any, options: Any) -> str:
        raise RuntimeError("a bug in the model")  # the run cannot go on: it is abandoned

    agent = ReActAgent("a", "", FunctionModel(boom), store=Broken())
    with pytest.raises(OSError, match="store down"):  # the run could not be saved: said, not hung
        await asyncio.wait_for(agent.call("x", session_id="s"), timeout=10)
    assert agent.running_sessions() == ()  # the session is free again in this process
