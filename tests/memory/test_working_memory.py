"""WorkingMemory: entities from tool results, kept in AgentState.extra, shown in every request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import ContextTrimmedEvent, ErrorEvent, Msg, ReActAgent, TextBlock, tool
from rxagent.errors import ConfigurationError
from rxagent.hooks.builtin import ContextWindow
from rxagent.memory import (
    WORKING_MEMORY_KEY,
    Entity,
    WorkingMemory,
    extract_entities,
)
from rxagent.memory._sections import with_section
from rxagent.testing import ScriptedModel, Turn, tool_call


@tool
def lookup_order(order: str) -> str:
    """Look an order up.

    Args:
        order: The order number.
    """
    scans = " ".join(f"scan {i} at hub {i * 7}" for i in range(100))
    return f"order_id: ORD-{order} status: shipped. {scans}"


@tool
def broken() -> str:
    """Always fails."""
    raise RuntimeError("down: order_id: ORD-666")


def pairs(entities: Any) -> list[tuple[str, str]]:
    return [(e.kind, e.value) for e in entities]


# -- extraction -------------------------------------------------------------------------------


def test_json_ids_names_and_urls():
    data = {
        "id": 7,
        "customer": {"customer_id": "c_9", "name": "Ada Lovelace", "homepage": "https://ada.dev"},
        "links": ["https://example.com/a", "not a url"],
        "pageId": "p_1",
        "flag": True,
        "title": "x" * 500,  # too long to be a name
        "nothing": None,
    }
    found = pairs(extract_entities("get", json.dumps(data)))
    assert found == [
        ("id", "7"),
        ("pageId", "p_1"),
        ("url", "https://example.com/a"),
        ("customer_id", "c_9"),
        ("name", "Ada Lovelace"),
        ("url", "https://ada.dev"),
    ]


def test_text_pairs_urls_uuids_and_ticket_ids():
    text = (
        'Created order_id: ORD-9 for name: "Ada Lovelace", user ID=42. '
        "Ticket OPS-7 is at https://x.io/t/7. Trace 123e4567-e89b-12d3-a456-426614174000."
    )
    assert pairs(extract_entities("t", text)) == [
        ("order_id", "ORD-9"),
        ("name", "Ada Lovelace"),
        ("user_id", "42"),
        ("url", "https://x.io/t/7"),
        ("id", "123e4567-e89b-12d3-a456-426614174000"),
        ("id", "OPS-7"),
    ]


def test_broken_json_is_read_as_text_and_repeats_are_dropped():
    assert pairs(extract_entities("t", "[OPS-1 and OPS-1")) == [("id", "OPS-1")]
    assert extract_entities("t", "nothing here") == []


def test_a_huge_json_result_is_walked_only_so_far():
    data = [{"id": i} for i in range(5_000)]
    found = list(extract_entities("t", json.dumps(data)))
    assert 0 < len(found) < 5_000


# -- the entities kept --------------------------------------------------------------------------


def test_remember_is_lru_bounded_and_copy_on_write():
    memory = WorkingMemory(max_entities=3)
    extra: dict[str, Any] = {}
    memory.remember(extra, [Entity("id", "1"), Entity("id", "2"), Entity("id", "3")])
    before = extra[WORKING_MEMORY_KEY]
    memory.remember(extra, [Entity("id", "1"), Entity("id", "4")])
    assert [e.value for e in memory.entities(extra)] == ["3", "1", "4"]
    assert [d["value"] for d in before] == ["1", "2", "3"]  # the old list was not changed


def test_entities_ignores_what_is_not_its_own():
    memory = WorkingMemory()
    assert memory.entities({WORKING_MEMORY_KEY: "junk"}) == []
    assert memory.entities({WORKING_MEMORY_KEY: [{"value": 3}, "x", {"value": "ok"}]}) == [
        Entity("", "ok", "")
    ]


def test_remember_refuses_what_is_not_an_entity():
    with pytest.raises(TypeError, match=r"return rxagent\.memory\.Entity"):
        WorkingMemory().remember({}, [("id", "1")])  # type: ignore[list-item]


@given(
    values=st.lists(st.sampled_from("abcdefghij"), max_size=40),
    cap=st.integers(1, 6),
)
def test_the_newest_distinct_entities_are_kept_up_to_the_cap(values, cap):
    memory = WorkingMemory(max_entities=cap)
    extra: dict[str, Any] = {}
    for value in values:
        memory.remember(extra, [Entity("id", value)])
    kept = [e.value for e in memory.entities(extra)]
    newest_first: list[str] = []
    for value in reversed(values):
        if value not in newest_first:
            newest_first.append(value)
    assert kept == list(reversed(newest_first[:cap]))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_entities": 0}, "max_entities"),
        ({"extract": "regex"}, "takes a function"),
    ],
)
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ConfigurationError, match=match):
        WorkingMemory(**kwargs)


def test_the_section_goes_into_the_system_prompt_whatever_its_form():
    blocks = Msg(role="system", content=[TextBlock(text="Rules.")], name="sys", id="s1")
    (first, user) = with_section([blocks, Msg.user("hi")], "[X]")
    assert first.id == "s1"
    assert first.name == "sys"
    assert first.text == "Rules.\n\n[X]"
    assert user.text == "hi"
    assert with_section([Msg.system(""), Msg.user("hi")], "[X]")[0].text == "[X]"
    assert [m.role for m in with_section([Msg.user("hi")], "[X]")] == ["system", "user"]
    assert WorkingMemory().render([]) == ""
    assert repr(WorkingMemory()) == "WorkingMemory(max_entities=50, key='working_memory.entities')"


# -- in a run -----------------------------------------------------------------------------------


async def test_entities_are_in_every_later_request_and_not_in_history():
    model = ScriptedModel([tool_call("lookup_order", order="17"), "Shipped.", "Still shipped."])
    agent = ReActAgent("shop", "", model, tools=[lookup_order], hooks=[WorkingMemory()])
    await agent.call("Where is order 17?")
    assert "[Working Memory]" not in model.requests[0].messages[0].text
    assert model.requests[0].messages[0].role == "user"  # no entities yet: no section
    assert "- order_id: ORD-17 (from lookup_order)" in model.requests[1].messages[0].text
    await agent.call("And now?")
    assert "ORD-17" in model.requests[2].messages[0].text
    state = await agent.state_dict()
    assert all(m["role"] != "system" for m in state["memory"])
    assert state["extra"][WORKING_MEMORY_KEY][0] == {
        "kind": "order_id",
        "value": "ORD-17",
        "tool": "lookup_order",
    }


async def test_entities_survive_trimming_of_the_tool_result():
    window = ContextWindow(context_window=1_000, max_output_tokens=200)
    script: list[Turn] = [tool_call("lookup_order", order="17"), "Shipped.", "It is ORD-17."]
    model = ScriptedModel(script, context_window=1_000)
    agent = ReActAgent(
        "shop", "Be brief.", model, tools=[lookup_order], hooks=[WorkingMemory(), window]
    )
    await agent.call("Where is order 17?")
    events = [e async for e in agent.events("Which order was that?")]
    assert any(isinstance(e, ContextTrimmedEvent) for e in events)
    last = model.requests[-1].messages
    assert not any(m.role == "tool" for m in last)  # the tool result was trimmed away
    assert "order_id: ORD-17" in last[0].text


async def test_entities_round_trip_through_save_and_load():
    model = ScriptedModel([tool_call("lookup_order", order="5"), "ok"])
    first = ReActAgent("shop", "S.", model, tools=[lookup_order], hooks=[WorkingMemory()])
    await first.call("order 5?")
    saved = json.loads(json.dumps(await first.state_dict()))
    again = ScriptedModel(["It was ORD-5."])
    second = ReActAgent("shop", "S.", again, tools=[lookup_order], hooks=[WorkingMemory()])
    await second.load_state_dict(saved)
    await second.call("which order?")
    assert "order_id: ORD-5" in again.requests[0].messages[0].text


async def test_error_results_give_no_entities():
    model = ScriptedModel([tool_call("broken"), "Sorry."])
    agent = ReActAgent("shop", "S.", model, tools=[broken], hooks=[WorkingMemory()])
    await agent.call("go")
    assert "[Working Memory]" not in model.requests[1].messages[0].text


async def test_a_custom_extractor_sync_or_async():
    def ids_only(tool_name: str, text: str) -> list[Entity]:
        return [Entity("sku", word, tool_name) for word in text.split() if word.isdigit()]

    async def later(tool_name: str, text: str) -> list[Entity]:
        return ids_only(tool_name, text)

    for extract in (ids_only, later):

        @tool
        def stock() -> str:
            """Stock levels."""
            return "sku 1234 has 5 left"

        model = ScriptedModel([tool_call("stock"), "ok"])
        agent = ReActAgent(
            "shop", "S.", model, tools=[stock], hooks=[WorkingMemory(extract, max_entities=1)]
        )
        await agent.call("stock?")
        system = model.requests[1].messages[0].text
        assert "- sku: 5 (from stock)" in system  # the cap of 1 keeps the newest
        assert "1234" not in system


async def test_a_failing_extractor_is_isolated():
    def bad(tool_name: str, text: str) -> list[Entity]:
        raise ValueError("cannot parse")

    model = ScriptedModel([tool_call("lookup_order", order="1"), "ok"])
    agent = ReActAgent("shop", "S.", model, tools=[lookup_order], hooks=[WorkingMemory(bad)])
    events = [e async for e in agent.events("go")]
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.source for e in errors] == ["hook:WorkingMemory"]
    assert events[-1].result.ok  # type: ignore[attr-defined]
