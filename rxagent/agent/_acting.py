"""Acting: running the tool calls of one response, in parallel or one by one.

`act()` runs one batch: it cuts the batch to the tool-call budget, holds the calls that need
approval (the batch then parks), and runs the others between their PreActing and PostActing.
The building blocks below it are shared with resuming an approved batch (`_resume.py`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rxagent._fast import trusted
from rxagent.agent._approval import needs_approval, park
from rxagent.agent._guarding import screen_tool_call, screen_tool_result, watching
from rxagent.agent._intercepting import execute_intercepted
from rxagent.context import _CURRENT_CALL
from rxagent.errors import ErrorCode, HookFailedError, Reject
from rxagent.events import ErrorEvent, PostActingEvent, PreActingEvent
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock
from rxagent.tools import ToolOutcome

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from rxagent.agent._run import Run

__all__ = [
    "act",
    "close_open_calls",
    "post_acting",
    "pre_acting",
    "remember",
    "run_inline",
    "start_tool",
    "take_reapprovals",
    "tool_outcome",
]

Results = dict[str, ToolResultBlock]
"""The results of a batch so far, by call id."""


async def act(run: Run, calls: Sequence[ToolUseBlock], offered: Collection[str] | None) -> None:
    """Run one batch of tool calls and put their results in memory.

    The run ends here (`run.outcome.ended`) when the batch parks for approval, when an
    interrupt arrived, or when a PostActing hook asked to stop. `offered` are the names of the
    tools offered in the request that made the calls: a call to another tool gets an error
    result.
    """
    agent = run.agent
    calls, cut = run.budget.take(calls)
    waits = [needs_approval(run, call, offered) for call in calls]  # decided before PreActing
    held = [call for call, wait in zip(calls, waits, strict=True) if wait]
    runnable = [call for call, wait in zip(calls, waits, strict=True) if not wait]
    results: Results = {}
    stop = False
    if runnable:
        try:
            if agent.parallel_tool_calls and len(runnable) > 1:
                stop = await _act_parallel(run, runnable, results, offered)
            else:
                stop = await _act_sequential(run, runnable, results, offered)
        except (HookFailedError, Reject):  # a hook fails the run in the middle of the batch
            await close_open_calls(run, results)
            remember(run, calls, results)
            raise
    for call in cut:
        message = (
            f"tool call limit reached (max_tool_calls={agent.max_tool_calls}); the call was not "
            "executed"
        )
        results[call.id] = ToolResultBlock(
            id=call.id, name=call.name, output=message, is_error=True
        )
        await run.events.publish(
            run.events.make(
                ErrorEvent,
                code=ErrorCode.USAGE_LIMIT,
                message=message,
                source=f"tool:{call.name}",
                recoverable=True,
                exception=None,
            )
        )
    again = take_reapprovals(run, results)  # changed by an interceptor into gated arguments
    nested = {c.id: run.nested_waits.pop(c.id) for c in calls if c.id in run.nested_waits}
    if (held or again or nested) and not run.interrupt.requested:
        for call_id in nested:  # what the call said while it waits is not its result
            results.pop(call_id, None)
        waiting = [*held, *again.values()]
        await park(run, (*calls, *cut), results, waiting, stop, rewritten=again, nested=nested)
        return
    remember(run, (*calls, *cut), results)
    if run.tool_failure is not None and await run.fail_for_tools():
        return  # an interceptor refused a call (a usage limit): the run ends, memory paired
    if run.interrupt.requested:
        await run.interrupted("after_tool")
    elif stop:
        run.outcome.stop("hook_stop")
        run.end_step()


def take_reapprovals(run: Run, results: Results) -> dict[str, ToolUseBlock]:
    """The calls a tool interceptor changed into arguments that need approval, by id.

    Their PostActing closed them with an "awaiting approval again" result; that result leaves
    `results` (the call has no result yet: it waits for a human with the changed arguments).
    """
    if not run.reapproval:
        return {}
    again = {call_id: call for call_id, call in run.reapproval.items() if call_id in results}
    run.reapproval.clear()
    for call_id in again:
        del results[call_id]
    return again


def remember(run: Run, calls: Sequence[ToolUseBlock], results: Results) -> None:
    """Append the batch's results to memory, in call order."""
    for call in calls:
        if call.id in results:
            run.memory.append(trusted(Msg, role="tool", content=(results[call.id],)))


async def close_open_calls(run: Run, results: Results) -> None:
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
        result = _error(call, "not completed: the run failed")
        results[call.id] = result
        run.events.deliver(
            run.events.make(
                PostActingEvent, tool_call=call, result=result, stop=False, duration_ms=0.0
            )
        )
    run.open_calls.clear()


async def pre_acting(run: Run, call: ToolUseBlock) -> ToolUseBlock | ToolResultBlock:
    """Dispatch PreActing; return the call to execute, or the result of a refused call."""
    run.open_calls[call.id] = call  # its PreActing is delivered even if a hook fails
    try:
        pre = await run.events.publish(run.events.make(PreActingEvent, tool_call=call))
    except Reject as reject:
        return _error(call, f"Tool call rejected by hook {reject.hook!r}: {reject.reason}")
    if run.interrupt.requested:  # interrupted while PreActing was dispatched: don't start
        return _error(call, "interrupted")
    guards = watching(run, "tool_call")
    if guards is None:
        return pre.tool_call
    refused = await screen_tool_call(run, guards, pre.tool_call)  # the arguments hooks left
    return pre.tool_call if refused is None else refused


async def post_acting(
    run: Run, call: ToolUseBlock, outcome: ToolOutcome | ToolResultBlock, results: Results
) -> bool:
    """Emit the tool's ErrorEvent if any, then PostActing; record the result; return `stop`."""
    by: tuple[str, ...] = ()
    if isinstance(outcome, ToolResultBlock):
        result, duration = outcome, 0.0
    else:
        result, duration, by = outcome.result, outcome.duration_ms, outcome.modified_by
        if outcome.ran:
            run.ctx.tools_used.append(call.name)
        if outcome.group_change is not None:  # the model switched tool groups: the session keeps it
            groups = run.agent.toolkit.switch_groups(run.state.active_groups, outcome.group_change)
            run.state = run.state.model_copy(update={"active_groups": groups})
        if outcome.error_code is not None:
            await run.events.publish(
                run.events.make(
                    ErrorEvent,
                    code=outcome.error_code,
                    message=outcome.error_message or result.text,
                    source=f"tool:{call.name}",
                    recoverable=True,
                    exception=outcome.exception,
                )
            )
        guards = watching(run, "tool_result") if outcome.ran else None
        if guards is not None:  # what the tool brought back is untrusted: the guards see it first
            result = await screen_tool_result(run, guards, call, result)
    run.open_calls.pop(call.id, None)  # its PostActing is delivered even if a hook fails
    results[call.id] = result
    stop = call.id in run.stop_after  # the tool asked to end the run (a handoff)
    post = await run.events.publish(
        run.events.make(
            PostActingEvent,
            tool_call=call,
            result=result,
            stop=stop,
            duration_ms=duration,
            modified_by=by,
        )
    )
    results[call.id] = post.result
    return bool(post.stop)


async def _execute(run: Run, call: ToolUseBlock, offered: Collection[str] | None) -> ToolOutcome:
    _CURRENT_CALL.set(call)  # this task runs in its own copy of the context
    try:
        if run.tool_layers:
            return await execute_intercepted(run, call, offered)
        return await run.agent.toolkit.execute(
            call,
            inject=run.inject,
            timeout=run.agent.tool_timeout,
            active_groups=run.state.active_groups,
            offered=offered,
        )
    finally:
        # wake the run from inside this task: a done-callback would cost another loop tick
        run.events.notify()


def start_tool(
    run: Run, call: ToolUseBlock, offered: Collection[str] | None
) -> asyncio.Task[ToolOutcome]:
    """Start a tool call in a task of its own (parallel calls)."""
    task = run.ctx.loop.create_task(_execute(run, call, offered))
    run.tool_tasks.add(task)
    return task


def tool_outcome(
    run: Run, call: ToolUseBlock, task: asyncio.Task[ToolOutcome]
) -> ToolOutcome | ToolResultBlock:
    """The outcome of a finished tool task; a cancelled one was interrupted."""
    run.tool_tasks.discard(task)
    if task.cancelled():
        return _interrupted(run, call)
    exc = task.exception()
    if exc is not None:  # Toolkit.execute turns tool failures into results; this is a bug
        raise exc
    return task.result()


async def run_inline(
    run: Run, call: ToolUseBlock, offered: Collection[str] | None
) -> ToolOutcome | ToolResultBlock:
    """Run one tool call on the run's own task: no task and no loop tick of its own.

    The run's task is suspended inside the tool meanwhile, so events the tool emits are
    delivered by a drainer task, started only if the tool does emit. An interrupt cancels the
    run's task while it waits here, so the tool sees `CancelledError`, as a tool task would.
    """
    events = run.events
    run.interrupt.waiting_in = "tool"
    events.on_pending = events.start_drainer
    token = _CURRENT_CALL.set(call)
    outcome: ToolOutcome | ToolResultBlock
    try:
        if run.tool_layers:
            outcome = await execute_intercepted(run, call, offered)
        else:
            outcome = await run.agent.toolkit.execute(
                call,
                inject=run.inject,
                timeout=run.agent.tool_timeout,
                active_groups=run.state.active_groups,
                offered=offered,
            )
    except asyncio.CancelledError:
        if not run.absorb_interrupt_cancel():
            raise
        outcome = _interrupted(run, call)
    finally:
        _CURRENT_CALL.reset(token)
        run.interrupt.waiting_in = None
        events.on_pending = None
    await events.join_drainer()  # an interrupt never cancels it: what the tool said is delivered
    if events.pending:
        await events.drain()
    return outcome


def _interrupted(run: Run, call: ToolUseBlock) -> ToolOutcome:
    """The outcome of a call cancelled by an interrupt while it ran."""
    return ToolOutcome(
        result=_error(call, "interrupted"), ran=run.agent.toolkit.get(call.name) is not None
    )


async def _act_sequential(
    run: Run, calls: Sequence[ToolUseBlock], results: Results, offered: Collection[str] | None
) -> bool:
    stop = False
    for call in calls:
        if run.interrupt.requested:
            break
        approved = await pre_acting(run, call)
        if isinstance(approved, ToolResultBlock):
            stop = await post_acting(run, call, approved, results) or stop
            continue
        outcome = await run_inline(run, approved, offered)
        stop = await post_acting(run, approved, outcome, results) or stop
    return stop


async def _act_parallel(
    run: Run, calls: Sequence[ToolUseBlock], results: Results, offered: Collection[str] | None
) -> bool:
    started: list[tuple[ToolUseBlock, asyncio.Task[ToolOutcome] | ToolResultBlock]] = []
    for call in calls:
        if run.interrupt.requested:
            break
        approved = await pre_acting(run, call)
        if isinstance(approved, ToolResultBlock):
            started.append((call, approved))
        else:
            started.append((approved, start_tool(run, approved, offered)))
    stop = False
    for call, pending in started:
        if isinstance(pending, ToolResultBlock):
            stop = await post_acting(run, call, pending, results) or stop
            continue
        await run.events.wait_for(pending)
        stop = await post_acting(run, call, tool_outcome(run, call, pending), results) or stop
    return stop


def _error(call: ToolUseBlock, text: str) -> ToolResultBlock:
    return ToolResultBlock(id=call.id, name=call.name, output=text, is_error=True)
