"""Model and tool calls through the run's interceptors (`rxagent.interceptors`).

Used only when the run has interceptors of that kind; without them the engine makes the plain
call (`reason()`, `Toolkit.execute`), so their cost is one attribute read per call.

A model step builds an `Onion` whose innermost layer streams the model: each delta reaches
subscribers as the model produces it (a `ReasoningChunkEvent`), and the call's usage counts in
the run at once, so an interceptor (`UsageLimits`) sees it. A response that did not come from
the model in this step (a cache hit) is replayed as deltas, so subscribers always see chunks.
Once a delta reached subscribers, `call_next` raises `InterceptorContractError`: a retry after
that is a new step (a recoverable error restarts it, as for a broken stream).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Final

from rxagent._fast import trusted
from rxagent.agent._approval import needs_approval
from rxagent.agent._reasoning import model_failed, publish_partial
from rxagent.errors import (
    AgentRunError,
    ErrorCode,
    InterceptorContractError,
    InterceptorFailedError,
    ProviderError,
)
from rxagent.events import ReasoningChunkEvent
from rxagent.interceptors import ModelCall, Onion, ToolCall
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock, freeze, new_id, thaw
from rxagent.models.base import (
    ModelResponse,
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
)
from rxagent.output import OutputStream
from rxagent.tools import ToolOutcome

if TYPE_CHECKING:
    from collections.abc import Collection

    from rxagent.agent._run import Run
    from rxagent.events import PreReasoningEvent
    from rxagent.models.base import ModelDelta
    from rxagent.output import OutputPlan

__all__ = ["execute_intercepted", "reason_intercepted"]

AGAIN: Final = (
    "call_next was called again after the first delta of this step reached subscribers; "
    "retry before the first delta, or raise a recoverable AgentRunError to start a new step"
)
NEEDS_APPROVAL_AGAIN: Final = (
    "awaiting approval again: interceptor(s) {names} changed the arguments into ones that "
    "need approval"
)


_ONE_REQUEST: Final = Usage(requests=1)


class _Interrupted(BaseException):
    """An interrupt arrived mid-stream: the step ends (not an Exception, so no layer eats it)."""


class _ModelStep:
    """One step's model call through the interceptors: streaming, counting, replaying."""

    __slots__ = ("output", "output_at", "run", "started", "streamed", "usage")

    def __init__(self, run: Run, plan: OutputPlan | None) -> None:
        self.run = run
        self.output = OutputStream(plan) if plan is not None else None
        self.output_at = 0
        self.started = False  # a delta of this step reached subscribers
        self.streamed: ModelResponse | None = None  # the last response the model streamed
        self.usage = Usage()

    def is_started(self) -> bool:
        return self.started

    async def innermost(self, call: ModelCall) -> ModelResponse:
        """Stream `call.model`, publishing each delta; count its usage in the run."""
        if self.started:
            raise InterceptorContractError(AGAIN)
        run = self.run
        events = run.events
        if events.pending:  # what the interceptors emitted (a FallbackEvent) comes first
            await events.drain()
        interrupt = run.interrupt
        builder = ResponseBuilder(id_factory=run.next_call_id)
        model = call.model
        iterator = model.stream(list(call.messages), list(call.tools), call.options).__aiter__()
        try:
            while True:
                interrupt.waiting_in = "model"
                events.on_pending = events.start_drainer
                try:
                    delta = await iterator.__anext__()
                    events.on_pending = None
                    if events.drainer is not None:
                        await events.join_drainer()
                except StopAsyncIteration:
                    break
                except (AgentRunError, asyncio.CancelledError):
                    raise
                except Exception as exc:  # an untyped model failure: typed here, once
                    raise ProviderError(
                        f"the model {model.name!r} failed: {type(exc).__name__}: {exc}",
                        source="model",
                    ) from exc
                finally:
                    interrupt.waiting_in = None
                    events.on_pending = None
                await self._publish(builder, delta)
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()
            if events.drainer is not None:
                await events.join_drainer()
        usage = builder.usage
        if usage.requests == 0:
            usage = usage + _ONE_REQUEST
        usage = run.priced(model, usage)  # a fallback model at its own price
        response = trusted(
            ModelResponse,
            message=builder.build(),
            usage=builder.usage,
            finish_reason=builder.finish_reason,
        )
        self.usage = self.usage + usage
        run.ctx.usage = run.ctx.usage + usage
        self.streamed = response
        return response

    async def _publish(self, builder: ResponseBuilder, delta: ModelDelta) -> None:
        run = self.run
        position = builder.add(delta)
        if run.interrupt.requested:
            raise _Interrupted
        if position >= 0:
            self.started = True
            await run.events.publish(
                run.events.make(ReasoningChunkEvent, delta=delta, index=position)
            )
            if self.output is not None:
                self.output_at = position
                await publish_partial(run, self.output.feed(delta), position)

    async def replay(self, message: Msg) -> Msg:
        """Publish a response that no model streamed in this step; return it as this run's.

        It keeps its tool-call ids (so a cached answer asks the same next request), except an
        id the session already used, which is replaced.
        """
        builder = ResponseBuilder()
        blocks = []
        used = {c.id for m in self.run.memory for c in m.tool_calls} if message.tool_calls else ()
        for index, block in enumerate(message.blocks):
            if isinstance(block, ToolUseBlock) and block.id in used:  # never an id used here
                block = block.model_copy(update={"id": self.run.next_call_id()})
            blocks.append(block)
            for delta in _deltas(block, index):
                await self._publish(builder, delta)
        return message.model_copy(update={"id": new_id(), "content": tuple(blocks)})


def _deltas(block: object, index: int) -> list[ModelDelta]:
    if isinstance(block, ToolUseBlock):
        args = block.raw_input if block.raw_input is not None else json.dumps(thaw(block.input))
        return [
            ToolCallDelta(index=index, id=block.id, name=block.name),
            ToolCallDelta(index=index, args=args),
        ]
    text = getattr(block, "text", None)
    if isinstance(text, str) and text:
        return [TextDelta(index=index, text=text)]
    thinking = getattr(block, "thinking", None)
    if isinstance(thinking, str):
        return [
            ThinkingDelta(index=index, text=thinking, signature=getattr(block, "signature", None))
        ]
    return []


async def reason_intercepted(
    run: Run, pre: PreReasoningEvent
) -> tuple[Msg, Usage, str | None] | None:
    """`reason()` through the run's model interceptors.

    `run.model_modified_by` then names who changed the request or the response.
    """
    ctx = run.ctx
    step = _ModelStep(run, run.output_plan)
    onion = Onion(
        run.model_layers, step.innermost, ModelCall, ModelResponse, started=step.is_started
    )
    call = trusted(  # the request PreReasoning's hooks left: valid already
        ModelCall, messages=pre.messages, tools=pre.tools, options=pre.options, model=ctx.model
    )
    try:
        response = await onion(call)
        if response is step.streamed:
            message = response.message
        elif not step.started:  # a response no model streamed: subscribers still see chunks
            message = await step.replay(response.message)
        else:  # rewritten after its deltas went out: PostReasoning says by whom
            message = response.message
    except _Interrupted:
        await run.interrupted("chunk")
        return None
    except asyncio.CancelledError:
        if not run.absorb_interrupt_cancel():
            raise
        await run.interrupted("chunk")
        return None
    except (InterceptorContractError, InterceptorFailedError) as exc:
        await run.events.join_drainer()
        name = exc.interceptor
        await run.fail(ErrorCode.UNKNOWN, str(exc), source=f"interceptor:{name}", exception=exc)
        return None
    except AgentRunError as exc:
        if exc.source.startswith("interceptor:"):  # refused by one (a usage limit)
            await run.fail(exc.code, str(exc), source=exc.source, exception=exc)
        else:
            await model_failed(run, step.started, exc)
        return None
    except Exception as exc:  # pragma: no cover - the onion types every other failure
        await model_failed(run, step.started, exc)
        return None
    if run.events.pending:  # emitted by interceptors after the last chunk: before PostReasoning
        await run.events.drain()
    if step.output is not None:
        await publish_partial(run, step.output.close(), step.output_at)
    run.model_modified_by = tuple(onion.modified_by)
    return message, step.usage, response.finish_reason


async def execute_intercepted(
    run: Run, call: ToolUseBlock, offered: Collection[str] | None
) -> ToolOutcome:
    """`Toolkit.execute` through the run's tool interceptors.

    An interceptor's typed failure (`UsageLimitError`, say) gives the call an error result, and
    the run ends with it after the batch (`run.tool_failure`); any other exception is named
    after its interceptor the same way.
    """
    ran: list[ToolOutcome] = []

    async def innermost(tool_call: ToolCall) -> ToolResultBlock:
        if tool_call.id != call.id:
            raise InterceptorContractError(
                f"an interceptor changed the tool call's id from {call.id!r} to "
                f"{tool_call.id!r}; change only name and arguments"
            )
        block = call
        if tool_call.name != call.name or tool_call.arguments != call.input:
            block = ToolUseBlock(id=call.id, name=tool_call.name, input=freeze(tool_call.arguments))
            if needs_approval(run, block, offered):  # the batch parks with the changed call
                run.reapproval[call.id] = block
                text = NEEDS_APPROVAL_AGAIN.format(names=", ".join(onion.modified_by))
                return ToolResultBlock(id=call.id, name=call.name, output=text, is_error=True)
        outcome = await run.agent.toolkit.execute(
            block,
            inject=run.inject,
            timeout=run.agent.tool_timeout,
            active_groups=run.state.active_groups,
            offered=offered,
        )
        ran.append(outcome)
        return outcome.result

    onion = Onion(run.tool_layers, innermost, ToolCall, ToolResultBlock)
    tool_call = trusted(ToolCall, id=call.id, name=call.name, arguments=call.input)
    try:
        result = await onion(tool_call)
    except (AgentRunError, InterceptorContractError, InterceptorFailedError) as exc:
        return _refused(run, call, exc)
    if result.id != call.id:
        return _refused(
            run,
            call,
            InterceptorContractError(
                f"a tool interceptor returned the result of call {result.id!r} for call "
                f"{call.id!r}; keep result.id equal to call.id",
                interceptor=onion.modified_by[-1] if onion.modified_by else "",
            ),
        )
    by = tuple(onion.modified_by)
    if ran and result is ran[-1].result:
        outcome = ran[-1]
        return outcome if not by else _with(outcome, result, by)
    return ToolOutcome(result=result, ran=bool(ran), modified_by=by)


def _with(outcome: ToolOutcome, result: ToolResultBlock, by: tuple[str, ...]) -> ToolOutcome:
    return ToolOutcome(
        result=result,
        error_code=outcome.error_code,
        error_message=outcome.error_message,
        exception=outcome.exception,
        duration_ms=outcome.duration_ms,
        group_change=outcome.group_change,
        ran=outcome.ran,
        modified_by=by,
    )


def _refused(run: Run, call: ToolUseBlock, exc: Exception) -> ToolOutcome:
    """The outcome of a call an interceptor failed; the run ends after the batch."""
    if isinstance(exc, AgentRunError):
        code, source = exc.code, exc.source
    else:
        name = getattr(exc, "interceptor", "")
        code, source = ErrorCode.UNKNOWN, f"interceptor:{name}"
    if run.tool_failure is None:
        run.tool_failure = (code, str(exc), source, exc)
    text = f"not executed: {exc}"
    return ToolOutcome(
        result=ToolResultBlock(id=call.id, name=call.name, output=text, is_error=True),
        ran=False,
    )
