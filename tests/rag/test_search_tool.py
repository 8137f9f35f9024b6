"""kb.as_tool(): the model searches the knowledge base itself."""

from __future__ import annotations

from rxagent import ReActAgent
from rxagent.rag import KnowledgeBase, format_hits
from rxagent.testing import ScriptedModel, tool_call


async def test_the_model_calls_the_search_tool():
    async with KnowledgeBase(":memory:", embedder=None) as kb:
        await kb.add_texts(
            ["# Parking\n\nVisitors park in the north garage."],
            metadatas=[{"source": "handbook.md"}],
        )
        search = kb.as_tool(k=2)
        assert search.name == "search_knowledge"
        model = ScriptedModel([tool_call("search_knowledge", query="garage"), "North garage."])
        agent = ReActAgent("desk", "Use the tool.", model, tools=[search])
        result = await agent.call("Where do I park?")
        assert result.text == "North garage."
        assert result.tools_used == ("search_knowledge",)
        tool_result = model.requests[1].messages[-1].content[0]
        assert tool_result.output.startswith("[1] handbook.md (Parking)\n# Parking")  # type: ignore[union-attr]
        named = kb.as_tool(name="handbook", k=1, description="Search the staff handbook.")
        assert named.schema.description == "Search the staff handbook."
        assert await named("nothing like it") == "No matching documents."


def test_format_hits_of_nothing():
    assert format_hits([]) == "No matching documents."
