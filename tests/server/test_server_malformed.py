"""Requests aiohttp's parser refuses, and header mistakes, against a real server process.

Every answer is the typed JSON error; no API key is ever echoed in an answer or written to the
server's log (which, in these processes, shows every record at DEBUG).
"""

from __future__ import annotations

import inspect
import json
import signal
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from server_helpers import raw_request, secured_server  # type: ignore[import-not-found]

from rxagent import ReActAgent
from rxagent.server import AppRunner, ErrorBody, JsonErrorHandler, create_app
from rxagent.testing import ScriptedModel

KEY = "rk-live-0123456789abcdef"
OTHER = "rk-live-fedcba9876543210"
KEYS = {"RXAGENT_TEST_KEYS": f"{KEY},{OTHER}"}


def _post(path: str, headers: bytes, body: bytes = b'{"input": "hi"}') -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n".encode()
        + headers
        + b"Content-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


BAD_REQUESTS = {
    "carriage return after the key": _post(
        "/v1/agents/bot/runs", b"Authorization: Bearer " + KEY.encode() + b"\r\r\n"
    ),
    "NUL after the key": _post(
        "/v1/agents/bot/runs", b"Authorization: Bearer " + KEY.encode() + b"\x00\r\n"
    ),
    "\\x01 after the key": _post(
        "/v1/agents/bot/runs", b"Authorization: Bearer " + KEY.encode() + b"\x01\r\n"
    ),
    "a 9 KB Authorization header": _post(
        "/v1/agents/bot/runs", b"Authorization: Bearer " + KEY.encode() + b"A" * 9000 + b"\r\n"
    ),
    "a 9 KB header beside the key": _post(
        "/v1/agents/bot/runs",
        b"Authorization: Bearer " + KEY.encode() + b"\r\nX-Pad: " + b"p" * 9000 + b"\r\n",
    ),
    "a 9 KB URL": _post(
        "/v1/agents/bot/runs?" + "q" * 9000, b"Authorization: Bearer " + KEY.encode() + b"\r\n"
    ),
    "Content-Length with Transfer-Encoding": _post(
        "/v1/agents/bot/runs",
        b"Authorization: Bearer " + KEY.encode() + b"\r\nTransfer-Encoding: chunked\r\n",
    ),
}


def _typed_error(status: int, headers: dict[str, str], body: bytes, code: str) -> ErrorBody:
    assert headers["content-type"].startswith("application/json"), headers
    error = ErrorBody.model_validate_json(body)
    assert error.error.code == code, body
    return error


async def test_a_request_the_parser_refuses_gets_typed_json_and_never_shows_the_key(
    tmp_path: Path,
):
    log = tmp_path / "server.log"
    answers = {}
    async with secured_server(f"sqlite:{tmp_path / 's.db'}", stderr=log, env=KEYS) as (proc, url):
        for name, request in BAD_REQUESTS.items():
            answers[name] = await raw_request(url, request)
        status, _, body = await raw_request(
            url, _post("/v1/agents/bot/runs", b"Authorization: Bearer " + KEY.encode() + b"\r\n")
        )
        assert status == 200, body  # the same request, well formed, is served
        proc.send_signal(signal.SIGTERM)
        assert await proc.wait() == 0
    for name, (status, headers, body) in answers.items():
        assert status == 400, name
        error = _typed_error(status, headers, body, "bad_request")
        assert error.error.message.startswith("the request could not be parsed"), name
        assert KEY.encode() not in body, name
        assert b"Bearer" not in body, name
    logged = log.read_text()
    assert "refused a request" in logged  # the refusals were logged, by kind only
    assert KEY not in logged
    assert "Bearer " + KEY[:6] not in logged


async def test_two_authorization_headers_are_refused_and_a_text_body_is_a_415(tmp_path: Path):
    log = tmp_path / "server.log"
    async with secured_server(f"sqlite:{tmp_path / 's.db'}", stderr=log, env=KEYS) as (_, url):
        # the second key is valid too: whichever won, the request must not run
        two = b"Authorization: Bearer " + KEY.encode() + b"\r\n"
        two += b"Authorization: Bearer " + OTHER.encode() + b"\r\n"
        duplicate = await raw_request(url, _post("/v1/agents/bot/runs", two))
        one = b"Authorization: Bearer " + KEY.encode() + b"\r\n"
        text = _post("/v1/agents/bot/runs", one).replace(b"application/json", b"text/plain")
        plain = await raw_request(url, text)
        form = await raw_request(
            url,
            _post("/v1/agents/bot/runs", one).replace(
                b"application/json", b"application/x-www-form-urlencoded"
            ),
        )
    status, headers, body = duplicate
    error = _typed_error(status, headers, body, "duplicate_header")
    assert (status, error.error.field) == (400, "Authorization")
    for status, headers, body in (plain, form):
        assert status == 415
        assert _typed_error(status, headers, body, "unsupported_media_type").error.field == (
            "Content-Type"
        )
    assert KEY not in log.read_text()
    assert OTHER not in log.read_text()


@pytest.mark.parametrize("status", [400, 500, 504])
async def test_the_handler_answers_with_typed_json_whatever_the_status(status: int):
    runner = AppRunner(create_app(ReActAgent("bot", "", ScriptedModel([]))))
    await runner.setup()
    try:
        assert runner.server is not None
        handler = runner.server()
        assert isinstance(handler, JsonErrorHandler)
    finally:
        await runner.cleanup()

    class Writer:
        output_size = 0

    class Request:
        remote = "127.0.0.1"
        writer = Writer()

    response = handler.handle_error(Request(), status, ValueError("Bearer leaked-token"))  # type: ignore[arg-type]
    assert isinstance(response, web.Response)
    assert response.status == status
    assert response.content_type == "application/json"
    assert response.text is not None
    assert "leaked" not in response.text
    code = json.loads(response.text)["error"]["code"]
    assert code == {400: "bad_request", 500: "internal_error", 504: "timeout"}[status]
    Writer.output_size = 1  # an answer has begun: the connection is broken, nothing more is sent
    with pytest.raises(ConnectionError):
        handler.handle_error(Request(), status)  # type: ignore[arg-type]


def test_the_aiohttp_seams_the_runner_relies_on_are_there():
    """aiohttp version drift: the overridden method and the runner hook keep their shape."""
    ours = inspect.signature(JsonErrorHandler.handle_error)
    theirs = inspect.signature(RequestHandler.handle_error)
    assert list(ours.parameters) == list(theirs.parameters)
    assert [p.default for p in ours.parameters.values()] == [
        p.default for p in theirs.parameters.values()
    ]
    assert inspect.iscoroutinefunction(web.AppRunner._make_server)
    for attribute in ("request_handler", "request_factory", "handler_cancellation"):
        assert attribute in inspect.signature(web.Server.__init__).parameters or attribute in (
            "request_handler",
        )
    assert "_kwargs" in web.Server.__init__.__code__.co_names
    assert "_loop" in web.Server.__init__.__code__.co_names
