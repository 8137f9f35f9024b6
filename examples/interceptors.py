"""Interceptors around the model and tool calls: a fallback, a cache, a usage limit, the cost.

Run: python -m examples.interceptors

The primary model (a fake OpenAI server) answers 429, so `FallbackModels` asks the backup; the
`ResponseCache` answers the same question again without an HTTP request; a tool interceptor
logs each call; `UsageLimits` stops a run that wants more requests than it allows; every
answer is priced from the shipped price table.
"""

from __future__ import annotations

import asyncio

from rxagent import FallbackEvent, ReActAgent, ToolResultBlock, tool
from rxagent.interceptors import (
    FallbackModels,
    ModelCall,
    NextToolCall,
    ResponseCache,
    ToolCall,
    UsageLimits,
    around_tool_call,
)
from rxagent.models import OpenAIChatModel
from rxagent.models.base import Usage
from rxagent.testing import Turn, tool_call
from rxagent.testing.providers import FakeOpenAIServer, Reply


@tool
def stock(item: str) -> int:
    """How many of `item` are in stock.

    Args:
        item: The product.
    """
    return {"lamp": 3}.get(item, 0)


@around_tool_call(priority=10)
async def audit(call: ToolCall, call_next: NextToolCall) -> ToolResultBlock:
    """Print each tool call, then make it."""
    print(f"tool: {call.name}({dict(call.arguments)})")
    return await call_next(call)


async def main() -> None:
    """Run three sessions and a limited call; print what the interceptors did."""
    usage = Usage(input_tokens=1200, output_tokens=80)
    script = [Reply(tool_call("stock", item="lamp"), usage=usage), Reply("3 lamps.", usage=usage)]
    mine: list[Turn] = [tool_call("stock", item="lamp"), "unreached"]
    async with FakeOpenAIServer(mine) as primary, FakeOpenAIServer(script) as backup:
        primary.fail(1, status=429).fail(2, status=429)
        cache = ResponseCache()
        agent = ReActAgent(
            "shop",
            "You answer stock questions.",
            OpenAIChatModel("gpt-4o-mini", base_url=primary.base_url, api_key="k", max_retries=0),
            tools=[stock],
            interceptors=[
                FallbackModels([OpenAIChatModel("gpt-4o", base_url=backup.base_url, api_key="k")]),
                cache,
                audit,
            ],
        )
        print("model chain:", [i.name for i in agent.hooks.explain(ModelCall)])
        events = [e async for e in agent.events("Lamps in stock?", session_id="ann")]
        moves = [f"{e.from_model} -> {e.to_model}" for e in events if isinstance(e, FallbackEvent)]
        first = await agent.call("Lamps in stock?", session_id="bob")  # the cache answers
        print("fallbacks:", moves)
        print(f"cached: {first.text!r}, requests {first.usage.requests}, cache hits {cache.hits}")
        print(f"HTTP requests: primary {len(primary.requests)}, backup {len(backup.requests)}")
        state = await agent.state_dict(session_id="ann")
        print(f"cost of ann's session: ${state['usage']['cost']:.6f}")
        limited = await agent.call(
            "Lamps again?", session_id="cy", interceptors=[UsageLimits(max_requests=1)]
        )
        print("limited:", limited.error.code if limited.error else None, limited.usage.requests)
        await agent.aclose()


if __name__ == "__main__":
    asyncio.run(main())
