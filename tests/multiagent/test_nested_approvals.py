"""A child's approval request parks its caller; `approve()` on the caller resumes the child."""

from __future__ import annotations

from typing import Any

from rxagent import (
    ApprovalRequestedEvent,
    BaseEvent,
    PostActingEvent,
    PreCallEvent,
    ReActAgent,
    hook,
)
from rxagent.multiagent import SequentialPipeline, Supervisor
from rxagent.state import AgentState
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call
from rxagent.tools import tool


@tool(needs_approval=True)
def pay(amount: int) -> str:
    """Pay.

    Args:
        amount: How much.
    """
    return f"paid {amount}"


def recorder() -> tuple[list[BaseEvent], Any]:
    seen: list[BaseEvent] = []

    @hook(nested=True)
    def record(event: BaseEvent) -> None:
        seen.append(event)

    return seen, record


def runs_of(seen: list[BaseEvent], path: tuple[str, ...]) -> list[list[BaseEvent]]:
    """The top-level runs in what a nested hook saw, each with its nested events."""
    runs: list[list[BaseEvent]] = []
    for event in seen:
        if isinstance(event, PreCallEvent) and event.path == path:
            runs.append([])
        runs[-1].append(event)
    return runs


def paired(memory: Any) -> bool:
    uses = {b.id for m in memory for b in m.tool_calls}
    return uses == {r.id for m in memory for r in m.tool_results}


async def test_the_caller_parks_and_approve_resumes_the_child() -> None:
    clerk = ReActAgent("clerk", "", ScriptedModel([tool_call("pay", amount=2), "Paid 2."]),
                       tools=[pay])  # fmt: skip
    seen, record = recorder()
    boss = ReActAgent(
        "boss", "", ScriptedModel([tool_call("clerk", input="pay 2"), "The clerk paid."]),
        tools=[clerk.as_tool()], hooks=[record],
    )  # fmt: skip
    parked = await boss.call("go", session_id="s")
    assert parked.ok
    assert parked.stop_reason == "approval_pending"
    (approval_id,) = parked.pending_approvals
    state = AgentState.model_validate(await boss.state_dict("s"))
    assert state.pending_approvals[0].nested
    assert paired(state.memory)
    resumed = await boss.approve(approval_id, session_id="s")
    assert resumed is not None
    assert resumed.text == "The clerk paid."
    first, second = runs_of(seen, ("boss",))
    assert_event_protocol(first)
    assert_event_protocol(second)
    announced = [e for e in first if isinstance(e, ApprovalRequestedEvent)]
    assert [e.path for e in announced] == [("boss", "clerk"), ("boss",)]
    post = next(e for e in second if isinstance(e, PostActingEvent) and e.path == ("boss",))
    assert post.result.text == "Paid 2."
    assert ("boss", "clerk") in {e.path for e in second}
    memory = AgentState.model_validate(await boss.state_dict("s")).memory
    assert [m.role for m in memory] == ["user", "assistant", "tool", "assistant"]


async def test_a_rejection_reaches_the_child() -> None:
    clerk = ReActAgent("clerk", "", ScriptedModel([tool_call("pay", amount=9), "Not paid."]),
                       tools=[pay])  # fmt: skip
    boss = ReActAgent("boss", "", ScriptedModel([tool_call("clerk", input="pay 9"), "No."]),
                      tools=[clerk.as_tool()])  # fmt: skip
    parked = await boss.call("go", session_id="s")
    resumed = await boss.reject(parked.pending_approvals[0], "too much", session_id="s")
    assert resumed is not None
    assert resumed.text == "No."
    child = AgentState.model_validate(await clerk.state_dict("s/clerk"))
    results = [r for m in child.memory for r in m.tool_results]
    assert results[0].is_error
    assert "too much" in results[0].text


async def test_several_approvals_and_a_child_that_parks_again() -> None:
    clerk = ReActAgent(
        "clerk", "",
        ScriptedModel([
            [tool_call("pay", amount=1), tool_call("pay", amount=2)],
            tool_call("pay", amount=3),
            "All paid.",
        ]),
        tools=[pay],
    )  # fmt: skip
    boss = Supervisor("boss", model=ScriptedModel([tool_call("clerk", input="pay"), "Done."]),
                      workers=[clerk])  # fmt: skip
    parked = await boss.call("go", session_id="s")
    first, second = parked.pending_approvals
    assert await boss.approve(first, session_id="s") is None  # the batch waits for the other
    again = await boss.approve(second, session_id="s")
    assert again is not None
    assert again.stop_reason == "approval_pending"  # the clerk's next call waits too
    (third,) = again.pending_approvals
    done = await boss.approve(third, session_id="s")
    assert done is not None
    assert done.text == "Done."
    memory = AgentState.model_validate(await boss.state_dict("s")).memory
    assert paired(memory)
    result = next(r for m in memory for r in m.tool_results)
    assert result.text == "All paid."


async def test_a_team_as_a_tool_parks_its_caller_and_approve_resumes_the_team() -> None:
    clerk = ReActAgent("clerk", "", ScriptedModel([tool_call("pay", amount=2), "Paid."]),
                       tools=[pay])  # fmt: skip
    notary = ReActAgent("notary", "", ScriptedModel(["Noted: Paid."]))
    team = SequentialPipeline([clerk, notary], name="desk")
    seen, record = recorder()
    boss = ReActAgent("boss", "", ScriptedModel([tool_call("desk", input="pay"), "All done."]),
                      tools=[team.as_tool()], hooks=[record])  # fmt: skip
    parked = await boss.call("go", session_id="s")
    assert parked.stop_reason == "approval_pending"
    (approval_id,) = parked.pending_approvals
    resumed = await boss.approve(approval_id, session_id="s")
    assert resumed is not None
    assert resumed.text == "All done."
    _, second = runs_of(seen, ("boss",))
    assert_event_protocol(second)
    paths = {e.path for e in second}
    assert {("boss", "desk"), ("boss", "desk", "clerk"), ("boss", "desk", "notary")} <= paths
    memory = AgentState.model_validate(await boss.state_dict("s")).memory
    assert paired(memory)
    assert next(r for m in memory for r in m.tool_results).text == "Noted: Paid."
    waiting = await team.state_dict("s/desk")
    assert waiting["members"]["clerk"]["pending_approvals"] == []
