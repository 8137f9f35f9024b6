"""Resuming a parked batch: hooks on resume, idempotency, interrupts, failures, concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rxagent import (
    AgentState,
    ApprovalRequestedEvent,
    PostActingEvent,
    PreActingEvent,
    ReActAgent,
    current_run,
    hook,
    tool,
)
from rxagent.errors import ApprovalError, ErrorCode, Reject, SessionBusyError
from rxagent.events import BaseEvent, PreCallEvent
from rxagent.hooks import BaseHook
from rxagent.messages import Msg, ToolResultBlock, thaw
from rxagent.state import InMemoryStore
from rxagent.testing import EventRecorder, ScriptedModel, assert_event_protocol, tool_call

RAN: list[tuple[str, Any]] = []
KEYS: list[str | None] = []


@tool(needs_approval=True)
def write(path: str) -> str:
    """Write a file.

    Args:
        path: Where.
    """
    RAN.append(("write", path))
    KEYS.append(current_run().idempotency_key)
    return f"wrote {path}"


@tool
def read(path: str) -> str:
    """Read a file.

    Args:
        path: Where.
    """
    RAN.append(("read", path))
    KEYS.append(current_run().idempotency_key)
    return f"read {path}"


GATE: dict[str, asyncio.Event] = {}


@tool(needs_approval=True)
async def wait_for(name: str, other: str = "") -> str:
    """Wait until another call lets this one go.

    Args:
        name: This call's name.
        other: The call to let go first.
    """
    RAN.append(("wait_for", name))
    if other:
        GATE.setdefault(other, asyncio.Event()).set()
    await GATE.setdefault(name, asyncio.Event()).wait()
    return f"{name} went"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()
    KEYS.clear()
    GATE.clear()


class RecordingStore(InMemoryStore):
    """A persistent-looking store that keeps every saved state."""

    persistent = True

    def __init__(self) -> None:
        super().__init__()
        self.saved: list[AgentState] = []

    async def save(self, agent: str, session_id: str, state: AgentState, **kw: Any) -> int:
        self.saved.append(state)
        return await super().save(agent, session_id, state, **kw)


def make_agent(turns: list[Any], *hooks: object, **kwargs: Any) -> tuple[ReActAgent, EventRecorder]:
    recorder = EventRecorder()
    agent = ReActAgent(
        "ops",
        "",
        ScriptedModel(turns),
        tools=[write, read, wait_for],
        hooks=[*hooks, recorder],
        **kwargs,
    )
    return agent, recorder


def runs_of(recorder: EventRecorder) -> list[list[BaseEvent]]:
    runs: dict[str, list[BaseEvent]] = {}
    for event in recorder.recorded:
        runs.setdefault(event.run_id, []).append(event)
    for events in runs.values():
        assert_event_protocol(events)
    return list(runs.values())


async def stored(agent: ReActAgent) -> AgentState:
    return AgentState.model_validate(await agent.state_dict())


def results(state: AgentState) -> list[ToolResultBlock]:
    return [r for m in state.memory for r in m.tool_results]


@hook(PreActingEvent)
def sandbox(event: PreActingEvent) -> PreActingEvent | None:
    """Moves every write under /sandbox (deterministic: the same call gives the same input)."""
    call = event.tool_call
    if call.name != "write":
        return None
    path = call.input["path"]
    if path.startswith("/sandbox/"):
        return None
    return event.replace(tool_call=call.model_copy(update={"input": {"path": f"/sandbox/{path}"}}))


async def test_arguments_changed_by_a_pre_acting_hook_need_approval_again() -> None:
    agent, recorder = make_agent([tool_call("write", path="a"), "done"], sandbox)
    parked = await agent.call("write a")
    assert await agent.approve(parked.pending_approvals[0]) is not None
    result_events = runs_of(recorder)[1]
    assert RAN == []  # the approved arguments were not the ones the hook would run
    assert [e.type for e in result_events] == [
        "pre_call", "pre_acting", "post_acting", "approval_requested", "post_call",
    ]  # fmt: skip
    placeholder = result_events[2]
    assert isinstance(placeholder, PostActingEvent)
    assert placeholder.result.text.startswith("awaiting approval again")
    again = result_events[3]
    assert isinstance(again, ApprovalRequestedEvent)
    assert again.tool_call.input == {"path": "/sandbox/a"}
    assert again.reason == "a PreActing hook changed the approved arguments"
    assert again.approval_id != parked.pending_approvals[0]
    state = await stored(agent)
    assert [m.role for m in state.memory] == ["user"]
    assert state.parked is not None
    assert state.parked.decided == ()
    assert [p.approval_id for p in state.pending_approvals] == [again.approval_id]

    result = await agent.approve(again.approval_id)
    assert result is not None
    assert result.text == "done"
    assert RAN == [("write", "/sandbox/a")]  # the arguments approved the second time
    assert results(await stored(agent))[0].text == "wrote /sandbox/a"


async def test_a_pre_acting_reject_on_resume_is_the_calls_result() -> None:
    @hook(PreActingEvent)
    def no_writes(event: PreActingEvent) -> None:
        raise Reject("writes are frozen")

    agent, _ = make_agent([tool_call("write", path="a"), "ok"], no_writes)
    parked = await agent.call("write a")
    result = await agent.approve(parked.pending_approvals[0])
    assert result is not None
    assert result.text == "ok"
    assert RAN == []
    assert "writes are frozen" in results(await stored(agent))[0].text


async def test_a_call_whose_result_was_lost_is_never_run_again() -> None:
    agent, _ = make_agent([tool_call("write", path="a"), "recovered"])
    parked = await agent.call("write a")
    state = await stored(agent)
    assert state.parked is not None
    (waiting,) = state.pending_approvals
    # what a process leaves when it dies while the approved call runs: decided, and started
    crashed = state.model_copy(
        update={
            "pending_approvals": (),
            "parked": state.parked.model_copy(
                update={
                    "decided": (waiting.model_copy(update={"decision": "approved"}),),
                    "started": (waiting.idempotency_key,),
                }
            ),
        }
    )
    await agent.store.save("ops", "default", crashed)
    result = await agent.call()  # any run resumes a batch that is fully decided
    assert result.text == "recovered"
    assert RAN == []
    (lost,) = results(await stored(agent))
    assert lost.is_error
    assert lost.text.startswith("not run again")
    assert waiting.idempotency_key in lost.text
    assert parked.run_id in waiting.idempotency_key


async def test_the_start_of_an_approved_call_is_saved_before_it_runs() -> None:
    store = RecordingStore()
    seen: list[tuple[str, ...]] = []

    @tool(needs_approval=True)
    def charge(amount: int) -> str:
        """Charge an amount."""
        last = store.saved[-1]
        assert last.parked is not None
        seen.append(last.parked.started)
        return "charged"

    agent = ReActAgent(
        "ops", "", ScriptedModel([tool_call("charge", amount=3), "ok"]), tools=[charge], store=store
    )
    parked = await agent.call("charge")
    key = (await stored(agent)).pending_approvals[0].idempotency_key
    await agent.approve(parked.pending_approvals[0])
    assert seen == [(key,)]
    final = store.saved[-1]
    assert final.parked is None
    assert final.pending_approvals == ()


async def test_idempotency_keys_follow_the_call_across_park_and_resume() -> None:
    agent, _ = make_agent([[tool_call("read", path="r"), tool_call("write", path="w")], "ok"])
    parked = await agent.call("go")
    key = (await stored(agent)).pending_approvals[0].idempotency_key
    await agent.approve(parked.pending_approvals[0])
    assert KEYS == [f"{parked.run_id}:call_1", key]
    assert key == f"{parked.run_id}:call_2"


async def test_outside_a_tool_there_is_no_idempotency_key() -> None:
    seen: list[str | None] = []

    @hook(PreCallEvent)
    def look(event: PreCallEvent) -> None:
        seen.append(current_run().idempotency_key)

    agent, _ = make_agent(["hi"], look)
    await agent.call("hi")
    assert seen == [None]


@pytest.mark.parametrize("parallel", [True, False])
async def test_approved_calls_run_as_the_agent_runs_tools(parallel: bool) -> None:
    calls = [
        tool_call("write", path="a"),
        tool_call("read", path="b"),
        tool_call("write", path="c"),
    ]
    agent, recorder = make_agent([calls, "ok"], parallel_tool_calls=parallel)
    parked = await agent.call("go")
    for approval_id in parked.pending_approvals:
        result = await agent.approve(approval_id)
    assert result is not None
    assert result.text == "ok"
    assert RAN == [("read", "b"), ("write", "a"), ("write", "c")]
    resumed = runs_of(recorder)[1]
    acting = [
        (e.type, e.tool_call.id) for e in resumed if isinstance(e, PreActingEvent | PostActingEvent)
    ]
    if parallel:
        assert acting == [
            ("pre_acting", "call_1"), ("pre_acting", "call_3"),
            ("post_acting", "call_1"), ("post_acting", "call_3"),
        ]  # fmt: skip
    else:
        assert acting == [
            ("pre_acting", "call_1"), ("post_acting", "call_1"),
            ("pre_acting", "call_3"), ("post_acting", "call_3"),
        ]  # fmt: skip
    assert [r.text for r in results(await stored(agent))] == ["wrote a", "read b", "wrote c"]


async def test_parallel_approved_calls_run_concurrently() -> None:
    # each call lets the other go, then waits for it: only concurrent calls both finish
    calls = [tool_call("wait_for", name="x", other="y"), tool_call("wait_for", name="y", other="x")]
    agent, _ = make_agent([calls, "both went"])
    parked = await agent.call("go")
    assert await agent.approve(parked.pending_approvals[0]) is None
    result = await agent.approve(parked.pending_approvals[1])
    assert result is not None
    assert result.text == "both went"
    assert [r.text for r in results(await stored(agent))] == ["x went", "y went"]


async def test_an_interrupt_during_a_resumed_call_pairs_the_batch() -> None:
    agent, _ = make_agent([tool_call("wait_for", name="never"), "unused"])
    parked = await agent.call("go")
    task = asyncio.create_task(agent.approve(parked.pending_approvals[0]))
    while ("wait_for", "never") not in RAN:
        await asyncio.sleep(0)
    assert agent.interrupt(msg="stop")
    result = await task
    assert result is not None
    assert result.interrupted
    assert result.error is not None
    assert result.error.code is ErrorCode.INTERRUPTED
    state = await stored(agent)
    assert state.parked is None
    assert state.pending_approvals == ()
    assert [m.role for m in state.memory] == ["user", "assistant", "tool"]
    assert results(state)[0].text == "interrupted"


async def test_cancelling_approve_cancels_the_resumed_run_and_keeps_memory_paired() -> None:
    agent, _ = make_agent([tool_call("wait_for", name="never"), "unused"])
    parked = await agent.call("go")
    task = asyncio.create_task(agent.approve(parked.pending_approvals[0]))
    while ("wait_for", "never") not in RAN:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await agent.wait_idle(timeout=5)
    state = await stored(agent)
    assert state.parked is None
    assert [m.role for m in state.memory] == ["user", "assistant", "tool"]
    assert results(state)[0].is_error


async def test_a_failing_hook_on_resume_fails_the_run_with_memory_paired() -> None:
    class Strict(BaseHook):
        events = frozenset({PostActingEvent})
        on_error = "propagate"

        async def on_event(self, event: Any) -> None:
            raise RuntimeError("audit log unavailable")

    calls = [tool_call("write", path="a"), tool_call("write", path="b")]
    agent, _ = make_agent([calls], Strict(), parallel_tool_calls=False)
    parked = await agent.call("go")
    await agent.approve(parked.pending_approvals[0])
    result = await agent.approve(parked.pending_approvals[1])
    assert result is not None
    assert not result.ok
    assert result.error is not None
    assert "audit log unavailable" in result.error.message
    state = await stored(agent)
    assert state.parked is None
    assert [m.role for m in state.memory] == ["user", "assistant", "tool", "tool"]
    assert RAN == [("write", "a")]
    assert results(state)[1].is_error


async def test_a_decision_whose_run_is_refused_leaves_the_batch_decided() -> None:
    refuse = [True]

    @hook(PreCallEvent)
    def gate(event: PreCallEvent) -> None:
        if refuse[0]:
            raise Reject("closed for maintenance")

    agent, _ = make_agent([tool_call("write", path="a"), "done"])
    parked = await agent.call("go")
    agent.hooks.add(gate)
    failed = await agent.approve(parked.pending_approvals[0])
    assert failed is not None
    assert not failed.ok
    assert RAN == []
    assert failed.error is not None
    assert failed.error.code is ErrorCode.HOOK_REJECTED
    state = await stored(agent)
    assert state.pending_approvals == ()
    assert state.parked is not None
    assert state.parked.decided[0].decision == "approved"
    refuse[0] = False
    result = await agent.call()
    assert result.text == "done"
    assert RAN == [("write", "a")]


async def test_a_stop_asked_in_the_parked_step_ends_the_resumed_run() -> None:
    @hook(PostActingEvent)
    def stop_after_read(event: PostActingEvent) -> PostActingEvent | None:
        return event.replace(stop=True) if event.tool_call.name == "read" else None

    agent, _ = make_agent([[tool_call("read", path="r"), tool_call("write", path="w")]])
    agent.hooks.add(stop_after_read)
    parked = await agent.call("go")
    assert (await stored(agent)).parked.stop  # type: ignore[union-attr]
    result = await agent.approve(parked.pending_approvals[0])
    assert result is not None
    assert result.stop_reason == "hook_stop"
    assert RAN == [("read", "r"), ("write", "w")]
    model = agent.model
    assert isinstance(model, ScriptedModel)
    assert model.calls == 1


async def test_calls_cut_by_max_tool_calls_keep_their_place_in_the_batch() -> None:
    calls = [tool_call("write", path="a"), tool_call("read", path="b"), tool_call("read", path="c")]
    agent, _ = make_agent([calls, "ok"], max_tool_calls=2)
    parked = await agent.call("go")
    await agent.approve(parked.pending_approvals[0])
    texts = [r.text for r in results(await stored(agent))]
    assert texts[:2] == ["wrote a", "read b"]
    assert texts[2].startswith("tool call limit reached")


async def test_a_decision_on_a_busy_session_is_refused_or_queued() -> None:
    agent, _ = make_agent(
        [[tool_call("wait_for", name="hold"), tool_call("write", path="a")], "ok"]
    )
    parked = await agent.call("go")
    hold, write_a = parked.pending_approvals
    assert await agent.approve(write_a) is None
    resumed = asyncio.create_task(agent.approve(hold))
    while ("wait_for", "hold") not in RAN:
        await asyncio.sleep(0)
    with pytest.raises(SessionBusyError):
        await agent.approve(write_a)
    with pytest.raises(SessionBusyError):
        await agent.call("hello")
    queued = asyncio.create_task(agent.reject(write_a, "late", queue=True))
    await asyncio.sleep(0)
    assert not queued.done()
    GATE["hold"].set()
    result = await resumed
    assert result is not None
    assert result.text == "ok"
    assert RAN == [("wait_for", "hold"), ("write", "a")]
    with pytest.raises(ApprovalError, match="no pending approval"):
        await queued


async def test_checkpoints_keep_the_resumed_batch(tmp_path: Any) -> None:
    store = RecordingStore()
    agent, _ = make_agent([tool_call("write", path="a"), "done"], store=store)
    parked = await agent.call("go")
    store.saved.clear()
    await agent.approve(parked.pending_approvals[0])
    # the start of the call, the batch in memory (a checkpoint), then the end of the run
    assert [len(s.memory) for s in store.saved] == [1, 3, 4]
    assert [s.parked is not None for s in store.saved] == [True, False, False]


async def test_hooks_see_the_approval_requests() -> None:
    seen: list[dict[str, Any]] = []

    @hook(ApprovalRequestedEvent)
    def notify(event: ApprovalRequestedEvent) -> None:
        seen.append({"id": event.approval_id, "input": thaw(event.tool_call.input)})

    agent, _ = make_agent([tool_call("write", path="a")], notify)
    parked = await agent.call("go")
    assert seen == [{"id": parked.pending_approvals[0], "input": {"path": "a"}}]


async def test_a_failing_hook_with_calls_still_running_closes_them() -> None:
    @hook(PostActingEvent, on_error="propagate")
    def strict(event: PostActingEvent) -> None:
        if event.tool_call.name == "write":
            raise RuntimeError("audit log unavailable")

    calls = [tool_call("write", path="a"), tool_call("wait_for", name="never")]
    agent, _ = make_agent([calls], strict)
    parked = await agent.call("go")
    await agent.approve(parked.pending_approvals[0])
    result = await agent.approve(parked.pending_approvals[1])
    assert result is not None
    assert not result.ok
    state = await stored(agent)
    assert state.parked is None
    assert [r.text for r in results(state)] == ["wrote a", "not completed: the run failed"]


class FlakyStore(InMemoryStore):
    """Fails the first save that records an approved call's start; can interrupt instead."""

    persistent = True

    def __init__(self) -> None:
        super().__init__()
        self.fail = True
        self.on_start: Any = None

    async def save(self, agent: str, session_id: str, state: AgentState, **kw: Any) -> int:
        if state.parked is not None and state.parked.started:
            if self.on_start is not None:
                self.on_start()
            elif self.fail:
                self.fail = False
                raise OSError("disk full")
        return await super().save(agent, session_id, state, **kw)


async def test_a_store_that_cannot_record_the_start_fails_the_run_before_the_call() -> None:
    store = FlakyStore()
    agent, _ = make_agent([tool_call("write", path="a")], store=store)
    parked = await agent.call("go")
    result = await agent.approve(parked.pending_approvals[0])
    assert result is not None
    assert result.error is not None
    assert result.error.source == "store"
    assert "did not start" in result.error.message
    assert RAN == []
    state = await stored(agent)
    assert state.parked is None
    assert results(state)[0].text == "not completed: the run failed"


async def test_an_interrupt_while_the_start_is_saved_keeps_the_call_from_running() -> None:
    store = FlakyStore()
    agent, _ = make_agent([tool_call("write", path="a")], store=store)
    store.on_start = lambda: agent.interrupt(msg="wait")
    parked = await agent.call("go")
    result = await agent.approve(parked.pending_approvals[0])
    assert result is not None
    assert result.interrupted
    assert RAN == []
    assert results(await stored(agent))[0].text == "interrupted"


async def test_an_interrupt_stops_the_approved_calls_not_started_yet() -> None:
    calls = [tool_call("wait_for", name="first"), tool_call("write", path="b")]
    agent, recorder = make_agent([calls], parallel_tool_calls=False)
    parked = await agent.call("go")
    await agent.approve(parked.pending_approvals[1])
    task = asyncio.create_task(agent.approve(parked.pending_approvals[0]))
    while ("wait_for", "first") not in RAN:
        await asyncio.sleep(0)
    agent.interrupt()
    result = await task
    assert result is not None
    assert result.interrupted
    assert RAN == [("wait_for", "first")]
    resumed = runs_of(recorder)[1]
    assert [e.tool_call.id for e in resumed if isinstance(e, PreActingEvent)] == ["call_1"]
    assert [r.text for r in results(await stored(agent))] == ["interrupted", "interrupted"]


async def test_a_call_with_no_decision_in_the_saved_state_is_not_run() -> None:
    agent, _ = make_agent([[tool_call("write", path="a"), tool_call("write", path="b")], "ok"])
    parked = await agent.call("go")
    await agent.approve(parked.pending_approvals[0])
    state = await stored(agent)
    assert state.parked is not None
    # a hand-edited state: the last approval removed without a decision
    await agent.store.save("ops", "default", state.model_copy(update={"pending_approvals": ()}))
    result = await agent.call()
    assert result.text == "ok"
    assert RAN == [("write", "a")]
    assert results(await stored(agent))[1].text.startswith("not executed: the saved state holds")


async def test_loading_a_parked_state_keeps_call_ids_unique() -> None:
    from rxagent.state import ParkedBatch, consistent_state

    parked = ParkedBatch(run_id="r", message=Msg.assistant([tool_call("write", id="call_7")]))
    fixed = consistent_state(AgentState(memory=[Msg.user("hi")], parked=parked))
    assert fixed.call_counter == 7


async def test_changed_arguments_in_a_parallel_resume_wait_while_the_others_run() -> None:
    calls = [tool_call("write", path="a"), tool_call("write", path="/sandbox/b")]
    agent, recorder = make_agent([calls, "done"], sandbox)
    parked = await agent.call("go")
    await agent.approve(parked.pending_approvals[0])
    assert await agent.approve(parked.pending_approvals[1]) is not None
    assert RAN == [("write", "/sandbox/b")]  # the unchanged call ran; the changed one waits
    state = await stored(agent)
    assert state.parked is not None
    assert [r.text for r in state.parked.results] == ["wrote /sandbox/b"]
    (again,) = state.pending_approvals
    assert again.tool_call is not None
    assert again.tool_call.input == {"path": "/sandbox/a"}
    result = await agent.approve(again.approval_id)
    assert result is not None
    assert result.text == "done"
    assert RAN == [("write", "/sandbox/b"), ("write", "/sandbox/a")]
    assert [r.text for r in results(await stored(agent))] == [
        "wrote /sandbox/a",
        "wrote /sandbox/b",
    ]
    assert len(runs_of(recorder)) == 3  # parked, parked again, done: each keeps the protocol
