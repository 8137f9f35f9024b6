"""Nothing in rxagent imports upward: each module imports only from its own layer or lower ones.

The layers, lowest first (ARCHITECTURE.md §1): core data < formatters, tokens < model clients <
tools, hooks, state, output, ... < agent < multiagent < server, cli, testing. SSE/NDJSON framing
(`rxagent.models.framing`) is pure parsing that formatters share, so it sits with them.

Every runtime import counts, at module level and inside functions. An import under
`if TYPE_CHECKING:` is an annotation only, never executed, and does not count. A name imported
from the package itself (`from rxagent import ReActAgent`) counts as an import of the module
that `rxagent` lazily takes it from.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rxagent

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rxagent"

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "rxagent.__init__",  # lazy re-exports only, and __version__
        "rxagent._cache",
        "rxagent._fast",
        "rxagent._lazy",
        "rxagent._validate",
        "rxagent._version",
        "rxagent.context",
        "rxagent.errors",
        "rxagent.events",
        "rxagent.messages",
        "rxagent.models.base",
        "rxagent.result",
    ),
    ("rxagent.formatters", "rxagent.models.framing", "rxagent.tokens"),
    ("rxagent.models",),
    (
        "rxagent.guards",
        "rxagent.hooks",
        "rxagent.interceptors",
        "rxagent.memory",
        "rxagent.output",
        "rxagent.rag",
        "rxagent.state",
        "rxagent.tools",
    ),
    ("rxagent.agent", "rxagent.rx"),
    ("rxagent.multiagent",),
    ("rxagent._demo", "rxagent.cli", "rxagent.demo", "rxagent.server", "rxagent.testing"),
)


def layer_of(module: str) -> int:
    """The layer of `module`: that of the longest layer prefix naming it or a package above it."""
    parts = module.split(".")
    if len(parts) > 1 and parts[0] == "rxagent" and parts[1] in rxagent._EXPORTS:
        module = rxagent._EXPORTS[parts[1]]  # `from rxagent import X` loads X's module
    elif module in ("rxagent", "rxagent.__version__"):
        module = "rxagent.__init__"
    found = [
        (len(prefix), rank)
        for rank, prefixes in enumerate(LAYERS)
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    if not found:
        raise LookupError(f"{module} is in no layer; add it to LAYERS in {__file__}")
    return max(found)[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 2:
        parts.pop()
    return ".".join(parts)


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(sub) for statement in node.body for sub in ast.walk(statement))
    return skipped


def runtime_imports(source: str) -> list[tuple[int, str]]:
    """`(line, imported module)` for each absolute rxagent import that runs (TYPE_CHECKING aside).

    `from a.b import c` names both `a.b` and `a.b.c`, since `c` may be a module; the longer name
    is what a layer is looked up by.
    """
    tree = ast.parse(source)
    skipped = _type_checking_nodes(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                found.append((node.lineno, f"{node.module}.{alias.name}"))
    return [(line, name) for line, name in found if name.split(".")[0] == "rxagent"]


def _upward_imports() -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = module_name(path)
        rank = layer_of(importer)
        for line, imported in runtime_imports(path.read_text()):
            if layer_of(imported) > rank:
                problems.append(f"{path.relative_to(ROOT)}:{line} imports {imported}")
    return problems


def test_runtime_imports_are_found_and_type_checking_ones_are_not() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import rxagent.events\n"
        "from rxagent.tools import tool\n"
        "if TYPE_CHECKING:\n"
        "    from rxagent.agent import ReActAgent\n"
        "def f():\n"
        "    from rxagent.server import create_app\n"
        "from . import sibling\n"
    )
    assert runtime_imports(source) == [
        (2, "rxagent.events"),
        (3, "rxagent.tools.tool"),
        (7, "rxagent.server.create_app"),
    ]


def test_layers_are_looked_up_by_the_longest_prefix() -> None:
    assert layer_of("rxagent.models.base") == 0
    assert layer_of("rxagent.models.framing") == 1
    assert layer_of("rxagent.models.openai") == 2
    assert layer_of("rxagent.context.RunContext") == 0
    assert layer_of("rxagent.server._app") == 6
    assert layer_of("rxagent.ReActAgent") == 4  # lazily from rxagent.agent
    assert layer_of("rxagent.__version__") == 0
    with pytest.raises(LookupError, match="in no layer"):
        layer_of("rxagent_extra")


def test_nothing_imports_upward() -> None:
    problems = _upward_imports()
    assert not problems, "upward imports (ARCHITECTURE.md §1):\n" + "\n".join(problems)
