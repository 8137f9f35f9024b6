"""`IdentityCache`: values per object, and entries that never keep their object alive."""

from __future__ import annotations

import gc
import weakref

from hypothesis import given
from hypothesis import strategies as st

from rxagent._cache import IdentityCache
from rxagent.messages import Msg
from rxagent.tokens._bound import message_bound


def _lengths(limit: int = 1000) -> tuple[IdentityCache[Msg, int], list[Msg]]:
    computed: list[Msg] = []

    def compute(msg: Msg) -> int:
        computed.append(msg)
        return len(msg.text)

    return IdentityCache(compute, limit=limit), computed


def test_a_cached_message_is_not_kept_alive():
    """The soak's leak: every message a run measured stayed alive in the cache."""
    cache, computed = _lengths()
    messages = [Msg.user("x" * i) for i in range(50)]
    assert [cache(m) for m in messages] == list(range(50))
    computed.clear()
    refs = [weakref.ref(m) for m in messages]
    del messages
    gc.collect()
    assert all(ref() is None for ref in refs)
    assert len(cache) == 0


def test_the_token_bound_cache_lets_messages_go():
    message = Msg.user("a message measured for the context window")
    message_bound(message)
    ref = weakref.ref(message)
    del message
    gc.collect()
    assert ref() is None


def test_a_value_is_computed_once_per_object():
    cache, computed = _lengths()
    message = Msg.user("hello")
    assert cache(message) == cache(message) == 5
    assert computed == [message]


def test_equal_objects_get_entries_of_their_own():
    cache, computed = _lengths()
    one, other = Msg.user("same", id="m1"), Msg.user("same", id="m1")
    assert one == other
    cache(one)
    cache(other)
    assert len(computed) == 2
    assert len(cache) == 2


def test_an_object_without_weak_references_is_held_until_the_cache_starts_over():
    computed: list[tuple[int, ...]] = []

    def total(values: tuple[int, ...]) -> int:
        computed.append(values)
        return sum(values)

    cache: IdentityCache[tuple[int, ...], int] = IdentityCache(total, limit=2)
    values = tuple(range(10))
    assert cache(values) == cache(values) == 45
    assert len(computed) == 1
    cache((1,))
    cache((2,))  # the limit: the cache starts over
    assert len(cache) == 1


def test_the_limit_starts_the_cache_over():
    cache, _ = _lengths(limit=3)
    kept = [Msg.user(str(i)) for i in range(4)]
    for message in kept:
        cache(message)
    assert len(cache) == 1


def test_a_dropped_entry_does_not_take_a_newer_one_with_it():
    """An entry cleared by the limit, whose object dies later, leaves the current entries be."""
    cache, _ = _lengths(limit=1)
    first = Msg.user("first")
    cache(first)
    second = Msg.user("second!")
    cache(second)  # the limit: `first`'s entry is gone, `second` has one
    del first
    gc.collect()
    assert len(cache) == 1
    assert cache(second) == 7


@given(st.lists(st.tuples(st.text(max_size=20), st.booleans()), max_size=40))
def test_values_are_right_and_only_live_objects_have_entries(steps: list[tuple[str, bool]]):
    cache: IdentityCache[Msg, int] = IdentityCache(lambda msg: len(msg.text), limit=1000)
    kept: list[Msg] = []
    for text, keep in steps:
        message = Msg.user(text)
        assert cache(message) == len(text)
        if keep:
            kept.append(message)
        del message  # CPython frees it here (a message holds no cycle), and its entry goes too
    assert len(cache) == len(kept)
    assert [cache(m) for m in kept] == [len(m.text) for m in kept]
