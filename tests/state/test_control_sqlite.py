"""`SQLiteControl`: control messages through a SQLite file shared by processes on one machine.

The cross-process case (a message published in one OS process reaches a run in another) is in
`test_control_cross_process.py` and `tests/server/test_cross_process_server.py`; here the
channel's own contract, with channels on one file standing for the processes.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent.errors import ConfigurationError
from rxagent.state import ControlMessage, SQLiteControl, SQLiteStore
from rxagent.state._control_sqlite import KEEP_S

WAIT_S = 10.0  # a hang guard for one awaited message, never a speed check


async def next_message(queue: asyncio.Queue[ControlMessage]) -> ControlMessage:
    async with asyncio.timeout(WAIT_S):
        return await queue.get()


def rows(path: Path) -> list[tuple[int, float]]:
    with sqlite3.connect(path) as conn:
        return list(conn.execute("SELECT id, sent_at FROM rxagent_control ORDER BY id"))


async def test_every_subscriber_of_every_channel_gets_every_message_in_order(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.db"
    async with (
        SQLiteControl(path, poll_s=0.01) as first,
        SQLiteControl(path, poll_s=0.01) as second,
    ):
        queues: list[asyncio.Queue[ControlMessage]] = []
        for channel in (first, first, second):
            queue: asyncio.Queue[ControlMessage] = asyncio.Queue()
            await channel.subscribe(queue.put_nowait)
            queues.append(queue)
        sent = [ControlMessage(agent="bot", session_id=f"s{i}", reason="r") for i in range(6)]
        for i, message in enumerate(sent):
            await (first if i % 2 else second).publish(message)
        for queue in queues:
            assert [await next_message(queue) for _ in sent] == sent


async def test_a_subscriber_gets_only_what_is_published_after_it_subscribed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.db"
    async with SQLiteControl(path, poll_s=0.01) as channel:
        await channel.publish(ControlMessage(agent="bot", session_id="before"))
        queue: asyncio.Queue[ControlMessage] = asyncio.Queue()
        await channel.subscribe(queue.put_nowait)
        await channel.publish(ControlMessage(agent="bot", session_id="after"))
        assert (await next_message(queue)).session_id == "after"
        assert queue.empty()


async def test_a_malformed_row_is_skipped_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "shared.db"
    async with SQLiteControl(path, poll_s=0.01) as channel:
        queue: asyncio.Queue[ControlMessage] = asyncio.Queue()
        await channel.subscribe(queue.put_nowait)
        with sqlite3.connect(path) as conn:
            conn.execute(
                "INSERT INTO rxagent_control (sent_at, payload) VALUES (?, ?)",
                (time.time(), '{"kind": "explode"}'),
            )
        with caplog.at_level(logging.WARNING, logger="rxagent.state"):
            await channel.publish(ControlMessage(agent="bot", session_id="fine"))
            assert (await next_message(queue)).session_id == "fine"
        assert "skipped a malformed message" in caplog.text


async def test_publishing_drops_messages_older_than_a_minute(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    async with SQLiteControl(path) as channel:
        await channel.publish(ControlMessage(agent="bot", session_id="old"))
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE rxagent_control SET sent_at = sent_at - ?", (KEEP_S + 1,))
        await channel.publish(ControlMessage(agent="bot", session_id="new"))
    kept = rows(path)
    assert len(kept) == 1
    assert kept[0][0] == 2  # ids are never reused, so a listener's "newer than" stays right


async def test_the_store_hands_out_a_channel_on_its_file(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SQLiteStore(path) as store, SQLiteControl(path, poll_s=0.01) as other:
        channel = store.control()
        assert isinstance(channel, SQLiteControl)
        assert channel.channel == str(path)
        queue: asyncio.Queue[ControlMessage] = asyncio.Queue()
        await other.subscribe(queue.put_nowait)
        await channel.publish(ControlMessage(agent="bot", session_id="s1", reason="stop"))
        assert (await next_message(queue)).reason == "stop"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"path": ":memory:"}, "InProcessControl"),
        ({"path": ""}, "InProcessControl"),
        ({"path": "x.db", "poll_s": 0}, "poll_s"),
        ({"path": "x.db", "busy_timeout_s": -1}, "busy_timeout_s"),
        ({"path": "x.db", "poll_s": True}, "poll_s"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigurationError, match=field):
        SQLiteControl(**kwargs)  # type: ignore[arg-type]


async def test_a_file_that_cannot_be_opened_fails_the_first_subscribe(tmp_path: Path) -> None:
    async with SQLiteControl(tmp_path) as channel:  # a directory, not a file
        with pytest.raises(ConfigurationError, match="cannot open the SQLite database"):
            await channel.subscribe(lambda message: None)


@settings(max_examples=20, deadline=None)
@given(reasons=st.lists(st.text(max_size=30) | st.none(), min_size=1, max_size=5))
def test_messages_arrive_unchanged(
    tmp_path_factory: pytest.TempPathFactory, reasons: list[str | None]
) -> None:
    path = tmp_path_factory.mktemp("control") / "shared.db"

    async def main() -> list[ControlMessage]:
        async with (
            SQLiteControl(path, poll_s=0.01) as here,
            SQLiteControl(path, poll_s=0.01) as there,
        ):
            queue: asyncio.Queue[ControlMessage] = asyncio.Queue()
            await there.subscribe(queue.put_nowait)
            sent = [ControlMessage(agent="a", session_id="s", reason=r) for r in reasons]
            for message in sent:
                await here.publish(message)
            got = [await next_message(queue) for _ in sent]
            assert got == sent
            return got

    asyncio.run(main())
