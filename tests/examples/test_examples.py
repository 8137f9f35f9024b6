"""Every script in examples/ runs, offline, from the repository root, and shows what it claims.

Each runs as `python -m examples.<name>` in a process of its own, with a guard that refuses
connections off this machine (`offline/sitecustomize.py`). A test checks its exit code and a line
of its output that only a run that did its job prints.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from service_helpers import require_minilm  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = ROOT / "examples"
OFFLINE = Path(__file__).resolve().parent / "offline"
TIMEOUT_S = 60

# example -> text its output must contain
EXPECTED: dict[str, str] = {
    "approval": "rejected: The tool call was rejected: over the monthly limit",
    "faq_agent": "In short: Hooks run in priority order",
    "guarded_agent": "replies stored in memory: 3, with a card number: 0",
    "hooks_rewrite": "Order 42: shipped to [email], paid with card ending 1234.",
    "injection_check": "hats: I ignored instructions inside the page.",
    "interceptors": "cached: '3 lamps.', requests 0, cache hits 2",
    "interrupt_resume": "resumed: no_tool_calls, 'Done.'",
    "local_embeddings": "all-MiniLM-L6-v2: 4 of 4 questions matched",
    "mcp_tools": "In Asia/Tokyo it is ",
    "playground": "reply: Done: deployed 1.4.2.",
    "memory_agent": "recalled on Tuesday: - Ann wants bank refunds.",
    "property_test_hooks": "the promise held on 30 random scripts",
    "quick_tools": "blocking=False: ran on 'MainThread'",
    "providers": "ollama:llama3.2              '2 + 3 = 5'  via /api/chat",
    "rag_agent": "needs no password. (source wifi.md)",
    "rx_operators": "tool calls: ['weather(Paris)', 'weather(Rome)']",
    "server_openai_client": "streamed: Your message has 4 words.",
    "sqlite_sessions": "second process: Messages from you: 2. The first: 'My name is Ann.'",
    "stop_decisions": "budget: max_tool_calls after 3 model calls ('search', 'search')",
    "team_handoff": "handoff billing -> triage (not a billing question)",
    "team_pipelines": "desk > reviews > editor   Revised: frogs are amphibians.",
    "team_supervisor": "  lead/poet answers: A frog, a pond, a leap.",
    "structured_output": "ticket:  Ticket(title='The login page is down', priority='high'",
    "tool_permissions": "guest: \"Tool 'delete_branch' is not available in this step",
    "tool_progress": "download: {'done': 3, 'of': 3}",
    "tracing": "      invoke_agent researcher conversation.id=research",
}

# example with a module-level `agent` -> what `rxagent run "What are hooks?" --agent
# examples.<name>:agent` prints
AGENTS: dict[str, str] = {
    "faq_agent": "In short: Hooks run in priority order",
    "hooks_rewrite": "Order 42: shipped to [email], paid with card ending 1234.",
    "rx_operators": "Today: Paris: sunny.",
    "server_openai_client": "Your message has 3 words.",
    "structured_output": '{"title": "What are hooks?", "priority": "low", "tags": []}',
    "tool_progress": "Downloaded 3 files.",
}
CONSOLE_SCRIPT = Path(sys.executable).parent / "rxagent"


def example_names() -> list[str]:
    return sorted(p.stem for p in EXAMPLES_DIR.glob("*.py") if p.stem != "__init__")


def offline_env() -> dict[str, str]:
    """The environment of an example: ours, with the network guard first on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(OFFLINE), env.get("PYTHONPATH")]))
    return env


def run_python(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_command(sys.executable, *args, env=env)


def run_command(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=ROOT,
        env={**offline_env(), **(env or {})},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT_S,
        check=False,
    )


def test_every_example_is_checked() -> None:
    assert example_names() == sorted(EXPECTED)


NEEDS_MINILM = {"local_embeddings"}
"""Examples that run LocalEmbedder, whose weights `.ci/run` installs with --no-deps."""


@pytest.mark.timeout(TIMEOUT_S + 10)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_and_shows_its_point(name: str) -> None:
    if name in NEEDS_MINILM:
        require_minilm()
    done = run_python("-m", f"examples.{name}")
    assert done.returncode == 0, done.stderr
    assert EXPECTED[name] in done.stdout, done.stdout


@pytest.mark.parametrize("name", example_names())
def test_example_says_its_idea_and_how_to_run_it(name: str) -> None:
    source = (EXAMPLES_DIR / f"{name}.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    doc = ast.get_docstring(ast.parse(source)) or ""
    assert f"python -m examples.{name}" in doc
    if name in AGENTS:
        assert f"--agent examples.{name}:agent" in doc
    assert len(lines) <= 100, f"examples/{name}.py has {len(lines)} lines: keep it short"
    listed = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    assert f"examples/{name}.py" in listed, f"docs/examples.md does not list {name}"


def defines_agent(name: str) -> bool:
    tree = ast.parse((EXAMPLES_DIR / f"{name}.py").read_text(encoding="utf-8"))
    targets = [t for node in tree.body if isinstance(node, ast.Assign) for t in node.targets]
    return any(isinstance(t, ast.Name) and t.id == "agent" for t in targets)


def test_the_agent_examples_are_the_ones_that_define_an_agent() -> None:
    assert [name for name in example_names() if defines_agent(name)] == sorted(AGENTS)


@pytest.mark.timeout(TIMEOUT_S + 10)
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_agent_example_imports_without_running_anything(name: str) -> None:
    code = (
        f"import examples.{name} as example\n"
        "from rxagent import ReActAgent\n"
        "assert isinstance(example.agent, ReActAgent)\n"
        "assert example.agent.model.requests == []\n"
    )
    done = run_python("-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


@pytest.mark.timeout(TIMEOUT_S + 10)
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_the_command_line_runs_an_agent_example(name: str, tmp_path: Path) -> None:
    rxagent = (
        [str(CONSOLE_SCRIPT)] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "rxagent.cli"]
    )
    store = {"RXAGENT_STORE": f"sqlite:///{tmp_path / 'sessions.db'}"}  # not the repository's
    done = run_command(
        *rxagent, "run", "What are hooks?", "--agent", f"examples.{name}:agent", env=store
    )
    assert done.returncode == 0, done.stderr
    assert AGENTS[name] in done.stdout, done.stdout


@pytest.mark.timeout(TIMEOUT_S + 10)
def test_the_property_example_fails_without_its_hook() -> None:
    code = (
        "import examples.property_test_hooks as example\n"
        "from rxagent import PostActingEvent, hook\n"
        "example.cap_results = hook(PostActingEvent, name='does_nothing')(lambda event: None)\n"
        "example.test_tool_results_are_capped()\n"
    )
    done = run_python("-c", code)
    assert done.returncode != 0
    # the property's own assertion failed, on an example hypothesis reports (its wording changed
    # from "Falsifying example" to "Failing test case" in 6.16x)
    assert "\nAssertionError" in done.stderr, done.stderr
    assert re.search(
        r"(Falsifying example|Failing test case): test_tool_results_are_capped\(", done.stderr
    ), done.stderr


def test_the_offline_guard_refuses_the_network() -> None:
    code = "import socket; socket.create_connection(('192.0.2.1', 80), timeout=1)"
    done = run_python("-c", code)
    assert done.returncode != 0
    assert re.search(r"examples may not reach the network", done.stderr)
