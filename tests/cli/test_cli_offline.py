"""With neither `--agent` nor `--model`, `run` and `chat` talk to the offline demo agent: no key,
no network. Also in a real process, as a newcomer types it."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rxagent import PostActingEvent
from rxagent.cli._turn import DEMO_NOTICE

_SCRIPT = Path(sys.executable).parent / "rxagent"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_piped_chat_answers_arithmetic_offline(cli) -> None:
    done = cli("chat", stdin="What is 17 * 23?\n")
    assert (done.code, done.err) == (0, "")
    answer, summary = done.out.splitlines()
    assert answer == "The calculator computed 17 * 23 = 391."
    assert summary.startswith("· 1 tool call (calculator) · 2 steps · ")
    assert "\x1b[" not in done.out
    assert Path(".rxagent/sessions.db").is_file()  # the default store, as with --model


def test_piped_chat_keeps_one_session_across_questions(cli) -> None:
    done = cli("chat", "--store", "memory://", stdin="What are hooks?\nWhat is 2 + 2?\nHi\n")
    assert done.code == 0
    answers: list[str] = [""]
    summaries: list[str] = []
    for line in done.out.splitlines():
        if line.startswith("· "):  # a turn's summary ends its answer
            summaries.append(line)
            answers.append("")
        else:
            answers[-1] += line + "\n"
    assert answers.pop() == ""
    assert len(answers) == len(summaries) == 3, done.out
    assert answers[0].startswith("The docs search for 'hooks' found ")
    assert answers[1] == "The calculator computed 2 + 2 = 4.\n"
    assert answers[2].startswith("There is no arithmetic here")
    assert len({summary.rsplit(" ", 1)[-1] for summary in summaries}) == 1


def test_run_answers_with_the_demo_agent(cli) -> None:
    done = cli("run", "What is 17 * 23?", "--store", "memory://", "--json")
    assert done.code == 0
    events = done.events()
    (acted,) = [e for e in events if isinstance(e, PostActingEvent)]
    assert acted.result.output == "391"
    assert events[-1].agent == "demo"
    assert "391" in events[-1].result.text


def test_on_a_terminal_the_demo_agent_says_what_it_is(cli, monkeypatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli("run", "What is 1 + 1?", "--store", "memory://").code == 0
    assert terminal.getvalue() == f"{DEMO_NOTICE}\n"
    terminal.seek(0)
    terminal.truncate()
    assert cli("chat", "--store", "memory://", "--session", "t", stdin="What is 1 + 1?\n").code == 0
    assert terminal.getvalue().splitlines() == [
        "rxagent chat · agent demo · model demo (offline) · session t",
        DEMO_NOTICE,
    ]


def test_a_live_run_of_the_demo_agent(cli) -> None:
    done = cli("run", "What are hooks?", "--live", "--store", "memory://", "--session", "l")
    assert done.code == 0
    assert "rxagent run · model demo (offline)" in done.out
    assert "search_docs(query='hooks', limit=3)" in done.out
    assert "session l · store memory://" in done.out
    assert done.err == f"{DEMO_NOTICE}\n"


def test_the_model_from_the_environment_wins_over_the_demo(cli, openai_server, monkeypatch) -> None:
    openai_server(["from the model"])
    monkeypatch.setenv("RXAGENT_MODEL", "openai:m")
    assert cli("run", "What is 1 + 1?", "--store", "memory://").out == "from the model\n"


# -- a real process ---------------------------------------------------------------------------


@pytest.fixture
def script() -> str:
    if not _SCRIPT.exists():
        pytest.skip(f"the rxagent console script is not installed next to {sys.executable}")
    return str(_SCRIPT)


def _rxagent(
    script: str, workdir: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed `rxagent` in `workdir`, with no model, store or key configured."""
    unset = ("RXAGENT_MODEL", "RXAGENT_STORE", "OPENAI_API_KEY", "OPENAI_BASE_URL")
    return subprocess.run(
        [script, *args],
        input=stdin,
        cwd=workdir,
        env={k: v for k, v in os.environ.items() if k not in unset},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def test_echo_into_rxagent_chat(script: str, workdir: Path) -> None:
    done = _rxagent(script, workdir, "chat", stdin="What is 17 * 23?\n")
    assert (done.returncode, done.stderr) == (0, "")
    assert "391" in done.stdout.splitlines()[0]
    assert done.stdout.splitlines()[1].startswith("· 1 tool call (calculator)")
    assert "\x1b[" not in done.stdout


def test_run_an_agent_module_of_the_working_directory(script: str, workdir: Path) -> None:
    package = workdir / "my_examples"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "hooks_agent.py").write_text(
        textwrap.dedent(
            """
            from rxagent.demo import build_demo_agent

            agent = build_demo_agent()
            """
        ),
        encoding="utf-8",
    )
    done = _rxagent(
        script, workdir, "run", "What are hooks?", "--agent", "my_examples.hooks_agent:agent"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("The docs search for 'hooks' found ")
