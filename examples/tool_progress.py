"""A long tool that reports progress: each `yield` is an `ActingChunkEvent` in the run's stream.

Write the tool as an async generator: every value it yields is progress, and the `ToolResult` it
yields last is its result. Progress arrives between the call's `PreActingEvent` and
`PostActingEvent`, so a UI can show it while the tool runs.

Run it:

    python -m examples.tool_progress
    rxagent run "Fetch 3 files" --agent examples.tool_progress:agent
"""

import asyncio
import re
from collections.abc import AsyncIterator

from rxagent import ActingChunkEvent, ModelOptions, Msg, PostCallEvent, ReActAgent, ToolSchema, tool
from rxagent.testing import FunctionModel, Turn, tool_call
from rxagent.tools import ToolResult

__all__ = ["agent", "download", "main"]


@tool
async def download(files: int) -> AsyncIterator[dict[str, int] | ToolResult]:
    """Download some files.

    Args:
        files: How many.
    """
    for done in range(1, files + 1):
        await asyncio.sleep(0)  # the real work would be here
        yield {"done": done, "of": files}
    yield ToolResult(f"Downloaded {files} files.")


def fetch(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: download as many files as asked for, then say what the tool said."""
    last = messages[-1]
    if last.role == "tool":
        return last.tool_results[0].text
    numbers = re.findall(r"\d+", last.text)
    return tool_call("download", files=int(numbers[0]) if numbers else 3)


agent = ReActAgent("fetcher", "You fetch files.", FunctionModel(fetch), tools=[download])


async def main() -> None:
    """Show each progress report as it arrives, then the answer."""
    progress: list[object] = []
    async for event in agent.events("Fetch 3 files."):
        if isinstance(event, ActingChunkEvent):
            print(f"{event.tool_name}: {event.chunk}")
            progress.append(event.chunk)
        elif isinstance(event, PostCallEvent):
            print("answer:", event.result.text)
            assert event.result.text == "Downloaded 3 files."
    assert progress == [{"done": n, "of": 3} for n in (1, 2, 3)]


if __name__ == "__main__":
    asyncio.run(main())
