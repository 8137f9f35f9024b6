"""Properties of approval over random batches: one result per call, in order; nothing runs twice.

Each example plays a script of random batches of tool calls. A call may succeed, fail or time out,
and may need approval. Every parked run is then decided in a random order: approved, rejected,
or cut short by a new user message (which rejects what still waits), sometimes after a run with
no input that only announces the waiting calls again. With a PreActing hook that changes the
arguments, every approved call needs approval a second time.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from hypothesis import given
from hypothesis import strategies as st

from rxagent import AgentState, PreActingEvent, ReActAgent, current_run, hook, tool
from rxagent.events import BaseEvent
from rxagent.messages import ToolResultBlock
from rxagent.testing import EventRecorder, ScriptedModel, assert_event_protocol, tool_call

Mode = Literal["ok", "fail", "timeout"]
EXECUTED: list[str] = []


@tool(timeout=0.01, needs_approval=lambda args: bool(args.get("gate")))
async def job(n: int, mode: str, gate: bool) -> str:
    """Do job n.

    Args:
        n: The job.
        mode: How it goes: ok, fail or timeout.
        gate: Whether a human must approve it.
    """
    call = current_run().tool_call
    assert call is not None
    EXECUTED.append(call.id)
    if mode == "fail":
        raise RuntimeError(f"job {n} failed")
    if mode == "timeout":
        await asyncio.Event().wait()  # only the tool's timeout ends it
    return f"job {n} done"


@dataclass(frozen=True)
class Planned:
    n: int
    mode: Mode
    gate: bool


@dataclass
class Decisions:
    """The random choices for deciding the parked runs, consumed one by one."""

    data: st.DataObject
    by_call: dict[str, str] = field(default_factory=dict)  # call id -> expected decision text

    def draw(self, strategy: st.SearchStrategy[Any]) -> Any:
        return self.data.draw(strategy)


calls_strategy = st.lists(
    st.builds(
        Planned,
        n=st.integers(0, 99),
        mode=st.sampled_from(["ok", "ok", "fail", "timeout"]),
        gate=st.booleans(),
    ),
    min_size=1,
    max_size=4,
)


@hook(PreActingEvent)
def renumber(event: PreActingEvent) -> PreActingEvent | None:
    """Moves every job to n + 1000: on resume, the approved arguments change once."""
    n = event.tool_call.input["n"]
    if n >= 1000:
        return None
    changed = {**event.tool_call.input, "n": n + 1000}
    return event.replace(tool_call=event.tool_call.model_copy(update={"input": changed}))


@given(
    batches=st.lists(calls_strategy, min_size=1, max_size=3),
    parallel=st.booleans(),
    rewrite=st.booleans(),
    data=st.data(),
)
def test_every_call_gets_one_result_in_order_and_nothing_runs_twice(
    batches: list[list[Planned]], parallel: bool, rewrite: bool, data: st.DataObject
) -> None:
    asyncio.run(_play(batches, parallel, rewrite, Decisions(data)))


async def _play(
    batches: list[list[Planned]], parallel: bool, rewrite: bool, decisions: Decisions
) -> None:
    EXECUTED.clear()
    turns: list[Any] = [
        [tool_call("job", n=p.n, mode=p.mode, gate=p.gate) for p in batch] for batch in batches
    ]
    recorder = EventRecorder()
    agent = ReActAgent(
        "prop",
        "",
        ScriptedModel([*turns, "done"]),
        tools=[job],
        hooks=[recorder, *([renumber] if rewrite else [])],
        parallel_tool_calls=parallel,
        max_iters=len(batches) + 1,
    )
    result = await agent.call("go")
    rounds = 0
    while result.pending_approvals:
        rounds += 1
        # a hook that changes approved arguments parks a batch once more, never twice more
        assert rounds <= len(batches) * (2 if rewrite else 1), "a batch parked too often"
        result = await _decide(agent, result.pending_approvals, decisions)
    assert result.ok
    assert result.text == "done"
    state = AgentState.model_validate(await agent.state_dict())
    assert state.parked is None
    assert state.pending_approvals == ()
    _check_memory(state, batches, decisions, 1000 if rewrite else 0)
    _check_events(recorder.recorded)


async def _decide(agent: ReActAgent, pending: tuple[str, ...], decisions: Decisions) -> Any:
    """Decide every pending approval of the parked batch; return the resumed run's result."""
    state = AgentState.model_validate(await agent.state_dict())
    call_of = {p.approval_id: p.tool_call_id for p in state.pending_approvals}
    assert set(call_of) == set(pending)
    if decisions.draw(st.booleans()):  # a run without input only announces them again
        again = await agent.call()
        assert again.pending_approvals == pending
    order = decisions.draw(st.permutations(list(pending)))
    for i, approval_id in enumerate(order):
        choice = decisions.draw(st.sampled_from(["approve", "reject", "message"]))
        if choice == "message":
            for waiting in order[i:]:
                decisions.by_call[call_of[waiting]] = "The tool call was rejected: stop that"
            return await agent.call("stop that")
        if choice == "approve":
            outcome = await agent.approve(approval_id)
        else:
            decisions.by_call[call_of[approval_id]] = "The tool call was rejected: no"
            outcome = await agent.reject(approval_id, "no")
        last = i == len(order) - 1
        assert (outcome is None) is not last
    return outcome


def _expected(planned: Planned, call_id: str, decisions: Decisions, shift: int) -> str:
    rejected = decisions.by_call.get(call_id)
    if planned.gate and rejected is not None:
        return rejected
    n = planned.n + shift
    return {
        "ok": f"job {n} done",
        "fail": f"RuntimeError: job {n} failed",
        "timeout": "Tool 'job' timed out after 0.01s",
    }[planned.mode]


def _check_memory(
    state: AgentState, batches: list[list[Planned]], decisions: Decisions, shift: int
) -> None:
    memory = list(state.memory)
    with_calls = [i for i, m in enumerate(memory) if m.tool_calls]
    assert len(with_calls) == len(batches)
    expected_runs: list[str] = []
    for index, batch in zip(with_calls, batches, strict=True):
        calls = memory[index].tool_calls
        assert len(calls) == len(batch)
        following = memory[index + 1 : index + 1 + len(calls)]
        results: list[ToolResultBlock] = [m.tool_results[0] for m in following]
        assert [m.role for m in following] == ["tool"] * len(calls)  # one result per call
        assert [r.id for r in results] == [c.id for c in calls]  # in call order
        for call, planned, result in zip(calls, batch, results, strict=True):
            assert result.text == _expected(planned, call.id, decisions, shift)
            if not (planned.gate and call.id in decisions.by_call):
                expected_runs.append(call.id)
    answered = [r.id for m in memory for r in m.tool_results]
    assert len(answered) == len(set(answered))  # no call has two results
    assert len(EXECUTED) == len(set(EXECUTED))  # no tool ran twice
    assert sorted(EXECUTED) == sorted(expected_runs)  # and every approved call ran


def _check_events(events: list[BaseEvent]) -> None:
    runs: dict[str, list[BaseEvent]] = {}
    for event in events:
        runs.setdefault(event.run_id, []).append(event)
    for run in runs.values():
        assert_event_protocol(run)
