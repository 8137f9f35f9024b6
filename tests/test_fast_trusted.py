"""`rxagent._fast.trusted` builds what validation builds, and refuses a missing required field."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent._fast import trusted
from rxagent.messages import ToolResultBlock, ToolUseBlock, freeze
from rxagent.models.base import TextDelta, Usage

_ints = st.integers(0, 10**6)


@given(index=_ints, text=st.text())
def test_a_delta_is_what_validation_gives(index: int, text: str) -> None:
    made = trusted(TextDelta, index=index, text=text)
    assert made == TextDelta(index=index, text=text)
    assert TextDelta.model_validate_json(made.model_dump_json()) == made


@given(a=_ints, b=_ints, requests=_ints)
def test_usage_with_defaults_is_what_validation_gives(a: int, b: int, requests: int) -> None:
    made = trusted(Usage, input_tokens=a, output_tokens=b, requests=requests)
    assert made == Usage(input_tokens=a, output_tokens=b, requests=requests)
    assert made + Usage() is made  # adding nothing gives the same object
    assert Usage() + made == made
    if made != Usage():
        assert (Usage() + made) is made


@given(call_id=st.text(min_size=1), name=st.text(min_size=1), value=_ints)
def test_blocks_are_what_validation_gives(call_id: str, name: str, value: int) -> None:
    made = trusted(ToolUseBlock, id=call_id, name=name, input=freeze({"v": value}))
    assert made == ToolUseBlock(id=call_id, name=name, input={"v": value})
    result = trusted(ToolResultBlock, id=call_id, name=name, output=str(value))
    assert result == ToolResultBlock(id=call_id, name=name, output=str(value))


def test_a_missing_required_field_is_named() -> None:
    with pytest.raises(TypeError, match="ToolUseBlock: missing required field 'id'"):
        trusted(ToolUseBlock, name="add")
    with pytest.raises(TypeError, match="TextDelta: missing required field 'text'"):
        trusted(TextDelta, index=0)
