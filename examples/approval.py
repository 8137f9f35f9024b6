"""Human approval: a tool call waits for a person, then the run resumes where it parked.

`@tool(needs_approval=...)` parks the run before the call: the run ends with
`stop_reason="approval_pending"` and the ids in `result.pending_approvals`, and the session's
state keeps the waiting call. `agent.approve(id)` or `agent.reject(id, reason)` decides it, and
the last decision resumes the run (from another process too, with a persistent store).

Run it:

    python -m examples.approval
"""

import asyncio
import re

from rxagent import ModelOptions, Msg, ReActAgent, ToolSchema, tool
from rxagent.testing import FunctionModel, Turn, tool_call

__all__ = ["main", "refund"]

refunded: list[int] = []


@tool(needs_approval=lambda args: args.get("amount", 0) > 100)  # small refunds need no one
def refund(amount: int) -> str:
    """Refund the customer.

    Args:
        amount: How much, in euros.
    """
    refunded.append(amount)
    return f"Refunded {amount} EUR."


def support(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: refund the amount asked for, then report what the tool said."""
    last = messages[-1]
    if last.role == "tool":
        return last.tool_results[0].text
    return tool_call("refund", amount=int(re.findall(r"\d+", last.text)[0]))


async def main() -> None:
    """A small refund runs at once; a large one waits, and is approved; another is rejected."""
    agent = ReActAgent("support", "You handle refunds.", FunctionModel(support), tools=[refund])

    small = await agent.call("Refund 20 EUR.")
    print("small:", small.stop_reason, small.text)

    parked = await agent.call("Refund 500 EUR.")
    print("large:", parked.stop_reason, f"({len(parked.pending_approvals)} call waiting)")
    assert parked.stop_reason == "approval_pending"
    assert refunded == [20]  # the large refund has not run

    approved = await agent.approve(parked.pending_approvals[0])  # a person said yes
    assert approved is not None
    print("approved:", approved.text)

    parked = await agent.call("Refund 900 EUR.")
    rejected = await agent.reject(parked.pending_approvals[0], "over the monthly limit")
    assert rejected is not None
    print("rejected:", rejected.text)
    assert refunded == [20, 500]


if __name__ == "__main__":
    asyncio.run(main())
