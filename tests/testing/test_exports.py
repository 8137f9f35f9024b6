from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import rxagent.testing
from rxagent.testing import strategies


def test_testing_all_lists_the_public_names() -> None:
    assert rxagent.testing.__all__ == sorted(rxagent.testing.__all__)
    # the names are imported on first use: every one resolves, and nothing else is exported
    assert sorted(rxagent.testing._EXPORTS) == rxagent.testing.__all__
    for name in rxagent.testing.__all__:
        assert getattr(rxagent.testing, name) is not None
    assert set(rxagent.testing.__all__) <= set(dir(rxagent.testing))


def test_strategies_all_is_sorted_and_complete() -> None:
    exported = set(strategies.__all__)
    assert all(hasattr(strategies, name) for name in exported)
    functions = {
        name
        for name, value in vars(strategies).items()
        if callable(value)
        and not name.startswith("_")
        and getattr(value, "__module__", "") == strategies.__name__
    }
    assert functions <= exported


# random teams are made of agents, and the overhead benchmark (`rxagent bench`) measures one: the
# modules that build them may import the agent
BUILDS_AGENTS = {"_strategies_teams.py", "_overhead.py"}


def test_testing_modules_do_not_import_the_agent() -> None:
    package = Path(rxagent.testing.__file__).parent
    for path in package.glob("*.py"):
        if path.name in BUILDS_AGENTS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert name != "rxagent", path.name
                assert not name.startswith("rxagent.agent"), path.name


def test_importing_testing_does_not_import_hypothesis(tmp_path: Path) -> None:
    code = (
        "import sys, rxagent.testing._models, rxagent.testing._protocol, "
        "rxagent.testing._recorder, rxagent.testing._builders\n"
        "print(','.join(m for m in ('hypothesis', 'rxagent.testing.strategies') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.strip() == ""
