"""`rxagent run`: plain, `--json` and live output, tools from modules, stores, failures, Ctrl-C."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from rxagent import PostActingEvent, PostCallEvent
from rxagent.testing import assert_event_protocol, tool_call
from rxagent.testing.providers import Fault


def test_plain_output_is_the_reply_text(cli, openai_server) -> None:
    server = openai_server(["Hello from the fake model!"])
    done = cli("run", "Say hello", "--model", "openai:gpt-4o-mini", "--store", "memory://")
    assert (done.code, done.out, done.err) == (0, "Hello from the fake model!\n", "")
    body = server.requests[0].body
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"][-1] == {"role": "user", "content": "Say hello"}


def test_json_lines_are_the_runs_events_in_order(cli, openai_server, tools) -> None:
    mod = tools
    openai_server([tool_call("add", a=2, b=3), "2 + 3 = 5"])
    done = cli(
        "run", "2 + 3?", "--model", "openai:gpt-4o-mini", "--tools", f"{mod}:add", "--json",
        "--store", "memory://",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert done.err == ""
    events = done.events()
    assert_event_protocol(events)
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    (acted,) = [e for e in events if isinstance(e, PostActingEvent)]
    assert acted.tool_call.name == "add"
    assert acted.result.output == "5"
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.ok
    assert last.result.text == "2 + 3 = 5"
    assert last.session_id.startswith("run-")


@pytest.mark.parametrize("attr", ["as_list", "as_tuple", "kit", "mul"])
def test_tools_may_be_a_function_a_list_a_tuple_or_a_toolkit(
    attr: str, cli, openai_server, tools
) -> None:
    mod = tools
    server = openai_server([tool_call("mul", a=6, b=7), "42"])
    done = cli(
        "run", "6 * 7?", "--model", "openai:m", "--tools", f"{mod}:{attr}", "--store", "memory://"
    )
    assert (done.code, done.out) == (0, "42\n")
    offered = {t["function"]["name"] for t in server.requests[0].body["tools"]}
    assert "mul" in offered
    assert server.requests[1].body["messages"][-1]["content"] == "42"


def test_several_tools_options_add_up(cli, openai_server, tools) -> None:
    mod = tools
    server = openai_server(["none needed"])
    done = cli(
        "run", "hi", "--model", "openai:m", "--tools", f"{mod}:add", "--tools", f"{mod}:mul",
        "--sys-prompt", "You do arithmetic.", "--store", "memory://",
    )  # fmt: skip
    assert done.code == 0, done.err
    body = server.requests[0].body
    assert [t["function"]["name"] for t in body["tools"]] == ["add", "mul"]
    assert body["messages"][0] == {"role": "system", "content": "You do arithmetic."}


def test_model_from_the_environment(cli, openai_server, monkeypatch) -> None:
    server = openai_server(["ok"])
    monkeypatch.setenv("RXAGENT_MODEL", "openai:from-env")
    assert cli("run", "hi", "--store", "memory://").code == 0
    assert server.requests[0].body["model"] == "from-env"


def test_live_view_streams_text_tool_calls_with_timings_and_retries(
    cli, openai_server, tools
) -> None:
    mod = tools
    server = openai_server([tool_call("add", a=1, b=2), "1 + 2 = 3"])
    server.fail(1, status=429, headers={"retry-after-ms": "1"})
    done = cli(
        "run", "1 + 2?", "--model", "openai:gpt-4o-mini", "--tools", f"{mod}:add", "--live",
        "--name", "calc", "--store", "memory://", "--session", "s1",
    )  # fmt: skip
    assert done.code == 0, done.err
    for expected in (
        "rxagent run · model gpt-4o-mini",
        "agent calc · tools add",
        "retry",
        "attempt 2 in",
        "RATE_LIMITED",
        "add(a=1, b=2)",
        "add → 3",
        "1 + 2 = 3",
        "summary",
        "session s1 · store memory://",
    ):
        assert expected in done.out, expected
    assert "ms)" in done.out  # the tool's timing


def test_a_session_in_a_sqlite_store_continues_across_invocations(cli, openai_server) -> None:
    server = openai_server(["Nice to meet you, Ada.", "You are Ada."])
    store = "sqlite:///chats/sessions.db"
    first = cli("run", "I am Ada.", "--model", "openai:m", "--store", store, "--session", "s")
    assert first.code == 0, first.err
    second = cli("run", "Who am I?", "--model", "openai:m", "--store", store, "--session", "s")
    assert (second.code, second.out) == (0, "You are Ada.\n")
    contents = [m["content"] for m in server.requests[1].body["messages"]]
    assert contents == ["I am Ada.", "Nice to meet you, Ada.", "Who am I?"]
    assert Path("chats/sessions.db").is_file()


def test_the_default_store_is_a_sqlite_file_in_dot_rxagent(cli, openai_server) -> None:
    openai_server(["ok"])
    done = cli("run", "hi", "--model", "openai:m", "--json")
    assert done.code == 0, done.err
    session = done.events()[-1].session_id
    assert Path(".rxagent/sessions.db").is_file()
    listed = cli("sessions", "list", "--json")
    assert [(s["agent"], s["session_id"]) for s in json.loads(listed.out)] == [
        ("assistant", session)
    ]


def test_the_store_from_the_environment(cli, openai_server, monkeypatch) -> None:
    openai_server(["ok"])
    monkeypatch.setenv("RXAGENT_STORE", "sqlite:///env.db")
    assert cli("run", "hi", "--model", "openai:m", "--session", "e").code == 0
    with sqlite3.connect("env.db") as db:
        assert db.execute("select count(*) from sqlite_master").fetchone()[0] > 0


def test_a_failed_run_is_one_error_line_and_exit_1(cli, openai_server) -> None:
    server = openai_server(["never sent"])
    server.fail(1, Fault(status=401, message="bad key", error_type="invalid_api_key"))
    done = cli("run", "hi", "--model", "openai:m", "--store", "memory://")
    assert done.code == 1
    assert done.out == ""
    assert done.err.count("\n") == 1
    assert done.err.startswith("error: the run failed: AUTH: ")


def test_a_failed_run_in_json_mode_keeps_stdout_for_events(cli, openai_server) -> None:
    server = openai_server(["never sent"])
    server.fail(1, Fault(status=400, message="bad request", error_type="invalid_request_error"))
    done = cli("run", "hi", "--model", "openai:m", "--store", "memory://", "--json")
    assert done.code == 1
    events = done.events()
    assert_event_protocol(events)
    assert not events[-1].result.ok
    assert done.err.startswith("error: the run failed: INVALID_REQUEST")


SLOW_TOOL = '''
import asyncio
import os
import signal


async def wait_for_ctrl_c() -> str:
    """Press Ctrl-C on the own process, then wait to be interrupted."""
    os.kill(os.getpid(), signal.SIGINT)
    await asyncio.Event().wait()  # only the interrupt ends it
    return "not interrupted"
'''


def test_ctrl_c_interrupts_the_run_and_saves_the_session(cli, openai_server, module) -> None:
    mod = module(SLOW_TOOL)
    openai_server([tool_call("wait_for_ctrl_c"), "unreachable"])
    store = "sqlite:///s.db"
    done = cli(
        "run", "wait", "--model", "openai:m", "--tools", f"{mod}:wait_for_ctrl_c", "--json",
        "--store", store, "--session", "busy",
    )  # fmt: skip
    assert done.code == 130
    events = done.events()
    assert_event_protocol(events)
    result = events[-1].result
    assert result.interrupted
    assert not result.ok
    (acted,) = [e for e in events if isinstance(e, PostActingEvent)]
    assert acted.result.is_error
    assert done.err == "interrupted: the state of session 'busy' was saved\n"
    shown = cli("sessions", "show", "busy", "--store", store, "--json")
    memory = json.loads(shown.out)["memory"]
    assert [m["role"] for m in memory][:3] == ["user", "assistant", "tool"]


STUBBORN_TOOL = '''
import asyncio
import os
import signal


async def stubborn() -> str:
    """Press Ctrl-C, ignore the interrupt that follows, then press Ctrl-C again."""
    os.kill(os.getpid(), signal.SIGINT)
    try:
        await asyncio.Event().wait()  # only the interrupt ends it
    except asyncio.CancelledError:
        os.kill(os.getpid(), signal.SIGINT)
    await asyncio.Event().wait()  # only the second Ctrl-C ends it
    return "not cancelled"
'''


def test_a_second_ctrl_c_cancels_the_run_at_once(cli, openai_server, module) -> None:
    mod = module(STUBBORN_TOOL)
    openai_server([tool_call("stubborn"), "unreachable"])
    done = cli(
        "run", "wait", "--model", "openai:m", "--tools", f"{mod}:stubborn", "--live",
        "--store", "memory://", "--session", "s",
    )  # fmt: skip
    assert done.code == 130
    assert done.err.splitlines() == [
        "interrupting... (press Ctrl-C again to stop at once)",
        "cancelled: session 's' keeps the state of its last completed step",
    ]
    assert "▶ call_" in done.out
    assert "summary" not in done.out


def test_ctrl_c_in_the_live_view(cli, openai_server, module) -> None:
    mod = module(SLOW_TOOL)
    openai_server([tool_call("wait_for_ctrl_c"), "unreachable"])
    done = cli(
        "run", "wait", "--model", "openai:m", "--tools", f"{mod}:wait_for_ctrl_c", "--live",
        "--store", "memory://", "--session", "v",
    )  # fmt: skip
    assert done.code == 130
    assert "interrupt" in done.out
    assert "failed: INTERRUPTED" in done.out
    assert done.err.splitlines() == [
        "interrupting... (press Ctrl-C again to stop at once)",
        "interrupted: the state of session 'v' was saved",
    ]


def test_the_prompt_may_come_from_stdin(cli, openai_server) -> None:
    server = openai_server(["read it"])
    done = cli("run", "-", "--model", "openai:m", "--store", "memory://", stdin="  from a pipe\n")
    assert (done.code, done.out) == (0, "read it\n")
    assert server.requests[0].body["messages"][-1]["content"] == "from a pipe"


@pytest.mark.parametrize(("prompt", "stdin"), [("  ", None), ("-", "\n")])
def test_an_empty_prompt_is_a_usage_error(prompt: str, stdin: str | None, cli) -> None:
    done = cli("run", prompt, "--model", "openai:m", stdin=stdin)
    assert done.code == 2
    assert done.err == (
        "error: the prompt is empty; pass the user message, or '-' to read it from stdin\n"
    )
