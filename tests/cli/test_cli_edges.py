"""The command's less travelled paths: broken pipes, threads, outer cancellation, odd stores."""

from __future__ import annotations

import asyncio
import io
import sys
import threading

import pytest

from rxagent import ReActAgent
from rxagent.cli import main
from rxagent.cli._common import PipeConsole, redact_url, utf8_safe
from rxagent.cli._turn import run_turn
from rxagent.errors import ConfigurationError, RxAgentError, StateVersionError
from rxagent.state import AgentState, InMemoryStore
from rxagent.testing import ScriptedModel, tool_call


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError


@pytest.mark.parametrize("command", ["run", "chat"])
def test_a_closed_stdout_ends_the_command_with_exit_1(
    command: str, openai_server, monkeypatch, capsys
) -> None:
    openai_server(["Hello!"])
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    argv = [command, "--model", "openai:m", "--store", "memory://"]
    argv += ["hi"] if command == "run" else []
    assert main(argv) == 1
    assert capsys.readouterr().err == ""


def test_without_signal_handlers_a_run_still_works(cli, openai_server) -> None:
    """Off the main thread asyncio cannot take SIGINT: the run goes on without Ctrl-C handling."""
    openai_server(["from a thread"])
    codes: list[int] = []
    worker = threading.Thread(
        target=lambda: codes.append(
            main(["run", "hi", "--model", "openai:m", "--store", "memory://"])
        )
    )
    worker.start()
    worker.join(timeout=60)
    assert codes == [0]


async def test_cancelling_the_caller_cancels_the_turn() -> None:
    started = asyncio.Event()

    async def slow() -> str:
        """Wait."""
        started.set()
        await asyncio.Event().wait()  # only the cancellation ends it
        return "done"

    agent = ReActAgent("a", "", ScriptedModel([tool_call("slow"), "never"]), tools=[slow])
    turn = asyncio.ensure_future(run_turn(agent, "go", "s", lambda event: None))
    await started.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert not agent.is_running("s")


@pytest.mark.parametrize(
    ("error", "code"),
    [(ConfigurationError("bad setting; fix it"), 2), (RxAgentError("it failed; retry"), 1)],
)
def test_library_errors_are_one_line(error: Exception, code: int, cli, monkeypatch) -> None:
    async def fail(*args: object) -> int:
        raise error

    monkeypatch.setattr("rxagent.cli._sessions._list", fail)
    done = cli("sessions", "list", "--store", "memory://")
    assert (done.code, done.err) == (code, f"error: {error}\n")


class _OddStore(InMemoryStore):
    """Lists a session it cannot load, and fails to load another with a library error."""

    async def list_agents(self) -> list[str]:
        return ["a"]

    async def list_sessions(self, agent: str) -> list[str]:
        return ["gone", "newer"]

    async def load(self, agent: str, session_id: str):
        if session_id == "newer":
            raise StateVersionError("state has schema_version 99; upgrade rxagent to load it")
        return None


def test_store_errors_from_rxagent_pass_through(cli, monkeypatch) -> None:
    monkeypatch.setattr("rxagent.cli._sessions.open_cli_store", lambda url: _OddStore())
    done = cli("sessions", "list")
    assert done.code == 2
    assert done.err == "error: state has schema_version 99; upgrade rxagent to load it\n"


def test_a_session_deleted_while_listing_is_left_out(cli, monkeypatch) -> None:
    class _Vanishing(_OddStore):
        async def list_sessions(self, agent: str) -> list[str]:
            return ["gone"]

    monkeypatch.setattr("rxagent.cli._sessions.open_cli_store", lambda url: _Vanishing())
    assert cli("sessions", "list", "--json").out == "[]\n"


def test_an_agent_the_options_cannot_build(cli, openai_server) -> None:
    openai_server([])
    done = cli("run", "hi", "--model", "openai:m", "--name", "", "--store", "memory://")
    assert done.code == 2
    assert done.err.startswith("error: ReActAgent needs a non-empty str name")


def test_redact_url_hides_passwords_only() -> None:
    assert redact_url("postgresql://u:pw@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact_url("redis://h:6379/0") == "redis://h:6379/0"
    # unparsable: not shown at all, since it could hold a password
    assert redact_url("postgresql://u:pw@[::1/db") == "<unparsable url>"


def test_utf8_safe_replaces_what_the_stream_cannot_encode() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    assert utf8_safe(stream) is stream
    stream.write("a → b")
    stream.flush()
    assert raw.getvalue() == b"a ? b"


def test_a_broken_pipe_is_an_ordinary_exception() -> None:
    console = PipeConsole(file=io.StringIO())
    with pytest.raises(BrokenPipeError):
        console.on_broken_pipe()
    assert console.quiet


def test_a_state_is_shown_from_any_store(cli, monkeypatch) -> None:
    store = InMemoryStore()
    asyncio.run(store.save("a", "s", AgentState()))
    monkeypatch.setattr("rxagent.cli._sessions.open_cli_store", lambda url: store)
    assert cli("sessions", "show", "s").out.split()[:2] == ["session", "s"]


def test_a_timed_out_run_is_a_failure_not_an_interrupt() -> None:
    from rxagent import AgentResult, ErrorCode, Msg
    from rxagent.cli._turn import describe_failure, exit_code_of
    from rxagent.result import ErrorInfo

    def result(code: ErrorCode) -> AgentResult[None]:
        error = ErrorInfo(code=code, message="stopped")
        return AgentResult(reply=Msg.assistant("x"), ok=False, interrupted=True, error=error)

    timed_out = result(ErrorCode.TIMEOUT)
    assert exit_code_of(timed_out) == 1
    assert describe_failure(timed_out, "s") == "error: the run failed: TIMEOUT: stopped"
    assert exit_code_of(result(ErrorCode.INTERRUPTED)) == 130
