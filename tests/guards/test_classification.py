"""Classification: keyword topics (whole words, NFKC, CJK), allow lists, and a model classifier."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import ErrorCode, ErrorEvent, ReActAgent
from rxagent.guards import Classification, GuardContext, GuardEvent, GuardPipeline
from rxagent.messages import Msg
from rxagent.testing import FunctionModel, ScriptedModel

INPUT = GuardContext("input")
WEAPONS = {"weapons": ["gun", "rifle", "assault weapon"]}


async def test_a_denied_keyword_rejects_with_topic_and_keywords():
    verdict = await Classification(deny=WEAPONS).check("A gun or a rifle?", INPUT)
    assert verdict.flagged
    assert verdict.stage == "classification"
    assert verdict.reasons == ("denied topic 'weapons' (gun, rifle)",)


@pytest.mark.parametrize(
    "text", ["It has begun.", "Gunther called", "shotguns are loud", "the rifleman"]
)
async def test_keywords_match_whole_words_only(text: str):
    assert not (await Classification(deny=WEAPONS).check(text, INPUT)).flagged


@pytest.mark.parametrize(
    "text",
    ["GUN!", "(gun)", "buy an Assault   Weapon now", "\uff47\uff55\uff4e", "an assault\nweapon"],
)
async def test_matching_is_casefolded_nfkc_and_spacing_tolerant(text: str):
    assert (await Classification(deny=WEAPONS).check(text, INPUT)).flagged


async def test_cjk_keywords_match_as_substrings():
    stage = Classification(deny={"weapons": ["枪"]})
    assert (await stage.check("我想买一把枪。", INPUT)).flagged
    assert not (await stage.check("我想买一本书。", INPUT)).flagged


async def test_threshold_counts_distinct_keywords():
    stage = Classification(deny=WEAPONS, threshold=2)
    assert not (await stage.check("gun gun gun", INPUT)).flagged
    assert (await stage.check("a gun and a rifle", INPUT)).flagged


async def test_allow_rejects_off_topic_input():
    stage = Classification(allow={"cooking": ["recipe", "bake", "olive oil"]})
    assert not (await stage.check("A recipe for bread?", INPUT)).flagged
    verdict = await stage.check("Who won the match?", INPUT)
    assert verdict.flagged
    assert verdict.reasons == ("off topic: not about 'cooking'",)


async def test_deny_wins_over_allow():
    stage = Classification(deny=WEAPONS, allow={"hunting": ["hunting", "rifle"]})
    verdict = await stage.check("rifle for hunting", INPUT)
    assert verdict.reasons == ("denied topic 'weapons' (rifle)",)


async def test_the_model_classifies_instead_of_keywords():
    model = ScriptedModel(["weapons"])
    stage = Classification(deny=["weapons", "drugs"], model=model)
    verdict = await stage.check("something oblique", INPUT)
    assert verdict.flagged
    assert verdict.reasons == ("denied topic 'weapons'",)


async def test_the_model_sees_the_topics_and_the_text():
    seen: list[Msg] = []

    def classify(messages: list[Msg], tools: object, options: object) -> str:
        seen.extend(messages)
        return "cooking"

    stage = Classification(
        deny={"weapons": ["gun"]}, allow=["cooking"], model=FunctionModel(classify)
    )
    assert not (await stage.check("how long to boil an egg", INPUT)).flagged
    system, user = seen
    assert "- weapons: gun" in system.text
    assert "- cooking" in system.text
    assert "how long to boil an egg" in user.text


@pytest.mark.parametrize("answer", ["NONE", "none.", " None \n"])
async def test_none_means_no_topic(answer: str):
    stage = Classification(deny=["weapons"], model=ScriptedModel([answer]))
    assert not (await stage.check("hi", INPUT)).flagged


async def test_a_model_answer_naming_several_topics():
    stage = Classification(
        allow=["cooking", "travel"], deny=["politics"], model=ScriptedModel(["Travel, politics"])
    )
    verdict = await stage.check("x", INPUT)
    assert verdict.reasons == ("denied topic 'politics'",)


@pytest.mark.parametrize("answer", ["I think it's about weapons", "weapons\ndrugs", "", "maybe"])
async def test_an_unparsable_answer_is_a_stage_error(answer: str):
    stage = Classification(deny=["weapons", "drugs"], model=ScriptedModel([answer]))
    with pytest.raises(ValueError, match="classifier answered"):
        await stage.check("x", INPUT)
    screened = await GuardPipeline(
        [Classification(deny=["weapons"], model=ScriptedModel([answer]))]
    ).screen("x", INPUT)
    assert screened.rejected is not None
    assert screened.rejected.reasons[0].startswith("stage failed: ValueError")


async def test_a_failing_classifier_passes_when_the_pipeline_fails_open():
    pipeline = GuardPipeline(
        [Classification(deny=["weapons"], model=ScriptedModel(["??"]))], on_error="pass"
    )
    assert (await pipeline.screen("x", INPUT)).rejected is None


def test_name_can_be_set_for_a_second_stage():
    stage = Classification(deny=WEAPONS, name="no_weapons")
    assert stage.name == "no_weapons"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, ValueError, "needs topics"),
        ({"deny": ["weapons"]}, ValueError, "have no keywords"),
        ({"deny": {"weapons": []}}, ValueError, "has no keywords"),
        ({"deny": "weapons"}, TypeError, "not one string"),
        ({"deny": {"weapons": "gun"}}, TypeError, "must be a list"),
        ({"deny": WEAPONS, "threshold": 0}, ValueError, "threshold="),
        ({"deny": WEAPONS, "model": object()}, TypeError, "model="),
        ({"deny": WEAPONS, "name": " "}, ValueError, "name="),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, error, message):
    with pytest.raises(error, match=message):
        Classification(**kwargs)


WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)


@given(WORD, WORD, WORD)
async def test_a_keyword_inside_a_longer_word_never_matches(keyword: str, prefix: str, suffix: str):
    stage = Classification(deny={"t": [keyword]})
    assert not (await stage.check(f"{prefix}{keyword}{suffix}", INPUT)).flagged
    assert (await stage.check(f"{prefix} {keyword.upper()}, {suffix}", INPUT)).flagged


# -- in a run ----------------------------------------------------------------------------------


async def test_a_denied_topic_fails_the_run_without_calling_the_model():
    agent = ReActAgent(
        "a", "", ScriptedModel(["never sent"]), guards=[Classification(deny=WEAPONS)]
    )
    events = [e async for e in agent.events("where do I buy a rifle")]
    assert [e.type for e in events] == ["pre_call", "guard", "error", "post_call"]
    assert isinstance(events[1], GuardEvent)
    assert events[1].verdict.reasons == ("denied topic 'weapons' (rifle)",)
    assert isinstance(events[2], ErrorEvent)
    assert events[2].source == "guard:classification"
    assert events[2].code == ErrorCode.GUARD_REJECTED
    assert (await agent.state_dict())["memory"] == []


async def test_a_model_classifier_in_a_run_records_its_usage():
    classifier = ScriptedModel(["weapons", "NONE"])
    stage = Classification(deny=["weapons"], model=classifier)
    agent = ReActAgent("a", "", ScriptedModel(["Sunny."]), guards=[stage])
    refused = await agent.call("something about arms")
    assert not refused.ok
    assert refused.error is not None
    assert refused.error.code == ErrorCode.GUARD_REJECTED
    assert refused.usage.requests == 1  # the classifier's call; the agent's model never ran
    answered = await agent.call("weather in Oslo?")
    assert answered.ok
    assert answered.text == "Sunny."
    assert answered.usage.requests == 2  # the classifier and the agent's model
