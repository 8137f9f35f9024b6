"""A support agent with memory: tool selection, working memory and long-term memory together.

- `max_tools_per_request=4` offers each request the tools that fit the message best, out of
  eight; the memory tools are always among them (`always=`).
- `WorkingMemory` keeps the order id a tool returned, so it is in the request after the tool
  result was trimmed away to fit a small context window.
- `LongTermMemory` (scoped by user) keeps what the model chose to `remember`, and recalls it
  into the user's next session.

Run it:

    python -m examples.memory_agent
"""

import asyncio
from typing import Any

from rxagent import Principal, ReActAgent, tool
from rxagent.hooks.builtin import ContextWindow
from rxagent.memory import KeywordStore, LongTermMemory, WorkingMemory
from rxagent.testing import ScriptedModel, tool_call
from rxagent.tools import KeywordSelector, Tool

__all__ = ["main"]


@tool
def lookup_order(order: str) -> dict[str, str]:
    """Look an order up by its number.

    Args:
        order: The order number.
    """
    scans = [f"scanned at hub {i}" for i in range(100)]  # a long result, first to be trimmed
    return {"order_id": f"ORD-{order}", "status": "shipped", "scans": ", ".join(scans)}


@tool
def refund_order(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: The order's id, such as ORD-1.
    """
    return f"{order_id} refunded"


def other_tool(name: str, about: str) -> Tool[..., Any]:
    """A tool this conversation does not need."""
    return tool(lambda: "ok", name=name, description=about)


OTHERS = [
    other_tool("get_weather", "The weather forecast."),
    other_tool("translate_text", "Translate a text."),
    other_tool("send_invoice", "Email an invoice."),
    other_tool("list_products", "List the products in the catalog."),
]


async def main() -> None:
    """Monday: an order is looked up, then refunded; Tuesday: the user's wish comes back."""
    memory = LongTermMemory(KeywordStore(), mode="both")
    remember = tool_call("remember", fact="Ann wants refunds by bank transfer.")
    model = ScriptedModel(
        [
            [tool_call("lookup_order", order="17"), remember],
            "ORD-17 has shipped.",
            tool_call("refund_order", order_id="ORD-17"),
            "ORD-17 is refunded.",
            "By bank transfer, as you asked.",
        ],
        context_window=1_000,
    )
    agent = ReActAgent(
        "support",
        "You help with orders.",
        model,
        tools=[lookup_order, refund_order, *OTHERS, *memory.tools()],
        hooks=[WorkingMemory(), memory, ContextWindow(max_output_tokens=200)],
        tool_selector=KeywordSelector(always=["remember", "recall"]),
        max_tools_per_request=4,
    )
    ann = Principal(user_id="ann")
    await agent.call(
        "Where is order 17? Refunds by transfer, please.", principal=ann, session_id="mon"
    )
    print("offered:", list(model.requests[0].tool_names))
    await agent.call("Refund the order.", principal=ann, session_id="mon")
    request = model.requests[2].messages  # the lookup's result is no longer in it
    assert not any(m.role == "tool" for m in request)
    print("working memory:", next(x for x in request[0].text.splitlines() if "ORD-17" in x))
    result = await agent.call("How do refunds reach me?", principal=ann, session_id="tue")
    recalled = next(x for x in model.requests[4].messages[0].text.splitlines() if "Ann" in x)
    print("recalled on Tuesday:", recalled)
    print("reply:", result.text)


if __name__ == "__main__":
    asyncio.run(main())
