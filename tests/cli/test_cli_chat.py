"""`rxagent chat`: turns read from piped stdin, one session across turns, `/reset`, stores,
and one summary line per turn."""

from __future__ import annotations

import io
import re
import sys
from typing import Any

from rxagent import AgentResult, ErrorCode, Msg, PostCallEvent
from rxagent.cli._turn import summary_line
from rxagent.result import ErrorInfo
from rxagent.testing import assert_event_protocol, tool_call

SUMMARY = re.compile(
    r"^· (no tool calls|\d+ tool calls? \([a-z_, ]+\)) · \d+ steps? · [\d,]+ tokens · "
    r"\d+\.\d\d s · session (?P<session>\S+)$"
)


def _contents(body: dict[str, Any]) -> list[str]:
    return [m.get("content") or "" for m in body["messages"]]


def _turns(out: str) -> list[tuple[str, str]]:
    """Each turn's (answer, session) from piped output: the answer, then its summary line."""
    lines = out.splitlines()
    assert len(lines) % 2 == 0, out
    turns = []
    for answer, summary in zip(lines[::2], lines[1::2], strict=True):
        found = SUMMARY.match(summary)
        assert found is not None, summary
        turns.append((answer, found["session"]))
    return turns


def test_two_turns_share_the_session(cli, openai_server) -> None:
    server = openai_server(["Hi Ada!", "Your name is Ada."])
    done = cli(
        "chat", "--model", "openai:m", "--store", "memory://",
        stdin="I am Ada.\n\nWhat is my name?\n",
    )  # fmt: skip
    assert (done.code, done.err) == (0, "")
    turns = _turns(done.out)
    assert [answer for answer, _ in turns] == ["Hi Ada!", "Your name is Ada."]
    assert turns[0][1] == turns[1][1]
    assert turns[0][1].startswith("chat-")
    assert done.out.splitlines()[1].startswith("· no tool calls · 1 step · ")
    assert "\x1b[" not in done.out  # a pipe: no colour codes
    assert len(server.requests) == 2  # the empty line is no turn
    assert _contents(server.requests[1].body) == [
        "I am Ada.",
        "Hi Ada!",
        "What is my name?",
    ]


def test_reset_starts_a_new_session_and_exit_quits(cli, openai_server) -> None:
    server = openai_server(["one", "two", "three"])
    done = cli(
        "chat", "--model", "openai:m", "--store", "memory://", "--session", "first",
        stdin="hello\n/reset\nagain\n/help\n/nope\n/exit\nnever read\n",
    )  # fmt: skip
    assert done.code == 0
    turns = _turns(done.out)
    assert [answer for answer, _ in turns] == ["one", "two"]
    assert turns[0][1] == "first"
    assert turns[1][1] != "first"
    assert _contents(server.requests[1].body) == ["again"]  # no history from the first session
    lines = done.err.splitlines()
    assert lines[0] == f"new session {turns[1][1]}"
    assert lines[1].startswith("commands: /reset")
    assert lines[2].startswith("unknown command /nope; commands:")
    assert server.remaining == 1


def test_a_sqlite_store_keeps_the_chat_across_invocations(cli, openai_server) -> None:
    server = openai_server(["Noted: blue.", "Blue."])
    args = ("chat", "--model", "openai:m", "--store", "sqlite:///chat.db", "--session", "c")
    assert _turns(cli(*args, stdin="My colour is blue.\n").out) == [("Noted: blue.", "c")]
    again = cli(*args, stdin="What is my colour?\n")
    assert (again.code, _turns(again.out)) == (0, [("Blue.", "c")])
    assert _contents(server.requests[1].body) == [
        "My colour is blue.",
        "Noted: blue.",
        "What is my colour?",
    ]
    shown = cli("sessions", "show", "c", "--store", "sqlite:///chat.db")
    assert "4 messages" in shown.out


def test_json_lines_per_turn(cli, openai_server, tools) -> None:
    mod = tools
    openai_server([tool_call("add", a=1, b=1), "2", "bye"])
    done = cli(
        "chat", "--model", "openai:m", "--tools", f"{mod}:add", "--json", "--store", "memory://",
        stdin="1 + 1?\nbye\n",
    )  # fmt: skip
    assert done.code == 0, done.err
    events = done.events()
    calls = [i for i, e in enumerate(events) if e.type == "pre_call"]
    assert len(calls) == 2
    first, second = events[: calls[1]], events[calls[1] :]
    for run in (first, second):
        assert_event_protocol(run)
        assert isinstance(run[-1], PostCallEvent)
    assert first[-1].session_id == second[-1].session_id
    assert second[-1].reply.text == "bye"


def test_live_turns_end_with_one_summary_line_not_a_block(cli, openai_server, tools) -> None:
    mod = tools
    openai_server([tool_call("add", a=1, b=2), "3", "Hello there."])
    done = cli(
        "chat", "--model", "openai:m", "--tools", f"{mod}:add", "--live", "--store", "memory://",
        "--session", "lv", stdin="1 + 2?\nhi\n",
    )  # fmt: skip
    assert done.code == 0, done.err
    assert "Hello there." in done.out
    assert "add(a=1, b=2)" in done.out  # the live view: tool calls, steps
    assert "step 1" in done.out
    assert "summary" not in done.out  # no summary block
    assert "wall time" not in done.out
    assert "rxagent chat" not in done.out  # no banner per turn (it is on stderr, once)
    summaries = [line for line in done.out.splitlines() if line.startswith("· ")]
    assert len(summaries) == 2
    assert SUMMARY.match(summaries[0])
    assert summaries[0].startswith("· 1 tool call (add) · 2 steps · ")
    assert summaries[1].startswith("· no tool calls · 1 step · ")
    assert all(line.endswith("session lv") for line in summaries)
    assert "\x1b[" not in done.out
    assert done.err == "rxagent chat · agent assistant · model m · session lv\n"


def test_a_failed_turn_reports_and_the_chat_goes_on(cli, openai_server) -> None:
    server = openai_server(["still here"])
    server.fail(1, status=400, message="nope", error_type="invalid_request_error")
    done = cli("chat", "--model", "openai:m", "--store", "memory://", stdin="one\ntwo\n")
    assert done.code == 0
    assert [answer for answer, _ in _turns(done.out)] == ["still here"]
    assert done.err.startswith("error: the run failed: INVALID_REQUEST")
    assert done.err.count("\n") == 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_chat_prompts_and_ctrl_c_at_the_prompt_clears_the_line(
    cli, openai_server, monkeypatch
) -> None:
    openai_server(["Hello!"])
    lines = iter(["hi", KeyboardInterrupt, "/exit"])
    prompts: list[str] = []

    def fake_input(prompt: str) -> str:
        prompts.append(prompt)
        line = next(lines)
        if line is KeyboardInterrupt:
            raise KeyboardInterrupt
        return str(line)

    monkeypatch.setattr(sys, "stdin", _Terminal())
    monkeypatch.setattr("builtins.input", fake_input)
    done = cli("chat", "--model", "openai:gpt-4o-mini", "--store", "memory://", "--session", "t")
    assert done.code == 0
    assert prompts == ["you> "] * 3
    assert _turns(done.out) == [("Hello!", "t")]
    err = done.err.splitlines()
    assert err[0] == "rxagent chat · agent assistant · model gpt-4o-mini · session t"
    assert err[1].startswith("commands: /reset starts a new session")
    assert err[-1] == "(/exit or Ctrl-D quits)"


def test_on_a_terminal_end_of_input_quits(cli, openai_server, monkeypatch) -> None:
    openai_server([])
    monkeypatch.setattr(sys, "stdin", _Terminal(""))
    done = cli("chat", "--model", "openai:m", "--store", "memory://")
    assert done.code == 0
    assert done.out == "you> "  # input() wrote the prompt, then met the end of input


CTRL_C_TOOL = '''
import asyncio
import os
import signal


async def wait_for_ctrl_c() -> str:
    """Press Ctrl-C on the own process, then wait to be interrupted."""
    os.kill(os.getpid(), signal.SIGINT)
    await asyncio.Event().wait()  # only the interrupt ends it
    return "not interrupted"
'''


def test_ctrl_c_interrupts_the_answer_and_the_chat_goes_on(cli, openai_server, module) -> None:
    mod = module(CTRL_C_TOOL)
    server = openai_server([tool_call("wait_for_ctrl_c"), "Back at the prompt."])
    done = cli(
        "chat", "--model", "openai:m", "--tools", f"{mod}:wait_for_ctrl_c", "--session", "c",
        "--store", "memory://", stdin="wait\nare you there?\n",
    )  # fmt: skip
    assert done.code == 0
    assert _turns(done.out) == [("Back at the prompt.", "c")]  # none for the interrupted turn
    assert done.err == "interrupted: the state of session 'c' was saved\n"
    roles = [m["role"] for m in server.requests[1].body["messages"]]
    assert roles[:3] == ["user", "assistant", "tool"]  # the interrupted call, answered
    assert roles[-1] == "user"


def test_the_summary_line_of_a_turn_that_did_not_succeed() -> None:
    failed: AgentResult[str] = AgentResult(
        reply=Msg.assistant(""),
        ok=False,
        error=ErrorInfo(code=ErrorCode.AUTH, message="bad key"),
        steps=1,
        session_id="s",
    )
    assert summary_line(failed) == (
        "· failed: AUTH · no tool calls · 1 step · 0 tokens · 0.00 s · session s"
    )
    interrupted = failed.model_copy(
        update={
            "interrupted": True,
            "error": ErrorInfo(code=ErrorCode.INTERRUPTED, message="Ctrl-C"),
            "tools_used": ("read", "read"),
        }
    )
    assert summary_line(interrupted).startswith("· interrupted · 2 tool calls (read) · ")
