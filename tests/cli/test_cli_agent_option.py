"""`rxagent run/chat --agent MODULE:ATTR`: an agent or a factory of one, its store, the options
it cannot be combined with; `--name` and `--context-window` for agents built from options."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable

import pytest

from rxagent import PostCallEvent
from rxagent.cli._common import load_agent
from rxagent.errors import CliError

AGENTS = """
from rxagent import ReActAgent
from rxagent.errors import ConfigurationError
from rxagent.state import open_store
from rxagent.testing import ScriptedModel

agent = ReActAgent("echoer", "Be brief.", ScriptedModel(["Hooks observe runs."] * 5))
own = ReActAgent("own", "", ScriptedModel(["kept"] * 5), store=open_store("sqlite:///own.db"))


def make():
    return ReActAgent("made", "", ScriptedModel(["made it"] * 5))


async def make_async():
    return agent


def needs(config, retries=1):
    return agent


def broken():
    raise ValueError("no settings file")


def misconfigured():
    raise ConfigurationError("set OPENAI_API_KEY")


def not_an_agent():
    return 42


number = 7
agents = [agent]


class Unreadable:
    __signature__ = "not a signature"

    def __call__(self):
        return agent


unreadable = Unreadable()
"""


@pytest.fixture
def agents(module: Callable[[str], str]) -> str:
    """A module of the working directory with agents and factories, good and bad."""
    return module(AGENTS)


def _sessions(cli, store: str) -> list[tuple[str, str]]:
    listed = cli("sessions", "list", "--store", store, "--json")
    assert listed.code == 0, listed.err
    return [(s["agent"], s["session_id"]) for s in json.loads(listed.out)]


# -- loading ---------------------------------------------------------------------------------


def test_run_an_agent_from_a_module_of_the_working_directory(cli, agents) -> None:
    done = cli("run", "What are hooks?", "--agent", f"{agents}:agent", "--session", "a1")
    assert (done.code, done.out, done.err) == (0, "Hooks observe runs.\n", "")
    # its in-memory store was replaced by the --store default, as create_app(store=...) does
    assert _sessions(cli, "sqlite:///.rxagent/sessions.db") == [("echoer", "a1")]


def test_a_factory_is_called_once_with_no_arguments(cli, agents) -> None:
    done = cli("run", "hi", "--agent", f"{agents}:make", "--store", "sqlite:///f.db", "--json")
    assert done.code == 0, done.err
    last = done.events()[-1]
    assert isinstance(last, PostCallEvent)
    assert (last.agent, last.result.text) == ("made", "made it")
    assert _sessions(cli, "sqlite:///f.db") == [("made", last.session_id)]


def test_a_factory_without_a_readable_signature_is_called(cli, agents) -> None:
    done = cli("run", "hi", "--agent", f"{agents}:unreadable", "--store", "memory://")
    assert (done.code, done.out) == (0, "Hooks observe runs.\n")


def test_the_demo_factory_by_its_module_path(cli) -> None:
    done = cli(
        "run", "What is 17 * 23?", "--agent", "rxagent.demo:build_demo_agent",
        "--store", "memory://",
    )  # fmt: skip
    assert (done.code, done.out) == (0, "The calculator computed 17 * 23 = 391.\n")


def test_chat_with_a_loaded_agent(cli, agents) -> None:
    done = cli(
        "chat", "--agent", f"{agents}:make", "--store", "memory://", "--session", "c",
        stdin="one\ntwo\n",
    )  # fmt: skip
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0::2] == ["made it", "made it"]
    assert all(line.endswith("· session c") for line in lines[1::2])


def test_an_agent_with_its_own_store_keeps_it(cli, agents) -> None:
    done = cli(
        "run", "hi", "--agent", f"{agents}:own", "--store", "memory://", "--session", "o",
        "--live",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert done.out.splitlines()[-1] == "session o · store SQLiteStore (the agent's own)"
    assert _sessions(cli, "sqlite:///own.db") == [("own", "o")]


# -- errors name the option and the fix ------------------------------------------------------


@pytest.mark.parametrize(
    ("attr", "expected"),
    [
        (
            "make_async",
            "expected a ReActAgent, or a zero-argument function (a plain def) that returns one; "
            "make the factory a plain def",
        ),
        (
            "needs",
            "the factory needs config, but it is called with no arguments; give them defaults, "
            "or name the agent it makes instead",
        ),
        (
            "broken",
            "calling the factory failed with ValueError: no settings file; fix it (--debug shows "
            "the traceback)",
        ),
        ("misconfigured", "set OPENAI_API_KEY"),
        ("not_an_agent", "the factory returned int, not a ReActAgent; return the agent"),
        (
            "number",
            "expected a ReActAgent, or a zero-argument function (a plain def) that returns one, "
            "got int",
        ),
        (
            "agents",
            "expected a ReActAgent, or a zero-argument function (a plain def) that returns one, "
            "got list (run and chat talk to one agent: name one)",
        ),
        ("agnet", "module '{mod}' has no attribute 'agnet'; did you mean 'agent'?"),
        ("ReActAgent", "expected a ReActAgent, or a zero-argument function"),
    ],
)
def test_what_the_agent_option_cannot_load(attr: str, expected: str, cli, agents) -> None:
    done = cli("run", "hi", "--agent", f"{agents}:{attr}", "--store", "memory://")
    assert done.code == 2
    assert done.out == ""
    assert done.err.count("\n") == 1
    prefix = f"error: --agent '{agents}:{attr}': "
    assert done.err.startswith(prefix + expected.format(mod=agents)), done.err


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("no_such_module_here:agent", "no module named 'no_such_module_here'; run rxagent from"),
        ("just_a_name", "expected MODULE:ATTRIBUTE"),
    ],
)
def test_a_module_that_cannot_be_found(spec: str, expected: str, cli) -> None:
    done = cli("chat", "--agent", spec, stdin="hi\n")
    assert done.code == 2
    assert done.err.startswith(f"error: --agent '{spec}': {expected}")


def test_load_agent_names_the_option_it_serves() -> None:
    with pytest.raises(CliError, match=r"^serve 'rxagent.demo:DEMO_QUESTION': expected a ReAct"):
        load_agent("rxagent.demo:DEMO_QUESTION", "serve")


@pytest.mark.parametrize(
    ("extra", "conflict"),
    [
        (["--model", "openai:m"], "--model"),
        (["--tools", "x:y"], "--tools"),
        (["--sys-prompt", "Be brief."], "--sys-prompt"),
        (["--name", "bob"], "--name"),
        (["--context-window", "8192"], "--context-window"),
        (["--sys-prompt", "", "--name", "bob"], "--sys-prompt"),
    ],
)
def test_agent_cannot_be_combined_with_the_options_that_build_one(
    extra: list[str], conflict: str, cli, agents
) -> None:
    done = cli("run", "hi", "--agent", f"{agents}:agent", *extra)
    assert done.code == 2
    assert done.err.startswith(
        f"error: --agent '{agents}:agent' cannot be combined with {conflict}: the agent brings "
        "its own model, tools, system prompt and name; drop "
    )
    assert done.err.rstrip().endswith("or drop --agent to build one from --model")


# -- agents built from options: --name and --context-window ---------------------------------


def test_name_keys_the_sessions_of_an_agent_built_from_options(cli, openai_server) -> None:
    openai_server(["ok"])
    done = cli(
        "run", "hi", "--model", "openai:m", "--name", "calc", "--store", "sqlite:///n.db",
        "--session", "n1",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert _sessions(cli, "sqlite:///n.db") == [("calc", "n1")]


@pytest.mark.parametrize(
    "extra",
    [
        ["--tools", "x:y"],
        ["--sys-prompt", "Be brief."],
        ["--name", "bob"],
        ["--context-window", "9"],
    ],
)
def test_options_that_build_an_agent_need_a_model(extra: list[str], cli) -> None:
    done = cli("run", "hi", *extra)
    assert done.code == 2
    assert done.err.startswith(
        f"error: {extra[0]} needs --model: without --model or --agent the offline demo agent "
        "answers"
    )
    assert "--model openai:gpt-4o-mini" in done.err


def test_context_window_declares_the_models_window(cli, openai_server) -> None:
    openai_server(["never sent"])
    done = cli(
        "run", "Read this: " + "word " * 400, "--model", "openai:m", "--context-window", "300",
        "--store", "memory://",
    )  # fmt: skip
    assert done.code == 1
    assert done.err.startswith("error: the run failed: CONTEXT_TOO_LONG: ")
    assert "context window 300" in done.err


@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_context_window_must_be_a_positive_number(value: str, cli) -> None:
    done = cli("run", "hi", "--model", "openai:m", "--context-window", value)
    assert done.code == 2
    assert "--context-window: expected a" in done.err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_an_unknown_window_is_noted_with_the_fix(
    cli, openai_server, monkeypatch
) -> None:
    openai_server(["ok", "ok", "ok"])
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli("run", "hi", "--model", "openai:my-local-q4", "--store", "memory://").code == 0
    assert terminal.getvalue() == (
        "note: rxagent does not know the context window of model 'my-local-q4' and assumes "
        "128,000 tokens; pass --context-window TOKENS\n"
    )
    for known in (
        ["--model", "openai:gpt-4o-mini"],
        ["--model", "openai:x", "--context-window", "8192"],
    ):
        terminal.seek(0)
        terminal.truncate()
        assert cli("run", "hi", *known, "--store", "memory://").code == 0
        assert terminal.getvalue() == ""
