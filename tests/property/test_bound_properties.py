"""The cheap request bound never undercounts, so its fast path never skips a needed trim."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rxagent import Msg, TextBlock, ToolResultBlock, ToolUseBlock
from rxagent.testing.strategies import conversations, tool_schemas
from rxagent.tokens import TokenCounter
from rxagent.tokens._bound import request_bound

MIXED = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from("漢字かなカナ한국어🙂🚀👍🏽é ß"),
    ),
    max_size=80,
)

COUNTERS = [TokenCounter("gpt-4o"), TokenCounter("claude-3-5-sonnet", provider="anthropic")]


@st.composite
def mixed_messages(draw: st.DrawFn) -> list[Msg]:
    out: list[Msg] = draw(conversations(max_turns=2))
    for i in range(draw(st.integers(0, 3))):
        call = ToolUseBlock(id=f"x{i}", name="echo", input={"text": draw(MIXED)})
        out += [
            Msg.user(draw(MIXED)),
            Msg.assistant([TextBlock(text=draw(MIXED)), call]),
            Msg.tool(ToolResultBlock(id=call.id, name="echo", output=draw(MIXED))),
        ]
    return out


@given(mixed_messages(), st.lists(tool_schemas(), max_size=3), st.sampled_from(COUNTERS))
def test_the_bound_is_never_below_the_exact_count(messages, tools, counter):
    exact = counter.count_messages(messages) + counter.count_tools(tools)
    assert request_bound(messages, tools) >= exact
