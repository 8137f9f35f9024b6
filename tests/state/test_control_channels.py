"""PostgresControl and RedisControl against the real local servers: the ControlChannel contract.

Each test runs once per backend, on a channel name of its own. Waits are bounded waits on
asyncio events or queues, never sleeps.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import asyncpg  # type: ignore[import-untyped,unused-ignore]
import pytest
import redis.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rxagent import ReActAgent
from rxagent.errors import ConfigurationError, ErrorCode, StoreUnavailableError
from rxagent.server import serve_control
from rxagent.state import ControlMessage, PostgresControl, RedisControl
from rxagent.testing import FunctionModel

WAIT_S = 10.0  # a hang guard for one awaited event, never a speed check

Channel = PostgresControl | RedisControl


class LogWatch(logging.Handler):
    """Records the `rxagent.state` log lines and wakes waiters when one contains a text."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self._waiters: list[tuple[str, asyncio.Event]] = []

    def emit(self, record: logging.LogRecord) -> None:
        line = record.getMessage()
        self.lines.append(line)
        for text, event in self._waiters:
            if text in line:
                event.set()

    def expect(self, text: str) -> asyncio.Event:
        """An event set by the next log line containing `text` (register before acting)."""
        event = asyncio.Event()
        self._waiters.append((text, event))
        return event

    def count(self, text: str) -> int:
        return sum(text in line for line in self.lines)


class Backend:
    """One server: makes channels on the test's own channel name and pokes the server directly."""

    name: str
    channel: str

    def make(self, channel: str | None = None) -> Channel:
        raise NotImplementedError

    async def raw_publish(self, payload: str | bytes) -> None:
        raise NotImplementedError

    async def kill_listeners(self) -> int:
        """Kill this channel's listening connections on the server; return how many."""
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError


class PostgresBackend(Backend):
    name = "postgres"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.channel = f"rxt_{uuid.uuid4().hex[:16]}"
        self._admin: Any = None

    def make(self, channel: str | None = None) -> PostgresControl:
        return PostgresControl(self.dsn, channel=channel or self.channel)

    async def admin(self) -> Any:
        if self._admin is None:
            self._admin = await asyncpg.connect(self.dsn)
        return self._admin

    async def raw_publish(self, payload: str | bytes) -> None:
        text = payload.decode() if isinstance(payload, bytes) else payload
        await (await self.admin()).execute("SELECT pg_notify($1, $2)", self.channel, text)

    async def kill_listeners(self) -> int:
        rows = await (await self.admin()).fetch(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            f"rxagent-listen:{self.channel}",
        )
        return len(rows)

    async def aclose(self) -> None:
        if self._admin is not None:
            await self._admin.close()


class RedisBackend(Backend):
    name = "redis"

    def __init__(self, url: str) -> None:
        self.url = url
        self.channel = f"rxagent-test:{uuid.uuid4().hex[:16]}"
        self.admin = redis.asyncio.Redis.from_url(url)

    def make(self, channel: str | None = None) -> RedisControl:
        return RedisControl(self.url, channel=channel or self.channel)

    async def raw_publish(self, payload: str | bytes) -> None:
        await self.admin.publish(self.channel, payload)

    async def kill_listeners(self) -> int:
        name = f"rxagent-control:{self.channel}"
        clients = await self.admin.client_list(_type="pubsub")
        ids = [client["id"] for client in clients if client["name"] == name]
        for client_id in ids:
            await self.admin.client_kill_filter(_id=client_id)
        return len(ids)

    async def aclose(self) -> None:
        await self.admin.aclose()


@pytest.fixture(params=["postgres", "redis"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    made: Backend
    if request.param == "postgres":
        made = PostgresBackend(request.getfixturevalue("postgres_dsn"))
    else:
        made = RedisBackend(request.getfixturevalue("redis_url"))
    yield made
    await made.aclose()


@pytest.fixture
def log_watch() -> Any:
    watch = LogWatch()
    logger = logging.getLogger("rxagent.state")
    logger.addHandler(watch)
    yield watch
    logger.removeHandler(watch)


def collector() -> tuple[asyncio.Queue[ControlMessage], Callable[[ControlMessage], None]]:
    queue: asyncio.Queue[ControlMessage] = asyncio.Queue()
    return queue, queue.put_nowait


async def next_message(queue: asyncio.Queue[ControlMessage]) -> ControlMessage:
    async with asyncio.timeout(WAIT_S):
        return await queue.get()


def control_tasks() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("rxagent control")]


# -- delivery ------------------------------------------------------------------------------------


async def test_a_published_message_reaches_a_subscriber_equal(backend: Backend) -> None:
    async with backend.make() as channel:
        queue, handler = collector()
        await channel.subscribe(handler)
        sent = ControlMessage(agent="bot", session_id="s1", reason="stop, please")
        await channel.publish(sent)  # this process's own subscribers receive it too
        assert await next_message(queue) == sent


async def test_every_subscriber_of_every_instance_gets_every_message_in_order(
    backend: Backend,
) -> None:
    async with backend.make() as first, backend.make() as second:
        queues = []
        for channel in (first, first, second):
            queue, handler = collector()
            await channel.subscribe(handler)
            queues.append(queue)
        sent = [ControlMessage(agent="bot", session_id=f"s{i}") for i in range(5)]
        for i, message in enumerate(sent):
            await (first if i % 2 else second).publish(message)
        for queue in queues:
            assert [await next_message(queue) for _ in sent] == sent


async def test_another_channel_name_does_not_receive(backend: Backend) -> None:
    other = backend.channel + "_other" if backend.name == "postgres" else backend.channel + ":x"
    async with backend.make() as channel, backend.make(other) as elsewhere:
        queue, handler = collector()
        stray, stray_handler = collector()
        await channel.subscribe(handler)
        await elsewhere.subscribe(stray_handler)
        await elsewhere.publish(ControlMessage(agent="bot", session_id="elsewhere"))
        await channel.publish(ControlMessage(agent="bot", session_id="here"))
        assert (await next_message(queue)).session_id == "here"
        assert (await next_message(stray)).session_id == "elsewhere"
        assert queue.empty()
        assert stray.empty()


async def test_async_handlers_are_awaited_one_message_at_a_time(backend: Backend) -> None:
    seen: list[tuple[str, str]] = []
    done = asyncio.Event()

    async def slow(message: ControlMessage) -> None:
        seen.append(("start", message.session_id))
        await asyncio.sleep(0)  # yield: a second message must still wait for this one
        seen.append(("end", message.session_id))
        if message.session_id == "b":
            done.set()

    async with backend.make() as channel:
        await channel.subscribe(slow)
        await channel.publish(ControlMessage(agent="x", session_id="a"))
        await channel.publish(ControlMessage(agent="x", session_id="b"))
        async with asyncio.timeout(WAIT_S):
            await done.wait()
    assert seen == [("start", "a"), ("end", "a"), ("start", "b"), ("end", "b")]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    message=st.builds(
        ControlMessage,
        agent=st.text(min_size=1, max_size=40),
        session_id=st.text(max_size=40),
        reason=st.none() | st.text(max_size=300),
    )
)
async def test_any_message_arrives_unchanged(backend: Backend, message: ControlMessage) -> None:
    async with backend.make() as channel:
        queue, handler = collector()
        await channel.subscribe(handler)
        await channel.publish(message)
        assert await next_message(queue) == message


# -- bad input and failures ----------------------------------------------------------------------


async def test_malformed_payloads_are_logged_and_skipped(
    backend: Backend, log_watch: LogWatch
) -> None:
    async with backend.make() as channel:
        queue, handler = collector()
        await channel.subscribe(handler)
        for junk in ("not json", '{"kind": "reboot", "agent": "a", "session_id": "s"}', "[]"):
            await backend.raw_publish(junk)
        good = ControlMessage(agent="bot", session_id="after the junk")
        await channel.publish(good)
        assert await next_message(queue) == good
    assert queue.empty()
    assert log_watch.count("skipped a malformed message") == 3


async def test_a_failing_handler_is_logged_and_the_others_still_run(
    backend: Backend, log_watch: LogWatch
) -> None:
    def broken(message: ControlMessage) -> None:
        raise RuntimeError("handler bug")

    async def broken_async(message: ControlMessage) -> None:
        raise RuntimeError("async handler bug")

    async with backend.make() as channel:
        await channel.subscribe(broken)
        await channel.subscribe(broken_async)
        queue, handler = collector()
        await channel.subscribe(handler)
        for session_id in ("one", "two"):
            await channel.publish(ControlMessage(agent="bot", session_id=session_id))
        assert [(await next_message(queue)).session_id for _ in range(2)] == ["one", "two"]
    assert log_watch.count("control handler failed") == 4


async def test_the_first_connection_failing_raises_from_subscribe() -> None:
    # port 1 on loopback: nothing listens there
    for channel in (
        PostgresControl("postgresql://postgres@127.0.0.1:1/test"),
        RedisControl("redis://127.0.0.1:1/0"),
    ):
        async with channel:
            with pytest.raises(StoreUnavailableError, match=r"127\.0\.0\.1:1"):
                await channel.subscribe(lambda message: None)
            assert control_tasks() == []  # nothing is left running
        assert control_tasks() == []


# -- closing -------------------------------------------------------------------------------------


async def test_a_closed_subscription_gets_nothing_more(backend: Backend) -> None:
    async with backend.make() as channel:
        closed, closed_handler = collector()
        kept, kept_handler = collector()
        subscription = await channel.subscribe(closed_handler)
        await channel.subscribe(kept_handler)
        await channel.publish(ControlMessage(agent="bot", session_id="before"))
        assert (await next_message(closed)).session_id == "before"
        await subscription.close()
        await subscription.close()  # idempotent
        await channel.publish(ControlMessage(agent="bot", session_id="after"))
        assert [(await next_message(kept)).session_id for _ in range(2)] == ["before", "after"]
        assert closed.empty()


async def test_a_subscription_closed_by_an_earlier_handler_is_skipped(backend: Backend) -> None:
    async with backend.make() as channel:
        later, later_handler = collector()
        done = asyncio.Event()

        async def closer(message: ControlMessage) -> None:
            await victim.close()
            done.set()

        await channel.subscribe(closer)
        victim = await channel.subscribe(later_handler)
        await channel.publish(ControlMessage(agent="bot", session_id="s"))
        async with asyncio.timeout(WAIT_S):
            await done.wait()
        probe, probe_handler = collector()
        await channel.subscribe(probe_handler)
        await channel.publish(ControlMessage(agent="bot", session_id="probe"))
        await next_message(probe)  # the dispatcher has moved past the first message
        assert later.empty()


async def test_aclose_stops_every_task_and_the_channel_refuses_further_use(
    backend: Backend,
) -> None:
    channel = backend.make()
    queue, handler = collector()
    await channel.subscribe(handler)
    assert len(control_tasks()) == 2  # the listener and the dispatcher
    await channel.aclose()
    assert control_tasks() == []
    await channel.aclose()  # idempotent
    with pytest.raises(ConfigurationError, match="closed"):
        await channel.publish(ControlMessage(agent="bot", session_id="s"))
    with pytest.raises(ConfigurationError, match="closed"):
        await channel.subscribe(handler)
    # nothing arrives after close, even from another instance
    async with backend.make() as other:
        await other.publish(ControlMessage(agent="bot", session_id="late"))
    assert queue.empty()


async def test_a_handler_may_close_its_own_channel(backend: Backend) -> None:
    channel = backend.make()
    closed = asyncio.Event()

    async def close_channel(message: ControlMessage) -> None:
        await channel.aclose()
        closed.set()

    await channel.subscribe(close_channel)
    await channel.publish(ControlMessage(agent="bot", session_id="s"))
    async with asyncio.timeout(WAIT_S):
        await closed.wait()
        while control_tasks():  # the dispatcher ends once the handler returns
            await asyncio.wait(control_tasks())


@pytest.mark.parametrize("kind", ["postgres", "redis"])
async def test_closing_while_the_first_connection_hangs_fails_that_subscribe(kind: str) -> None:
    accepted = asyncio.Event()
    peers: list[asyncio.StreamWriter] = []

    def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peers.append(writer)  # accept the connection and never answer
        accepted.set()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    channel: Channel
    if kind == "postgres":
        channel = PostgresControl(f"postgresql://postgres@127.0.0.1:{port}/test")
    else:
        channel = RedisControl(f"redis://127.0.0.1:{port}/0")
    try:
        subscribing = asyncio.create_task(channel.subscribe(lambda message: None))
        async with asyncio.timeout(WAIT_S):
            await accepted.wait()  # the listener is connecting: it waits for the server
        await channel.aclose()
        with pytest.raises(ConfigurationError, match="closed"):
            await subscribing
        assert control_tasks() == []
    finally:
        for writer in peers:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_publishing_alone_opens_no_listener(backend: Backend) -> None:
    async with backend.make() as channel:
        await channel.publish(ControlMessage(agent="bot", session_id="nobody listens"))
        assert control_tasks() == []


# -- reconnecting --------------------------------------------------------------------------------


async def test_the_listener_reconnects_after_its_connection_is_killed(
    backend: Backend, log_watch: LogWatch
) -> None:
    async with backend.make() as channel:
        queue, handler = collector()
        await channel.subscribe(handler)
        await channel.publish(ControlMessage(agent="bot", session_id="before"))
        assert (await next_message(queue)).session_id == "before"

        listening_again = log_watch.expect("listening again")
        assert await backend.kill_listeners() == 1
        async with asyncio.timeout(WAIT_S):
            await listening_again.wait()
        assert log_watch.count("listener connection lost") == 1

        await channel.publish(ControlMessage(agent="bot", session_id="after"))
        assert (await next_message(queue)).session_id == "after"
        assert queue.empty()


async def test_serve_control_interrupts_a_running_agent(backend: Backend) -> None:
    started = asyncio.Event()

    async def slow_model(messages: Any, tools: Any, options: Any) -> str:
        started.set()
        await asyncio.Event().wait()  # the model never answers: only an interrupt ends the run
        return "never"

    agent = ReActAgent("bot", "", FunctionModel(slow_model))
    async with backend.make() as channel:
        subscription = await serve_control(channel, agent)
        run = asyncio.create_task(agent.call("work", session_id="s1"))
        async with asyncio.timeout(WAIT_S):
            await started.wait()
        # messages for another session or another agent are ignored ...
        await channel.publish(ControlMessage(agent="bot", session_id="s2", reason="wrong"))
        await channel.publish(ControlMessage(agent="other", session_id="s1", reason="wrong"))
        # ... and the one for this run stops it
        await channel.publish(ControlMessage(agent="bot", session_id="s1", reason="stopped"))
        async with asyncio.timeout(WAIT_S):
            result = await run
        await subscription.close()
    assert result.interrupted
    assert not result.ok
    assert result.error is not None
    assert result.error.code == ErrorCode.INTERRUPTED
    assert result.text == "stopped"
