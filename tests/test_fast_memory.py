"""What a stored message costs: models built on the hot path share what cannot change."""

from __future__ import annotations

import asyncio
import copy
import gc
import pickle
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from rxagent import ReActAgent
from rxagent._fast import trusted
from rxagent.messages import Msg, TextBlock
from rxagent.testing import FunctionModel


class Mutable(BaseModel):
    a: int = 0
    b: str = ""


def test_frozen_models_built_trusted_share_one_fields_set():
    one = trusted(Msg, role="assistant", content=(trusted(TextBlock, text="a"),))
    other = trusted(Msg, role="assistant", content=(trusted(TextBlock, text="b"),))
    assert one.__pydantic_fields_set__ is other.__pydantic_fields_set__
    assert one.model_fields_set == set(Msg.model_fields)


def test_a_mutable_model_built_trusted_gets_its_own_fields_set():
    one, other = trusted(Mutable, a=1), trusted(Mutable, a=2)
    assert one.__pydantic_fields_set__ is not other.__pydantic_fields_set__
    one.b = "changed"
    assert one.model_fields_set == other.model_fields_set == {"a", "b"}


@given(st.lists(st.sampled_from(["content", "name", "metadata"]), min_size=1, max_size=3))
def test_copies_with_changes_leave_the_shared_fields_set_alone(fields: list[str]):
    values = {"content": "new", "name": "bob", "metadata": {"k": 1}}
    one = trusted(Msg, role="assistant", content=(trusted(TextBlock, text="a"),))
    other = trusted(Msg, role="assistant", content="b")
    changed = one.model_copy(update={f: values[f] for f in fields})
    for shallow in (copy.copy(one), copy.deepcopy(one), pickle.loads(pickle.dumps(one))):
        assert shallow == one
    assert changed.__pydantic_fields_set__ is not one.__pydantic_fields_set__
    assert one.model_fields_set == other.model_fields_set == set(Msg.model_fields)
    assert other.model_dump(exclude_unset=True).keys() == set(Msg.model_fields)


def test_messages_share_the_empty_metadata_and_it_cannot_change():
    one, other = Msg.user("a"), Msg.assistant("b")
    assert one.metadata is other.metadata
    assert one.metadata == {}
    with pytest.raises(TypeError, match="cannot be changed"):
        one.metadata["k"] = 1
    assert other.metadata == {}
    assert Msg.user("c").metadata == {}
    assert Msg.user("d", metadata={"k": 1}).metadata == {"k": 1}


def test_an_idle_session_holds_a_few_kilobytes_and_no_cache_entries():
    """Regression: per-object fields sets and a cache entry per message were 45% of a session."""
    from rxagent.testing import _builders

    model = FunctionModel(lambda messages, tools, options: "Hello! How can I help?")
    agent = ReActAgent("mem", "You are brief.", model)
    agent.call_sync("warm up", session_id="warm")
    n = 300

    async def runs() -> None:
        for i in range(n):
            result = await agent.call("Hi there", session_id=f"s{i}")
            assert result.ok

    model.requests.clear()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        asyncio.run(runs())
        model.requests.clear()
        _builders._cached_chars._entries.clear()  # the test model's own cache
        gc.collect()
        per_session = (tracemalloc.get_traced_memory()[0] - before) / n
    finally:
        tracemalloc.stop()
    # two messages, their state and the store's entry: about 2.4 kB (4.9 kB before)
    assert per_session < 3_500, per_session
