"""How a run stops: a stop condition's decision, and the tool-call budget.

After each step the run asks its `stop_when` conditions, in order. A condition returns `True`,
or a `StopDecision` naming the stop reason and the reply, or asking for one last model call
without tools. Separately, `max_tool_calls` withdraws the tools once spent, and a model that
calls tools anyway ends the run at once with `stop_reason="max_tool_calls"`.

Run it:

    python -m examples.stop_decisions
"""

import asyncio

from rxagent import ModelOptions, Msg, ReActAgent, RunContext, StopDecision, ToolSchema, tool
from rxagent.testing import FunctionModel, Turn, tool_call

__all__ = ["main", "search"]


@tool
def search(query: str) -> str:
    """Search the web.

    Args:
        query: What to look for.
    """
    return f"3 results for {query!r}"


def curious(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play a model that always wants one more search, and sums up only when it has no tools."""
    if not tools:
        return "Summary: the searches agree."
    searches = sum(1 for m in messages if m.role == "tool")
    return tool_call("search", query=f"angle {searches + 1}")


def three_searches(ctx: RunContext) -> StopDecision | None:
    """After three steps, ask for the answer: one last call without tools."""
    if ctx.step + 1 >= 3:
        return StopDecision(reason="stop_condition", final_call=True)
    return None


async def main() -> None:
    """A decision with a last call, then a budget the model keeps overrunning."""
    decided = ReActAgent(
        "researcher", "", FunctionModel(curious), tools=[search], stop_when=[three_searches]
    )
    result = await decided.call("What do people say?")
    print("decision:", result.stop_reason, result.tools_used, repr(result.text))

    def ignores_the_budget(
        messages: list[Msg], tools: list[ToolSchema], options: ModelOptions
    ) -> Turn:
        return tool_call("search", query="once more")  # tools or not, it calls one

    budgeted = ReActAgent(
        "spender", "", FunctionModel(ignores_the_budget), tools=[search], max_tool_calls=2
    )
    spent = await budgeted.call("Search until you are stopped.")
    requests = spent.usage.requests
    print("budget:", spent.stop_reason, f"after {requests} model calls", spent.tools_used)
    assert spent.stop_reason == "max_tool_calls"
    assert requests == 3  # two calls within the budget, then one without tools
    assert spent.ok


if __name__ == "__main__":
    asyncio.run(main())
