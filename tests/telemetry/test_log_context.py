"""Structured logs: each record inside a run carries its identity; no record holds a secret."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator

import pytest

from rxagent import PostReasoningEvent, Principal, ReActAgent, current_run, hook, tool
from rxagent.models.openai import OpenAIChatModel
from rxagent.models.retry import RetryPolicy
from rxagent.telemetry import (
    REDACTED_LOGGERS,
    RUN_FIELDS,
    JsonFormatter,
    RedactingFilter,
    RunContextFilter,
    json_logs,
    secrets_from_env,
)
from rxagent.testing import ScriptedModel, tool_call
from rxagent.testing.providers import FakeOpenAIServer

KEY = "local-key-7f3a9c2e1b5d"  # no well-known key shape: only configuration can cut it


async def _no_wait(_: float) -> None:
    """The retry's sleep: no time passes in these tests."""


def openai_model(server: FakeOpenAIServer) -> OpenAIChatModel:
    retry = RetryPolicy(max_retries=2, sleep=_no_wait)
    return OpenAIChatModel(
        "gpt-4o-mini",
        base_url=server.base_url,
        api_key=KEY,
        max_retries=retry,
    )


class Raw(logging.Handler):
    """Keeps what each record says before any other handler's filter rewrites it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        exc = logging.Formatter().formatException(record.exc_info) if record.exc_info else ""
        self.texts.append(f"{record.name} {record.getMessage()} {exc} {record.__dict__}")


@pytest.fixture
def logs() -> Iterator[tuple[Raw, io.StringIO]]:
    root = logging.getLogger("rxagent")
    level = root.level
    raw = Raw()
    root.addHandler(raw)
    out = io.StringIO()
    handler = json_logs(level=logging.DEBUG, stream=out, keys=[KEY])
    try:
        yield raw, out
    finally:
        root.removeHandler(raw)
        root.removeHandler(handler)
        root.setLevel(level)


def lines(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


async def test_every_record_inside_a_run_carries_the_run_identity(
    logs: tuple[Raw, io.StringIO],
) -> None:
    _, out = logs

    @tool
    def lookup(city: str) -> str:
        """Look up a city.

        Args:
            city: The city.
        """
        logging.getLogger("rxagent.tools").info("looking up %s", city)
        return "sunny"

    @hook(PostReasoningEvent)
    def audit(event: PostReasoningEvent) -> None:
        logging.getLogger("rxagent.hooks").debug("step %d answered", event.step)

    async with FakeOpenAIServer([tool_call("lookup", city="Paris"), "Sunny."]) as server:
        server.fail(1, status=500, message="overloaded")  # the client logs its retry
        model = openai_model(server)
        agent = ReActAgent("weather", "", model, tools=[lookup], hooks=[audit])
        result = await agent.call("Paris?", session_id="s-7", principal=Principal(user_id="ann"))
        await agent.aclose()
    logging.getLogger("rxagent.agent").warning("after the run")
    records = lines(out)
    inside, after = records[:-1], records[-1]
    assert {r["logger"] for r in inside} == {
        "rxagent.models.retry",
        "rxagent.tools",
        "rxagent.hooks",
    }
    for record in inside:
        assert record["run_id"] == result.run_id
        assert record["session_id"] == "s-7"
        assert record["agent"] == "weather"
        assert record["user_id"] == "ann"
    assert after["message"] == "after the run"
    assert not set(RUN_FIELDS) & after.keys()


async def test_no_record_of_a_failing_run_holds_the_api_key(logs: tuple[Raw, io.StringIO]) -> None:
    raw, out = logs

    @hook(PostReasoningEvent)
    def careless(event: PostReasoningEvent) -> None:  # a user's hook that logs a header
        logging.getLogger("rxagent.hooks").error("calling with x-api-key: %s", KEY)

    echo = f"Incorrect API key provided: {KEY}. Send 'Authorization: Bearer {KEY}'"
    async with FakeOpenAIServer(["first", "second"]) as server:
        server.fail(2, status=502, message=f"gateway saw {KEY}")
        server.fail(3, status=401, message=echo)
        model = openai_model(server)
        agent = ReActAgent("a", "", model, hooks=[careless])
        assert (await agent.call("hi", session_id="one")).ok
        failed = await agent.call("again", session_id="two")
        await agent.aclose()
    assert failed.error is not None
    assert failed.error.code == "AUTH"
    assert KEY not in failed.error.message
    assert KEY not in failed.text
    written = out.getvalue()
    assert written.count("\n") == 2  # the hook's record (first run) and the retry (second)
    assert KEY not in written
    assert "[redacted]" in written
    # rxagent's own records never held it: only the user's hook did, and the filter cut it
    leaking = [text for text in raw.texts if KEY in text]
    assert leaking
    assert all(text.startswith("rxagent.hooks calling with") for text in leaking)


def test_run_context_filter_outside_a_run_sets_none() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "m", (), None)
    assert RunContextFilter().filter(record)
    assert [getattr(record, name) for name in RUN_FIELDS] == [None, None, None, None]


def test_a_run_without_a_user_id_logs_none() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RunContextFilter())
    handler.setFormatter(JsonFormatter())

    @hook(PostReasoningEvent)
    def say(event: PostReasoningEvent) -> None:
        logging.getLogger("rxagent.test_logs").warning("from %s", current_run().agent)

    logger = logging.getLogger("rxagent.test_logs")
    logger.addHandler(handler)
    try:
        ReActAgent("anon", "", ScriptedModel(["ok"]), hooks=[say]).call_sync("hi")
    finally:
        logger.removeHandler(handler)
    [line] = lines(out)
    assert line["agent"] == "anon"
    assert "user_id" not in line
    assert line["message"] == "from anon"


def test_json_formatter_writes_extras_exceptions_and_stacks() -> None:
    formatter = JsonFormatter(keys=["hunter2-secret"])
    try:
        raise ValueError("bad value hunter2-secret")
    except ValueError:
        exc_info = sys.exc_info()
    record = logging.LogRecord(
        "rxagent.agent", logging.ERROR, __file__, 1, "failed %s", ("x",), exc_info
    )
    record.stack_info = "Stack (most recent call last):\n  here"
    record.tool = "search"
    record.payload = {1, 2}  # not JSON: written with repr
    record.token = "Authorization: Bearer abc.def"
    line = json.loads(formatter.format(record))
    assert line["message"] == "failed x"
    assert line["level"] == "ERROR"
    assert line["logger"] == "rxagent.agent"
    assert line["time"].endswith("+00:00")
    assert "ValueError: bad value [redacted]" in line["exception"]
    assert line["stack"].endswith("here")
    assert line["tool"] == "search"
    assert line["payload"] == "{1, 2}"
    assert line["token"] == "Authorization: Bearer [redacted]"


def test_redacting_filter_installs_on_every_rxagent_logger() -> None:
    logging.getLogger("rxagent.some_new_module")
    redaction = RedactingFilter(keys=[KEY]).install()
    redaction.install()  # twice: attached once
    try:
        assert logging.getLogger("rxagent.agent").filters.count(redaction) == 1
        for name in (*REDACTED_LOGGERS, "rxagent.some_new_module"):
            assert redaction in logging.getLogger(name).filters
        record = logging.LogRecord("rxagent", logging.INFO, __file__, 1, KEY, (), None)
        record.exc_text = f"Traceback: {KEY}"
        record.stack_info = f"stack {KEY}"
        redaction.filter(record)
        assert KEY not in record.getMessage() + record.exc_text + record.stack_info
    finally:
        redaction.remove()
    assert redaction not in logging.getLogger("rxagent.agent").filters


def test_credentials_in_the_environment_are_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_API_KEY", "env-key-123456789")
    monkeypatch.setenv("SOME_AUTH_TOKEN", "")
    assert "env-key-123456789" in secrets_from_env()
    assert secrets_from_env({"GITHUB_ACCESS_TOKEN": "t", "PATH": "/bin"}) == ("t",)
    for from_env, expected in ((True, "key [redacted]"), (False, "key env-key-123456789")):
        out = io.StringIO()
        handler = json_logs(stream=out, logger="rxagent.test_env", keys_from_env=from_env)
        try:
            logging.getLogger("rxagent.test_env").warning("key %s", "env-key-123456789")
        finally:
            logging.getLogger("rxagent.test_env").removeHandler(handler)
        assert lines(out)[0]["message"] == expected


def test_redacting_filter_cuts_a_live_exception() -> None:
    try:
        raise PermissionError(f"denied for {KEY}")
    except PermissionError:
        exc_info = sys.exc_info()
    record = logging.LogRecord("rxagent", logging.ERROR, __file__, 1, "failed", (), exc_info)
    assert RedactingFilter(keys=[KEY]).filter(record)
    assert record.exc_info is None
    assert record.exc_text is not None
    assert "PermissionError: denied for [redacted]" in record.exc_text
