"""The Ollama client: a `ChatModel` over Ollama's native `POST /api/chat` (NDJSON streams).

The translation lives in `rxagent.formatters.ollama`; this module adds the URL, the host rules
of `OLLAMA_HOST` and the Ollama-only request fields (`think`, `keep_alive`).
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Unpack

from rxagent.errors import ConfigurationError
from rxagent.formatters.ollama import OllamaFormatter
from rxagent.models._http import HTTPChatModel

if TYPE_CHECKING:
    from rxagent.formatters.base import Formatter
    from rxagent.models._http import HTTPOptions

__all__ = ["DEFAULT_OLLAMA_PORT", "OllamaChatModel", "normalize_ollama_host"]

DEFAULT_OLLAMA_PORT: Final = 11434
"""The port Ollama listens on by default."""

_ANY_ADDRESS: Final = {"0.0.0.0": "127.0.0.1", "::": "::1"}


def normalize_ollama_host(host: str | None) -> str:
    """Return an API root URL for an `OLLAMA_HOST`-style value, as Ollama's own clients read it.

    An empty value is `localhost`. The scheme defaults to `http`; the port to 11434 without a
    scheme, else to the scheme's port (80, 443). A bind-all address (`0.0.0.0`, `::`), which is
    how a server is often told to listen, means this machine: `127.0.0.1` (or `::1`). A bare
    IPv6 address gets its brackets. A path is kept, without trailing slashes.

    Example:
        ```python
        from rxagent.models.ollama import normalize_ollama_host

        assert normalize_ollama_host(None) == "http://localhost:11434"
        assert normalize_ollama_host("0.0.0.0") == "http://127.0.0.1:11434"
        assert normalize_ollama_host("gpu-box:8080") == "http://gpu-box:8080"
        assert normalize_ollama_host("https://ollama.example.com/") == "https://ollama.example.com:443"
        assert normalize_ollama_host("[::]:1234") == "http://[::1]:1234"
        ```
    """
    text = (host or "").strip()
    scheme, sep, rest = text.partition("://")
    port = DEFAULT_OLLAMA_PORT
    if not sep:
        scheme, rest = "http", text
    elif scheme == "http":
        port = 80
    elif scheme == "https":
        port = 443
    if ":" in rest and "/" not in rest and not rest.startswith("["):
        try:
            rest = f"[{ipaddress.IPv6Address(rest)}]"
        except ValueError:
            pass  # host:port
    try:
        split = urllib.parse.urlsplit(f"{scheme}://{rest}")
        name = split.hostname or "localhost"
        port = split.port or port
    except ValueError as exc:
        raise ConfigurationError(
            f"cannot read the Ollama host {host!r} ({exc}); use a form like "
            "'http://127.0.0.1:11434' or 'host:port'"
        ) from None
    name = _ANY_ADDRESS.get(name, name)
    try:
        if ipaddress.ip_address(name).version == 6:
            name = f"[{name}]"
    except ValueError:
        pass  # a host name
    path = split.path.strip("/")
    root = f"{scheme}://{name}:{port}"
    return f"{root}/{path}" if path else root


class OllamaChatModel(HTTPChatModel):
    """A model served by Ollama, through its native `/api/chat` endpoint.

    No API key is needed. Give `api_key` (or set `OLLAMA_API_KEY`, as the official SDK reads it)
    for Ollama's cloud or an authenticating proxy: it is sent as `Authorization: Bearer ...`.

    Args:
        model: The Ollama model name (`"llama3.2"`, `"qwen3:8b"`).
        keep_alive: How long the server keeps the model loaded after a request (seconds, or a
            duration such as `"10m"`; `0` unloads it at once). None: the server's default.
        think: Ask a thinking model to think (True/False, or a level such as `"high"` for models
            that take one). None: the model's default.

    Keyword Args:
        base_url (str | None): The server; `OLLAMA_HOST` or `http://localhost:11434` by default.
            `host:port` and bare hosts are accepted (see `normalize_ollama_host`).
        api_key (str | None): An optional bearer token.
        timeout (float | aiohttp.ClientTimeout): Seconds to wait for a connection and for each read
            (a first load of a large model can take a while), or an `aiohttp.ClientTimeout`.
        max_retries (int | RetryPolicy): Retries of a failed request, or a `RetryPolicy`.
        stream (bool): Stream NDJSON responses (the default) or ask for whole ones.
        headers (Mapping[str, str] | None): Extra HTTP headers.
        options (ModelOptions | None): Default `ModelOptions` for every request.
        context_window (int | None): The model's context window in tokens, when you know it
            (Ollama's `num_ctx`).

    Raises:
        ConfigurationError: A bad argument or an unreadable host.

    Example:
        ```python
        import asyncio

        from rxagent.messages import Msg
        from rxagent.models import OllamaChatModel
        from rxagent.testing.providers import FakeOllamaServer


        async def main() -> None:
            async with FakeOllamaServer(["Hi there!"]) as server:
                async with OllamaChatModel("llama3.2", base_url=server.base_url) as model:
                    reply = await model.complete([Msg.user("Hello")])
            assert reply.message.text == "Hi there!" and reply.finish_reason == "stop"
            assert server.requests[0].path == "/api/chat"


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "ollama"
    default_base_url: ClassVar[str] = f"http://localhost:{DEFAULT_OLLAMA_PORT}"
    base_url_env: ClassVar[tuple[str, ...]] = ("OLLAMA_HOST",)
    api_key_env: ClassVar[tuple[str, ...]] = ("OLLAMA_API_KEY",)
    requires_api_key: ClassVar[bool] = False
    framing: ClassVar[Literal["sse", "ndjson"]] = "ndjson"

    def __init__(
        self,
        model: str,
        *,
        keep_alive: float | str | None = None,
        think: bool | str | None = None,
        **common: Unpack[HTTPOptions],
    ) -> None:
        if keep_alive is not None and (
            isinstance(keep_alive, bool) or not isinstance(keep_alive, int | float | str)
        ):
            raise ConfigurationError(
                f"OllamaChatModel(keep_alive=...) takes seconds or a duration like '10m', "
                f"got {keep_alive!r}"
            )
        if think is not None and not isinstance(think, bool | str):
            raise ConfigurationError(
                f"OllamaChatModel(think=...) takes True/False or a level like 'high', got {think!r}"
            )
        self.keep_alive = keep_alive
        self.think = think
        super().__init__(model, **common)
        self.base_url = normalize_ollama_host(self.base_url)

    def _make_formatter(self) -> Formatter[Any]:
        return OllamaFormatter(think=self.think, keep_alive=self.keep_alive)

    def _url(self, *, stream: bool) -> str:
        return f"{self.base_url}/api/chat"
