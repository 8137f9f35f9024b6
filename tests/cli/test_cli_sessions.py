"""`rxagent sessions list|show|delete` against a SQLite store."""

from __future__ import annotations

import asyncio
import json

import pytest

from rxagent import AgentState, Msg, ToolResultBlock, ToolUseBlock
from rxagent.models import Usage
from rxagent.state import PendingApproval, open_store

STORE = "sqlite:///sessions.db"


async def _fill(*, lease: tuple[str, str] | None = None) -> None:
    store = open_store(STORE)
    try:
        call = ToolUseBlock(id="call_1", name="add", input={"a": 1, "b": 2})
        memory = [
            Msg.user("1 + 2?"),
            Msg.assistant([call]),
            Msg.tool(ToolResultBlock(id="call_1", name="add", output="3")),
            Msg.assistant("3 " + "and more " * 30),
        ]
        usage = Usage(input_tokens=10, output_tokens=5, requests=2)
        state = AgentState(
            memory=memory,
            runs=1,
            step=2,
            call_counter=1,
            usage=usage,
            extra={"note": 1},
            pending_approvals=[PendingApproval(approval_id="ap_1", tool_call_id="call_9")],
        )
        await store.save("calc", "s1", state)
        await store.save("calc", "s1", state)  # version 2
        await store.save("calc", "s2", AgentState(memory=[Msg.user("hi")]))
        await store.save("echo", "s1", AgentState())
        await store.save("echo", "e1", AgentState())
        if lease is not None:
            assert await store.acquire_lease(*lease, "run_abc", 60.0)
    finally:
        await store.aclose()


@pytest.fixture
def filled() -> None:
    asyncio.run(_fill())


@pytest.mark.usefixtures("filled")
def test_list_shows_every_session_of_every_agent(cli) -> None:
    done = cli("sessions", "list", "--store", STORE)
    assert done.code == 0
    rows = [line.split() for line in done.out.splitlines()[2:]]
    assert rows == [
        ["calc", "s1", "2", "4", "1", "15"],
        ["calc", "s2", "1", "1", "0", "0"],
        ["echo", "e1", "1", "0", "0", "0"],
        ["echo", "s1", "1", "0", "0", "0"],
    ]
    assert done.out.splitlines()[0].split() == [
        "agent", "session", "version", "messages", "runs", "tokens"
    ]  # fmt: skip


@pytest.mark.usefixtures("filled")
def test_list_one_agent_as_json(cli) -> None:
    done = cli("sessions", "list", "--agent", "echo", "--store", STORE, "--json")
    assert done.code == 0
    assert json.loads(done.out) == [
        {"agent": "echo", "session_id": "e1", "version": 1, "messages": 0, "runs": 0, "tokens": 0},
        {"agent": "echo", "session_id": "s1", "version": 1, "messages": 0, "runs": 0, "tokens": 0},
    ]


def test_list_an_empty_store(cli) -> None:
    done = cli("sessions", "list", "--store", STORE)
    assert (done.code, done.out) == (0, "")
    assert done.err == f"no sessions in {STORE}\n"
    done = cli("sessions", "list", "--store", STORE, "--agent", "x")
    assert done.err == f"no sessions of agent 'x' in {STORE}\n"


@pytest.mark.usefixtures("filled")
def test_list_uses_the_store_from_the_environment(cli, monkeypatch) -> None:
    monkeypatch.setenv("RXAGENT_STORE", STORE)
    assert "calc" in cli("sessions", "list").out


def _lines(out: str) -> list[str]:
    return [" ".join(line.split()) for line in out.splitlines()]


@pytest.mark.usefixtures("filled")
def test_show_summarises_the_state(cli) -> None:
    done = cli("sessions", "show", "s2", "--store", STORE)
    assert done.code == 0
    assert _lines(done.out) == [
        "session s2",
        "agent calc",
        "version 1 (schema 1)",
        "runs 0 · steps 0 · tool calls 0",
        "tokens 0 in · 0 out · 0 total · 0 requests",
        "memory 1 messages",
        "user hi",
    ]
    assert not any(line != line.rstrip() for line in done.out.splitlines())


@pytest.mark.usefixtures("filled")
def test_show_lists_approvals_extras_and_each_message(cli) -> None:
    done = cli("sessions", "show", "s1", "--agent", "calc", "--store", STORE)
    assert done.code == 0
    lines = _lines(done.out)
    assert lines[:9] == [
        "session s1",
        "agent calc",
        "version 2 (schema 1)",
        "runs 1 · steps 2 · tool calls 1",
        "tokens 10 in · 5 out · 15 total · 2 requests",
        "memory 4 messages",
        "approvals pending: ap_1",
        "extra note",
        "user 1 + 2?",
    ]
    assert lines[9:11] == ['assistant → add({"a": 1, "b": 2})', "tool ✓ add: 3"]
    assert lines[11].startswith("assistant 3 and more and more")
    assert lines[11].endswith("…")


@pytest.mark.usefixtures("filled")
def test_show_json_is_the_raw_state(cli) -> None:
    done = cli("sessions", "show", "s2", "--agent", "calc", "--store", STORE, "--json")
    state = AgentState.model_validate_json(done.out)
    assert state.memory[0].text == "hi"


@pytest.mark.usefixtures("filled")
def test_delete_removes_the_session(cli) -> None:
    done = cli("sessions", "delete", "s2", "--store", STORE)
    assert (done.code, done.out) == (0, "deleted session s2 of agent calc\n")
    listed = json.loads(cli("sessions", "list", "--store", STORE, "--json").out)
    assert ("calc", "s2") not in {(s["agent"], s["session_id"]) for s in listed}
    again = cli("sessions", "delete", "s2", "--store", STORE)
    assert again.code == 1
    assert again.err == (
        f"error: no session 's2' in {STORE}; `rxagent sessions list --store {STORE}` shows the "
        "sessions\n"
    )


@pytest.mark.usefixtures("filled")
def test_an_id_of_several_agents_needs_agent(cli) -> None:
    done = cli("sessions", "show", "s1", "--store", STORE)
    assert done.code == 2
    assert done.err == (
        "error: session 's1' exists for several agents (calc, echo); pass --name NAME\n"
    )
    assert cli("sessions", "delete", "s1", "--name", "echo", "--store", STORE).code == 0


def test_a_running_session_is_not_deleted(cli) -> None:
    asyncio.run(_fill(lease=("calc", "s2")))
    done = cli("sessions", "delete", "s2", "--store", STORE)
    assert done.code == 1
    assert done.err == (
        "error: session 's2' of agent 'calc' has a run in progress (run_abc); interrupt it or "
        "wait for it to finish, then delete it\n"
    )
    assert cli("sessions", "show", "s2", "--store", STORE).code == 0


def test_an_unknown_agent_has_no_session(cli) -> None:
    done = cli("sessions", "show", "x", "--agent", "nobody", "--store", "memory://")
    assert done.code == 1
    assert "no session 'x' of agent 'nobody' in memory://" in done.err
