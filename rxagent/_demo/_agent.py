"""The demo agent: three real tools, a prompt-rewriting hook and an offline model.

The model reads the latest user message: its first turn (thinking, a sentence and the tool calls
that apply, in parallel) comes from the question's keywords and arithmetic, and its answer from
the real tool results in the messages it receives, so the answer always quotes what the tools
returned. See `rxagent._demo._answer`.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import TYPE_CHECKING, Final

from rxagent._demo._answer import respond
from rxagent._demo._calculator import calculator
from rxagent._demo._docsearch import search_docs
from rxagent.agent import ReActAgent
from rxagent.events import PreReasoningEvent
from rxagent.hooks import FunctionHook, hook
from rxagent.messages import Msg
from rxagent.testing import FunctionModel
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
    "word_count",
]

DEMO_QUESTION: Final = "How do hooks work in rxagent, and what is 17 * 23 + 4?"
"""What the user asks."""
DEMO_QUERY: Final = "hooks"
"""What the demo model searches the docs for, read from `DEMO_QUESTION`."""
DEMO_EXPRESSION: Final = "17 * 23 + 4"
"""What the demo model asks the calculator, read from `DEMO_QUESTION`."""

SYSTEM_PROMPT: Final = (
    "You are rxagent's demo assistant. Answer questions about rxagent from its documentation "
    "and use the calculator for arithmetic."
)
_HOOK_NAME: Final = "cite_tool_results"


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
    """The demo's offline chat model: it answers the question it is asked, from real tools.

    For the latest user message it first calls the tools that apply (a docs search for its
    keywords, the calculator for its arithmetic, in parallel), then writes the answer from their
    results; a message that neither applies to gets an honest answer saying what the demo can
    do. It reads everything from the request, so one model serves any number of runs and
    sessions (`rxagent serve`, `rxagent chat`). Deterministic and offline.

    Args:
        chunk_size: Characters per streamed text, thinking or tool-argument delta.
        delay: Seconds to wait before each content delta, so a live view visibly streams.

    Example:
        ```python
        from rxagent._demo import build_demo_agent

        agent = build_demo_agent()
        assert "17 * 23 = 391" in agent.call_sync("What is 17 * 23?").text
        hooks = agent.call_sync("What are hooks?")
        assert hooks.tools_used == ("search_docs",) and "hook" in hooks.text.lower()
        ```
    """

    context_window: int | None = 1_000_000

    def __init__(self, *, chunk_size: int = 4, delay: float = 0.0) -> None:
        if delay < 0:
            raise ValueError(f"delay must be >= 0 seconds, got {delay}")
        self.name = "demo (offline)"
        self.delay = delay
        self.chunk_size = chunk_size

    def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSchema], options: ModelOptions
    ) -> AsyncIterator[ModelDelta]:
        """Stream the plan for the latest user message, or the answer from its tool results."""
        # a model per request, so no request is kept once it is answered
        model = FunctionModel(respond, chunk_size=self.chunk_size, name=self.name)
        source = model.stream(messages, tools, options)
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
