"""Every Python example in the docs and in the docstrings runs, standalone.

- Each ```python block of `docs/**/*.md` and `README.md` is one test case (id `file:line`).
- Each ```python block in the `Example:` section of a docstring in the `rxagent` package is one
  test case (id `module.object[n]`).

A block runs with `exec` in a fresh module namespace (registered in `sys.modules` while it runs,
so pydantic and `typing.get_type_hints` resolve its names), under a timeout. Blocks must be
self-contained: they import what they use, drive async code with `asyncio.run(...)`, and check
what they claim with `assert`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rxagent

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_TIMEOUT_S = 60

# A fenced block: the opening fence's indentation is removed from the block's lines (as Markdown
# does), so blocks inside lists, admonitions and docstrings are dedented the same way.
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[^\s`]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
EXAMPLE_SECTION = re.compile(r"^[ \t]*Examples?:[ \t]*$", re.MULTILINE)


def _strip_indent(body: str, indent: str) -> str:
    width = len(indent)
    lines = []
    for line in body.splitlines():
        prefix = len(line) - len(line.lstrip(" \t"))
        lines.append(line[min(prefix, width) :])
    return "\n".join(lines) + "\n"


def python_blocks(text: str) -> Iterator[tuple[int, str]]:
    """Yield `(line number of the block's first code line, code)` for each ```python block."""
    for match in FENCE.finditer(text):
        if match.group("lang") not in ("python", "py"):
            continue
        line = text.count("\n", 0, match.start("body")) + 1
        yield line, _strip_indent(match.group("body"), match.group("indent"))


def run_example(code: str, where: str) -> None:
    """Exec `code` as the body of a fresh module named after `where`."""
    name = "rxagent_docs_example_" + re.sub(r"\W", "_", where)
    module = types.ModuleType(name)
    module.__file__ = where
    sys.modules[name] = module
    try:
        exec(compile(code, where, "exec"), module.__dict__)
    finally:
        sys.modules.pop(name, None)


# -- Markdown --------------------------------------------------------------------------------------


def _markdown_files() -> list[Path]:
    files = sorted((ROOT / "docs").rglob("*.md"))
    readme = ROOT / "README.md"
    if readme.exists():
        files.append(readme)
    return files


def _markdown_examples() -> list[Any]:
    params = []
    for path in _markdown_files():
        rel = path.relative_to(ROOT).as_posix()
        for line, code in python_blocks(path.read_text(encoding="utf-8")):
            params.append(pytest.param(code, f"{rel}:{line}", id=f"{rel}:{line}"))
    return params


@pytest.mark.timeout(EXAMPLE_TIMEOUT_S)
@pytest.mark.parametrize(("code", "where"), _markdown_examples())
def test_markdown_example_runs(code: str, where: str) -> None:
    run_example(code, where)


# -- docstrings ------------------------------------------------------------------------------------


def _modules() -> Iterator[types.ModuleType | pytest.MarkDecorator]:
    yield rxagent
    for info in pkgutil.walk_packages(rxagent.__path__, prefix="rxagent."):
        try:
            yield importlib.import_module(info.name)
        except ModuleNotFoundError as exc:  # an optional extra that is not installed
            if (exc.name or "").split(".")[0] == "rxagent":
                raise
            yield pytest.mark.skip(reason=f"{info.name} needs {exc.name}")


def _documented(module: types.ModuleType) -> Iterator[tuple[str, object]]:
    """The module and the classes, functions, methods and properties it defines."""
    yield module.__name__, module
    for name, value in vars(module).items():
        # A decorated function (a @tool, a pytest fixture) documents the function it wraps.
        target = value if inspect.isclass(value) else getattr(value, "__wrapped__", value)
        if getattr(target, "__module__", None) != module.__name__:
            continue
        if not (inspect.isclass(target) or inspect.isfunction(target)):
            continue
        yield f"{module.__name__}.{name}", target
        if inspect.isclass(target):
            for attr, member in vars(target).items():
                member = getattr(member, "fget", None) or getattr(member, "__func__", member)
                if inspect.isfunction(member):
                    yield f"{module.__name__}.{name}.{attr}", member


def example_blocks(doc: str) -> list[str]:
    """The ```python blocks that come after the `Example:` heading of a docstring."""
    section = EXAMPLE_SECTION.search(doc)
    if section is None:
        return []
    return [code for _, code in python_blocks(doc[section.end() :])]


def _docstring_examples() -> list[Any]:
    params: list[Any] = []
    seen: set[int] = set()
    for module in _modules():
        if isinstance(module, pytest.MarkDecorator):
            params.append(pytest.param("", "", marks=module, id=str(module.kwargs["reason"])))
            continue
        for qualname, obj in _documented(module):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            doc = obj.__doc__  # its own docstring, not one inherited from a base class
            for i, code in enumerate(example_blocks(inspect.cleandoc(doc or ""))):
                where = f"{qualname}[{i}]"
                params.append(pytest.param(code, where, id=where))
    return params


@pytest.mark.timeout(EXAMPLE_TIMEOUT_S)
@pytest.mark.parametrize(("code", "where"), _docstring_examples())
def test_docstring_example_runs(code: str, where: str) -> None:
    run_example(code, where)


# -- the collector itself --------------------------------------------------------------------------


def test_blocks_are_found_with_their_line_and_dedented() -> None:
    text = textwrap.dedent(
        """\
        # Title

        ```python
        x = 1
        ```

        ```bash
        echo no
        ```

        1. In a list:

            ```python
            def f() -> int:
                return 2
            ```
        """
    )
    assert list(python_blocks(text)) == [(4, "x = 1\n"), (14, "def f() -> int:\n    return 2\n")]


def test_only_blocks_after_example_count_in_docstrings() -> None:
    doc = (
        "Summary.\n\n```python\nnot_an_example()\n```\n\n"
        "Example:\n    ```python\n    ok = 1\n    ```\n"
    )
    assert example_blocks(doc) == ["ok = 1\n"]


def test_every_docs_page_is_collected() -> None:
    pages = {p.name for p in _markdown_files()}
    assert {"index.md", "agent.md", "events.md", "hooks.md", "state.md"} <= pages
