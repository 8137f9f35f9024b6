"""Run the `Example:` code blocks of rxagent.testing's docstrings."""

from __future__ import annotations

import importlib
import inspect
import re
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import types

MODULES = [
    "rxagent.testing",
    "rxagent.testing._builders",
    "rxagent.testing._models",
    "rxagent.testing._protocol",
    "rxagent.testing._recorder",
    "rxagent.testing._hookspecs",
    "rxagent.testing._strategies_messages",
    "rxagent.testing._strategies_events",
    "rxagent.testing.strategies",
    "rxagent.testing.pytest_plugin",
]
CODE_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _documented(module: types.ModuleType) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = [(module.__name__, module)]
    for name, value in vars(module).items():
        if getattr(value, "__module__", None) != module.__name__:
            continue
        target = getattr(value, "__wrapped__", value)  # pytest fixtures wrap their function
        if inspect.isclass(target) or inspect.isfunction(target):
            found.append((f"{module.__name__}.{name}", target))
        if inspect.isclass(target):
            for attr, member in vars(target).items():
                member = getattr(member, "fget", member)
                if inspect.isfunction(member):
                    found.append((f"{module.__name__}.{name}.{attr}", member))
    return found


def _examples() -> list[Any]:
    params = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for qualname, obj in _documented(module):
            for i, block in enumerate(CODE_BLOCK.findall(inspect.getdoc(obj) or "")):
                params.append(pytest.param(textwrap.dedent(block), id=f"{qualname}[{i}]"))
    return params


@pytest.mark.parametrize("code", _examples())
def test_docstring_example_runs(code: str) -> None:
    exec(compile(code, "<docstring>", "exec"), {"__name__": "docstring_example"})


def test_public_objects_have_examples() -> None:
    import rxagent.testing
    from rxagent.testing import strategies

    missing = []
    for module, names in (
        (rxagent.testing, rxagent.testing.__all__),
        (strategies, strategies.__all__),
    ):
        for name in names:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if "Example:" not in (inspect.getdoc(obj) or ""):
                missing.append(name)
    assert missing == []
