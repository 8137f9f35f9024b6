"""The demo agent: three real tools, a prompt-rewriting hook and an offline model.

The model plays a fixed first turn from a `ScriptedModel` (thinking, a sentence and two parallel
tool calls), then answers with a `FunctionModel` that reads the real tool results from the
messages it receives, so the answer always quotes what the tools returned.
"""

from __future__ import annotations

import asyncio
import datetime
import json
from typing import TYPE_CHECKING, Any, Final

from rxagent._demo._calculator import calculator
from rxagent._demo._docsearch import search_docs
from rxagent.agent import ReActAgent
from rxagent.events import PreReasoningEvent
from rxagent.hooks import FunctionHook, hook
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock
from rxagent.testing import FunctionModel, ScriptedModel, text, thinking, tool_call
from rxagent.tools import tool

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from rxagent.models import ModelDelta, ModelOptions, ToolSchema

__all__ = [
    "DEMO_EXPRESSION",
    "DEMO_QUERY",
    "DEMO_QUESTION",
    "DemoModel",
    "build_demo_agent",
    "cite_tool_results",
    "compose_answer",
    "word_count",
]

DEMO_QUESTION: Final = "How do hooks work in rxagent, and what is 17 * 23 + 4?"
"""What the user asks."""
DEMO_QUERY: Final = "hooks"
"""What the scripted model searches the docs for."""
DEMO_EXPRESSION: Final = "17 * 23 + 4"
"""What the scripted model asks the calculator."""

SYSTEM_PROMPT: Final = (
    "You are rxagent's demo assistant. Answer questions about rxagent from its documentation "
    "and use the calculator for arithmetic."
)
_HOOK_NAME: Final = "cite_tool_results"
_ANSWER_ORDER: Final = {"search_docs": 0, "calculator": 1}


@tool
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text to count.
    """
    return len(text.split())


def _add_citation_note(event: PreReasoningEvent) -> PreReasoningEvent:
    note = Msg.system(
        f"Today is {datetime.date.today().isoformat()}. Base your answer on tool results and "
        "cite them: name the docs section and quote the computed values.",
        metadata={"added_by": _HOOK_NAME},
    )
    messages = list(event.messages)
    leading = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    messages.insert(leading, note)
    return event.replace(messages=messages)


cite_tool_results: Final[FunctionHook] = hook(PreReasoningEvent, priority=10, name=_HOOK_NAME)(
    _add_citation_note
)
"""A PreReasoning hook that adds a system message: today's date and "cite tool results".

The message goes right after the leading system prompt and carries
`metadata={"added_by": "cite_tool_results"}`, so views can show what the hook added; the hook's
name appears in each request's `modified_by`.
"""


def _first_turn() -> list[Any]:
    return [
        thinking(
            "The user asks two things. How hooks work is in the docs, so I should search them "
            "rather than answer from memory. The arithmetic I should compute exactly with the "
            "calculator. The two lookups are independent, so I can run them in parallel."
        ),
        text("Let me search the docs and compute that at the same time."),
        tool_call("search_docs", query=DEMO_QUERY, limit=3),
        tool_call("calculator", expression=DEMO_EXPRESSION),
    ]


def _latest_tool_exchange(
    messages: Sequence[Msg],
) -> tuple[dict[str, ToolUseBlock], list[ToolResultBlock]]:
    """Return the last assistant message's tool calls (by id) and the results that follow it."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.role == "assistant" and message.tool_calls:
            calls = {call.id: call for call in message.tool_calls}
            results = [
                block
                for later in messages[position + 1 :]
                for block in later.blocks
                if isinstance(block, ToolResultBlock)
            ]
            return calls, results
    return {}, []


def _describe_search(call: ToolUseBlock | None, result: ToolResultBlock) -> str:
    query = str(call.input.get("query", "")) if call is not None else ""
    if result.is_error:
        return f"The docs search for {query!r} failed: {result.text}"
    try:
        hits = json.loads(result.text)
    except ValueError:
        hits = None
    if not isinstance(hits, list) or not hits:
        return f"The docs search for {query!r} found nothing, so I cannot cite the docs."
    best = hits[0]
    found = f"{len(hits)} section{'s' if len(hits) != 1 else ''}"
    lines = [
        f"Hooks: the docs search for {query!r} found {found}. The best match is "
        f'{best.get("source", "?")}, "{best.get("heading", "")}", which says: '
        f'"{best.get("snippet", "")}"'
    ]
    others = [f"{h.get('source', '?')} ({h.get('heading', '')})" for h in hits[1:]]
    if others:
        lines.append(f"Also relevant: {'; '.join(others)}.")
    return "\n".join(lines)


def _describe_calculation(call: ToolUseBlock | None, result: ToolResultBlock) -> str:
    expression = str(call.input.get("expression", "")) if call is not None else "the expression"
    if result.is_error:
        return f"Arithmetic: the calculator could not evaluate {expression}: {result.text}"
    return f"Arithmetic: the calculator computed {expression} = {result.text}."


def compose_answer(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
    """Write the final answer from the tool results in `messages` (a `FunctionModel` function).

    Each paragraph quotes one tool result, so the answer is true to whatever the tools returned,
    failures included.
    """
    calls, results = _latest_tool_exchange(messages)
    if not results:
        return "I have no tool results to answer from."
    paragraphs: list[str] = []
    for result in sorted(results, key=lambda r: _ANSWER_ORDER.get(r.name, len(_ANSWER_ORDER))):
        call = calls.get(result.id)
        if result.name == "search_docs":
            paragraphs.append(_describe_search(call, result))
        elif result.name == "calculator":
            paragraphs.append(_describe_calculation(call, result))
        else:
            paragraphs.append(f"{result.name} returned: {result.text}")
    return "\n\n".join(paragraphs)


async def _paced(source: AsyncIterator[ModelDelta], delay: float) -> AsyncIterator[ModelDelta]:
    try:
        async for delta in source:
            if delta.type in ("text_delta", "thinking_delta", "tool_call_delta"):
                await asyncio.sleep(delay)
            yield delta
    finally:
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()


class DemoModel:
    """The demo's offline chat model: a scripted first turn per run, then a computed answer.

    A request that ends with the user's message starts a run: it gets the scripted turn (thinking
    and two parallel tool calls). Any later request gets the answer composed from the tool
    results, so one model serves any number of runs and sessions (`rxagent serve`).

    Args:
        chunk_size: Characters per streamed text, thinking or tool-argument delta.
        delay: Seconds to wait before each content delta, so a live view visibly streams.
    """

    context_window: int | None = 1_000_000

    def __init__(self, *, chunk_size: int = 4, delay: float = 0.0) -> None:
        if delay < 0:
            raise ValueError(f"delay must be >= 0 seconds, got {delay}")
        self.name = "demo (ScriptedModel + FunctionModel)"
        self.delay = delay
        self.chunk_size = chunk_size
        self.answer = FunctionModel(compose_answer, chunk_size=chunk_size, name="demo-answer")

    def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSchema], options: ModelOptions
    ) -> AsyncIterator[ModelDelta]:
        """Stream the scripted turn first, then answers composed from the tool results."""
        inner: ScriptedModel | FunctionModel = self.answer
        if messages and messages[-1].role == "user":
            inner = ScriptedModel([_first_turn()], chunk_size=self.chunk_size, name="demo-script")
        source = inner.stream(messages, tools, options)
        return _paced(source, self.delay) if self.delay else source


def build_demo_agent(*, chunk_size: int = 4, delay: float = 0.0) -> ReActAgent:
    """Build the demo agent: tools `search_docs`, `calculator`, `word_count`; hook on prompts.

    Example:
        ```python
        from rxagent._demo import DEMO_QUESTION, build_demo_agent

        result = build_demo_agent().call_sync(DEMO_QUESTION)
        assert result.ok and "= 395" in result.text
        ```
    """
    return ReActAgent(
        "demo",
        SYSTEM_PROMPT,
        DemoModel(chunk_size=chunk_size, delay=delay),
        tools=[search_docs, calculator, word_count],
        hooks=[cite_tool_results],
    )
