"""LongTermMemory on a real KnowledgeBase (qdrant-client local mode, sparse BM25)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent import Principal, ReActAgent
from rxagent.memory import LongTermMemory, MemoryScope, MemoryStore
from rxagent.rag import KnowledgeBase
from rxagent.testing import ScriptedModel, tool_call


def kb(location: str = ":memory:") -> KnowledgeBase:
    return KnowledgeBase(location, embedder=None)


async def test_a_knowledge_base_is_a_memory_store():
    async with kb() as store:
        typed: MemoryStore = store  # mypy checks the protocol; this checks it at runtime
        assert isinstance(typed, MemoryStore)


async def test_remembered_facts_are_recalled_in_the_users_next_session(tmp_path: Path):
    path = str(tmp_path / "qdrant")
    async with kb(path) as store:
        memory = LongTermMemory(store, mode="both")
        model = ScriptedModel(
            [tool_call("remember", fact="Ann's favourite tea is sencha."), "Noted."]
        )
        agent = ReActAgent("a", "", model, hooks=[memory], tools=memory.tools())
        await agent.call("My favourite tea is sencha", principal=Principal(user_id="ann"))
        await memory.save("Ann's favourite tea is sencha.", MemoryScope.user("ann"))  # replaced
        assert await store.count() == 1
    async with kb(path) as store:  # reopened from its folder
        memory = LongTermMemory(store)
        model = ScriptedModel(["Sencha.", "No idea."])
        agent = ReActAgent("a", "You serve tea.", model, hooks=[memory])
        await agent.call("Which tea is my favourite?", principal=Principal(user_id="ann"))
        await agent.call("Which tea is my favourite?", principal=Principal(user_id="bob"))
        assert "- Ann's favourite tea is sencha." in model.requests[0].messages[0].text
        assert model.requests[1].messages[0].text == "You serve tea."


users = st.sampled_from(["ann", "bob", "cy"])
facts = st.lists(
    st.tuples(users, st.lists(st.sampled_from(["tea", "dog", "blue", "jazz"]), min_size=1)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=15, deadline=None)
@given(facts=facts, asker=users, query=st.sampled_from(["tea", "dog jazz", "blue"]))
def test_a_knowledge_base_recall_never_returns_another_users_fact(facts, asker, query):
    async def check() -> None:
        async with kb() as store:
            memory = LongTermMemory(store, mode="tools", k=10)
            for owner, words in facts:
                await memory.save(f"{owner} says {' '.join(words)}", MemoryScope.user(owner))
            hits = await memory.search(query, MemoryScope.user(asker))
            assert all(hit.text.startswith(f"{asker} says") for hit in hits)
            own = {f"{o} says {' '.join(w)}" for o, w in facts if o == asker}
            wanted = set(query.split())
            assert {hit.text for hit in hits} == {t for t in own if wanted & set(t.split()[2:])}

    asyncio.run(check())
