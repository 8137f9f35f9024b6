"""Serve an agent over HTTP and call it with the official `openai` client.

`create_app(agent)` is an aiohttp application with an OpenAI-compatible `/v1/chat/completions`:
the `model` names the agent, the agent runs its tools on the server, and any OpenAI client reads
the answer, whole or streamed. Here the server listens on a free port of 127.0.0.1 for the length
of the example. Needs `pip install openai` (in the `dev` extra).

Run it:

    python -m examples.server_openai_client
    rxagent serve examples.server_openai_client:agent --port 8000   # the same agent, served
    rxagent run "Count these words" --agent examples.server_openai_client:agent
"""

import asyncio

from aiohttp import web
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionUserMessageParam

from rxagent import ModelOptions, Msg, ReActAgent, ToolSchema, tool
from rxagent.server import create_app
from rxagent.testing import FunctionModel, Turn, tool_call

__all__ = ["agent", "count_words", "main"]


@tool
def count_words(text: str) -> int:
    """Count the words of a text.

    Args:
        text: The text.
    """
    return len(text.split())


def counter(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: count the user's words with the tool, then say how many."""
    last = messages[-1]
    if last.role == "tool":
        return f"Your message has {last.tool_results[0].text} words."
    return tool_call("count_words", text=last.text)


agent = ReActAgent("words", "You count words.", FunctionModel(counter), tools=[count_words])


async def main() -> None:
    """Start the server, ask it twice (whole and streamed), and stop it."""
    runner = web.AppRunner(create_app(agent, auth=["sk-local"]))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)  # port 0: a free port
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        async with AsyncOpenAI(base_url=f"http://{host}:{port}/v1", api_key="sk-local") as client:
            question = [
                ChatCompletionUserMessageParam(role="user", content="Count these four words.")
            ]
            reply = await client.chat.completions.create(model="words", messages=question)
            print("whole:   ", reply.choices[0].message.content)
            assert reply.choices[0].message.content == "Your message has 4 words."

            streamed = ""
            chunks = await client.chat.completions.create(
                model="words", messages=question, stream=True
            )
            async for chunk in chunks:
                if chunk.choices:
                    streamed += chunk.choices[0].delta.content or ""
            print("streamed:", streamed)
            assert streamed == "Your message has 4 words."
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
