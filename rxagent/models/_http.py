"""The shared HTTP engine of the provider clients.

One pooled aiohttp session, incremental streaming, timeouts and retries. Each provider adds its
formatter, URL and headers.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import weakref
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Self, TypedDict
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from rxagent._fast import trusted
from rxagent._version import __version__
from rxagent.errors import AgentRunError, ConfigurationError, ErrorCode
from rxagent.formatters.base import (
    excerpt,
    json_body,
    malformed,
    provider_error,
    response_to_deltas,
)
from rxagent.formatters.framing import NDJSONDecoder, SSEDecoder
from rxagent.models.base import (
    ModelDelta,
    ModelOptions,
    ModelResponse,
    ResponseBuilder,
    Usage,
    UsageDelta,
)
from rxagent.models.retry import RetryPolicy

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence

    from rxagent.formatters.base import Formatter
    from rxagent.messages import Msg
    from rxagent.models.base import ToolSchema

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "REDACTED",
    "HTTPChatModel",
    "HTTPOptions",
    "PooledHTTPClient",
    "display_url",
    "redact_secrets",
    "transport_error",
]

DEFAULT_TIMEOUT_S: Final = 120.0
"""The default wait for a connection and for each read of a response, in seconds."""

_STREAM_TYPES: Final = ("event-stream", "ndjson", "json", "octet-stream", "text/plain")

_encode: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""`json.dumps(body, ensure_ascii=False, separators=(",", ":"))`, without a new encoder per call."""


REDACTED: Final = "[redacted]"
"""What `redact_secrets` puts where a secret was."""

_SECRETS: Final = re.compile(
    r"(?P<scheme>(?:bearer|basic)\s+)[^\s'\"\\,;]+"
    r"|(?P<header>(?:x-goog-api-key|x-api-key|api[-_]?key|authorization)[\"']?\s*[:=]\s*[\"']?)"
    r"(?!bearer\s|basic\s)[^\s'\"\\,;&]+"
    r"|(?<![A-Za-z0-9])(?:sk-|AIza)[A-Za-z0-9_\-]{16,}",
    re.IGNORECASE,
)
_MIN_KEY_LEN: Final = 8


def display_url(url: str) -> str:
    """`url` as a repr or a message shows it: no password, no key in its query.

    Example:
        ```python
        from rxagent.models._http import display_url

        assert display_url("https://bob:hunter2@proxy.example/v1") == (
            "https://bob:***@proxy.example/v1"
        )
        assert display_url("https://api.example/v1?api_key=k-123") == (
            "https://api.example/v1?api_key=[redacted]"
        )
        ```
    """
    try:
        parts = urlsplit(url)
        if parts.password is not None:
            host = parts.netloc.rsplit("@", 1)[-1]
            parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
            url = urlunsplit(parts)
    except ValueError:
        return "<unparsable url>"
    return redact_secrets(url)


def _keep_prefix(match: re.Match[str]) -> str:
    return (match["scheme"] or match["header"] or "") + REDACTED


def redact_secrets(text: str, keys: Iterable[str] = ()) -> str:
    """Return `text` with API keys and credentials replaced by `[redacted]`.

    What goes: the token after `Bearer` or `Basic`; the value of an `Authorization`,
    `x-api-key`, `api-key`, `api_key` or `x-goog-api-key` header or field; key shapes
    (`sk-...`, `sk-ant-...`, `AIza...`, 16 characters or more after the prefix); and every
    occurrence of the given `keys` that are 8 characters or longer. Text without any of them
    comes back unchanged.

    Example:
        ```python
        from rxagent.models._http import redact_secrets

        line = "Authorization: Bearer k-1234567 from sk-proj-abcdefghijklmnop1234"
        assert redact_secrets(line) == "Authorization: Bearer [redacted] from [redacted]"
        assert redact_secrets("my key is hunter2-secret", keys=["hunter2-secret"]) == (
            "my key is [redacted]"
        )
        ```
    """
    for key in sorted((k for k in keys if len(k) >= _MIN_KEY_LEN), key=len, reverse=True):
        text = text.replace(key, REDACTED)
    return _SECRETS.sub(_keep_prefix, text)


def _whole_reader(formatter: Formatter[Any]) -> Callable[[Any], list[ModelDelta]] | None:
    """The formatter's `parse_deltas` fast path, or None to read with `parse`.

    None too when a subclass overrides `parse` below the class that has `parse_deltas`: the
    override's reading must win.
    """
    reader: Callable[[Any], list[ModelDelta]] | None = getattr(formatter, "parse_deltas", None)
    if reader is None:
        return None
    for cls in type(formatter).__mro__:
        if "parse_deltas" in vars(cls):
            break
        if "parse" in vars(cls):
            return None
    return reader


class HTTPOptions(TypedDict, total=False):
    """The keyword arguments every provider client takes (see `HTTPChatModel`).

    Provider clients take their own arguments plus `**common: Unpack[HTTPOptions]`, so these
    are declared, typed and documented once.
    """

    base_url: str | None
    api_key: str | None
    timeout: float | aiohttp.ClientTimeout
    max_retries: int | RetryPolicy
    stream: bool
    headers: Mapping[str, str] | None
    options: ModelOptions | None
    context_window: int | None


class PooledHTTPClient:
    """What every rxagent HTTP client shares: one pooled aiohttp session per event loop.

    `HTTPChatModel` and the embedders of `rxagent.rag` derive from it. A subclass calls
    `_open_pool(timeout)` in `__init__` and sets `model`, `base_url` and `api_key`; it gets the
    session, `aclose()`, `async with`, and credentials kept out of its errors.
    """

    model: str
    base_url: str
    api_key: str | None
    timeout: aiohttp.ClientTimeout

    def _open_pool(self, timeout: float | aiohttp.ClientTimeout) -> None:
        """Check and keep `timeout`; no session yet (one is made per loop on first use).

        Raises:
            ConfigurationError: `timeout` is neither seconds > 0 nor an `aiohttp.ClientTimeout`.
        """
        if isinstance(timeout, aiohttp.ClientTimeout):
            self.timeout = timeout
        elif isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            self.timeout = aiohttp.ClientTimeout(
                total=None, connect=float(timeout), sock_read=float(timeout)
            )
        else:
            raise ConfigurationError(
                f"{type(self).__name__}(timeout=...) must be seconds > 0 or an "
                f"aiohttp.ClientTimeout, got {timeout!r}"
            )
        self._sessions: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, aiohttp.ClientSession
        ] = weakref.WeakKeyDictionary()

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                timeout=self.timeout,
            )
            self._sessions[loop] = session
        return session

    async def aclose(self) -> None:
        """Close the connection pool of the running event loop (the client stays usable)."""
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, base_url={display_url(self.base_url)!r})"

    def _redact(self, text: str) -> str:
        return redact_secrets(text, (self.api_key,) if self.api_key else ())

    def _redacted(self, error: AgentRunError) -> AgentRunError:
        """`error` with credentials cut from its message and excerpt (a provider may echo them)."""
        error.message = self._redact(error.message)
        error.args = (error.message,)
        if error.excerpt is not None:
            error.excerpt = self._redact(error.excerpt)
        return error


class HTTPChatModel(PooledHTTPClient):
    """A `ChatModel` that talks to a provider over HTTP with aiohttp.

    Subclasses set the class attributes and implement `_url`; the formatter does the
    translation. One `aiohttp.ClientSession` per event loop is created on first use and reused
    for every request, so connections are pooled. Close it with `await model.aclose()` or use
    the model as an async context manager.

    Args:
        model: The provider's model name (`"gpt-4o-mini"`).
        base_url: The API root; the provider's public endpoint by default (or its environment
            variable, such as `OPENAI_BASE_URL`).
        api_key: The key; read from the provider's environment variable when omitted.
        timeout: Seconds to wait for a connection and for each read of the response (a stream
            may run longer in total), or an `aiohttp.ClientTimeout`.
        max_retries: Retries of a failed request, or a `RetryPolicy`.
        stream: Stream responses (the default) or ask for whole responses.
        headers: Extra HTTP headers sent with every request.
        options: Default `ModelOptions`, merged under each request's options.
        context_window: The model's context window in tokens, when you know it.

    Raises:
        ConfigurationError: No API key was given or found in the environment, or an argument
            has the wrong type.
    """

    provider: ClassVar[str] = ""
    """The provider's name, as in `"provider:model"` strings."""
    default_base_url: ClassVar[str] = ""
    """The provider's public API root."""
    base_url_env: ClassVar[tuple[str, ...]] = ()
    """Environment variables that may hold the API root, in order."""
    api_key_env: ClassVar[tuple[str, ...]] = ()
    """Environment variables that may hold the API key, in order."""
    requires_api_key: ClassVar[bool] = True
    """False for servers that take no key (Ollama)."""
    framing: ClassVar[Literal["sse", "ndjson"]] = "sse"
    """How streamed bodies are framed."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | aiohttp.ClientTimeout = DEFAULT_TIMEOUT_S,
        max_retries: int | RetryPolicy = 2,
        stream: bool = True,
        headers: Mapping[str, str] | None = None,
        options: ModelOptions | None = None,
        context_window: int | None = None,
    ) -> None:
        cls = type(self).__name__
        if not isinstance(model, str) or not model:
            raise ConfigurationError(
                f"{cls}(model=...) must be a non-empty model name, got {model!r}"
            )
        self.model = model
        self.name = model
        self.context_window = context_window
        self.streaming = stream
        self.options = options or ModelOptions()
        self.retry = RetryPolicy.coerce(max_retries)
        self._open_pool(timeout)
        self.base_url = (base_url or self._env(self.base_url_env) or self.default_base_url).rstrip(
            "/"
        )
        self.api_key = api_key or self._env(self.api_key_env)
        if self.requires_api_key and not self.api_key:
            names = " or ".join(self.api_key_env) or "the provider's key variable"
            raise ConfigurationError(f"{cls} needs an API key: pass api_key=... or set {names}")
        self.formatter: Formatter[Any] = self._make_formatter()
        self._reader_of = self.formatter
        self._read_whole = _whole_reader(self.formatter)
        self._headers = {
            "Content-Type": "application/json",
            "User-Agent": f"rxagent/{__version__}",
            **self._auth_headers(),
            **(dict(headers) if headers else {}),
        }

    # -- for subclasses ----------------------------------------------------------------------------

    def _make_formatter(self) -> Formatter[Any]:
        raise NotImplementedError

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _url(self, *, stream: bool) -> str:
        raise NotImplementedError

    def _request_headers(self, *, stream: bool) -> Mapping[str, str]:
        return self._headers

    @staticmethod
    def _env(names: Sequence[str]) -> str | None:
        for name in names:
            value = os.environ.get(name)
            if value:
                return value
        return None

    # -- requests ----------------------------------------------------------------------------------

    def request_body(
        self, messages: Sequence[Msg], tools: Sequence[ToolSchema], options: ModelOptions
    ) -> dict[str, Any]:
        """Return the JSON body this model would send for a request (for tests and debugging).

        The body is new for each call, but parts the formatter caches per frozen object (a tool
        schema's `parameters`) may be shared, read-only values: `rxagent.messages.thaw()` the
        body before changing it in place.
        """
        base = self.options
        if options is not None and options is not base and options.model_fields_set:
            # `merged` copies; without fields set on one side the other is the result as it is
            base = base.merged(options) if base.model_fields_set else options
        return self.formatter.format(messages, tools, base, model=self.model, stream=self.streaming)

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSchema], options: ModelOptions
    ) -> AsyncIterator[ModelDelta]:
        """Send the request and stream the response as deltas, retrying before the first one.

        Raises:
            AgentRunError: The typed failure (`RateLimitedError`, `ContextTooLongError`, ...) once
                retries are spent, or at once for a failure that is never retried.
        """
        payload = _encode(self.request_body(messages, tools, options)).encode()
        policy = self.retry
        retries = 0
        started = policy.clock()
        while True:
            content = False
            held: list[ModelDelta] = []
            try:
                async for deltas in self._attempt(payload):
                    for delta in deltas:
                        if content:
                            yield delta
                        elif type(delta) is UsageDelta:
                            held.append(delta)  # not content: held, so a retry stays possible
                        else:
                            content = True
                            yield delta
                            for usage in held:
                                yield usage
                for usage in held if not content else ():
                    yield usage
                if retries:
                    yield trusted(UsageDelta, usage=trusted(Usage, requests=retries))
                return
            except AgentRunError as exc:
                if content or not await policy.wait_to_retry(
                    exc, retries_done=retries, started=started
                ):
                    raise
                retries += 1

    async def complete(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSchema] = (),
        options: ModelOptions | None = None,
    ) -> ModelResponse:
        """Send one request and return the whole response (the stream, drained)."""
        builder = ResponseBuilder()
        async for delta in self.stream(messages, tools, options or ModelOptions()):
            builder.add(delta)
        return builder.response()

    async def _attempt(self, payload: bytes) -> AsyncIterator[list[ModelDelta]]:
        """Send the request once; yield the deltas of the response, a list per event read.

        A list is what one step of the formatter gives (a stream event, or a whole response):
        an event that fails yields nothing, as the deltas one by one would.
        """
        stream = self.streaming
        url = self._url(stream=stream)
        provider = self.provider
        try:
            async with self._session().post(
                url, data=payload, headers=self._request_headers(stream=stream)
            ) as resp:
                status = resp.status
                if status >= 400:
                    body = await resp.content.read(64 * 1024)
                    raise self._redacted(
                        self.formatter.error_from_response(status, body, resp.headers)
                    )
                if not stream:
                    data = json_body(provider, await resp.read(), status)
                    formatter = self.formatter
                    if formatter is not self._reader_of:  # replaced since: look it up again
                        self._reader_of = formatter
                        self._read_whole = _whole_reader(formatter)
                    read = self._read_whole
                    if read is not None:
                        yield read(data)
                    else:
                        yield response_to_deltas(formatter.parse(data))
                    return
                ctype = resp.headers.get("Content-Type", "")
                if (
                    ctype
                    and "event-stream" not in ctype  # the usual one, without the generator below
                    and not any(kind in ctype for kind in _STREAM_TYPES)
                ):
                    body = await resp.content.read(4096)
                    raise malformed(provider, f"expected a stream, got {ctype!r}", body, status)
                decoder = SSEDecoder() if self.framing == "sse" else NDJSONDecoder()
                parser = self.formatter.stream_parser()
                feed = parser.feed
                async for chunk in resp.content.iter_any():
                    for event in decoder.feed(chunk):
                        deltas = feed(event)
                        if deltas:
                            yield deltas
                for event in decoder.close():
                    deltas = feed(event)
                    if deltas:
                        yield deltas
                deltas = parser.close()
                if deltas:
                    yield deltas
        except AgentRunError as exc:  # an in-stream error or a body excerpt may echo the key
            self._redacted(exc)
            raise
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise transport_error(exc, provider, self.timeout, self._redact) from exc


def transport_error(
    exc: TimeoutError | aiohttp.ClientError,
    provider: str,
    timeout: aiohttp.ClientTimeout,
    redact: Callable[[str], str],
) -> AgentRunError:
    """The typed error of a request that got no usable HTTP response.

    A timeout, a refused or dropped connection, or a truncated body is recoverable (the retry
    policy may try again); any other aiohttp failure is not. `redact` cleans what aiohttp says,
    which can quote the request.
    """
    if isinstance(exc, TimeoutError):
        message, recoverable = f"no response within the timeout ({_timeout_text(timeout)})", True
    elif isinstance(exc, aiohttp.ClientConnectionError | aiohttp.ClientPayloadError):
        message = f"the connection failed: {type(exc).__name__}: {redact(str(exc))}"
        recoverable = True
    else:
        message = f"the request failed: {type(exc).__name__}: {excerpt(redact(str(exc)))}"
        recoverable = False
    return provider_error(
        ErrorCode.PROVIDER_ERROR, message, provider=provider, recoverable=recoverable
    )


def _timeout_text(timeout: aiohttp.ClientTimeout) -> str:
    parts = [
        f"{name}={value}s"
        for name in ("total", "connect", "sock_read")
        if (value := getattr(timeout, name)) is not None
    ]
    return ", ".join(parts) or "none"
