"""PIIRedaction and its detector: each kind, the false positives it must avoid, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import PostCallEvent, ReActAgent, tool
from rxagent.guards import (
    GuardContext,
    GuardEvent,
    GuardPipeline,
    PIIRedaction,
    find_pii,
    redact_pii,
)
from rxagent.guards._pii import _iban_valid, _luhn
from rxagent.testing import FunctionModel, ScriptedModel, text, tool_call

OUTPUT = GuardContext("output")
CARDS = [
    "4111111111111111",
    "4111 1111 1111 1111",
    "5500-0000-0000-0004",
    "378282246310005",
    "6011 0009 9013 9424",
]
IBANS = [
    "DE89370400440532013000",
    "DE89 3704 0044 0532 0130 00",
    "GB82WEST12345698765432",
    "NL91ABNA0417164300",
    "FR14 2004 1010 0505 0001 3M02 606",
]
KEYS = [
    "sk-proj-abcDEF1234567890ghijklmnop",
    "sk-ant-api03-abcdefghijklmnopqrstuvwx1",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0123456789_abcdefghij",
    "xoxb-1234567890-abcdefghij",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "sk_live_abcdefghij1234567890",
    "rk_live_abcdefghij1234567890",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
]
PHONES = [
    "+49 151 12345678",
    "+1 (555) 123-4567",
    "+44 20 7946 0958",
    "+4915112345678",
    "(030) 1234-5678",
    "030 1234 5678",
    "555-123-4567",
    "0151-12345678",
    "06.12.34.56.78",
]


def kinds(text: str) -> list[str]:
    return [m.kind for m in find_pii(text)]


@pytest.mark.parametrize("card", CARDS)
def test_luhn_valid_cards_are_found(card: str):
    assert kinds(f"paid with {card}, thanks") == ["card"]


@pytest.mark.parametrize("number", ["4111111111111112", "1234 5678 9012 3456"])
def test_luhn_invalid_numbers_are_not_cards(number: str):
    assert "card" not in kinds(f"ref {number}")


def test_a_card_next_to_other_digit_groups_is_still_found():
    found = find_pii("4111 1111 1111 1111 12")
    assert [(m.kind, m.start, m.end) for m in found] == [("card", 0, 19)]


@pytest.mark.parametrize("iban", IBANS)
def test_mod97_valid_ibans_are_found_with_or_without_spaces(iban: str):
    assert kinds(f"IBAN: {iban} ABC") == ["iban"]


def test_an_iban_with_a_wrong_check_digit_is_not_found():
    assert kinds("DE88370400440532013000") == []


@pytest.mark.parametrize(
    "email", ["ann@example.com", "a.b+tag@mail.example.co.uk", "x_y@ex-ample.io"]
)
def test_email_addresses_are_found(email: str):
    found = find_pii(f"write to <{email}>.")
    assert [m.kind for m in found] == ["email"]
    assert f"write to <{email}>."[found[0].start : found[0].end] == email


@pytest.mark.parametrize("phone", PHONES)
def test_phone_numbers_are_found(phone: str):
    text = f"call {phone}."
    found = find_pii(text)
    assert [m.kind for m in found] == ["phone"]
    assert text[found[0].start : found[0].end] == phone


@pytest.mark.parametrize(
    "text",
    [
        "on 2024-01-15 10:30",
        "on 15.01.2024 at 12:30:45",
        "01/15/2024",
        "version 1.2.3.4 and v10.15.7",
        "hosts 10.0.0.1 and 192.168.100.200",
        "order 123456789012 shipped",
        "call me at 12:30",
        "the year 2024, 17 items",
        "sk-this-is-not-a-key-at-all-really",
    ],
)
def test_dates_times_versions_and_bare_numbers_are_not_pii(text: str):
    assert find_pii(text) == []


@pytest.mark.parametrize("key", KEYS)
def test_api_key_shapes_are_found(key: str):
    assert kinds(f"token={key} ok") == ["api_key"]


def test_kinds_limits_what_is_found():
    text = "ann@example.com 4111111111111111"
    assert [m.kind for m in find_pii(text, ["card"])] == ["card"]


async def test_redact_rewrites_each_match_and_reasons_give_counts_not_values():
    text = "Mail ann@example.com or bob@example.org, card 4111 1111 1111 1111."
    screened = await GuardPipeline([PIIRedaction()]).screen(text, OUTPUT)
    assert screened.text == ("Mail [email redacted] or [email redacted], card [card redacted].")
    (report,) = screened.reports
    assert report.action == "redact"
    assert report.verdict.reasons == ("email (2)", "card (1)")
    assert "ann@example.com" not in str(report.verdict)


async def test_reject_and_flag_leave_the_text_alone():
    text = "key AKIAIOSFODNN7EXAMPLE"
    rejected = await GuardPipeline([PIIRedaction(action="reject")]).screen(text, OUTPUT)
    assert rejected.rejected is not None
    assert rejected.rejected.reasons == ("api_key (1)",)
    flagged = await GuardPipeline([PIIRedaction(action="flag")]).screen(text, OUTPUT)
    assert flagged.text == text
    assert flagged.rejected is None
    assert flagged.reports[0].action == "flag"


async def test_on_tool_results_redact_is_replace():
    stage = PIIRedaction(targets=["output", "tool_result"], replacement="<{kind}>")
    assert stage.action_for("tool_result") == "replace"
    assert stage.action_for("output") == "redact"
    screened = await GuardPipeline([stage]).screen("ann@example.com", GuardContext("tool_result"))
    assert screened.text == "<email>"
    assert screened.reports[0].action == "replace"


async def test_clean_text_passes():
    assert not (await PIIRedaction().check("Nothing to see here, 42 items.", OUTPUT)).flagged


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kinds": ["ssn"]}, "kinds="),
        ({"kinds": []}, "kinds="),
        ({"kinds": "email"}, "kinds="),
        ({"action": "quarantine"}, "action="),
        ({"targets": ["input"]}, "targets="),
        ({"targets": "output"}, "targets="),
        ({"replacement": "{value}"}, "replacement="),
        ({"replacement": "4111111111111111"}, "looks like personal data"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PIIRedaction(**kwargs)


# -- properties --------------------------------------------------------------------------------

NOISE = st.text(alphabet=st.sampled_from(list("0123456789 -+@.()abcxyzDEGB_:/")), max_size=40)
PII = st.sampled_from(CARDS + IBANS + KEYS + PHONES + ["ann@example.com", "x.y@a-b.io"])
MIXED = st.lists(st.one_of(NOISE, PII), max_size=8).map("".join)


@given(MIXED)
def test_redacted_text_holds_no_card_iban_or_email_the_detector_finds(text: str):
    redacted = redact_pii(text)
    assert find_pii(redacted, ["card", "iban", "email"]) == []
    assert find_pii(redacted) == []


@given(MIXED)
def test_redaction_is_idempotent(text: str):
    once = redact_pii(text)
    assert redact_pii(once) == once


@given(st.text(st.characters(blacklist_categories=("Nd", "Cs"), blacklist_characters="@")))
async def test_text_without_digits_or_at_signs_is_never_flagged(text: str):
    assert not (await PIIRedaction().check(text, OUTPUT)).flagged


@given(st.sampled_from(CARDS), st.sampled_from(IBANS))
def test_every_found_card_is_luhn_valid_and_every_iban_mod97_valid(card: str, iban: str):
    text = f"{card} and {iban}"
    for m in find_pii(text):
        value = text[m.start : m.end]
        if m.kind == "card":
            assert _luhn("".join(ch for ch in value if ch.isdigit()))
        if m.kind == "iban":
            assert _iban_valid(value.replace(" ", ""))


# -- in a run ----------------------------------------------------------------------------------


async def test_a_card_number_in_the_reply_is_redacted_in_the_result_and_in_memory():
    model = ScriptedModel(["Your card 4111 1111 1111 1111 is on file."])
    agent = ReActAgent("a", "", model, guards=[PIIRedaction()])
    events = [e async for e in agent.events("which card do I use?")]
    assert [e.type for e in events][-2:] == ["guard", "post_call"]
    guard, post = events[-2], events[-1]
    assert isinstance(guard, GuardEvent)
    assert guard.action == "redact"
    assert guard.target == "output"
    assert guard.verdict.reasons == ("card (1)",)
    assert isinstance(post, PostCallEvent)
    assert post.result.ok
    assert post.result.reply.text == "Your card [card redacted] is on file."
    memory = (await agent.state_dict())["memory"]
    assert "4111" not in str(memory)
    assert "[card redacted]" in str(memory[-1])


async def test_a_tool_result_with_an_email_is_replaced_before_the_model_sees_it():
    seen: list[str] = []

    @tool
    def lookup(name: str) -> str:
        """Look a person up.

        Args:
            name: Who.
        """
        return f"{name}: ann@example.com"

    def reply(messages, tools, options):
        last = messages[-1]
        if last.role == "tool":
            seen.append(str(last.content))
            return text("done")
        return tool_call("lookup", name="Ann")

    stage = PIIRedaction(targets=["tool_result"])
    agent = ReActAgent("a", "", FunctionModel(reply), tools=[lookup], guards=[stage])
    assert (await agent.call("find Ann")).ok
    assert "ann@example.com" not in seen[0]
    assert "[email redacted]" in seen[0]


def _luhn_complete(body: str) -> str:
    for check in "0123456789":
        if _luhn(body + check):
            return body + check
    raise AssertionError(body)  # pragma: no cover - one check digit always fits


def _iban_complete(country: str, account: str) -> str:
    rearranged = account + country + "00"
    remainder = int("".join(str(int(ch, 36)) for ch in rearranged)) % 97
    return f"{country}{98 - remainder:02d}{account}"


CARD_NUMBERS = st.builds(
    _luhn_complete, st.text("0123456789", min_size=12, max_size=18).map(lambda d: "4" + d[1:])
)
IBAN_NUMBERS = st.builds(
    _iban_complete,
    st.sampled_from(["DE", "FR", "GB", "NL", "ES", "IT"]),
    st.text("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=12, max_size=26),
)


@given(CARD_NUMBERS, st.sampled_from(["", " ", "-"]))
def test_any_luhn_valid_card_is_found_and_redacted(card: str, separator: str):
    grouped = separator.join(card[i : i + 4] for i in range(0, len(card), 4))
    text = f"card {grouped} thanks"
    assert kinds(text) == ["card"]
    assert redact_pii(text) == "card [card redacted] thanks"


@given(IBAN_NUMBERS, st.booleans())
def test_any_mod97_valid_iban_is_found_and_redacted(iban: str, spaced: bool):
    shown = " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)) if spaced else iban
    text = f"IBAN {shown}, thanks"
    assert kinds(text) == ["iban"]
    assert redact_pii(text) == "IBAN [iban redacted], thanks"
