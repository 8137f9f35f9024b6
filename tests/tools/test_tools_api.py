"""The public API of rxagent.tools: exported names, and runnable docstring examples."""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import textwrap
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

import rxagent.tools
from rxagent.tools import _inject, _schema, _tool, _toolkit

if TYPE_CHECKING:
    from collections.abc import Iterator

MODULES = (rxagent.tools, _inject, _schema, _tool, _toolkit)
FENCE = re.compile(r"```python\n(.*?)```", re.S)


def test_all_is_sorted_and_lists_every_public_name() -> None:
    # dir(): the exports are imported on first use, so vars() holds only those read so far
    public = {
        name
        for name in dir(rxagent.tools)
        if not name.startswith("_") and not isinstance(getattr(rxagent.tools, name), ModuleType)
    }
    assert rxagent.tools.__all__ == sorted(rxagent.tools.__all__)
    assert set(rxagent.tools.__all__) == public
    assert {"Injected", "Tool", "ToolOutcome", "Toolkit", "tool"} <= public


def _docstrings() -> Iterator[tuple[str, str]]:
    for module in MODULES:
        yield module.__name__, module.__doc__ or ""
        for name in module.__all__:
            obj: Any = getattr(module, name)
            yield f"{module.__name__}.{name}", getattr(obj, "__doc__", None) or ""
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    doc = getattr(value, "__doc__", None)
                    if doc and (callable(value) or isinstance(value, property)):
                        yield f"{module.__name__}.{name}.{attr}", doc
        # Attribute docstrings (e.g. `Injected`) live only in the source.
        body = ast.parse(inspect.getsource(module)).body
        for node, after in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                yield f"{module.__name__}.{ast.unparse(node.target)}", after.value.value


def _examples() -> list[tuple[str, str]]:
    found: dict[str, str] = {}
    for where, doc in _docstrings():
        for block in FENCE.findall(doc):
            found.setdefault(textwrap.dedent(block), where)
    return [(where, code) for code, where in found.items()]


EXAMPLES = _examples()


def test_every_public_name_has_an_example() -> None:
    docs = dict(_docstrings())
    for name in rxagent.tools.__all__:
        doc = (
            docs[f"{_inject.__name__}.{name}"]
            if name == "Injected"
            else docs[f"rxagent.tools.{name}"]
        )
        assert "Example:" in doc, f"{name} has no Example"
        assert "```python" in doc, f"{name}'s Example has no python block"


@pytest.mark.parametrize(("where", "code"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_docstring_example_runs(where: str, code: str) -> None:
    # dont_inherit: run the example as written, without this module's __future__ imports.
    compiled = compile(code, f"<example in {where}>", "exec", dont_inherit=True)
    exec(compiled, {"__name__": "__example__"})
