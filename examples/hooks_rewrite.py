"""Hooks that rewrite a run: the prompt before it is sent, and a tool's result before it is kept.

Hooks run in priority order (lower first) and each one gets the event the previous one returned.
Here `house_rules` (priority 10) adds a system message to every request, `redact_emails`
(priority 20) then hides e-mail addresses in that request, and `mask_card` rewrites the tool's
result, so neither the model nor the session's memory ever holds the card number.

Run it:

    python -m examples.hooks_rewrite
    rxagent run "Where is order 42?" --agent examples.hooks_rewrite:agent
"""

import asyncio
import re

from rxagent import (
    ModelOptions,
    Msg,
    PostActingEvent,
    PreReasoningEvent,
    ReActAgent,
    ToolSchema,
    hook,
    tool,
)
from rxagent.testing import FunctionModel, Turn, tool_call

__all__ = ["agent", "house_rules", "main", "mask_card", "redact_emails"]

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
CARD = re.compile(r"\b(?:\d{4} ){3}(\d{4})\b")


@tool
def find_order(order_id: int) -> str:
    """Find an order.

    Args:
        order_id: The order's number.
    """
    return f"Order {order_id}: shipped to ann@example.com, paid with card 4111 1111 1111 1234."


@hook(PreReasoningEvent, priority=10)
def house_rules(event: PreReasoningEvent) -> PreReasoningEvent:
    """Add the house rules to every request (this request only; memory is unchanged)."""
    return event.replace(messages=[*event.messages, Msg.system("Answer in one sentence.")])


@hook(PreReasoningEvent, priority=20)
def redact_emails(event: PreReasoningEvent) -> PreReasoningEvent:
    """Hide e-mail addresses from the model; runs after `house_rules`, on its output."""
    text = [m.model_dump_json() for m in event.messages]
    clean = [Msg.model_validate_json(EMAIL.sub("[email]", t)) for t in text]
    return event.replace(messages=clean)


@hook(PostActingEvent)
def mask_card(event: PostActingEvent) -> PostActingEvent:
    """Mask card numbers in tool results: what the model reads and what memory keeps."""
    output = CARD.sub(r"ending \1", event.result.text)
    return event.replace(result=event.result.model_copy(update={"output": output}))


def answer(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: look the order up, then repeat what the tool said."""
    last = messages[-2]  # messages[-1] is the house rule
    if last.role == "tool" or not tools:
        return last.text or last.tool_results[0].text
    digits = re.findall(r"\d+", last.text)
    return tool_call("find_order", order_id=int(digits[0]) if digits else 42)


model = FunctionModel(answer)
hooks = [redact_emails, house_rules, mask_card]  # in any order: priorities decide
agent = ReActAgent("orders", "You track orders.", model, tools=[find_order], hooks=hooks)


def main() -> None:
    """Run once, then show the hook order and what the model received."""
    for info in agent.hooks.explain(PreReasoningEvent):
        print(info)  # "0. house_rules (priority 10, modifies, isolate)", ...
    result = agent.call_sync("Where is order 42? Mail me at bob@example.com.")
    print(result.text)
    seen = model.requests[-1].messages  # the last request, as the model received it
    assert seen[-1].text == "Answer in one sentence."
    assert "@example.com" not in str(seen)
    assert result.text == "Order 42: shipped to [email], paid with card ending 1234."
    memory = str(asyncio.run(agent.state_dict())["memory"])
    assert "4111" not in memory  # mask_card's edit is what memory keeps
    assert "ann@example.com" in memory  # redact_emails changed the requests only


if __name__ == "__main__":
    main()
