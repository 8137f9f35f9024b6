"""Answer from your own documents: a knowledge base, the `Retrieve` hook, and a search tool.

The knowledge base keeps the handbook in Qdrant (in memory here; a folder by default, or a
server). `Retrieve` searches it with each user message and adds a `[Retrieved Context]` section
to the request, never to memory; `kb.as_tool()` lets the model search on its own instead. The
model is a plain function that answers from the first source it is given. With the MiniLM
weights installed, `KnowledgeBase()` adds meaning (dense vectors) to word search (BM25); this
example keeps to words (`embedder=None`) so it runs in a blink.

Run it:

    python -m examples.rag_agent
"""

import asyncio
import re

from rxagent import ModelOptions, Msg, ReActAgent, RetrievalEvent, ToolSchema
from rxagent.rag import CONTEXT_HEADER, KnowledgeBase, Retrieve
from rxagent.testing import FunctionModel, Turn, tool_call

HANDBOOK = {
    "hours.md": "# Opening hours\n\nThe office opens at 9 am and closes at 5 pm on weekdays.",
    "parking.md": "# Parking\n\nVisitors park in the north garage; reception pays the fee.",
    "wifi.md": "# Guest wifi\n\nThe guest network is called Lobby and needs no password.",
}


def cite_first_source(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
    """Answer with the first retrieved source, naming it."""
    section = next(m.text for m in messages if m.text.startswith(CONTEXT_HEADER))
    first = re.search(r"^\[1\] (\S+).*?\n(.*?)(?:\n\n\[2\]|\Z)", section, re.S | re.M)
    assert first is not None, section  # "[1] source (heading)", then the chunk's text
    return f"{first[2].splitlines()[-1]} (source {first[1]})"


def search_then_answer(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Call the search tool once, then answer with what it returned."""
    if messages[-1].role == "user":
        return tool_call("search_knowledge", query=messages[-1].text)
    return "Found: " + messages[-1].content[0].output.splitlines()[-1]  # type: ignore[union-attr]


async def main() -> None:
    """Fill a knowledge base, then answer with `Retrieve` and with the search tool."""
    async with KnowledgeBase(":memory:", embedder=None) as kb:
        await kb.add_texts(
            list(HANDBOOK.values()), metadatas=[{"source": s} for s in HANDBOOK], ids=list(HANDBOOK)
        )
        for hit in await kb.search("where can visitors leave the car?", k=2):
            print(f"search: {hit.metadata['source']} score {hit.score:.2f}")

        # 1. Retrieve: the request carries the sources, memory does not
        desk = ReActAgent(
            "desk",
            "Answer from the sources.",
            FunctionModel(cite_first_source),
            hooks=[Retrieve(kb, k=2, max_tokens=300)],
        )
        async for event in desk.events("Where do visitors park?"):
            if isinstance(event, RetrievalEvent):
                print(f"retrieved: {[h.id for h in event.hits]} ({event.tokens} tokens)")
        result = await desk.call("What is the wifi called?")
        print("answer:", result.text)
        memory = (await desk.state_dict())["memory"]
        print("section in memory:", CONTEXT_HEADER in str(memory))

        # 2. as_tool: the model decides when to search
        searcher = ReActAgent(
            "searcher", "Search first.", FunctionModel(search_then_answer), tools=[kb.as_tool(k=1)]
        )
        print((await searcher.call("When does the office open?")).text)


if __name__ == "__main__":
    asyncio.run(main())
