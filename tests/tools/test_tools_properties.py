"""Property tests: arguments of generated signatures reach the function unchanged."""

from __future__ import annotations

import asyncio
import inspect
import keyword
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rxagent.messages import ToolUseBlock
from rxagent.tools import Toolkit, tool

# Scalar JSON types and matching value strategies. Floats exclude NaN, which is not equal to
# itself; ints are unbounded (pydantic keeps big ints exact).
VALUES: dict[type, st.SearchStrategy[Any]] = {
    int: st.integers(),
    str: st.text(),
    bool: st.booleans(),
    float: st.floats(allow_nan=False),
    list: st.lists(st.integers() | st.text(max_size=5), max_size=4),
}

# Include names that shadow BaseModel attributes, which the argument model must alias.
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n)
) | st.sampled_from(["json", "schema", "copy", "dict", "model_config", "validate", "fields"])


@st.composite
def signatures_and_arguments(draw: st.DrawFn) -> tuple[inspect.Signature, dict[str, Any]]:
    names = draw(st.lists(NAMES, min_size=0, max_size=6, unique=True))
    parameters, arguments = [], {}
    for name in names:
        kind = draw(st.sampled_from(sorted(VALUES, key=lambda t: t.__name__)))
        optional = draw(st.booleans())
        default = draw(VALUES[kind]) if optional else inspect.Parameter.empty
        parameters.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=default
            )
        )
        if not optional or draw(st.booleans()):
            arguments[name] = draw(VALUES[kind])
    return inspect.Signature(parameters), arguments


def make_function(signature: inspect.Signature, received: dict[str, Any]) -> Any:
    def probe(**kwargs: Any) -> str:
        received.update(kwargs)
        return "done"

    probe.__signature__ = signature  # type: ignore[attr-defined]
    probe.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    probe.__doc__ = "Probe."
    return probe


@given(signatures_and_arguments())
def test_execute_passes_arguments_through_unchanged(
    case: tuple[inspect.Signature, dict[str, Any]],
) -> None:
    signature, arguments = case
    received: dict[str, Any] = {}
    made = tool(make_function(signature, received))
    call = ToolUseBlock(id="c", name="probe", input=arguments)

    outcome = asyncio.run(Toolkit([made]).execute(call))

    assert outcome.ok, outcome.result.output
    expected = {p.name: arguments.get(p.name, p.default) for p in signature.parameters.values()}
    assert received == expected
    for name, value in received.items():
        assert type(value) is type(expected[name])
    params = made.schema.parameters
    assert set(params["properties"]) == set(signature.parameters)
    assert set(params["required"]) == {
        p.name for p in signature.parameters.values() if p.default is inspect.Parameter.empty
    }


@given(signatures_and_arguments(), st.sampled_from(sorted(VALUES, key=lambda t: t.__name__)))
def test_missing_required_arguments_are_reported_not_raised(
    case: tuple[inspect.Signature, dict[str, Any]], extra_kind: type
) -> None:
    signature, arguments = case
    required = [
        p.name for p in signature.parameters.values() if p.default is inspect.Parameter.empty
    ]
    received: dict[str, Any] = {}
    made = tool(make_function(signature, received))
    dropped = {k: v for k, v in arguments.items() if k not in required}

    outcome = asyncio.run(
        Toolkit([made]).execute(ToolUseBlock(id="c", name="probe", input=dropped))
    )

    if required:
        assert outcome.result.is_error
        assert received == {}
        for name in required:
            assert f"{name}: Field required" in outcome.result.text
    else:
        assert outcome.ok
