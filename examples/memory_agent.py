"""A support agent with memory: tool selection, working memory and long-term memory together.

- `max_tools_per_request=4` offers each request the tools that fit the message best, out of
  eight; the memory tools are always among them (`always=`).
- `WorkingMemory` keeps the order id a tool returned, so it is in the request after the tool
  result was trimmed away to fit a small context window.
- `LongTermMemory` (scoped by user, in a Qdrant `KnowledgeBase`) keeps what the model chose to
  `remember`, and recalls it into the user's next session.

Run it:

    python -m examples.memory_agent
"""

import asyncio

from rxagent import Principal, ReActAgent, tool
from rxagent.hooks.builtin import ContextWindow
from rxagent.memory import LongTermMemory, WorkingMemory
from rxagent.rag import KnowledgeBase
from rxagent.testing import ScriptedModel, Turn, tool_call
from rxagent.tools import KeywordSelector

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


def unrelated() -> str:
    """A tool this conversation does not need."""
    return "ok"


OTHERS = [
    tool(unrelated, name=name, description=about)
    for name, about in [
        ("get_weather", "The weather forecast."),
        ("translate_text", "Translate a text."),
        ("send_invoice", "Email an invoice."),
        ("list_products", "List the products in the catalog."),
    ]
]
SCRIPT: list[Turn] = [
    [tool_call("lookup_order", order="17"), tool_call("remember", fact="Ann wants bank refunds.")],
    "ORD-17 has shipped.",
    tool_call("refund_order", order_id="ORD-17"),
    "ORD-17 is refunded.",
    "By bank transfer, as you asked.",
]


async def main() -> None:
    """Monday: an order is looked up, then refunded; Tuesday: the user's wish comes back."""
    async with KnowledgeBase(":memory:", embedder=None) as kb:  # sparse search: no model
        memory = LongTermMemory(kb, mode="both")
        model = ScriptedModel(SCRIPT, context_window=1_000)
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
        await agent.call("Order 17? Refunds by bank, please.", principal=ann, session_id="mo")
        print("offered:", list(model.requests[0].tool_names))
        await agent.call("Refund the order.", principal=ann, session_id="mo")
        request = model.requests[2].messages  # the lookup's result is no longer in it
        assert not any(m.role == "tool" for m in request)
        print("working memory:", next(x for x in request[0].text.splitlines() if "ORD-17" in x))
        result = await agent.call("How do refunds reach me?", principal=ann, session_id="tu")
        recalled = next(x for x in model.requests[4].messages[0].text.splitlines() if "Ann" in x)
        print("recalled on Tuesday:", recalled)
        print("reply:", result.text)


if __name__ == "__main__":
    asyncio.run(main())
