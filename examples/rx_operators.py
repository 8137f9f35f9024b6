"""Subscribe to a run with Rx operators: `agent.stream(...)` is a cold `reactivex.Observable`.

`rxagent.rx` has typed operators over a run's events (`text()`, `tool_calls()`, `results()`,
`final_result()`, `of_type(...)`), and every RxPY operator composes with them. Each subscription
is a run of its own; disposing of it cancels the run.

Run it:

    python -m examples.rx_operators
    rxagent run "Weather in Paris and Rome?" --agent examples.rx_operators:agent
"""

import asyncio

from reactivex import operators as ops

from rxagent import (
    ModelOptions,
    Msg,
    PostActingEvent,
    ReActAgent,
    ToolSchema,
    ToolUseBlock,
    rx,
    tool,
)
from rxagent.testing import FunctionModel, Turn, tool_call

__all__ = ["agent", "main", "weather"]

CITIES = ("Paris", "Rome", "Oslo")


@tool
def weather(city: str) -> str:
    """Today's weather in a city.

    Args:
        city: The city.
    """
    return f"{city}: sunny"


def forecaster(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: look up every city named (in parallel), then sum the results up."""
    results: list[str] = []
    for msg in reversed(messages):  # the results of this step's calls come last
        if msg.role != "tool":
            break
        results.insert(0, msg.tool_results[0].text)
    if results:
        return "Today: " + "; ".join(results) + "."
    text = messages[-1].text.lower()
    asked = [city for city in CITIES if city.lower() in text] or [CITIES[0]]
    return [tool_call("weather", city=city) for city in asked]


agent = ReActAgent(
    "forecast", "You report the weather.", FunctionModel(forecaster, chunk_size=6), tools=[weather]
)


def describe(call: ToolUseBlock) -> str:
    """A tool call as `name(arguments)`."""
    return f"{call.name}({', '.join(map(str, call.input.values()))})"


async def main() -> None:
    """Four subscriptions, four runs: live text, tool calls, tool results, the result."""
    question = "Weather in Paris and Rome?"

    done = asyncio.Event()
    agent.stream(question).pipe(rx.text()).subscribe(
        on_next=lambda piece: print(piece, end="|"), on_completed=done.set
    )
    await done.wait()
    print()  # the reply, printed piece by piece as the model streamed it

    calls = await agent.stream(question).pipe(rx.tool_calls(), ops.map(describe), ops.to_list())
    print("tool calls:", calls)
    assert calls == ["weather(Paris)", "weather(Rome)"]

    results = await agent.stream(question).pipe(rx.of_type(PostActingEvent), ops.to_list())
    print("tool results:", [event.result.text for event in results])

    result = await agent.stream(question).pipe(rx.final_result())
    print("result:", result.stop_reason, result.text)
    assert result.text == "Today: Paris: sunny; Rome: sunny."


if __name__ == "__main__":
    asyncio.run(main())
