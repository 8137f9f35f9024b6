"""The public API is explicit: every public module has a sorted `__all__` of real names."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import rxagent


def isort_key(name: str) -> tuple[int, str]:
    """Constants, then classes, then functions: the order ruff's RUF022 keeps."""
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


PUBLIC_MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(rxagent.__path__, "rxagent.")
    if not any(part.startswith("_") for part in name.split("."))
    and name != "rxagent.testing.strategies"
)


@pytest.mark.parametrize("name", ["rxagent", *PUBLIC_MODULES])
def test_all_is_sorted_and_complete(name: str):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert list(exported) == sorted(exported, key=isort_key), f"{name}.__all__ is not sorted"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.__all__ names missing {attr!r}"


def test_top_level_reexports_the_architecture_names():
    for attr in [
        "ReActAgent",
        "Msg",
        "TextBlock",
        "ThinkingBlock",
        "ToolUseBlock",
        "ToolResultBlock",
        "ImageBlock",
        "EVENT_ADAPTER",
        "PreCallEvent",
        "PreReasoningEvent",
        "ReasoningChunkEvent",
        "PostReasoningEvent",
        "PreActingEvent",
        "ActingChunkEvent",
        "PostActingEvent",
        "PostCallEvent",
        "ErrorEvent",
        "hook",
        "Reject",
        "HookContractError",
        "current_run",
        "AgentResult",
        "AgentState",
        "ErrorCode",
        "ChatModel",
        "ModelOptions",
        "Usage",
        "ToolSchema",
        "tool",
        "Toolkit",
        "max_steps",
        "final_answer_marker",
        "SessionBusyError",
    ]:
        assert attr in rxagent.__all__, attr


def test_error_codes_equal_their_names():
    from rxagent import ErrorCode
    from rxagent.errors import error_class_for

    for code in ErrorCode:
        assert code.value == code.name
        assert error_class_for(code).code is code


def test_lazy_exports_match_all_and_import_is_cheap():
    import subprocess
    import sys

    assert set(rxagent._EXPORTS) == set(rxagent.__all__) - {"__version__"}
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = rxagent.Nope
    code = "import sys, rxagent; print('rxagent.agent' in sys.modules, 'pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
