"""Properties of session state: JSON round trips and tool-call pairing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rxagent import AgentState, Msg
from rxagent.state import migrate_state, pair_tool_calls
from rxagent.testing.strategies import conversations, json_values, usages


@given(
    conversations(),
    st.dictionaries(st.text(max_size=8), json_values(), max_size=4),
    usages(),
    st.integers(0, 1000),
)
def test_agent_state_round_trips_through_json(memory, extra, usage, counter):
    state = AgentState(memory=memory, extra=extra, usage=usage, call_counter=counter, step=3)
    assert AgentState.model_validate_json(state.model_dump_json()) == state
    assert migrate_state(state.model_dump(mode="json")) == state


def calls_and_results(memory: list[Msg]) -> tuple[list[str], list[str]]:
    calls = [c.id for m in memory for c in m.tool_calls]
    results = [r.id for m in memory for r in m.tool_results]
    return calls, results


@given(conversations(min_turns=1, max_turns=4), st.data())
def test_pairing_answers_every_call_and_keeps_every_message(memory, data):
    results = [i for i, m in enumerate(memory) if m.role == "tool"]
    dropped = set(data.draw(st.lists(st.sampled_from(results), unique=True)) if results else [])
    damaged = [m for i, m in enumerate(memory) if i not in dropped]
    start = data.draw(st.integers(0, len(damaged)))
    # what came before `start` must already be paired, as in a real session
    prefix_calls, prefix_results = calls_and_results(damaged[:start])
    if set(prefix_calls) - set(prefix_results):
        start = 0
    paired = pair_tool_calls(damaged, "interrupted", start)
    calls, answers = calls_and_results(paired)
    assert sorted(calls) == sorted(answers)
    assert len(answers) == len(set(answers))
    originals = [m for m in paired if m.id in {d.id for d in damaged}]
    assert originals == damaged  # nothing lost, nothing reordered
    for i, message in enumerate(paired):  # every result follows its call's assistant message
        for result in message.tool_results:
            owner = next(
                j for j, m in enumerate(paired) if result.id in {c.id for c in m.tool_calls}
            )
            assert owner < i
            between = paired[owner + 1 : i]
            assert all(m.role == "tool" for m in between)
