"""Properties of context trimming (`trim_to_budget`) over random conversations and budgets."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import event, given, note
from hypothesis import strategies as st

from rxagent import Msg, ToolResultBlock, ToolUseBlock
from rxagent.errors import ContextTooLongError
from rxagent.hooks.builtin import trim_to_budget
from rxagent.hooks.builtin._trim import system_prompt_length
from rxagent.messages import ImageBlock, TextBlock
from rxagent.testing import strategies as rst
from rxagent.tokens import counter_for

COUNTER = counter_for("gpt-4o")
MARKER = "by rxagent ContextWindow]"
# A tool message cut to its marker alone costs well under this (framing + marker).
MARKER_MESSAGE_BOUND = 64

# -- conversations -----------------------------------------------------------------------------

latin = st.sampled_from(["the", "tide", "moon", "reads", "file", "error", "ok", "42", "data"])
cjk = st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1)
emoji = st.text(alphabet=st.characters(min_codepoint=0x1F600, max_codepoint=0x1F64F), min_size=1)
words = st.lists(latin | cjk | emoji, min_size=1, max_size=12).map(" ".join)


@st.composite
def texts(draw: st.DrawFn, *, long: bool = False) -> str:
    text = draw(words)
    if long and draw(st.booleans()):
        text = (text + " ") * draw(st.integers(min_value=20, max_value=150))
    return text


@st.composite
def tool_outputs(draw: st.DrawFn) -> str | tuple[TextBlock | ImageBlock, ...]:
    if draw(st.integers(min_value=0, max_value=5)) == 0:
        return (TextBlock(text=draw(texts(long=True))), ImageBlock(url="https://example.com/i.png"))
    return draw(texts(long=True))


@st.composite
def rich_conversations(draw: st.DrawFn) -> list[Msg]:
    """Turns with parallel tool calls, CJK and emoji text, long outputs and later system rules.

    The last turn may end inside its tool loop (the request of a running step).
    """
    history: list[Msg] = []
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        history.append(Msg.system(draw(texts())))
    calls = 0
    turns = draw(st.integers(min_value=0, max_value=5))
    for turn in range(turns):
        history.append(Msg.user(draw(texts(long=True))))
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            batch = []
            for _ in range(draw(st.integers(min_value=1, max_value=4))):
                calls += 1
                batch.append(
                    ToolUseBlock(id=f"call_{calls}", name="read", input={"q": draw(words)})
                )
            lead = [TextBlock(text=draw(texts()))] if draw(st.booleans()) else []
            history.append(Msg.assistant([*lead, *batch]))
            outputs = [draw(tool_outputs()) for _ in batch]
            history.extend(
                Msg.tool(ToolResultBlock(id=c.id, name=c.name, output=o))
                for c, o in zip(batch, outputs, strict=True)
            )
        if draw(st.integers(min_value=0, max_value=4)) == 0:
            history.append(Msg.system(draw(texts())))  # a rule a hook added mid-way
        if turn < turns - 1 or draw(st.booleans()):
            history.append(Msg.assistant(draw(texts(long=True))))
    return history


def unique_ids(messages: list[Msg]) -> list[Msg]:
    """Give every message its own id (drawn ids may repeat)."""
    return [m.model_copy(update={"id": f"m{i}"}) for i, m in enumerate(messages)]


conversations_under_test = st.one_of(
    rst.conversations(min_turns=0, max_turns=4), rich_conversations()
).map(unique_ids)


@dataclass(frozen=True)
class Limits:
    budget: int
    max_turns: int | None
    max_tool_result_tokens: int | None


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Msg], Limits]:
    messages = draw(conversations_under_test)
    start = system_prompt_length(messages)
    total = sum(map(COUNTER.count_message, messages[start:]))
    least = must_keep(messages)  # around here trimming goes from failing to fitting
    budget = draw(
        st.integers(min_value=max(1, least - 40), max_value=max(least, total) + 40)
        | st.integers(min_value=1, max_value=total + 50)
    )
    max_turns = draw(st.none() | st.integers(min_value=1, max_value=4))
    limit = draw(st.none() | st.integers(min_value=64, max_value=1_500))
    return messages, Limits(budget, max_turns, limit)


# -- helpers -----------------------------------------------------------------------------------


def trim(messages: list[Msg] | tuple[Msg, ...], limits: Limits):
    return trim_to_budget(
        messages,
        limits.budget,
        COUNTER,
        max_turns=limits.max_turns,
        max_tool_result_tokens=limits.max_tool_result_tokens,
    )


def origin(msg: Msg) -> str:
    """The id of the input message `msg` comes from (truncated copies get `<id>~<n>`)."""
    return msg.id.split("~", 1)[0]


def current_user(messages: list[Msg]) -> int | None:
    found = [i for i, m in enumerate(messages) if m.role == "user"]
    return found[-1] if found else None


def tool_units_after(messages: list[Msg], after: int) -> list[list[int]]:
    units: list[list[int]] = []
    owner: dict[str, int] = {}
    for i in range(after, len(messages)):
        m = messages[i]
        if m.role == "assistant" and m.tool_calls:
            owner.update({c.id: len(units) for c in m.tool_calls})
            units.append([i])
        elif m.role == "tool":
            units[owner[m.tool_results[0].id]].append(i)
    return units


def must_keep(messages: list[Msg]) -> int:
    """Tokens that no trimming can avoid: what is never dropped, and the newest unit's call
    message plus a marker-only result per call."""
    start = system_prompt_length(messages)
    cur = current_user(messages)
    after = cur + 1 if cur is not None else start
    units = tool_units_after(messages, after)
    in_units = {i for unit in units for i in unit}
    needed = 0
    for i in range(start, len(messages)):
        m = messages[i]
        if m.role == "system" or i == cur or (i >= after and i not in in_units):
            needed += COUNTER.count_message(m)
    if units:
        newest = units[-1]
        needed += COUNTER.count_message(messages[newest[0]])
        needed += MARKER_MESSAGE_BOUND * (len(newest) - 1)
    return needed


# -- properties --------------------------------------------------------------------------------


@given(cases())
def test_trimming_fits_the_budget_or_the_request_cannot_fit(case):
    messages, limits = case
    try:
        result = trim(messages, limits)
    except ContextTooLongError:
        assert must_keep(messages) > limits.budget
        event("context too long")
        return
    event("history dropped" if result.history else "no history dropped")
    event("results truncated" if result.truncated else "nothing truncated")
    event("changed" if result.changed else "unchanged")
    start = system_prompt_length(messages)
    assert result.tokens_after == sum(map(COUNTER.count_message, result.messages[start:]))
    if result.changed:
        assert result.tokens_after <= limits.budget
    else:
        assert result.tokens_after == result.tokens_before <= limits.budget


@given(cases())
def test_result_is_a_subsequence_that_keeps_what_must_be_kept(case):
    messages, limits = case
    try:
        result = trim(messages, limits)
    except ContextTooLongError:
        return
    out = list(result.messages)
    start = system_prompt_length(messages)
    assert out[:start] == messages[:start]  # the system prompt, untouched
    position = {m.id: i for i, m in enumerate(messages)}
    indexes = [position[origin(m)] for m in out]
    assert indexes == sorted(set(indexes))  # a subsequence, in order
    kept = set(indexes)
    assert {m.id for m in messages if position[m.id] not in kept} == set(result.dropped)
    for msg, i in zip(out, indexes, strict=True):
        if msg.id != messages[i].id:  # a shortened tool result: marked, same call
            assert msg.role == "tool"
            assert msg.id.startswith(f"{messages[i].id}~")
            assert origin(msg) in result.truncated
            assert all(MARKER in r.text for r in msg.tool_results)
            assert [r.id for r in msg.tool_results] == [r.id for r in messages[i].tool_results]
        else:
            assert msg == messages[i]
    assert set(result.truncated) <= {origin(m) for m in out if m.id != origin(m)}
    # system messages and the current user message are never dropped
    cur = current_user(messages)
    for i, m in enumerate(messages):
        if m.role == "system" or i == cur:
            assert i in kept
    # after the current user message only tool units go; history goes first, in whole turns
    after = cur + 1 if cur is not None else start
    in_units = {i for unit in tool_units_after(messages, after) for i in unit}
    assert all(i in kept for i in range(after, len(messages)) if i not in in_units)
    end = cur if cur is not None else start
    history = [i for i in range(start, end) if messages[i].role != "system"]
    kept_history = [i for i in history if i in kept]
    assert kept_history == history[len(history) - len(kept_history) :]  # a suffix of the history
    if len(kept_history) < len(history) and kept_history:
        assert messages[kept_history[0]].role == "user"  # never starts mid-turn
    if any(i not in kept for i in in_units):  # phase 2 runs only once the history is gone
        assert not kept_history
    if limits.max_tool_result_tokens is not None:
        for m in out[start:]:
            if m.role == "tool":
                assert COUNTER.count_message(m) <= limits.max_tool_result_tokens


@given(cases())
def test_every_kept_call_has_its_results_and_every_result_its_call(case):
    messages, limits = case
    try:
        result = trim(messages, limits)
    except ContextTooLongError:
        return
    calls = {c.id for m in result.messages for c in m.tool_calls}
    results = [r.id for m in result.messages for r in m.tool_results]
    assert sorted(results) == sorted(calls)
    called: set[str] = set()
    for m in result.messages:  # each result comes after its call
        assert all(r.id in called for r in m.tool_results)
        called.update(c.id for c in m.tool_calls)


@given(cases())
def test_current_user_message_is_kept(case):
    messages, limits = case
    cur = current_user(messages)
    try:
        result = trim(messages, limits)
    except ContextTooLongError:
        return
    if cur is not None:
        assert messages[cur] in result.messages
        assert current_user(list(result.messages)) == result.messages.index(messages[cur])


@given(cases())
def test_trimming_is_idempotent(case):
    messages, limits = case
    try:
        first = trim(messages, limits)
    except ContextTooLongError:
        return
    note(f"dropped={first.dropped} truncated={first.truncated}")
    again = trim(first.messages, limits)
    assert not again.changed
    assert again.messages == first.messages
