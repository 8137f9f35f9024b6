"""Every Python example in the docs and in the docstrings runs, standalone.

- Each ```python block of `docs/**/*.md` and `README.md` is one test case (id `file:line`).
- Each ```python block in the `Example:` section of a docstring in the `rxagent` package is one
  test case (id `module.object[n]`).

A block runs with `exec` in a fresh module namespace (registered in `sys.modules` while it runs,
so pydantic and `typing.get_type_hints` resolve its names), under a timeout. Blocks must be
self-contained: they import what they use, drive async code with `asyncio.run(...)`, and check
what they claim with `assert`.

A Markdown block right after an `<!-- fake-provider: NAME -->` comment is the code a user types
with a real key (`ReActAgent(..., "openai:gpt-4o-mini")`). It runs against that provider's fake
server, started on a thread of its own, with the provider's base-URL and key variables pointing
at it; it must print the answer, and the server must have been asked for the block's model.
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
from service_helpers import require_minilm  # type: ignore[import-not-found]

import rxagent
from rxagent.testing.providers import (
    FakeAnthropicServer,
    FakeOllamaServer,
    FakeOpenAIServer,
    FakeProviderServer,
    RecordedRequest,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_TIMEOUT_S = 60

# A fenced block: the opening fence's indentation is removed from the block's lines (as Markdown
# does), so blocks inside lists, admonitions and docstrings are dedented the same way.
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[^\s`]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
EXAMPLE_SECTION = re.compile(r"^[ \t]*Examples?:[ \t]*$", re.MULTILINE)
# The comment that marks a block as real-model code, alone on the line before its fence.
FAKE_PROVIDER = re.compile(r"<!--\s*fake-provider:\s*(?P<name>[\w-]+)\s*-->")


def _strip_indent(body: str, indent: str) -> str:
    width = len(indent)
    lines = []
    for line in body.splitlines():
        prefix = len(line) - len(line.lstrip(" \t"))
        lines.append(line[min(prefix, width) :])
    return "\n".join(lines) + "\n"


def _python_fences(text: str) -> Iterator[tuple[int, str, re.Match[str]]]:
    """Yield `(line of the block's first code line, code, the fence's match)` per python block."""
    for match in FENCE.finditer(text):
        if match.group("lang") not in ("python", "py"):
            continue
        line = text.count("\n", 0, match.start("body")) + 1
        yield line, _strip_indent(match.group("body"), match.group("indent")), match


def python_blocks(text: str) -> Iterator[tuple[int, str]]:
    """Yield `(line number of the block's first code line, code)` for each ```python block."""
    for line, code, _ in _python_fences(text):
        yield line, code


def fake_provider_of(text: str, fence_start: int) -> str | None:
    """The provider named by an `<!-- fake-provider: NAME -->` line right before a fence."""
    before = text[:fence_start].splitlines()
    match = FAKE_PROVIDER.fullmatch(before[-1].strip()) if before else None
    return match.group("name") if match else None


def run_example(code: str, where: str) -> None:
    """Exec `code` as the body of a fresh module named after `where`.

    An example that makes a `LocalEmbedder` needs its weights: without them it is skipped
    (under CI=true, which installs them, it fails).
    """
    if "LocalEmbedder(" in code:
        require_minilm()
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
        text = path.read_text(encoding="utf-8")
        for line, code, match in _python_fences(text):
            where, provider = f"{rel}:{line}", fake_provider_of(text, match.start())
            params.append(pytest.param(code, where, provider, id=where))
    return params


@pytest.mark.timeout(EXAMPLE_TIMEOUT_S)
@pytest.mark.parametrize(("code", "where", "provider"), _markdown_examples())
def test_markdown_example_runs(
    code: str,
    where: str,
    provider: str | None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if provider is None:
        run_example(code, where)
        return
    run_against_fake_provider(code, where, provider, monkeypatch, capsys)


# -- real-model blocks, against the fake provider servers ------------------------------------------

# provider -> (its fake server, its base-URL variable, its API-key variable)
FAKE_PROVIDERS: dict[str, tuple[type[FakeProviderServer], str, str]] = {
    "openai": (FakeOpenAIServer, "OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "anthropic": (FakeAnthropicServer, "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
    "ollama": (FakeOllamaServer, "OLLAMA_HOST", "OLLAMA_API_KEY"),
}
FAKE_ANSWER = "Paris is the capital of France (from the fake server)."


def _answer(request: RecordedRequest) -> str:
    return FAKE_ANSWER


def run_against_fake_provider(
    code: str,
    where: str,
    provider: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Run `code` with `provider`'s environment pointing at its fake server; check both ends."""
    assert provider in FAKE_PROVIDERS, f"{where}: no fake server for provider {provider!r}"
    server_type, base_url_env, api_key_env = FAKE_PROVIDERS[provider]
    specs = re.findall(rf"[\"']{provider}:([^\"']+)[\"']", code)
    assert specs, f"{where}: the block names no '{provider}:<model>' model"
    with server_type(_answer) as server:
        monkeypatch.setenv(base_url_env, server.base_url)
        monkeypatch.setenv(api_key_env, "sk-docs-test")
        run_example(code, where)
    assert server.requests, f"{where}: the block sent the fake {provider} server nothing"
    assert {request.body["model"] for request in server.requests} == {specs[0]}
    assert FAKE_ANSWER in capsys.readouterr().out, f"{where}: the block printed no answer"


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


def test_a_fake_provider_comment_marks_the_next_block_only() -> None:
    text = (
        "Intro.\n\n<!-- fake-provider: anthropic -->\n```python\nprint(1)\n```\n\n"
        "```python\nprint(2)\n```\n"
    )
    fences = [match.start() for _, _, match in _python_fences(text)]
    assert [fake_provider_of(text, start) for start in fences] == ["anthropic", None]
    assert fake_provider_of("```python\nx = 1\n```\n", 0) is None


REAL_MODEL_BLOCK = """\
from rxagent import ReActAgent

agent = ReActAgent("assistant", "Be brief.", "openai:gpt-4o-mini")
{body}
"""


@pytest.mark.parametrize(
    ("body", "failure"),
    [
        ("agent.call_sync('Capital of France?')", "printed no answer"),
        ("print('" + FAKE_ANSWER + "')", "sent the fake openai server nothing"),
    ],
)
def test_a_real_model_block_must_ask_the_server_and_print_its_answer(
    body: str, failure: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = REAL_MODEL_BLOCK.format(body=body)
    with pytest.raises(AssertionError, match=failure):
        run_against_fake_provider(code, "test", "openai", monkeypatch, capsys)


def test_a_real_model_block_runs_against_the_fake_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = REAL_MODEL_BLOCK.format(body="print(agent.call_sync('Capital of France?').text)")
    run_against_fake_provider(code, "test", "openai", monkeypatch, capsys)


def test_a_real_model_block_must_name_its_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(AssertionError, match="names no 'openai:<model>' model"):
        run_against_fake_provider("print(1)", "test", "openai", monkeypatch, capsys)
