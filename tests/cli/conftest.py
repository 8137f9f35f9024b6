"""Fixtures of the `rxagent` command tests: an isolated working directory, a fake OpenAI server,
tool modules written on the fly, and `main()` driven in-process with captured output."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rxagent import EVENT_ADAPTER
from rxagent.cli import main
from rxagent.testing.providers import FakeOpenAIServer


@dataclass(frozen=True)
class Outcome:
    """What one `rxagent` invocation did."""

    code: int
    out: str
    err: str

    def events(self) -> list[Any]:
        return [EVENT_ADAPTER.validate_json(line) for line in self.out.splitlines()]


Cli = Callable[..., Outcome]


@pytest.fixture(autouse=True)
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs in its own directory, with no store, model or key from the environment.

    The directory is not on `sys.path`: the command puts it there, as it must for the console
    script (`python -m` would have done it)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".")])  # restored after
    for name in (
        "RXAGENT_STORE",
        "RXAGENT_MODEL",
        "RXAGENT_API_KEYS",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """Run `main(argv)` with `stdin` as standard input; return the code and the captured output."""

    def invoke(*argv: str, stdin: str | None = None) -> Outcome:
        capsys.readouterr()
        if stdin is not None:
            import io

            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(list(argv))
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return invoke


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FakeOpenAIServer]]:
    """Start a fake OpenAI server (on its own thread) and point OPENAI_* at it."""
    servers: list[FakeOpenAIServer] = []

    def start(turns: Sequence[Any], **kwargs: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(list(turns), **kwargs).__enter__()
        servers.append(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture
def module(workdir: Path) -> Iterator[Callable[[str], str]]:
    """Write Python source as a uniquely named module of the working directory; return its name."""
    names: list[str] = []

    def write(source: str) -> str:
        name = f"cli_mod_{uuid.uuid4().hex[:8]}"
        (workdir / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        names.append(name)
        return name

    yield write
    for name in names:
        sys.modules.pop(name, None)


_TOOLS = '''
from rxagent import tool
from rxagent.tools import Toolkit


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def mul(a: int, b: int) -> int:
    """Multiply two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a * b


as_list = [add, mul]
as_tuple = (add, mul)
kit = Toolkit([add, mul])
not_a_tool = 42
'''


@pytest.fixture
def tools(module: Callable[[str], str]) -> str:
    """A module of the working directory with tools: `add` (a Tool), `mul` (a function),
    `as_list`, `as_tuple`, `kit` (a Toolkit) and `not_a_tool`."""
    return module(_TOOLS)
