"""Interrupt a running agent, then resume the same session from consistent memory.

`agent.interrupt()` stops a run at its next checkpoint: a running tool is cancelled (it sees
`CancelledError`), its call gets an "interrupted" result, the run ends with `interrupted=True`,
and the state is saved. The next call on the session simply goes on.

Run it:

    python -m examples.interrupt_resume
"""

import asyncio

from rxagent import ReActAgent, tool
from rxagent.testing import ScriptedModel, tool_call

__all__ = ["build_report", "main"]

started = asyncio.Event()
attempts: list[str] = []


@tool
async def build_report() -> str:
    """Build the quarterly report (slow the first time)."""
    attempts.append("start")
    if len(attempts) == 1:
        started.set()
        try:
            await asyncio.sleep(3600)  # far longer than the run waits: the interrupt cancels it
        except asyncio.CancelledError:
            attempts.append("cancelled, cleaned up")
            raise
    return "report ready"


async def main() -> None:
    """Interrupt the first run while its tool runs, then resume the session."""
    model = ScriptedModel([tool_call("build_report"), tool_call("build_report"), "Done."])
    agent = ReActAgent("reports", "You build reports.", model, tools=[build_report])

    async def interrupt_once_started() -> None:
        await started.wait()
        agent.interrupt(msg="Stopped by the user.")

    interrupter = asyncio.create_task(interrupt_once_started())
    first = await agent.call("Build the report.")
    await interrupter
    print(f"first run: {first.stop_reason}, {first.text!r}")
    assert first.interrupted
    assert attempts == ["start", "cancelled, cleaned up"]

    memory = (await agent.state_dict())["memory"]
    print("memory:", [m["role"] for m in memory], memory[-1]["content"][0]["output"])
    assert [m["role"] for m in memory] == ["user", "assistant", "tool"]

    resumed = await agent.call("Please try again.")
    print(f"resumed: {resumed.stop_reason}, {resumed.text!r}")
    assert resumed.ok
    assert resumed.text == "Done."
    assert attempts[-1] == "start"  # the second attempt ran to the end


if __name__ == "__main__":
    asyncio.run(main())
