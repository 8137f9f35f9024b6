"""The testing kit from a user's project: what it needs installed, and what it leaves alone."""

from __future__ import annotations

import importlib
import importlib.abc
import os
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from pathlib import Path
    from types import ModuleType

HINT = 'install rxagent[testing] (pip install "rxagent[testing]")'


class Refuse(importlib.abc.MetaPathFinder):
    """A finder that makes importing `name` fail as if it were not installed."""

    def __init__(self, name: str, *, missing: str | None = None) -> None:
        self.name = name
        self.missing = missing or name

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname == self.name or fullname.startswith(self.name + "."):
            raise ModuleNotFoundError(f"No module named {self.missing!r}", name=self.missing)
        return None


def import_strategies_refusing(monkeypatch: pytest.MonkeyPatch, finder: Refuse) -> Any:
    """Import rxagent.testing.strategies afresh while `finder` refuses a module."""
    for name in ("hypothesis", "rxagent.testing.strategies"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    return importlib.import_module("rxagent.testing.strategies")


def test_strategies_without_hypothesis_say_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ImportError) as caught:
        import_strategies_refusing(monkeypatch, Refuse("hypothesis"))
    assert type(caught.value) is ImportError  # not a bare ModuleNotFoundError
    assert HINT in str(caught.value)
    assert caught.value.name == "rxagent.testing.strategies"
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)


def test_a_broken_hypothesis_install_is_reported_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    # hypothesis is there, but one of its own dependencies is not: that is the error to see
    with pytest.raises(ModuleNotFoundError, match="'sortedcontainers'") as caught:
        import_strategies_refusing(monkeypatch, Refuse("hypothesis", missing="sortedcontainers"))
    assert "rxagent[testing]" not in str(caught.value)


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONWARNINGS": "error::DeprecationWarning"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


def test_without_hypothesis_in_a_fresh_interpreter_the_rest_of_the_kit_works(
    tmp_path: Path,
) -> None:
    code = """
        import importlib.abc, sys

        class Refuse(importlib.abc.MetaPathFinder):
            def find_spec(self, fullname, path, target=None):
                if fullname.split(".")[0] == "hypothesis":
                    raise ModuleNotFoundError("No module named 'hypothesis'", name="hypothesis")

        sys.meta_path.insert(0, Refuse())
        from rxagent import ReActAgent
        from rxagent.testing import ScriptedModel, add, tool_call
        agent = ReActAgent("a", "", ScriptedModel([tool_call("add", a=1, b=2), "3"]), tools=[add])
        assert agent.call_sync("1 + 2?").text == "3"
        try:
            import rxagent.testing.strategies
        except ImportError as exc:
            print(type(exc).__name__, exc, sep=": ")
    """
    out = run_python(code, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "ImportError: rxagent.testing.strategies needs hypothesis, which is not installed: " + HINT
    )


def test_the_kit_and_its_plugin_do_not_load_pytest_asyncio(tmp_path: Path) -> None:
    code = """
        import sys
        import rxagent.testing, rxagent.testing.strategies, rxagent.testing.tools
        import rxagent.testing.pytest_plugin
        rxagent.testing.ScriptedModel, rxagent.testing.EventRecorder
        print(sorted(m for m in sys.modules if m.split(".")[0] == "pytest_asyncio"))
    """
    out = run_python(code, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


USER_TEST = """
    from hypothesis import given, settings

    from rxagent import ReActAgent
    from rxagent.testing import assert_event_protocol
    from rxagent.testing.strategies import scripts
    from rxagent.testing.tools import add, echo


    def test_fixtures(scripted_model, event_recorder):
        agent = ReActAgent("a", "", scripted_model(["Hi!"]), hooks=[event_recorder])
        assert agent.call_sync("hi").text == "Hi!"
        assert event_recorder.types()[-1] == "post_call"


    @settings(max_examples=5, deadline=None)
    @given(scripts())
    def test_scripts(script):
        from rxagent.testing import ScriptedModel

        agent = ReActAgent("a", "", ScriptedModel(script), tools=[add, echo])
        assert agent.call_sync("go").ok
"""


@pytest.mark.parametrize(
    ("ini", "args"),
    [
        pytest.param(None, ["-p", "no:asyncio"], id="no async plugin, no configuration"),
        pytest.param(
            "[pytest]\nasyncio_default_fixture_loop_scope = function\n",
            [],
            id="pytest-asyncio, configured as docs/testing.md says",
        ),
    ],
)
def test_a_user_project_runs_the_kit_warning_free(
    tmp_path: Path, ini: str | None, args: list[str]
) -> None:
    """rxagent's plugin, fixtures and strategies add no warning to a user's test run.

    Warnings raised while plugins configure themselves are errors here (`PYTHONWARNINGS`), so a
    plugin that warned would fail the run, as pytest-asyncio does when it is active and its
    `asyncio_default_fixture_loop_scope` is unset.
    """
    (tmp_path / "test_user.py").write_text(textwrap.dedent(USER_TEST))
    if ini is not None:
        (tmp_path / "pytest.ini").write_text(ini)
    code = f"""
        import sys, pytest
        sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-W", "error", *{args!r}]))
    """
    out = run_python(code, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout
    assert "asyncio_default_fixture_loop_scope" not in out.stdout + out.stderr
