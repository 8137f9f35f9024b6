"""One agent, five providers: the same code against each provider's wire format.

Each provider client (`"openai:..."`, `"anthropic:..."`, ...) is a pure formatter plus an HTTP
client; the agent does not care which one it has. Here each talks to the matching fake server
from `rxagent.testing.providers`, a local server that speaks the provider's exact API, so the run
is offline. With real keys, drop `base_url=` and `api_key=` (they come from the environment).

Run it:

    python -m examples.providers
"""

import asyncio

from rxagent import ReActAgent, tool
from rxagent.models import resolve
from rxagent.testing import Turn, tool_call
from rxagent.testing.providers import (
    FakeAnthropicServer,
    FakeDashScopeServer,
    FakeGeminiServer,
    FakeOllamaServer,
    FakeOpenAIServer,
    FakeProviderServer,
)

__all__ = ["add", "ask", "main"]

SCRIPT: list[Turn] = [tool_call("add", a=2, b=3), "2 + 3 = 5"]
SERVERS: dict[str, type[FakeProviderServer]] = {
    "openai:gpt-4o-mini": FakeOpenAIServer,
    "anthropic:claude-sonnet-4-5": FakeAnthropicServer,
    "gemini:gemini-2.5-flash": FakeGeminiServer,
    "dashscope:qwen-plus": FakeDashScopeServer,
    "ollama:llama3.2": FakeOllamaServer,
}


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


async def ask(spec: str, server_type: type[FakeProviderServer]) -> str:
    """Run the agent on the model `spec` against its fake server; return what it answered."""
    async with server_type(SCRIPT) as server:
        model = resolve(spec, base_url=server.base_url, api_key="test-key")
        async with ReActAgent("calc", "You add numbers.", model, tools=[add]) as agent:
            result = await agent.call("What is 2 + 3?")
    assert result.ok, result.error
    assert result.tools_used == ("add",)
    paths = sorted({request.path for request in server.requests})
    return f"{spec:28} {result.text!r:12} via {', '.join(paths)}"


async def main() -> None:
    """Ask each provider in turn."""
    for spec, server_type in SERVERS.items():
        print(await ask(spec, server_type))


if __name__ == "__main__":
    asyncio.run(main())
