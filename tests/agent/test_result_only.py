"""`call()` reads only the result: events nobody sees are neither built nor delivered."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent import (
    BaseEvent,
    PostCallEvent,
    ReActAgent,
    ReasoningChunkEvent,
    RetryEvent,
    current_run,
    hook,
    tool,
)
from rxagent.errors import ErrorCode
from rxagent.messages import Msg
from rxagent.models import ModelDelta, ModelOptions, ToolSchema
from rxagent.testing import ScriptedModel, tool_call


@tool(blocking=False)
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: One.
        b: Two.
    """
    return a + b


def _script(texts: list[str], calls: int) -> list[Any]:
    return [tool_call("add", a=i, b=1) for i in range(calls)] + [" ".join(texts) or "done"]


def _agent(script: list[Any], chunk: int, hooks: list[Any]) -> ReActAgent:
    model = ScriptedModel(script, chunk_size=chunk)
    return ReActAgent("a", "sys", model, tools=[add], hooks=hooks)


@settings(max_examples=30)
@given(
    texts=st.lists(st.text(alphabet="abc xyz", min_size=1, max_size=12), max_size=5),
    calls=st.integers(0, 3),
    chunk=st.integers(1, 6),
    watch_chunks=st.booleans(),
)
async def test_call_numbers_and_hooks_see_the_same_run_as_events(
    texts: list[str], calls: int, chunk: int, watch_chunks: bool
) -> None:
    """PostCall's seq, what hooks see, and the result are those of the fully delivered run."""

    def recorder() -> tuple[list[tuple[str, int]], list[Any]]:
        seen: list[tuple[str, int]] = []

        @hook(PostCallEvent, name="last")
        def last(event: PostCallEvent) -> None:
            seen.append((event.type, event.seq))

        @hook(ReasoningChunkEvent, name="chunks")
        def chunks(event: ReasoningChunkEvent) -> None:
            seen.append((event.type, event.seq))

        return seen, [last, chunks] if watch_chunks else [last]

    seen_call, hooks_call = recorder()
    result = await _agent(_script(texts, calls), chunk, hooks_call).call("go", session_id="s")
    seen_events, hooks_events = recorder()
    agent = _agent(_script(texts, calls), chunk, hooks_events)
    delivered = [e async for e in agent.events("go", session_id="s")]
    assert seen_call == seen_events  # same seq numbers, chunks or not
    post = delivered[-1]
    assert isinstance(post, PostCallEvent)
    assert seen_call[-1] == ("post_call", post.seq)
    assert result.text == post.result.text
    assert result.steps == post.result.steps
    assert [e.seq for e in delivered] == list(range(len(delivered)))


class _EmittingModel:
    """A scripted model that emits a RetryEvent between its first two chunks."""

    name = "emitting"
    context_window: int | None = 1_000_000

    def __init__(self, text: str) -> None:
        self.inner = ScriptedModel([text], chunk_size=2)

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSchema], options: ModelOptions
    ) -> AsyncIterator[ModelDelta]:
        count = 0
        async for delta in self.inner.stream(messages, tools, options):
            yield delta
            count += 1
            if count == 1:
                current_run().emit(RetryEvent, attempt=1, delay_s=0.0, code=ErrorCode.RATE_LIMITED)


async def test_events_emitted_while_chunks_are_skipped_still_reach_hooks_in_order() -> None:
    seen: list[str] = []

    @hook(RetryEvent, name="retries")
    def retries(event: RetryEvent) -> None:
        seen.append(f"retry@{event.seq}")

    @hook(PostCallEvent, name="post")
    def post(event: PostCallEvent) -> None:
        seen.append(f"post@{event.seq}")

    def agent() -> ReActAgent:
        model = _EmittingModel("a long answer in chunks")
        return ReActAgent("a", "sys", model, hooks=[retries, post])

    result = await agent().call("go", session_id="s")
    assert result.ok
    assert result.text == "a long answer in chunks"
    seen_call = list(seen)
    assert [s.split("@")[0] for s in seen_call] == ["retry", "post"]
    seen.clear()
    delivered: list[BaseEvent] = [e async for e in agent().events("go", session_id="s")]
    assert seen == seen_call  # the same place in the run, the same seq numbers
    types = [e.type for e in delivered]
    assert types.index("retry") == types.index("reasoning_chunk") + 1
