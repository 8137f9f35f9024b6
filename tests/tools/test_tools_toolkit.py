"""Toolkit as a collection: adding, removing, lookup, iteration and cached schemas."""

from __future__ import annotations

import pytest

from rxagent.errors import ToolDefinitionError
from rxagent.tools import Tool, Toolkit, tool


def alpha(x: int) -> int:
    """Alpha."""
    return x


def beta(y: str) -> str:
    """Beta."""
    return y


def test_plain_callables_are_wrapped_and_tools_kept() -> None:
    made = tool(beta)
    kit = Toolkit([alpha, made])
    assert isinstance(kit.get("alpha"), Tool)
    assert kit.get("beta") is made
    assert kit.get("gamma") is None
    assert kit.names() == ("alpha", "beta")
    assert [t.name for t in kit] == ["alpha", "beta"]
    assert len(kit) == 2


def test_contains_by_name_and_by_tool() -> None:
    made = tool(alpha)
    kit = Toolkit([made])
    assert "alpha" in kit
    assert made in kit
    assert "beta" not in kit
    assert tool(alpha) not in kit  # another Tool with the same name is not this one
    assert 3 not in kit


def test_add_returns_the_tool_and_refuses_duplicate_names() -> None:
    kit = Toolkit()
    added = kit.add(alpha)
    assert added.name == "alpha"
    assert kit.get("alpha") is added
    with pytest.raises(ToolDefinitionError) as info:
        kit.add(tool(beta, name="alpha"))
    assert str(info.value) == (
        "a tool named 'alpha' is already in this toolkit; give one of them another name with "
        "@tool(name=...), or remove the old one first with toolkit.remove('alpha')"
    )
    assert kit.get("alpha") is added
    with pytest.raises(ToolDefinitionError):
        Toolkit([alpha, alpha])


def test_remove() -> None:
    kit = Toolkit([alpha, beta])
    removed = kit.remove("alpha")
    assert removed.name == "alpha"
    assert kit.names() == ("beta",)
    with pytest.raises(KeyError, match="no tool named 'alpha'; tools: beta"):
        kit.remove("alpha")


def test_schemas_are_cached_until_the_toolkit_changes() -> None:
    kit = Toolkit([alpha])
    first = kit.schemas()
    assert first is kit.schemas()
    assert [s.name for s in first] == ["alpha"]
    kit.add(beta)
    second = kit.schemas()
    assert [s.name for s in second] == ["alpha", "beta"]
    assert second is kit.schemas()
    kit.remove("alpha")
    assert [s.name for s in kit.schemas()] == ["beta"]


def test_iteration_is_a_snapshot() -> None:
    kit = Toolkit([alpha, beta])
    for t in kit:
        kit.remove(t.name)
    assert len(kit) == 0


def test_repr() -> None:
    assert repr(Toolkit([alpha, beta])) == "Toolkit([alpha, beta])"
    assert repr(tool(alpha)) == "<tool alpha>"
