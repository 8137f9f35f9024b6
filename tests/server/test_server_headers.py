"""In-process checks of the header rules, the public errors, and what `serve` prints."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from multidict import CIMultiDict
from server_helpers import serving  # type: ignore[import-not-found]

from rxagent import AgentResult, ErrorCode, ErrorInfo, Msg, ReActAgent
from rxagent.server import RedactingFilter, create_app, serve
from rxagent.server._public import PublicErrors
from rxagent.state._shield import complete_despite_cancel
from rxagent.testing import ScriptedModel


def _agent() -> ReActAgent:
    return ReActAgent("bot", "", ScriptedModel(["pong"] * 4))


async def test_two_authorization_headers_are_a_400_even_without_auth():
    async with serving(create_app(_agent())) as client:
        headers = CIMultiDict([("Authorization", "Bearer a"), ("Authorization", "Bearer b")])
        answer = await client.post("/v1/agents/bot/runs", json={"input": "hi"}, headers=headers)
        assert answer.status == 400
        assert (await answer.json())["error"]["code"] == "duplicate_header"


@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        ("text/plain", 415),
        ("multipart/form-data; boundary=x", 415),
        ("application/json; charset=utf-8", 200),
        ("application/vnd.api+json", 200),
        ("application/octet-stream", 200),
    ],
)
async def test_a_body_declared_as_something_else_than_json_is_a_415(content_type: str, status: int):
    async with serving(create_app(_agent())) as client:
        answer = await client.post(
            "/v1/agents/bot/runs", data=b'{"input": "hi"}', headers={"Content-Type": content_type}
        )
        assert answer.status == status, await answer.text()
        if status == 415:
            error = (await answer.json())["error"]
            assert (error["code"], error["field"]) == ("unsupported_media_type", "Content-Type")


def _failed(message: str, reply: str, source: str = "model") -> AgentResult[Any]:
    error = ErrorInfo(code=ErrorCode.AUTH, message=message, source=source)
    return AgentResult(reply=Msg.assistant(reply), ok=False, error=error, stop_reason="error")


def test_a_failed_result_from_the_model_shows_only_its_code_and_a_request_id():
    public = PublicErrors(lambda _: None)
    detail = "openai HTTP 401: Bearer sk-secret"
    shown = public.result(_failed(detail, f"The run failed (AUTH): {detail}"), "here")
    assert shown.error is not None
    assert "sk-secret" not in shown.error.message
    assert "sk-secret" not in shown.reply.text
    edited = public.result(_failed(detail, "a reply a hook wrote"), "here")
    assert edited.reply.text == "a reply a hook wrote"  # not the failure text: left as it is
    tool = _failed("the tool failed", "x", source="tool:add")
    assert public.result(tool, "here") is tool  # only the model's failures are rewritten


def test_installing_a_filter_twice_attaches_it_once():
    redaction = RedactingFilter()
    try:
        redaction.install()
        redaction.install()
        import logging

        assert logging.getLogger("aiohttp.server").filters.count(redaction) == 1
    finally:
        redaction.remove()


async def test_serve_prints_its_banner_and_the_stop_line(capsys: pytest.CaptureFixture[str]):
    stop = asyncio.Event()
    stop.set()  # serve prints its banner once listening, then stops at once
    app = create_app(_agent(), auth=["rk-printed-0123456789"])
    await serve(app, port=0, stop=stop)
    out = capsys.readouterr().out
    assert out.startswith("rxagent server listening on http://127.0.0.1:")
    assert "  auth: on (1 API key;" in out
    assert "  store: InMemoryStore() (sessions last only while this process runs)\n" in out
    assert out.endswith("rxagent server stopped: no run was in progress\n")
    assert "rk-printed" not in out


async def test_an_operation_cancelled_itself_is_not_waited_for():
    async def forever() -> None:
        await asyncio.Event().wait()

    inner = asyncio.ensure_future(forever())
    caller = asyncio.create_task(complete_despite_cancel(inner))
    await asyncio.sleep(0)
    inner.cancel()  # the operation, not its caller
    with pytest.raises(asyncio.CancelledError):
        await caller
