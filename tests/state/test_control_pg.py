"""PostgresControl specifics: the channel name, NOTIFY's payload limit and the health check."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import asyncpg  # type: ignore[import-untyped,unused-ignore]
import pytest

from rxagent.errors import ConfigurationError
from rxagent.state import ControlMessage, PostgresControl, _control, _control_pg

WAIT_S = 10.0


@pytest.mark.parametrize(
    "channel", ["", "1abc", "a-b", "a b", "a;drop", "é", "a" * 64, 'a"b', None]
)
def test_a_channel_that_is_not_an_identifier_is_refused(channel: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"channel=.*identifier"):
        PostgresControl("postgresql://localhost/db", channel=channel)


@pytest.mark.parametrize("dsn", ["", None])
def test_an_empty_dsn_is_refused(dsn: Any) -> None:
    with pytest.raises(ConfigurationError, match="dsn"):
        PostgresControl(dsn)


@pytest.mark.parametrize("channel", ["a" * 63, "_x1", "rxagent_control", "Mixed_Case"])
def test_identifiers_are_accepted(channel: str) -> None:
    assert PostgresControl("postgresql://localhost/db", channel=channel).channel == channel


async def test_a_mixed_case_channel_keeps_its_case(postgres_dsn: str) -> None:
    name = f"Rx_{uuid.uuid4().hex[:12]}"
    async with (
        PostgresControl(postgres_dsn, channel=name) as upper,
        PostgresControl(postgres_dsn, channel=name.lower()) as lower,
    ):
        got: asyncio.Queue[ControlMessage] = asyncio.Queue()
        await upper.subscribe(got.put_nowait)
        await lower.publish(ControlMessage(agent="a", session_id="lower"))
        await upper.publish(ControlMessage(agent="a", session_id="upper"))
        async with asyncio.timeout(WAIT_S):
            assert (await got.get()).session_id == "upper"
        assert got.empty()


async def test_a_message_over_the_notify_limit_is_refused_before_sending(
    postgres_dsn: str,
) -> None:
    name = f"rxt_{uuid.uuid4().hex[:12]}"
    async with PostgresControl(postgres_dsn, channel=name) as channel:
        got: asyncio.Queue[ControlMessage] = asyncio.Queue()
        await channel.subscribe(got.put_nowait)
        empty = len(ControlMessage(agent="a", session_id="s", reason="").model_dump_json())
        fits = ControlMessage(agent="a", session_id="s", reason="é" * ((7999 - empty) // 2))
        too_big = ControlMessage(agent="a", session_id="s", reason="x" * (8000 - empty))
        assert len(fits.model_dump_json().encode()) <= 7999
        with pytest.raises(ConfigurationError, match=r"8000 bytes of JSON.*`reason`"):
            await channel.publish(too_big)
        await channel.publish(fits)  # bytes count, not characters: two per "é"
        async with asyncio.timeout(WAIT_S):
            assert await got.get() == fits


async def test_the_listener_checks_a_silent_connection_and_keeps_it(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_control_pg, "HEALTH_CHECK_S", 0.01)
    pinged = asyncio.Event()
    calls = 0

    real_fetchval = asyncpg.Connection.fetchval

    async def counting_fetchval(self, query, *args, **kwargs):
        nonlocal calls
        calls += 1
        if calls >= 3:
            pinged.set()
        return await real_fetchval(self, query, *args, **kwargs)

    monkeypatch.setattr(asyncpg.Connection, "fetchval", counting_fetchval)
    name = f"rxt_{uuid.uuid4().hex[:12]}"
    async with PostgresControl(postgres_dsn, channel=name) as channel:
        got: asyncio.Queue[ControlMessage] = asyncio.Queue()
        await channel.subscribe(got.put_nowait)
        async with asyncio.timeout(WAIT_S):
            await pinged.wait()  # three health checks passed on the same connection
        await channel.publish(ControlMessage(agent="a", session_id="still here"))
        async with asyncio.timeout(WAIT_S):
            assert (await got.get()).session_id == "still here"


async def test_publish_reconnects_when_its_connection_was_closed(postgres_dsn: str) -> None:
    name = f"rxt_{uuid.uuid4().hex[:12]}"
    async with PostgresControl(postgres_dsn, channel=name) as channel:
        got: asyncio.Queue[ControlMessage] = asyncio.Queue()
        await channel.subscribe(got.put_nowait)
        await channel.publish(ControlMessage(agent="a", session_id="one"))
        await channel._publisher.close()  # as if the server had dropped it while idle
        await channel.publish(ControlMessage(agent="a", session_id="two"))
        async with asyncio.timeout(WAIT_S):
            assert [(await got.get()).session_id for _ in range(2)] == ["one", "two"]


class _OnLog(logging.Handler):
    def __init__(self, text: str, event: asyncio.Event) -> None:
        super().__init__()
        self.text, self.event = text, event
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        if self.text in record.getMessage():
            self.event.set()


async def test_the_listener_keeps_trying_until_the_server_is_back(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_control, "RECONNECT_FIRST_S", 0.001)
    name = f"rxt_{uuid.uuid4().hex[:12]}"
    listening_again = asyncio.Event()
    watch = _OnLog("listening again", listening_again)
    logging.getLogger("rxagent.state").addHandler(watch)
    try:
        async with PostgresControl(postgres_dsn, channel=name) as channel:
            got: asyncio.Queue[ControlMessage] = asyncio.Queue()
            await channel.subscribe(got.put_nowait)
            real_connect = channel._connect
            failures = 0

            async def refused_three_times(role: str) -> object:
                nonlocal failures
                if role == "rxagent-listen" and failures < 3:
                    failures += 1
                    raise OSError("connection refused (simulated)")
                return await real_connect(role)

            monkeypatch.setattr(channel, "_connect", refused_three_times)
            admin = await asyncpg.connect(postgres_dsn)
            try:
                await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE application_name = $1",
                    f"rxagent-listen:{name}",
                )
            finally:
                await admin.close()
            async with asyncio.timeout(WAIT_S):
                await listening_again.wait()
            await channel.publish(ControlMessage(agent="a", session_id="back"))
            async with asyncio.timeout(WAIT_S):
                assert (await got.get()).session_id == "back"
    finally:
        logging.getLogger("rxagent.state").removeHandler(watch)
    assert failures == 3
    lost = [line for line in watch.lines if "listener connection lost" in line]
    assert len(lost) == 4  # the kill, then three refusals
    assert "OSError: connection refused (simulated)" in lost[-1]
