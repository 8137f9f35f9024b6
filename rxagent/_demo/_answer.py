"""What the demo model says: its plan for a question, and its answer from the tool results.

Both read only the messages of the request, so the demo model keeps no state of its own: one
model serves any number of runs and sessions, and each turn answers the latest user message.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent._demo._question import Question
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock
from rxagent.testing import text, thinking, tool_call

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.models import ModelOptions, ToolSchema

__all__ = ["CAPABILITIES", "compose_answer", "latest_question", "plan_turn", "respond"]

CAPABILITIES: Final = (
    "I am rxagent's offline demo model, so I only answer from my two tools: I search rxagent's "
    'docs for the words you use (try "What are hooks?") and compute arithmetic (try "What is '
    '17 * 23?"). For any other question, give the agent a real model: '
    "rxagent chat --model openai:gpt-4o-mini"
)
"""What the demo says when no tool applies to a question."""

SEARCH_LIMIT: Final = 3
"""How many docs sections the demo asks for."""


def latest_question(messages: Sequence[Msg]) -> tuple[int, Question]:
    """Return the position of the latest user message and what it asks (-1 when there is none)."""
    for position in range(len(messages) - 1, -1, -1):
        if messages[position].role == "user":
            return position, Question.read(messages[position].text)
    return -1, Question.read("")


def _thought(question: Question, search: bool, expressions: Sequence[str]) -> str:
    math = " and ".join(expressions)
    if search and expressions:
        return (
            f"The user asks about {question.query!r} and wants arithmetic done. The docs answer "
            "the first, so I search them rather than answer from memory, and the calculator "
            f"computes {math} exactly. The lookups are independent, so I run them in parallel."
        )
    if search:
        return (
            f"The user asks about {question.query!r}. I search rxagent's docs for it rather "
            "than answer from memory."
        )
    return f"The question is arithmetic: {math}. I compute it with the calculator, exactly."


def plan_turn(question: Question, offered: Sequence[str]) -> list[Any]:
    """Return the first turn for `question`: the tool calls that apply, or an honest answer.

    The docs are searched when the question has keywords, the calculator gets each expression
    in it, and only tools that are `offered` are called.

    Example:
        ```python
        from rxagent._demo._answer import plan_turn
        from rxagent._demo._question import Question

        turn = plan_turn(Question.read("What is 2 + 2?"), ["search_docs", "calculator"])
        calls = [block for block in turn if block.type == "tool_use"]
        assert [(c.name, dict(c.input)) for c in calls] == [("calculator", {"expression": "2 + 2"})]
        ```
    """
    search = bool(question.query) and "search_docs" in offered
    expressions = question.expressions if "calculator" in offered else ()
    if not search and not expressions:
        if question.query or question.expressions:
            reason = "The tools this question needs are not offered in this request."
        else:
            reason = "There is no arithmetic here and no keyword to search the docs for."
        return [thinking(f"{reason} No tool applies."), text(f"{reason} {CAPABILITIES}")]
    intro = {
        (True, True): "Let me search the docs and compute that at the same time.",
        (True, False): "Let me search the docs.",
        (False, True): "Let me compute that.",
    }[search, bool(expressions)]
    turn: list[Any] = [thinking(_thought(question, search, expressions)), text(intro)]
    if search:
        turn.append(tool_call("search_docs", query=question.query, limit=SEARCH_LIMIT))
    turn.extend(tool_call("calculator", expression=expression) for expression in expressions)
    return turn


def _describe_search(call: ToolUseBlock | None, result: ToolResultBlock) -> tuple[str, bool]:
    query = str(call.input.get("query", "")) if call is not None else ""
    if result.is_error:
        return f"The docs search for {query!r} failed: {result.text}", False
    try:
        hits = json.loads(result.text)
    except ValueError:
        hits = None
    if not isinstance(hits, list) or not hits or not all(isinstance(h, dict) for h in hits):
        return f"The docs search for {query!r} found nothing, so the docs cannot answer it.", False
    best = hits[0]
    found = f"{len(hits)} section{'s' if len(hits) != 1 else ''}"
    lines = [
        f"The docs search for {query!r} found {found}. The best match is "
        f'{best.get("source", "?")}, "{best.get("heading", "")}", which says: '
        f'"{best.get("snippet", "")}"'
    ]
    others = [f"{h.get('source', '?')} ({h.get('heading', '')})" for h in hits[1:]]
    if others:
        lines.append(f"Also relevant: {'; '.join(others)}.")
    return "\n".join(lines), True


def _describe_calculation(call: ToolUseBlock | None, result: ToolResultBlock) -> tuple[str, bool]:
    expression = str(call.input.get("expression", "")) if call is not None else "the expression"
    if result.is_error:  # an answer too: this cannot be computed
        return f"The calculator could not evaluate {expression}: {result.text}", True
    return f"The calculator computed {expression} = {result.text}.", True


def _tool_exchange(
    messages: Sequence[Msg],
) -> tuple[dict[str, ToolUseBlock], list[ToolResultBlock]]:
    """The tool calls in `messages` (by id) and their results, in order."""
    calls = {call.id: call for message in messages for call in message.tool_calls}
    results = [
        block
        for message in messages
        for block in message.blocks
        if isinstance(block, ToolResultBlock)
    ]
    return calls, results


def compose_answer(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
    """Write the answer to the latest user message from the tool results that follow it.

    Each paragraph quotes one tool result, in call order, so the answer is true to whatever the
    tools returned, failures included. With no result to quote, it says what the demo can do.

    Example:
        ```python
        from rxagent import Msg, ToolResultBlock, ToolUseBlock
        from rxagent._demo import compose_answer
        from rxagent.models import ModelOptions

        call = ToolUseBlock(id="c1", name="calculator", input={"expression": "2 + 2"})
        result = ToolResultBlock(id="c1", name="calculator", output="4")
        messages = [Msg.user("What is 2 + 2?"), Msg.assistant([call]), Msg.tool(result)]
        answer = compose_answer(messages, [], ModelOptions())
        assert answer == "The calculator computed 2 + 2 = 4."
        ```
    """
    position, _ = latest_question(messages)
    calls, results = _tool_exchange(messages[position + 1 :])
    paragraphs: list[str] = []
    answered = False
    for result in results:
        call = calls.get(result.id)
        if result.name == "search_docs":
            paragraph, useful = _describe_search(call, result)
        elif result.name == "calculator":
            paragraph, useful = _describe_calculation(call, result)
        else:
            paragraph, useful = f"{result.name} returned: {result.text}", not result.is_error
        paragraphs.append(paragraph)
        answered = answered or useful
    if not answered:
        paragraphs.append(CAPABILITIES)
    return "\n\n".join(paragraphs)


def respond(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Any:
    """The demo model's response to a request (a `FunctionModel` function).

    A request with tool results after the latest user message gets the answer composed from
    them; any other gets the plan for that message.
    """
    position, question = latest_question(messages)
    if any(message.role == "tool" for message in messages[position + 1 :]):
        return compose_answer(messages, tools, options)
    return plan_turn(question, [tool.name for tool in tools])
