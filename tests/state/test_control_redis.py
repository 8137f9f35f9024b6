"""RedisControl specifics: its arguments, the client name and the health check on silence."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import pytest
import redis.asyncio

from rxagent.errors import ConfigurationError
from rxagent.state import ControlMessage, RedisControl, _control_redis

WAIT_S = 10.0


@pytest.mark.parametrize("url", ["", None, "http://localhost:6379", "localhost:6379"])
def test_a_url_that_is_not_redis_is_refused(url: Any) -> None:
    with pytest.raises(ConfigurationError, match="url"):
        RedisControl(url)


@pytest.mark.parametrize("channel", ["", None, 3])
def test_an_empty_channel_is_refused(channel: Any) -> None:
    with pytest.raises(ConfigurationError, match="channel"):
        RedisControl("redis://localhost:6379/0", channel=channel)


async def test_any_channel_name_works_and_names_the_client(redis_url: str) -> None:
    name = f"rxagent test/{uuid.uuid4().hex[:8]} ünïcode"
    admin = redis.asyncio.Redis.from_url(redis_url)
    try:
        async with RedisControl(redis_url, channel=name) as channel:
            got: asyncio.Queue[ControlMessage] = asyncio.Queue()
            await channel.subscribe(got.put_nowait)
            await channel.publish(ControlMessage(agent="a", session_id="s"))
            async with asyncio.timeout(WAIT_S):
                assert (await got.get()).session_id == "s"
            clients = await admin.client_list(_type="pubsub")
            # printable ASCII without spaces only: the rest becomes "_"
            expected = "rxagent-control:rxagent_test/" + name[13:21] + "__n_code"
            assert [c["name"] for c in clients if c["name"] == expected] == [expected]
    finally:
        await admin.aclose()


class _OnLog(logging.Handler):
    def __init__(self, text: str, event: asyncio.Event) -> None:
        super().__init__()
        self.text, self.event = text, event
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        if self.text in record.getMessage():
            self.event.set()


async def test_silence_is_checked_with_ping_and_a_live_connection_is_kept(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_control_redis, "HEALTH_CHECK_S", 0.01)
    pings = 0
    pinged = asyncio.Event()
    real_ping = redis.asyncio.client.PubSub.ping

    def counting_ping(self, message=None):
        nonlocal pings
        pings += 1
        if pings >= 3:
            pinged.set()
        return real_ping(self, message)

    monkeypatch.setattr(redis.asyncio.client.PubSub, "ping", counting_ping)
    watch = _OnLog("lost", asyncio.Event())
    logging.getLogger("rxagent.state").addHandler(watch)
    try:
        name = f"rxagent-test:{uuid.uuid4().hex}"
        async with RedisControl(redis_url, channel=name) as channel:
            got: asyncio.Queue[ControlMessage] = asyncio.Queue()
            await channel.subscribe(got.put_nowait)
            async with asyncio.timeout(WAIT_S):
                await pinged.wait()
            await channel.publish(ControlMessage(agent="a", session_id="still here"))
            async with asyncio.timeout(WAIT_S):
                assert (await got.get()).session_id == "still here"
    finally:
        logging.getLogger("rxagent.state").removeHandler(watch)
    assert not [line for line in watch.lines if "lost" in line]  # every PING was answered


async def test_a_connection_that_stops_answering_is_replaced(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_control_redis, "HEALTH_CHECK_S", 0.01)
    answered = False

    async def unanswered_ping(self, message=None):
        nonlocal answered
        if answered:  # after the reconnection, pings get their PONG again
            return await real_ping(self, message)
        answered = True  # the first PING goes nowhere, like on a half-open connection

    real_ping = redis.asyncio.client.PubSub.ping
    monkeypatch.setattr(redis.asyncio.client.PubSub, "ping", unanswered_ping)
    listening_again = asyncio.Event()
    watch = _OnLog("listening again", listening_again)
    logging.getLogger("rxagent.state").addHandler(watch)
    try:
        name = f"rxagent-test:{uuid.uuid4().hex}"
        async with RedisControl(redis_url, channel=name) as channel:
            got: asyncio.Queue[ControlMessage] = asyncio.Queue()
            await channel.subscribe(got.put_nowait)
            async with asyncio.timeout(WAIT_S):
                await listening_again.wait()
            await channel.publish(ControlMessage(agent="a", session_id="new connection"))
            async with asyncio.timeout(WAIT_S):
                assert (await got.get()).session_id == "new connection"
    finally:
        logging.getLogger("rxagent.state").removeHandler(watch)
    assert any("ConnectionLostError: no reply to PING" in line for line in watch.lines)
