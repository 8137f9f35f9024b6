"""`AppRunner`: aiohttp's runner, whose connections answer unparsable requests with typed JSON.

aiohttp answers a request its parser refuses (a control character in a header, a header or
URL over 8190 bytes, Content-Length with Transfer-Encoding) before any middleware runs, with a
`text/plain` body that quotes the offending bytes, an API key included, and logs them. Here
`RequestHandler.handle_error`, the method aiohttp documents for building that answer, is
overridden: the answer is the server's `{"error": {...}}` body, which says what kind of
mistake it was and quotes nothing of the request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from aiohttp import http_exceptions, web
from aiohttp.web_protocol import RequestHandler

from rxagent.errors import ApiError
from rxagent.server._errors import error_response

if TYPE_CHECKING:
    import asyncio

    from aiohttp.web_request import BaseRequest

__all__ = ["IDLE_TIMEOUT_S", "AppRunner", "JsonErrorHandler", "parse_failure"]

IDLE_TIMEOUT_S: Final = 75.0
"""How long `serve` keeps an idle connection when its app has no `ServerConfig` (aiohttp's
`run_app` default)."""

_KINDS: Final[tuple[tuple[type[Exception], str], ...]] = (
    (http_exceptions.LineTooLong, "a request line or header is longer than 8190 bytes"),
    (http_exceptions.InvalidHeader, "a header is malformed (a control character, or a bad name)"),
    (http_exceptions.BadHttpMethod, "the method is not a valid HTTP method"),
    (http_exceptions.BadStatusLine, "the request line is malformed"),
    (http_exceptions.InvalidURLError, "the URL is malformed"),
    (
        http_exceptions.PayloadEncodingError,
        "the body's framing is invalid (Content-Length with Transfer-Encoding, or a bad chunk)",
    ),
)


def parse_failure(status: int, exc: BaseException | None) -> ApiError:
    """The typed error for what aiohttp's protocol layer could not handle; it quotes no input.

    Example:
        ```python
        from aiohttp.http_exceptions import LineTooLong
        from rxagent.server._runner import parse_failure

        error = parse_failure(400, LineTooLong(b"x" * 9000, 8190))
        assert error.code == "bad_request" and "8190" in error.message
        assert "xxx" not in error.message
        ```
    """
    if status >= 500:
        if status == 504:
            return ApiError(504, "timeout", "the request took too long to handle")
        return ApiError(status, "internal_error", "the server failed; see its log")
    kind = "the request is malformed HTTP"
    for exc_type, described in _KINDS:
        if isinstance(exc, exc_type):
            kind = described
            break
    message = f"the request could not be parsed: {kind}; nothing of it was processed"
    return ApiError(status, "bad_request", message)


class JsonErrorHandler(RequestHandler):
    """aiohttp's per-connection protocol, answering its own errors with the typed JSON body.

    It also closes a connection whose client stopped reading: when the answer's writes stay
    paused (the socket's buffers are full) for the connection's `keepalive_timeout` (what
    `serve` sets from `ServerConfig.idle_timeout_s`), the connection is aborted, so a stalled
    stream ends as if its client had left, and its run is cancelled and saved.

    Example:
        ```python
        from rxagent.server import JsonErrorHandler
        from aiohttp.web_protocol import RequestHandler

        assert issubclass(JsonErrorHandler, RequestHandler)
        ```
    """

    _stall: asyncio.TimerHandle | None = None

    def pause_writing(self) -> None:
        """The socket's buffers are full: close the connection unless they drain in time."""
        super().pause_writing()
        if self._stall is None and self.keepalive_timeout > 0:
            self._stall = self._loop.call_later(self.keepalive_timeout, self._stalled)

    def resume_writing(self) -> None:
        """The client read: the connection is not stalled."""
        super().resume_writing()
        self._cancel_stall()

    def connection_lost(self, exc: BaseException | None) -> None:
        """Forget the stall timer, then let aiohttp close the connection."""
        self._cancel_stall()
        super().connection_lost(exc)

    def _cancel_stall(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def _stalled(self) -> None:
        self._stall = None
        transport = self.transport
        if transport is not None and not transport.is_closing():
            self.logger.info(
                "closed a connection whose client read nothing for %s s (idle_timeout_s)",
                self.keepalive_timeout,
            )
            transport.abort()

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """Answer a request aiohttp could not handle: typed JSON, nothing of the request quoted.

        A server failure is logged with its traceback (through the log redaction); a request
        the parser refused is logged at INFO, by kind only.
        """
        error = parse_failure(status, exc)
        if status >= 500:
            self.logger.error("error handling a request from %s", request.remote, exc_info=exc)
        else:
            self.logger.info("refused a request from %s: %s", request.remote, error.message)
        if request.writer.output_size > 0:  # the answer has begun: the connection is broken
            raise ConnectionError("the response has begun; no error answer can follow it")
        response = error_response(error)
        response.force_close()
        return response


class _JsonErrorServer(web.Server):
    """`web.Server` whose connections use `JsonErrorHandler`."""

    def __call__(self) -> RequestHandler:
        return JsonErrorHandler(self, loop=self._loop, **self._kwargs)


class AppRunner(web.AppRunner):
    """A drop-in `aiohttp.web.AppRunner` whose connections answer every error with typed JSON.

    `run_server` and `serve` use it; use it too when you run `create_app` yourself, with
    `install_log_redaction`, so that a malformed request never echoes or logs an API key.

    Example:
        ```python
        import asyncio
        from rxagent import ReActAgent
        from rxagent.server import AppRunner, JsonErrorHandler, create_app
        from rxagent.testing import ScriptedModel

        async def main() -> None:
            runner = AppRunner(create_app(ReActAgent("bot", "", ScriptedModel([]))))
            await runner.setup()
            try:
                assert runner.server is not None
                assert isinstance(runner.server(), JsonErrorHandler)  # what connections get
            finally:
                await runner.cleanup()

        asyncio.run(main())
        ```
    """

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        return _JsonErrorServer(
            server.request_handler,
            request_factory=server.request_factory,
            handler_cancellation=server.handler_cancellation,
            loop=server._loop,
            **server._kwargs,
        )
