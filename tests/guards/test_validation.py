"""InputValidation: each check on its own, the reasons it gives, and its arguments."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import ErrorCode, ErrorEvent, PostCallEvent, Principal, ReActAgent
from rxagent.guards import GuardContext, GuardEvent, GuardPipeline, InputValidation
from rxagent.messages import Msg
from rxagent.testing import ScriptedModel

INPUT = GuardContext("input")


async def test_plain_text_passes():
    verdict = await InputValidation().check("What is the weather in Oslo?\n\tThanks.\r\n", INPUT)
    assert not verdict.flagged
    assert verdict.score == 0.0
    assert verdict.stage == "input_validation"


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
async def test_empty_or_whitespace_input_is_rejected(text: str):
    verdict = await InputValidation().check(text, INPUT)
    assert verdict.flagged
    assert verdict.reasons[0].startswith("empty input")
    assert "allow_empty=True" in verdict.reasons[0]


async def test_allow_empty_lets_empty_input_through():
    assert not (await InputValidation(allow_empty=True).check("", INPUT)).flagged


async def test_overlong_input_names_its_length_and_the_limit():
    verdict = await InputValidation(max_chars=10).check("x" * 25, INPUT)
    assert verdict.flagged
    assert verdict.reasons == (
        "input is 25 characters, over the limit of 10; shorten it or raise max_chars",
    )
    assert not (await InputValidation(max_chars=10).check("x" * 10, INPUT)).flagged


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("ab\ud800c", "lone surrogate U+D800 at index 2"),
        ("ab\udfffc", "lone surrogate U+DFFF at index 2"),
        ("a\ufffeb", "noncharacter U+FFFE at index 1"),
        ("a\uffff", "noncharacter U+FFFF at index 1"),
        ("x\ufdd0", "noncharacter U+FDD0 at index 1"),
        ("xy\U0010ffff", "noncharacter U+10FFFF at index 2"),
    ],
)
async def test_invalid_unicode_is_rejected_with_its_position(text: str, found: str):
    verdict = await InputValidation().check(text, INPUT)
    assert verdict.flagged
    assert any(found in reason for reason in verdict.reasons), verdict.reasons


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("bell\x07", "control character U+0007 at index 4"),
        ("\x00null", "control character U+0000 at index 0"),
        ("del\x7f", "control character U+007F at index 3"),
        ("c1\x85", "control character U+0085 at index 2"),
        ("x\x1by[2J", "control character U+001B at index 1"),
    ],
)
async def test_control_characters_are_rejected_with_the_first_index(text: str, found: str):
    verdict = await InputValidation().check(text, INPUT)
    assert verdict.flagged
    assert verdict.reasons == (f"{found}; remove it or pass control_characters='allow'",)


@pytest.mark.parametrize(
    "char", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2069"]
)
async def test_bidirectional_controls_are_rejected(char: str):
    verdict = await InputValidation().check(f"access = {char}admin", INPUT)
    assert verdict.flagged
    assert f"bidirectional control U+{ord(char):04X} at index 9" in verdict.reasons[0]


async def test_only_the_first_offending_index_is_reported():
    verdict = await InputValidation().check("ok\x01 and \x02", INPUT)
    assert verdict.reasons == (
        "control character U+0001 at index 2; remove it or pass control_characters='allow'",
    )


async def test_allowing_control_characters_still_rejects_invalid_unicode():
    stage = InputValidation(control_characters="allow")
    assert not (await stage.check("bell\x07 \u202e", INPUT)).flagged
    assert (await stage.check("bad \ud800", INPUT)).flagged


async def test_every_failed_check_is_a_reason():
    verdict = await InputValidation(max_chars=5).check("abcdef\x07\u202e", INPUT)
    assert len(verdict.reasons) == 3


async def test_max_messages_counts_the_input_messages():
    stage = InputValidation(max_messages=2)
    many = GuardContext("input", messages=tuple(Msg.user(str(i)) for i in range(3)))
    few = GuardContext("input", messages=(Msg.user("a"),))
    verdict = await stage.check("hi", many)
    assert verdict.flagged
    assert verdict.reasons[0].startswith("3 input messages, over the limit of 2")
    assert not (await stage.check("hi", few)).flagged


async def test_in_a_pipeline_an_invalid_input_is_rejected():
    screened = await GuardPipeline([InputValidation(max_chars=3)]).screen("abcd", INPUT)
    assert screened.rejected is not None
    assert screened.rejected.stage == "input_validation"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_chars": 0}, "max_chars="),
        ({"max_chars": True}, "max_chars="),
        ({"max_chars": 1.5}, "max_chars="),
        ({"control_characters": "strip"}, "control_characters="),
        ({"max_messages": 0}, "max_messages="),
    ],
)
def test_bad_arguments_name_the_argument(kwargs: dict[str, object], message: str):
    with pytest.raises(ValueError, match=message):
        InputValidation(**kwargs)  # type: ignore[arg-type]


PRINTABLE = st.characters(
    blacklist_categories=("Cs", "Cc", "Cn", "Co"),
    blacklist_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
)


@given(st.text(PRINTABLE, min_size=1, max_size=200).filter(str.strip))
async def test_ordinary_text_within_the_limit_always_passes(text: str):
    assert not (await InputValidation().check(text, INPUT)).flagged


@given(
    st.text(PRINTABLE, max_size=50),
    st.sampled_from("\x00\x08\x0b\x1f\x7f\x9f\u202e\u2068"),
    st.text(PRINTABLE, max_size=50),
)
async def test_a_hidden_character_is_always_found_at_its_index(before: str, char: str, after: str):
    verdict = await InputValidation(allow_empty=True).check(before + char + after, INPUT)
    assert verdict.flagged
    assert f"U+{ord(char):04X} at index {len(before)}" in verdict.reasons[0]


# -- in a run ----------------------------------------------------------------------------------


async def test_an_overlong_input_is_rejected_before_the_model_is_called():
    model = ScriptedModel(["never sent"])
    agent = ReActAgent("a", "Be brief.", model, guards=[InputValidation(max_chars=10)])
    events = [e async for e in agent.events("x" * 50, principal=Principal(user_id="ann"))]
    assert [e.type for e in events] == ["pre_call", "guard", "error", "post_call"]
    guard, error, post = events[1], events[2], events[3]
    assert isinstance(guard, GuardEvent)
    assert guard.stage == "input_validation"
    assert guard.action == "reject"
    assert guard.target == "input"
    assert guard.verdict.reasons == (
        "input is 50 characters, over the limit of 10; shorten it or raise max_chars",
    )
    assert isinstance(error, ErrorEvent)
    assert error.source == "guard:input_validation"
    assert error.code == ErrorCode.GUARD_REJECTED
    assert isinstance(post, PostCallEvent)
    assert not post.result.ok
    assert post.result.usage.requests == 0
    assert (await agent.state_dict())["memory"] == []


async def test_a_valid_input_runs_as_usual():
    agent = ReActAgent("a", "", ScriptedModel(["Hi!"]), guards=[InputValidation(max_chars=10)])
    result = await agent.call("hello")
    assert result.ok
    assert result.text == "Hi!"
