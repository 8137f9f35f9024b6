"""Acting: running the tool calls of one response, in parallel or one by one."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rxagent._fast import trusted
from rxagent.agent._approval import needs_approval, park
from rxagent.context import _CURRENT_CALL
from rxagent.errors import (
    ErrorCode,
    HookFailedError,
    Reject,
)
from rxagent.events import (
    ErrorEvent,
    PostActingEvent,
    PreActingEvent,
)
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.agent._run import Phase, Run
    from rxagent.tools import ToolOutcome

__all__ = ["act"]


async def act(run: Run, calls: Sequence[ToolUseBlock]) -> Phase | None:
    """Run one batch of tool calls; return a phase when the run must end, else None."""
    ctx = run.ctx
    agent = run.agent
    limit = agent.max_tool_calls
    cut: Sequence[ToolUseBlock] = ()
    if limit is not None:
        remaining = max(limit - run.tool_calls_made, 0)
        calls, cut = calls[:remaining], calls[remaining:]
        if run.tool_calls_made + len(calls) >= limit:
            run.tools_withdrawn = True
    run.tool_calls_made += len(calls)
    waits = [needs_approval(run, call) for call in calls]  # decided before any PreActing
    held = [call for call, wait in zip(calls, waits, strict=True) if wait]
    runnable = [call for call, wait in zip(calls, waits, strict=True) if not wait]
    results: dict[str, ToolResultBlock] = {}
    stop = False
    if runnable:
        try:
            if agent.parallel_tool_calls and len(runnable) > 1:
                stop = await _act_parallel(run, runnable, results)
            else:
                stop = await _act_sequential(run, runnable, results)
        except (HookFailedError, Reject):  # a hook fails the run in the middle of the batch
            await _close_open_calls(run, results)
            _remember(run, calls, results)
            raise
    for call in cut:
        message = f"tool call limit reached (max_tool_calls={limit}); the call was not executed"
        results[call.id] = ToolResultBlock(
            id=call.id, name=call.name, output=message, is_error=True
        )
        await run.publish(
            ctx._make(
                ErrorEvent,
                code=ErrorCode.USAGE_LIMIT,
                message=message,
                source=f"tool:{call.name}",
                recoverable=True,
                exception=None,
            )
        )
    if held and not ctx._interrupt_requested:
        return await park(run, (*calls, *cut), results, held, stop)
    _remember(run, (*calls, *cut), results)
    if ctx._interrupt_requested:
        return await run.interrupted("after_tool")
    if stop:
        run.stop_reason = "hook_stop"
        return run.end_step("finish")
    return None


def _remember(run: Run, calls: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock]) -> None:
    """Append the batch's results to memory, in call order."""
    for call in calls:
        if call.id in results:
            run.ctx._memory.append(trusted(Msg, role="tool", content=(results[call.id],)))


async def _close_open_calls(run: Run, results: dict[str, ToolResultBlock]) -> None:
    """After a hook failed the run mid-batch: stop the tools, close every open call.

    Running tool tasks are cancelled and awaited, so none outlives the run; each call whose
    PreActing was delivered gets a PostActing (without hooks: the run is failing already).
    """
    tasks = list(run.tool_tasks)
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
    run.tool_tasks.clear()
    for call in list(run.open_calls.values()):
        result = ToolResultBlock(
            id=call.id, name=call.name, output="not completed: the run failed", is_error=True
        )
        results[call.id] = result
        run._deliver(
            run.ctx._make(
                PostActingEvent, tool_call=call, result=result, stop=False, duration_ms=0.0
            )
        )
    run.open_calls.clear()


async def _pre_acting(run: Run, call: ToolUseBlock) -> ToolUseBlock | ToolResultBlock:
    """Dispatch PreActing; return the call to execute, or the result of a refused call."""
    run.open_calls[call.id] = call  # its PreActing is delivered even if a hook fails
    try:
        pre = await run.publish(run.ctx._make(PreActingEvent, tool_call=call))
    except Reject as reject:
        return ToolResultBlock(
            id=call.id,
            name=call.name,
            output=f"Tool call rejected by hook {reject.hook!r}: {reject.reason}",
            is_error=True,
        )
    if run.ctx.interrupted:  # interrupted while PreActing was dispatched: don't start
        return ToolResultBlock(id=call.id, name=call.name, output="interrupted", is_error=True)
    return pre.tool_call


async def _post_acting(
    run: Run,
    call: ToolUseBlock,
    outcome: ToolOutcome | ToolResultBlock,
    results: dict[str, ToolResultBlock],
) -> bool:
    """Emit the tool's ErrorEvent if any, then PostActing; record the result; return stop."""
    ctx = run.ctx
    if isinstance(outcome, ToolResultBlock):
        result, duration = outcome, 0.0
    else:
        result, duration = outcome.result, outcome.duration_ms
        if outcome.group_change is not None:  # the model switched tool groups: the session keeps it
            groups = run.agent.toolkit.switch_groups(run.state.active_groups, outcome.group_change)
            run.state = run.state.model_copy(update={"active_groups": groups})
        if outcome.error_code is not None:
            await run.publish(
                ctx._make(
                    ErrorEvent,
                    code=outcome.error_code,
                    message=outcome.error_message or result.text,
                    source=f"tool:{call.name}",
                    recoverable=True,
                    exception=outcome.exception,
                )
            )
    run.open_calls.pop(call.id, None)  # its PostActing is delivered even if a hook fails
    results[call.id] = result
    post = await run.publish(
        ctx._make(PostActingEvent, tool_call=call, result=result, stop=False, duration_ms=duration)
    )
    results[call.id] = post.result
    return bool(post.stop)


async def _execute(run: Run, call: ToolUseBlock) -> ToolOutcome:
    _CURRENT_CALL.set(call)  # this task runs in its own copy of the context
    try:
        return await run.agent.toolkit.execute(
            call,
            inject=run.inject,
            timeout=run.agent.tool_timeout,
            active_groups=run.state.active_groups,
        )
    finally:
        # wake the run from inside this task: a done-callback would cost another loop tick
        run.ctx._notify()


def _start_tool(run: Run, call: ToolUseBlock) -> asyncio.Task[ToolOutcome]:
    run.ctx.tools_used.append(call.name)
    task = run.ctx.loop.create_task(_execute(run, call))
    run.tool_tasks.add(task)
    return task


def _outcome(
    run: Run, call: ToolUseBlock, task: asyncio.Task[ToolOutcome]
) -> ToolOutcome | ToolResultBlock:
    run.tool_tasks.discard(task)
    if task.cancelled():
        return ToolResultBlock(id=call.id, name=call.name, output="interrupted", is_error=True)
    exc = task.exception()
    if exc is not None:  # Toolkit.execute turns tool failures into results; this is a bug
        raise exc
    return task.result()


async def _wait_for(run: Run, task: asyncio.Task[Any]) -> None:
    """Wait for `task`, delivering events tools emit meanwhile."""
    ctx = run.ctx
    while True:
        if ctx._pending:
            await run.drain()
        elif task.done():
            return
        else:
            waiter = ctx._waiter = ctx.loop.create_future()
            try:
                await waiter
            finally:
                ctx._waiter = None


async def _run_inline(run: Run, call: ToolUseBlock) -> ToolOutcome | ToolResultBlock:
    """Run one tool call on the run's own task: no task and no loop tick of its own.

    The run's task is suspended inside the tool meanwhile, so events the tool emits are
    delivered by a drainer task, started only if the tool does emit. An interrupt cancels the
    run's task while it waits here, so the tool sees `CancelledError`, as a tool task would.
    """
    ctx = run.ctx
    ctx.tools_used.append(call.name)
    run.awaiting_tool = True
    ctx._on_pending = run.start_drainer
    token = _CURRENT_CALL.set(call)
    outcome: ToolOutcome | ToolResultBlock
    try:
        outcome = await run.agent.toolkit.execute(
            call,
            inject=run.inject,
            timeout=run.agent.tool_timeout,
            active_groups=run.state.active_groups,
        )
    except asyncio.CancelledError:
        if not run.absorb_interrupt_cancel():
            raise
        outcome = ToolResultBlock(id=call.id, name=call.name, output="interrupted", is_error=True)
    finally:
        _CURRENT_CALL.reset(token)
        run.awaiting_tool = False
        ctx._on_pending = None
    await run.join_drainer()  # an interrupt never cancels it: what the tool said is delivered
    if ctx._pending:
        await run.drain()
    return outcome


async def _act_sequential(
    run: Run, calls: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock]
) -> bool:
    stop = False
    for call in calls:
        if run.ctx._interrupt_requested:
            break
        approved = await _pre_acting(run, call)
        if isinstance(approved, ToolResultBlock):
            stop = await _post_acting(run, call, approved, results) or stop
            continue
        outcome = await _run_inline(run, approved)
        stop = await _post_acting(run, approved, outcome, results) or stop
    return stop


async def _act_parallel(
    run: Run, calls: Sequence[ToolUseBlock], results: dict[str, ToolResultBlock]
) -> bool:
    started: list[tuple[ToolUseBlock, asyncio.Task[ToolOutcome] | ToolResultBlock]] = []
    for call in calls:
        if run.ctx._interrupt_requested:
            break
        approved = await _pre_acting(run, call)
        if isinstance(approved, ToolResultBlock):
            started.append((call, approved))
        else:
            started.append((approved, _start_tool(run, approved)))
    stop = False
    for call, pending in started:
        if isinstance(pending, ToolResultBlock):
            stop = await _post_acting(run, call, pending, results) or stop
            continue
        await _wait_for(run, pending)
        stop = await _post_acting(run, call, _outcome(run, call, pending), results) or stop
    return stop
