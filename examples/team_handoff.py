"""A handoff: triage hands the conversation to billing, which keeps it until it hands it back.

`handoff(target)` is a tool (`transfer_to_<target>`). When the model calls it, a
`HandoffEvent` marks the switch and the target answers the user's turn, nested in the tool
call. The session remembers the handoff, so the next user message goes straight to billing,
without asking triage's model. Billing hands the conversation back with its own handoff tool.

Run it:

    python -m examples.team_handoff
"""

import asyncio

from rxagent import HandoffEvent, PostCallEvent, ReActAgent
from rxagent.multiagent import handoff
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call

__all__ = ["main"]

triage = ReActAgent("triage", "You route the user to the right desk.", ScriptedModel([]))
billing = ReActAgent(
    "billing",
    "You handle refunds.",
    ScriptedModel(
        [
            "I refunded order 42.",
            "It takes three days.",
            tool_call("transfer_to_triage", reason="not a billing question"),
        ]
    ),
    tools=[handoff(triage, "Questions that are not about billing.")],
)
triage.toolkit.add(handoff(billing, "Refunds, invoices and payments."))
triage.model = ScriptedModel(
    [tool_call("transfer_to_billing", reason="refund"), "Our shop opens at nine."]
)


async def turn(text: str) -> str:
    """One user message to the session, with the handoffs it caused."""
    events = [event async for event in triage.events(text, session_id="ann")]
    assert_event_protocol(events)
    for event in events:
        if isinstance(event, HandoffEvent):
            print(f"  handoff {event.from_agent} -> {event.to_agent} ({event.reason})")
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    return last.reply.text


async def main() -> None:
    """Three turns: handed off, routed, handed back."""
    answers = []
    for text in ("Refund order 42, please.", "How long does it take?", "When do you open?"):
        print(f"user: {text}")
        answers.append(await turn(text))
        print(f"bot:  {answers[-1]}")
    assert answers == ["I refunded order 42.", "It takes three days.", "Our shop opens at nine."]


if __name__ == "__main__":
    asyncio.run(main())
