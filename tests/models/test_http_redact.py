"""`redact_secrets`, and the redaction of an error a client raises.

A provider error that echoes the key, for every provider, is in `test_client_conformance`.
"""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from rxagent.errors import AgentRunError
from rxagent.models import OpenAIChatModel
from rxagent.models._http import REDACTED, redact_secrets

KEY_BODY = st.text(string.ascii_letters + string.digits + "-_", min_size=16, max_size=60)
KEYS = st.one_of(
    st.builds(lambda body: "sk-" + body, KEY_BODY),
    st.builds(lambda body: "sk-ant-api03-" + body, KEY_BODY),
    st.builds(lambda body: "sk-proj-" + body, KEY_BODY),
    st.builds(lambda body: "AIza" + body, KEY_BODY),
)
TOKEN = st.text(string.ascii_letters + string.digits + "-._~+/=", min_size=1, max_size=60)
AROUND = st.text(max_size=80)
MARKERS = ("sk-", "aiza", "bearer", "basic", "api-key", "api_key", "apikey", "authorization")


@given(before=AROUND, key=KEYS, after=AROUND)
def test_a_key_shape_in_any_text_never_survives(before: str, key: str, after: str):
    assert key not in redact_secrets(f"{before} {key}{after}")


@given(
    before=AROUND, token=TOKEN, after=AROUND, scheme=st.sampled_from(["Bearer", "bearer", "Basic"])
)
def test_a_token_after_its_scheme_never_survives(before: str, token: str, after: str, scheme: str):
    redacted = redact_secrets(f"{before}{scheme} {token} {after}")
    assert f"{scheme} {REDACTED}" in redacted
    assert f"{scheme} {token} " not in redacted


@given(
    before=AROUND,
    key=st.text(min_size=8, max_size=40).filter(lambda k: k.strip() == k and k),
    after=AROUND,
)
def test_a_configured_key_never_survives_anywhere(before: str, key: str, after: str):
    assert key not in redact_secrets(before + key + after, keys=[key])


@given(
    header=st.sampled_from(["x-api-key", "api-key", "X-Goog-Api-Key", "Authorization", "api_key"]),
    separator=st.sampled_from([": ", "=", '": "']),
    token=TOKEN.filter(lambda t: t.lower() not in ("bearer", "basic")),
)
def test_a_credential_header_value_never_survives(header: str, separator: str, token: str):
    redacted = redact_secrets(f"{header}{separator}{token}\r\n")
    assert redacted == f"{header}{separator}{REDACTED}\r\n"


@given(text=st.text(max_size=200).filter(lambda t: not any(m in t.lower() for m in MARKERS)))
def test_text_without_credentials_is_unchanged(text: str):
    assert redact_secrets(text) == text


def test_short_configured_keys_are_left_to_the_patterns():
    assert redact_secrets("k1 is fine", keys=["k1"]) == "k1 is fine"
    assert redact_secrets("Bearer k1", keys=["k1"]) == f"Bearer {REDACTED}"


PROVIDER_KEY = "sk-proj-echoedkey0123456789abcdef"


def test_an_error_without_an_excerpt_has_its_message_redacted():
    model = OpenAIChatModel("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key=PROVIDER_KEY)
    error = model._redacted(AgentRunError(f"echoed {PROVIDER_KEY} back", source="model"))
    assert (error.message, error.excerpt) == ("echoed [redacted] back", None)
    assert str(error) == "echoed [redacted] back"
