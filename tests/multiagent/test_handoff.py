"""Handoffs: the switch, the route kept in session state, and handing back."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import BaseEvent, HandoffEvent, PostCallEvent, ReActAgent
from rxagent.agent import ROUTE_KEY
from rxagent.errors import ConfigurationError
from rxagent.multiagent import handoff
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call


async def collect(agent: Any, msg: str, session_id: str = "s") -> list[BaseEvent]:
    return [e async for e in agent.events(msg, session_id=session_id)]


def pair(billing_turns: list[Any], triage_turns: list[Any]) -> tuple[ReActAgent, ReActAgent]:
    billing = ReActAgent("billing", "Refunds.", ScriptedModel(billing_turns))
    triage = ReActAgent(
        "triage", "Route.", ScriptedModel(triage_turns), tools=[handoff(billing, "Refunds.")]
    )
    return triage, billing


async def test_a_handoff_switches_and_the_session_stays_with_the_target() -> None:
    triage, billing = pair(["Refunded.", "You are welcome."],
                           [tool_call("transfer_to_billing", reason="refund")])  # fmt: skip
    first = await collect(triage, "refund please")
    assert_event_protocol(first)
    switch = [e for e in first if isinstance(e, HandoffEvent)]
    assert len(switch) == 1
    assert (switch[0].from_agent, switch[0].to_agent, switch[0].reason) == (
        "triage", "billing", "refund",
    )  # fmt: skip
    assert switch[0].path == ("triage",)
    assert switch[0].tool_call_id is not None
    post = first[-1]
    assert isinstance(post, PostCallEvent)
    assert post.reply.text == "Refunded."
    state = await triage.state_dict("s")
    assert state["extra"][ROUTE_KEY] == "transfer_to_billing"
    # the next message goes to billing without a model call of triage
    second = await collect(triage, "thanks")
    assert_event_protocol(second)
    assert not [e for e in second if e.path == ("triage",) and e.type == "pre_reasoning"]
    routed = next(e for e in second if isinstance(e, HandoffEvent))
    assert "billing" in routed.reason
    assert second[-1].reply.text == "You are welcome."  # type: ignore[attr-defined]
    billing_memory = (await billing.state_dict("s/billing"))["memory"]
    assert [m["role"] for m in billing_memory] == ["user", "assistant", "user", "assistant"]


async def test_the_target_hands_the_conversation_back() -> None:
    front = ReActAgent("front", "", ScriptedModel([]))
    back = ReActAgent(
        "back", "", ScriptedModel([tool_call("transfer_to_front", reason="not mine")]),
        tools=[handoff(front)],
    )  # fmt: skip
    front.model = ScriptedModel(
        [tool_call("transfer_to_back"), "I will take it from here.", "Anything else?"]
    )
    front.toolkit.add(handoff(back))
    events = await collect(front, "hello")
    assert_event_protocol(events)
    switches = [(e.from_agent, e.to_agent) for e in events if isinstance(e, HandoffEvent)]
    assert switches == [("front", "back"), ("back", "front")]
    assert events[-1].reply.text == "I will take it from here."  # type: ignore[attr-defined]
    assert ROUTE_KEY not in (await front.state_dict("s"))["extra"]
    again = await collect(front, "one more")
    assert again[-1].reply.text == "Anything else?"  # type: ignore[attr-defined]
    assert not [e for e in again if isinstance(e, HandoffEvent)]


async def test_a_route_to_a_removed_tool_is_ignored() -> None:
    triage, _ = pair(["Refunded."], [tool_call("transfer_to_billing"), "I answer myself."])
    await triage.call("refund", session_id="s")
    triage.toolkit.remove("transfer_to_billing")
    result = await triage.call("hello", session_id="s")
    assert result.text == "I answer myself."


def test_handoff_needs_an_agent() -> None:
    with pytest.raises(ConfigurationError, match="agent or a team"):
        handoff("billing")  # type: ignore[arg-type]
    billing = ReActAgent("billing", "", ScriptedModel([]))
    made = handoff(billing, name="to_billing")
    assert made.name == "to_billing"
    assert "billing" in made.description
