"""Every error of the `rxagent` command is one line on stderr that names the fix, and an exit code;
`--debug` adds the traceback."""

from __future__ import annotations

import asyncio

import pytest

from rxagent.state import open_store


def _one_line(err: str) -> str:
    assert err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert err.startswith("error: ")
    return err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["run", "hi", "--model", "gpt-4o"],
            "error: --model 'gpt-4o': needs the form 'provider:model-name', for example "
            "'openai:gpt-4o'; known providers: anthropic, ",
        ),
        (
            ["run", "hi", "--model", "opneai:gpt-4o-mini"],
            "error: --model 'opneai:gpt-4o-mini': unknown provider 'opneai'; did you mean "
            "'openai'? known providers: anthropic, azure, ",
        ),
        (
            ["chat", "--model", "nope:x"],
            "error: --model 'nope:x': unknown provider 'nope'; known providers: anthropic, ",
        ),
        (["run", "hi", "--model", "openai:m"], "error: --model 'openai:m': OpenAIChatModel needs"),
        (["chat", "--model", "openai:m"], "error: --model 'openai:m': OpenAIChatModel needs an"),
        (["run", "hi", "--model", "openai:m", "--store", "bogus://x"], "error: --store 'bogus://"),
    ],
)
def test_model_and_store_errors_are_usage_errors(
    argv: list[str], expected: str, cli, monkeypatch
) -> None:
    if "bogus://x" in argv:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    done = cli(*argv)
    assert done.code == 2
    assert _one_line(done.err).startswith(expected), done.err
    assert done.out == ""


BROKEN = "raise ZeroDivisionError('division by zero at import')\n"
NEEDS_A_PACKAGE = "import surely_not_installed_pkg\n"
UNTYPED = "def untyped(x):\n    return x\n"


@pytest.mark.parametrize(
    ("source", "attr", "expected"),
    [
        ("TOOLS", "missing", "module '{mod}' has no attribute 'missing'; check the name"),
        ("TOOLS", "ad", "module '{mod}' has no attribute 'ad'; did you mean 'add'?"),
        ("TOOLS", "kit.qzxw", "module '{mod}.kit' has no attribute 'qzxw'; check the name"),
        ("TOOLS", "not_a_tool", "expected a tool (a function or a Tool), a list or tuple of them"),
        (BROKEN, "x", "importing '{mod}' failed with ZeroDivisionError: division by zero at"),
        (NEEDS_A_PACKAGE, "x", "importing '{mod}' failed: No module named 'surely_not_instal"),
        (UNTYPED, "untyped", "tool 'untyped'"),
    ],
)
def test_tools_errors_name_the_option_and_the_fix(
    source: str, attr: str, expected: str, cli, module, tools, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    mod = tools if source == "TOOLS" else module(source)
    done = cli("run", "hi", "--model", "openai:m", "--tools", f"{mod}:{attr}")
    assert done.code == 2
    prefix = f"error: --tools '{mod}:{attr}': "
    assert _one_line(done.err).startswith(prefix + expected.format(mod=mod)), done.err


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("no_colon", "expected MODULE:ATTRIBUTE, for example 'my_tools:search'"),
        (":x", "expected MODULE:ATTRIBUTE"),
        ("no_such_module_here:x", "no module named 'no_such_module_here'; run rxagent from the"),
    ],
)
def test_tools_spec_errors(spec: str, expected: str, cli, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    done = cli("run", "hi", "--model", "openai:m", "--tools", spec)
    assert done.code == 2
    assert _one_line(done.err).startswith(f"error: --tools '{spec}': {expected}")


def test_two_tools_with_one_name(cli, tools, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    mod = tools
    done = cli("run", "hi", "--model", "openai:m", "--tools", f"{mod}:add", "--tools", f"{mod}:kit")
    assert done.code == 2
    assert _one_line(done.err).startswith(
        f"error: --tools '{mod}:kit': a tool named 'add' is already in this toolkit"
    )


def test_debug_shows_the_traceback(cli, module, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    mod = module(BROKEN)
    for argv in (
        ["--debug", "run", "hi", "--model", "openai:m", "--tools", f"{mod}:x"],
        ["run", "hi", "--debug", "--model", "openai:m", "--tools", f"{mod}:x"],
    ):
        done = cli(*argv)
        assert done.code == 2
        assert done.err.startswith("Traceback (most recent call last):")
        assert "ZeroDivisionError: division by zero at import" in done.err
        assert done.err.splitlines()[-1].startswith(f"error: --tools '{mod}:x': importing")


def test_a_busy_session_is_a_failure_naming_the_fix(cli, openai_server) -> None:
    openai_server(["never"])

    async def hold() -> None:
        store = open_store("sqlite:///busy.db")
        try:
            assert await store.acquire_lease("assistant", "s", "run_other", 60.0)
        finally:
            await store.aclose()

    asyncio.run(hold())
    done = cli("run", "hi", "--model", "openai:m", "--store", "sqlite:///busy.db", "--session", "s")
    assert done.code == 1
    assert _one_line(done.err) == (
        "error: session 's' of agent 'assistant' has a run in progress; wait for it to finish, "
        "or pass another --session\n"
    )
    chat = cli(
        "chat",
        "--model",
        "openai:m",
        "--store",
        "sqlite:///busy.db",
        "--session",
        "s",
        stdin="hi\n",
    )
    assert chat.code == 0
    assert _one_line(chat.err).startswith("error: session 's' of agent 'assistant' has a run")


def test_an_unreachable_store_is_a_failure(cli) -> None:
    done = cli("sessions", "list", "--store", "postgresql://nobody:secret@127.0.0.1:1/db")
    assert done.code == 1
    err = _one_line(done.err)
    assert err.startswith("error: --store 'postgresql://nobody:***@127.0.0.1:1/db': ")
    assert err.rstrip().endswith("check the URL and that the store's server is running")
    assert "secret" not in err


def test_an_unexpected_error_says_how_to_see_the_traceback(cli, monkeypatch) -> None:
    def boom(*args, **kwargs):
        raise RuntimeError("something broke")

    monkeypatch.setattr("rxagent.cli._sessions._list", boom)
    done = cli("sessions", "list", "--store", "memory://")
    assert done.code == 1
    assert _one_line(done.err) == (
        "error: RuntimeError: something broke (--debug shows the traceback)\n"
    )
    debug = cli("--debug", "sessions", "list", "--store", "memory://")
    assert "Traceback" in debug.err
    assert debug.err.splitlines()[-1] == "error: RuntimeError: something broke"


def test_ctrl_c_outside_a_run_is_exit_130(cli, monkeypatch) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("rxagent.cli._sessions._list", interrupted)
    done = cli("sessions", "list", "--store", "memory://")
    assert (done.code, done.err) == (130, "")


@pytest.mark.parametrize(
    "argv",
    [["run"], ["run", "hi", "--bogus"], ["sessions"], ["sessions", "show"], ["serve"]],
)
def test_argument_errors_print_usage(argv: list[str], cli) -> None:
    done = cli(*argv)
    assert done.code == 2
    assert "usage: rxagent" in done.err
