"""The import contracts (`[tool.importlinter]` in pyproject.toml) hold, and catch what they forbid.

ARCHITECTURE.md §1 orders the package in layers, and CI runs `lint-imports` so that nothing
imports upward. Every import counts: at module level, inside a function, and under
`if TYPE_CHECKING:`. These tests run the same command on the package, where every contract must be
kept, and on copies of the package with one forbidden import added, where its contract must
break and the report must name the import.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"
LINT_IMPORTS = Path(sysconfig.get_path("scripts")) / "lint-imports"


def contracts() -> list[dict[str, Any]]:
    contracts: list[dict[str, Any]] = tomllib.loads(CONFIG.read_text())["tool"]["importlinter"][
        "contracts"
    ]
    return contracts


def lint_imports(package_parent: Path) -> subprocess.CompletedProcess[str]:
    """Run `lint-imports` with the project's contracts on the `rxagent` in `package_parent`."""
    path = os.pathsep.join(filter(None, [str(package_parent), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", str(CONFIG)],
        cwd=package_parent,
        env={**os.environ, "PYTHONPATH": path, "COLUMNS": "200", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_package_keeps_every_contract() -> None:
    result = lint_imports(ROOT)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert f"Contracts: {len(contracts())} kept, 0 broken." in report, report


def test_every_module_of_rxagent_models_is_in_a_layer() -> None:
    # The layers contract lists rxagent.models module by module (models.base is core, the rest
    # is above the formatters), so its exhaustive check cannot see a new module there.
    (layers,) = (c for c in contracts() if c["id"] == "layers")
    named = {part.strip().strip("()") for layer in layers["layers"] for part in layer.split(":")}
    package = ROOT / "rxagent" / "models"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.parent.name for p in package.glob("*/__init__.py")}
    missing = sorted(f"models.{name}" for name in modules if f"models.{name}" not in named)
    assert not missing, f"add {missing} to a layer of [tool.importlinter] in pyproject.toml"


@pytest.mark.parametrize(
    ("module", "added", "broken", "named"),
    [
        pytest.param(
            "messages.py",
            "\nfrom typing import TYPE_CHECKING\n\n"
            "if TYPE_CHECKING:\n    from rxagent.agent import ReActAgent\n",
            "Layers: nothing imports upward BROKEN",
            [
                "rxagent.messages is not allowed to import rxagent.agent",
                "rxagent.messages -> rxagent.agent (l.",
            ],
            id="typing-only import from core data into the agent",
        ),
        pytest.param(
            "tokens/_counter.py",
            "\ndef _client():\n    from rxagent.models import resolve\n\n    return resolve\n",
            "The rxagent.models package sits above core and formatters BROKEN",
            ["rxagent.tokens._counter is not allowed to import rxagent.models"],
            id="function-level import of the models package from tokens",
        ),
        pytest.param(
            "tools/_tool.py",
            "\ndef _message():\n    from rxagent import Msg\n\n    return Msg\n",
            "Nothing in rxagent imports the package root BROKEN",
            ["rxagent.tools._tool is not allowed to import rxagent"],
            id="import from the package root",
        ),
    ],
)
def test_an_added_forbidden_import_breaks_its_contract(
    tmp_path: Path, module: str, added: str, broken: str, named: list[str]
) -> None:
    copy = tmp_path / "rxagent"
    shutil.copytree(ROOT / "rxagent", copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / module).open("a") as source:
        source.write(added)

    result = lint_imports(tmp_path)
    report = result.stdout + result.stderr
    assert result.returncode == 1, report
    assert broken in report, report
    for text in named:
        assert text in report, report
