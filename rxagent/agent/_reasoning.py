"""Reasoning: one model call, its chunks streamed to subscribers, and its failures.

`reason()` streams the model's deltas as `ReasoningChunkEvent`s (and, for structured output,
`OutputChunkEvent`s with the partial object), builds the response, and counts its usage. A
stream that breaks after chunks reached the run restarts the step (a new PreReasoning);
retrying before the first chunk is the model client's job.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import AgentRunError, ErrorCode
from rxagent.events import ErrorEvent, OutputChunkEvent, ReasoningChunkEvent
from rxagent.models.base import ModelDelta, ResponseBuilder, Usage
from rxagent.output import NO_PARTIAL, OutputStream

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from rxagent.agent._run import Run
    from rxagent.events import PreReasoningEvent
    from rxagent.messages import Msg

__all__ = ["MAX_RESTARTS", "model_failed", "publish_partial", "reason"]

MAX_RESTARTS: Final = 2
"""How often one step restarts after its model stream broke with a recoverable error."""


async def reason(run: Run, pre: PreReasoningEvent) -> tuple[Msg, Usage, str | None] | None:
    """Call the model with the request in `pre`; return its response, usage and finish reason.

    None when there is no response: the run ended (the model failed, or an interrupt arrived
    mid-stream: see `run.outcome`), or the stream broke and the step starts again.
    """
    ctx = run.ctx
    events = run.events
    builder = ResponseBuilder(id_factory=run.next_call_id)
    publish = events.publish
    make = events.make
    iterator = ctx.model.stream(list(pre.messages), list(pre.tools), pre.options).__aiter__()
    plan = run.output_plan
    output = OutputStream(plan) if plan is not None else None
    output_at = 0
    interrupt = run.interrupt
    start_drainer = events.start_drainer  # bound once: it is set again before every chunk
    # chunks nobody sees (no hook, a subscriber that reads only the result) are not built
    chunks_seen = events.wants(ReasoningChunkEvent)
    if output is not None and not events.wants(OutputChunkEvent):
        output = None  # the partial objects exist only for their events
    try:
        while True:
            interrupt.waiting_in = "model"
            # what the model emits while awaited (a RetryEvent before a retry) is delivered at
            # once by a drainer task, as for a tool running on the run's task
            events.on_pending = start_drainer
            try:
                delta = await iterator.__anext__()
                events.on_pending = None
                if events.drainer is not None:  # its events come before this chunk
                    await events.join_drainer()
                position = builder.add(delta)
            except StopAsyncIteration:
                break
            except asyncio.CancelledError:
                if not run.absorb_interrupt_cancel():
                    raise
                await run.interrupted("chunk")
                return None
            except Exception as exc:
                await model_failed(run, builder.started, exc)
                return None
            finally:
                interrupt.waiting_in = None
                events.on_pending = None
            if interrupt.requested:
                await run.interrupted("chunk")
                return None
            if position >= 0:
                if chunks_seen:
                    await publish(make(ReasoningChunkEvent, delta=delta, index=position))
                elif events.skip():  # what a hook or tool emitted meanwhile goes out here
                    await events.drain()
                if output is not None:
                    output_at = position
                    await publish_partial(run, output.feed(delta), position)
        if output is not None:  # the end of the text completes a top-level number
            await publish_partial(run, output.close(), output_at)
    finally:
        await _close(iterator, run)
    usage = builder.usage
    if usage.requests == 0:
        usage = usage + Usage(requests=1)
    usage = run.priced(ctx.model, usage)
    ctx.usage = ctx.usage + usage
    return builder.build(), usage, builder.finish_reason


async def _close(iterator: AsyncIterator[ModelDelta], run: Run) -> None:
    """Close the model's stream, and deliver what was emitted while it was awaited."""
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()
    if run.events.drainer is not None:
        await run.events.join_drainer()


async def model_failed(run: Run, started: bool, exc: Exception) -> None:
    """The model stream raised: restart the step (a recoverable break mid-stream), or fail.

    `started` says whether a delta of the step reached the run already.
    """
    await run.events.join_drainer()  # what it emitted (retries) comes before the failure
    if isinstance(exc, AgentRunError):
        if exc.recoverable and started and run.budget.restarts < MAX_RESTARTS:
            await _restart_step(run, exc)
        else:
            await run.fail(exc.code, str(exc), source="model", exception=exc, recoverable=False)
        return
    await run.fail(
        ErrorCode.PROVIDER_ERROR,
        f"the model {run.ctx.model.name!r} failed: {type(exc).__name__}: {exc}",
        source="model",
        exception=exc,
    )


async def _restart_step(run: Run, exc: AgentRunError) -> None:
    """Report a stream that broke after chunks reached the run; the step starts again."""
    run.budget.restarts += 1
    event = run.events.make(
        ErrorEvent,
        code=exc.code,
        message=f"the model stream broke ({exc}); the step starts again",
        source="model",
        recoverable=True,
        exception=type(exc).__name__,
    )
    await run.events.publish(event)


async def publish_partial(run: Run, partial: Any, index: int) -> None:
    """Publish an `OutputChunkEvent` when the partial output changed."""
    if partial is not NO_PARTIAL:
        await run.events.publish(run.events.make(OutputChunkEvent, partial=partial, index=index))
