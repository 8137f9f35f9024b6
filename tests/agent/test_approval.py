"""Human approval: parking a batch, approve / reject, and what the model sees afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import (
    AgentState,
    ApprovalRequestedEvent,
    PostActingEvent,
    PostCallEvent,
    PreActingEvent,
    ReActAgent,
    tool,
)
from rxagent.errors import ApprovalError, ConfigurationError, ToolDefinitionError
from rxagent.events import BaseEvent
from rxagent.messages import Msg, ToolResultBlock
from rxagent.state import InMemoryStore
from rxagent.testing import EventRecorder, ScriptedModel, assert_event_protocol, tool_call
from rxagent.tools import Tool

RAN: list[tuple[str, str]] = []


@tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    RAN.append(("delete_file", path))
    return f"deleted {path}"


@tool(needs_approval=lambda args: args.get("amount", 0) > 100)
def pay(amount: int) -> str:
    """Pay an amount.

    Args:
        amount: How much.
    """
    RAN.append(("pay", str(amount)))
    return f"paid {amount}"


@tool
def look(path: str) -> str:
    """Look at a file.

    Args:
        path: The file.
    """
    RAN.append(("look", path))
    return f"looked at {path}"


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    RAN.clear()


def make_agent(turns: list[Any], **kwargs: Any) -> tuple[ReActAgent, EventRecorder]:
    recorder = EventRecorder()
    agent = ReActAgent(
        "ops",
        "",
        ScriptedModel(turns),
        tools=[delete_file, pay, look],
        hooks=[recorder],
        **kwargs,
    )
    return agent, recorder


def runs_of(recorder: EventRecorder) -> list[list[BaseEvent]]:
    """The recorded events, one list per run, each checked against the event protocol."""
    runs: dict[str, list[BaseEvent]] = {}
    for event in recorder.recorded:
        runs.setdefault(event.run_id, []).append(event)
    for events in runs.values():
        assert_event_protocol(events)
    return list(runs.values())


async def stored(agent: ReActAgent, session_id: str = "default") -> AgentState:
    return AgentState.model_validate(await agent.state_dict(session_id))


def tool_results(state: AgentState) -> list[ToolResultBlock]:
    return [r for m in state.memory for r in m.tool_results]


def assert_paired(state: AgentState) -> None:
    """Every call in memory has exactly one result, right after its message, in call order."""
    memory = list(state.memory)
    for i, message in enumerate(memory):
        if message.role == "assistant" and message.tool_calls:
            following = memory[i + 1 : i + 1 + len(message.tool_calls)]
            assert [m.tool_results[0].id for m in following] == [c.id for c in message.tool_calls]


# -- parking ---------------------------------------------------------------------------------


async def test_a_call_that_needs_approval_parks_the_run() -> None:
    agent, recorder = make_agent(
        [[tool_call("look", path="a.txt"), tool_call("delete_file", path="a.txt")], "Deleted."]
    )
    result = await agent.call("delete a.txt")
    assert result.ok
    assert result.stop_reason == "approval_pending"
    assert not result.interrupted
    assert result.output is None
    assert result.tools_used == ("look",)
    assert RAN == [("look", "a.txt")]  # the call that needs no approval ran
    (events,) = runs_of(recorder)
    types = [e.type for e in events]
    assert types[-5:] == [
        "post_reasoning", "pre_acting", "post_acting", "approval_requested", "post_call",
    ]  # fmt: skip
    requested = [e for e in events if isinstance(e, ApprovalRequestedEvent)]
    assert [e.approval_id for e in requested] == list(result.pending_approvals)
    assert requested[0].tool_call.name == "delete_file"
    assert requested[0].tool_call.input == {"path": "a.txt"}
    assert requested[0].reason == "the tool needs approval"
    assert all(e.tool_call.name != "delete_file" for e in events if isinstance(e, PreActingEvent))

    state = await stored(agent)
    assert [m.role for m in state.memory] == ["user"]  # the parked message is out of memory
    assert state.parked is not None
    assert state.parked.message.tool_calls[1].name == "delete_file"
    assert [r.output for r in state.parked.results] == ["looked at a.txt"]
    (waiting,) = state.pending_approvals
    assert waiting.approval_id == result.pending_approvals[0]
    assert waiting.tool_call == requested[0].tool_call
    assert waiting.decision is None
    assert len(waiting.args_hash) == 64
    assert waiting.idempotency_key == f"{result.run_id}:{waiting.tool_call_id}"


async def test_approve_runs_the_call_once_and_the_run_goes_on() -> None:
    agent, recorder = make_agent([tool_call("delete_file", path="a.txt"), "Deleted a.txt."])
    parked = await agent.call("delete a.txt")
    result = await agent.approve(parked.pending_approvals[0])
    assert result is not None
    assert result.ok
    assert result.text == "Deleted a.txt."
    assert result.stop_reason == "no_tool_calls"
    assert result.tools_used == ("delete_file",)
    assert result.pending_approvals == ()
    assert RAN == [("delete_file", "a.txt")]
    _, resumed = runs_of(recorder)
    assert [e.type for e in resumed[:3]] == ["pre_call", "pre_acting", "post_acting"]
    assert resumed[0].input == ()  # type: ignore[attr-defined]
    state = await stored(agent)
    assert state.parked is None
    assert state.pending_approvals == ()
    assert [m.role for m in state.memory] == ["user", "assistant", "tool", "assistant"]
    assert tool_results(state)[0].output == "deleted a.txt"
    assert state.runs == 2
    with pytest.raises(ApprovalError, match="no pending approval"):
        await agent.approve(parked.pending_approvals[0])
    assert RAN == [("delete_file", "a.txt")]


async def test_a_batch_resumes_only_when_its_last_approval_is_decided() -> None:
    calls = [
        tool_call("delete_file", path="a"),
        tool_call("look", path="b"),
        tool_call("delete_file", path="c"),
        tool_call("pay", amount=500),
    ]
    agent, recorder = make_agent([calls, "All done."])
    parked = await agent.call("clean up")
    first, second, third = parked.pending_approvals
    recorded = len(recorder.recorded)
    assert await agent.approve(third) is None
    assert await agent.reject(first, "keep a") is None
    assert len(recorder.recorded) == recorded  # a decision alone is no run: no events
    state = await stored(agent)
    assert [p.approval_id for p in state.pending_approvals] == [second]
    assert state.parked is not None
    assert [(p.approval_id, p.decision, p.reason) for p in state.parked.decided] == [
        (third, "approved", None),
        (first, "rejected", "keep a"),
    ]
    with pytest.raises(ApprovalError, match="already approved") as caught:
        await agent.approve(third)
    with pytest.raises(ApprovalError, match=f"no pending approval 'nope'.*'{second}'"):
        await agent.reject("nope")
    assert caught.value.approval_id == third
    assert caught.value.session_id == "default"

    result = await agent.approve(second)
    assert result is not None
    assert result.text == "All done."
    assert RAN == [("look", "b"), ("delete_file", "c"), ("pay", "500")]
    state = await stored(agent)
    assert_paired(state)
    assert [r.output for r in tool_results(state)] == [
        "The tool call was rejected: keep a",
        "looked at b",
        "deleted c",
        "paid 500",
    ]
    assert tool_results(state)[0].is_error


async def test_a_rejected_call_never_runs_and_the_model_sees_why() -> None:
    agent, recorder = make_agent([tool_call("delete_file", path="a.txt"), "Fine, I won't."])
    parked = await agent.call("delete a.txt")
    result = await agent.reject(parked.pending_approvals[0], "that file is important")
    assert result is not None
    assert result.text == "Fine, I won't."
    assert RAN == []
    _, resumed = runs_of(recorder)
    assert not [e for e in resumed if isinstance(e, PreActingEvent | PostActingEvent)]
    model = agent.model
    assert isinstance(model, ScriptedModel)
    seen = model.requests[-1].messages[-1]
    assert seen.role == "tool"
    assert seen.tool_results[0].text == "The tool call was rejected: that file is important"
    assert seen.tool_results[0].is_error


async def test_a_rejection_without_a_reason() -> None:
    agent, _ = make_agent([tool_call("delete_file", path="a"), "ok"])
    parked = await agent.call("go")
    await agent.reject(parked.pending_approvals[0])
    assert tool_results(await stored(agent))[0].text == "The tool call was rejected."


async def test_a_predicate_decides_per_call_on_the_models_arguments() -> None:
    agent, _ = make_agent([[tool_call("pay", amount=5), tool_call("pay", amount=500)], "Paid."])
    parked = await agent.call("pay")
    assert RAN == [("pay", "5")]
    (waiting,) = (await stored(agent)).pending_approvals
    assert waiting.tool_call is not None
    assert waiting.tool_call.input == {"amount": 500}
    await agent.approve(parked.pending_approvals[0])
    assert RAN == [("pay", "5"), ("pay", "500")]


async def test_a_predicate_that_raises_asks_for_approval(caplog: pytest.LogCaptureFixture) -> None:
    def broken(args: dict[str, Any]) -> bool:
        raise KeyError("amount")

    strict = Tool(pay.fn, name="pay", needs_approval=broken)
    agent = ReActAgent("ops", "", ScriptedModel([tool_call("pay", amount=1)]), tools=[strict])
    result = await agent.call("pay")
    assert result.stop_reason == "approval_pending"
    assert RAN == []
    assert "needs_approval function of tool 'pay' raised" in caplog.text


async def test_calls_that_cannot_run_never_wait() -> None:
    bad_json = tool_call("delete_file", path="x").model_copy(update={"raw_input": "{oops"})
    agent, _ = make_agent([[tool_call("nope"), bad_json], "ok"])
    result = await agent.call("go")
    assert result.stop_reason == "no_tool_calls"
    assert result.pending_approvals == ()
    assert all(r.is_error for r in tool_results(await stored(agent)))


# -- bad decisions ---------------------------------------------------------------------------


async def test_an_unknown_id_is_a_typed_error_and_changes_nothing() -> None:
    agent, _ = make_agent([tool_call("delete_file", path="a")])
    parked = await agent.call("go")
    before = await agent.store.load("ops", "default")
    with pytest.raises(
        ApprovalError, match=r"no pending approval 'nope'.*pending approvals are: '"
    ):
        await agent.approve("nope")
    with pytest.raises(ApprovalError, match="no pending approval"):
        await agent.reject("nope", "x", session_id="other")
    assert await agent.store.load("ops", "default") == before
    assert not agent.is_running()
    assert (await stored(agent)).pending_approvals[0].approval_id == parked.pending_approvals[0]


@pytest.mark.parametrize("bad", ["", 3, None])
async def test_a_bad_approval_id_is_refused(bad: Any) -> None:
    agent, _ = make_agent([])
    with pytest.raises(ConfigurationError, match="approval_id must be a non-empty str"):
        await agent.approve(bad)


async def test_a_bad_reason_is_refused() -> None:
    agent, _ = make_agent([])
    with pytest.raises(ConfigurationError, match=r"reject\(reason=...\) takes a str or None"):
        await agent.reject("ap_1", 42)  # type: ignore[arg-type]


async def test_needs_approval_must_be_a_bool_or_a_function() -> None:
    with pytest.raises(ToolDefinitionError, match="needs_approval must be True, False or a"):

        @tool(needs_approval="yes")  # type: ignore[call-overload]
        def bad() -> str:
            """Bad."""
            return ""


def test_needs_approval_is_kept_and_can_be_set_on_an_existing_tool() -> None:
    assert look.needs_approval is False
    assert delete_file.needs_approval is True
    strict = tool(look, needs_approval=True)
    assert strict is not look
    assert strict.needs_approval is True
    assert strict.name == "look"
    assert tool(delete_file, name="rm").needs_approval is True
    assert tool(delete_file) is delete_file
    schema = {"type": "object", "properties": {}}
    made = Tool.from_schema(
        "remote", "A remote tool.", schema, lambda args: "", needs_approval=True
    )
    assert made.needs_approval is True


# -- sessions with a parked batch --------------------------------------------------------------


async def test_a_new_message_rejects_the_waiting_calls_with_it_as_the_reason() -> None:
    calls = [tool_call("delete_file", path="a"), tool_call("delete_file", path="b")]
    agent, recorder = make_agent([calls, "OK, only a."])
    parked = await agent.call("delete a and b")
    await agent.approve(parked.pending_approvals[0])
    result = await agent.call("no, keep b!")
    assert result.text == "OK, only a."
    assert result.pending_approvals == ()
    assert RAN == [("delete_file", "a")]
    state = await stored(agent)
    assert [m.role for m in state.memory] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
    ]
    assert [r.text for r in tool_results(state)] == [
        "deleted a",
        "The tool call was rejected: no, keep b!",
    ]
    assert state.memory[4].text == "no, keep b!"
    _, resumed = runs_of(recorder)
    assert resumed[0].input[0].text == "no, keep b!"  # type: ignore[attr-defined]


async def test_a_run_without_input_announces_the_waiting_calls_again() -> None:
    agent, recorder = make_agent([tool_call("delete_file", path="a"), "done"])
    parked = await agent.call("delete a")
    before = (await stored(agent)).pending_approvals
    again = await agent.call()
    assert again.ok
    assert again.stop_reason == "approval_pending"
    assert again.pending_approvals == parked.pending_approvals
    _, second = runs_of(recorder)
    assert [e.type for e in second] == ["pre_call", "approval_requested", "post_call"]
    assert second[1].reason == "the session still waits for this decision"  # type: ignore[attr-defined]
    assert (await stored(agent)).pending_approvals == before
    assert RAN == []
    model = agent.model
    assert isinstance(model, ScriptedModel)
    assert model.calls == 1


async def test_approvals_belong_to_their_session() -> None:
    agent, _ = make_agent([tool_call("delete_file", path="a"), "done"])
    parked = await agent.call("delete a", session_id="s1")
    with pytest.raises(ApprovalError):
        await agent.approve(parked.pending_approvals[0], session_id="s2")
    result = await agent.approve(parked.pending_approvals[0], session_id="s1")
    assert result is not None
    assert result.session_id == "s1"


async def test_approvals_without_a_parked_call_are_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from rxagent.state import PendingApproval

    store = InMemoryStore()
    orphan = PendingApproval(approval_id="ap_1", tool_call_id="call_9")
    await store.save(
        "ops", "default", AgentState(memory=[Msg.user("hi")], pending_approvals=[orphan])
    )
    agent, _ = make_agent(["hello"], store=store)
    with pytest.raises(ApprovalError, match="no pending approval 'ap_1'"):
        await agent.approve("ap_1")
    assert "have no parked tool call and were dropped" in caplog.text
    result = await agent.call("hi again")
    assert result.text == "hello"
    assert result.pending_approvals == ()
    assert (await stored(agent)).pending_approvals == ()


class Database:
    rows = ("r1",)


@tool(needs_approval=True)
def drop_rows(db: Database) -> str:
    """Drop every row."""
    return f"dropped {len(db.rows)}"


async def test_the_resumed_run_takes_the_calls_keywords() -> None:
    agent = ReActAgent("db", "", ScriptedModel([tool_call("drop_rows"), "gone"]), tools=[drop_rows])
    parked = await agent.call("drop")
    result = await agent.approve(parked.pending_approvals[0], deps=[Database()])
    assert result is not None
    assert result.text == "gone"
    assert tool_results(await stored(agent))[0].text == "dropped 1"


async def test_output_type_waits_for_the_resumed_run() -> None:
    agent, _ = make_agent([tool_call("delete_file", path="a"), '{"deleted": 1}'])
    parked = await agent.call("go", output_type=dict)
    assert parked.ok
    assert parked.output is None
    result = await agent.approve(parked.pending_approvals[0], output_type=dict)
    assert result is not None
    assert result.output == {"deleted": 1}


async def test_the_post_call_hooks_see_the_parked_result() -> None:
    seen: list[tuple[str, tuple[str, ...]]] = []

    async def watch(event: BaseEvent) -> None:
        if isinstance(event, PostCallEvent):
            seen.append((event.result.stop_reason, event.result.pending_approvals))

    from rxagent import hook

    agent, _ = make_agent(
        [tool_call("delete_file", path="a")],
    )
    agent.hooks.add(hook(PostCallEvent)(watch))
    parked = await agent.call("go")
    assert seen == [("approval_pending", parked.pending_approvals)]
