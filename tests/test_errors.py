"""One exception tree: every public exception lives in `rxagent.errors`, as its docstring draws."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import rxagent
from rxagent import errors
from rxagent.errors import RxAgentError

_TREE_LINE = re.compile(r"^(?P<indent>[│ ]*)[├└]── (?P<name>\w+)")


def _exception_classes() -> dict[str, type[BaseException]]:
    return {
        name: value
        for name in errors.__all__
        if inspect.isclass(value := getattr(errors, name)) and issubclass(value, BaseException)
    }


def _drawn_parents() -> dict[str, str]:
    """Each exception of the module docstring's drawing → the exception drawn above it."""
    doc = errors.__doc__ or ""
    start = doc.index("```text\n") + len("```text\n")
    drawing = doc[start : doc.index("\n```", start)].splitlines()
    assert drawing[0] == "RxAgentError"
    path = ["RxAgentError"]
    parents: dict[str, str] = {}
    for line in drawing[1:]:
        match = _TREE_LINE.match(line)
        assert match is not None, f"not a line of the tree: {line!r}"
        depth = len(match["indent"]) // 4 + 1
        del path[depth:]
        parents[match["name"]] = path[-1]
        path.append(match["name"])
    return parents


def test_the_drawing_is_the_real_tree():
    exceptions = _exception_classes()
    parents = _drawn_parents()
    assert set(parents) == set(exceptions) - {"RxAgentError"}
    for name, cls in exceptions.items():
        assert issubclass(cls, RxAgentError), name
        if name != "RxAgentError":
            (base,) = [b for b in cls.__bases__ if issubclass(b, RxAgentError)]
            assert parents[name] == base.__name__, name


def _public_modules() -> list[str]:
    return [
        info.name
        for info in pkgutil.walk_packages(rxagent.__path__, prefix="rxagent.")
        if info.name != "rxagent.errors"
    ]


@pytest.mark.parametrize("name", _public_modules())
def test_no_module_but_errors_defines_a_public_exception(name: str):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:  # an optional extra that is not installed
        if (exc.name or "").split(".")[0] == "rxagent":
            raise
        pytest.skip(f"{name} needs {exc.name}")
    defined = [
        attr
        for attr, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == name
        and not attr.startswith("_")
    ]
    assert defined == [], f"{name} defines {defined}; move them to rxagent.errors"


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("rxagent.state", "StoreUnavailableError"),
        ("rxagent.state._store_common", "StoreUnavailableError"),
        ("rxagent.state", "ControlMessageTooLargeError"),
        ("rxagent.state._control_pg", "ControlMessageTooLargeError"),
        ("rxagent.tools.mcp", "MCPConnectionError"),
        ("rxagent.cli._common", "CliError"),
        ("rxagent.testing._overhead", "BenchError"),
        ("rxagent.testing", "ScriptExhaustedError"),
        ("rxagent.testing._models", "ScriptExhaustedError"),
        ("rxagent.testing", "EventProtocolError"),
        ("rxagent.testing._protocol", "EventProtocolError"),
        ("rxagent.testing.strategies", "UnsupportedSchemaError"),
        ("rxagent.testing._strategies_schema", "UnsupportedSchemaError"),
        ("rxagent.server", "ApiError"),
        ("rxagent.server._errors", "ApiError"),
    ],
)
def test_exceptions_keep_their_earlier_import_paths(module: str, name: str):
    assert getattr(importlib.import_module(module), name) is getattr(errors, name)


def test_moved_exceptions_keep_their_builtin_bases():
    assert issubclass(errors.EventProtocolError, AssertionError)
    assert issubclass(errors.BenchError, RuntimeError)
    assert issubclass(errors.MCPConnectionError, ConnectionError)
    assert issubclass(errors.UnsupportedSchemaError, ValueError)
    assert issubclass(errors.ConnectionLostError, errors.StoreUnavailableError)
