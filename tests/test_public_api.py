"""The public API is explicit: every public module has a sorted `__all__` of real names."""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from pathlib import Path

import pytest

import rxagent
from rxagent._lazy import export_order, read_exports


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


def test_agent_error_is_a_deprecated_alias_of_error_info():
    from rxagent.result import ErrorInfo

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from rxagent import AgentError
        from rxagent.result import AgentError as from_result
    assert AgentError is ErrorInfo
    assert from_result is ErrorInfo
    assert [(w.category, str(w.message), w.filename) for w in caught] == [
        (DeprecationWarning, "rxagent.AgentError is deprecated; use rxagent.ErrorInfo", __file__),
        (
            DeprecationWarning,
            "rxagent.result.AgentError is deprecated; use rxagent.result.ErrorInfo",
            __file__,
        ),
    ]
    assert "AgentError" not in rxagent.__all__
    assert "ErrorInfo" in rxagent.__all__


def test_rxagent_modules_read_a_deprecated_alias_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        namespace: dict[str, object] = {"__name__": "rxagent._probe"}
        exec("from rxagent.result import AgentError", namespace)
    assert namespace["AgentError"] is rxagent.ErrorInfo


def test_the_type_checking_block_is_the_one_export_list(tmp_path: Path):
    module = tmp_path / "exports.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.a import One as One\n"
        "    from pkg.b import Two as Two  # a comment\n"
        "    Old = One\n"
        '    """Deprecated."""\n'
    )
    assert read_exports(str(module)) == ({"One": "pkg.a", "Two": "pkg.b"}, {"Old": "One"})
    for wrong in ["from pkg.a import One", "from pkg.a import One as Uno", "import pkg", "x = 1"]:
        module.write_text(f"if TYPE_CHECKING:\n    {wrong}\n")
        with pytest.raises(ImportError, match="line 2: the TYPE_CHECKING block holds only"):
            read_exports(str(module))
    module.write_text("X = 1\n")
    with pytest.raises(ImportError, match="exactly one `if TYPE_CHECKING:` block"):
        read_exports(str(module))


def test_export_order_is_the_order_all_is_kept_in():
    names = ["tool", "Tool", "EVENT_ADAPTER", "__version__", "AgentEvent"]
    assert export_order(names) == sorted(names, key=isort_key)
    assert export_order(rxagent.__all__) == rxagent.__all__
