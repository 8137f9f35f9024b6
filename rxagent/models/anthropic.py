"""The Anthropic Messages API client: `POST {base}/v1/messages`, streamed over SSE."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Final, Literal, Unpack

from rxagent.errors import ConfigurationError
from rxagent.formatters.anthropic import DEFAULT_API_VERSION, DEFAULT_MAX_TOKENS, AnthropicFormatter
from rxagent.models._http import HTTPChatModel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.models._http import HTTPOptions

__all__ = ["DEFAULT_ANTHROPIC_VERSION", "AnthropicChatModel"]

DEFAULT_ANTHROPIC_VERSION: Final = DEFAULT_API_VERSION
"""The `anthropic-version` header sent by default."""


class AnthropicChatModel(HTTPChatModel):
    """Claude models through Anthropic's Messages API.

    Requests go to `{base_url}/v1/messages` with the `x-api-key` and `anthropic-version` headers
    (and `anthropic-beta` when `betas` are given). Streaming responses are read as they arrive.
    See `AnthropicFormatter` for how messages and options are translated.

    Args:
        model: The model name, such as `"claude-sonnet-5-5"`.
        max_tokens: The `max_tokens` sent when `ModelOptions.max_output_tokens` is unset
            (Anthropic requires one).
        anthropic_version: The `anthropic-version` header. From `"2026-10-21"` on, Anthropic
            refuses `temperature`, and so does the formatter.
        betas: Beta features for the `anthropic-beta` header (joined with commas).

    Keyword Args:
        base_url (str | None): The API root without `/v1` (default `https://api.anthropic.com`, or
            `ANTHROPIC_BASE_URL`).
        api_key (str | None): The key; `ANTHROPIC_API_KEY` when omitted.
        timeout (float | aiohttp.ClientTimeout): Seconds to wait for a connection and for each read,
            or an `aiohttp.ClientTimeout`.
        max_retries (int | RetryPolicy): Retries of a failed request (429, 5xx, 529 overloaded,
            dropped connections), or a `RetryPolicy`.
        stream (bool): Stream responses (the default) or ask for whole ones.
        headers (Mapping[str, str] | None): Extra HTTP headers sent with every request.
        options (ModelOptions | None): Default `ModelOptions`, merged under each request's options.
        context_window (int | None): The model's context window in tokens, when you know it.

    Raises:
        ConfigurationError: No API key was given or found, or an argument has the wrong type.

    Example:
        ```python
        import asyncio

        from rxagent.messages import Msg
        from rxagent.models import AnthropicChatModel
        from rxagent.testing.providers import FakeAnthropicServer


        async def main() -> None:
            async with FakeAnthropicServer(["Hello!"]) as server:
                async with AnthropicChatModel(
                    "claude-sonnet-5-5", base_url=server.base_url, api_key="k"
                ) as model:
                    reply = await model.complete([Msg.user("Hi")])
            assert reply.message.text == "Hello!" and reply.finish_reason == "stop"
            sent = server.requests[0]
            assert sent.path == "/v1/messages" and sent.headers["x-api-key"] == "k"
            assert sent.body["max_tokens"] == 4096 and sent.body["stream"] is True


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "anthropic"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    base_url_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_BASE_URL",)
    api_key_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY",)
    requires_api_key: ClassVar[bool] = True
    framing: ClassVar[Literal["sse", "ndjson"]] = "sse"

    def __init__(
        self,
        model: str,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        anthropic_version: str = DEFAULT_ANTHROPIC_VERSION,
        betas: str | Sequence[str] | None = None,
        **common: Unpack[HTTPOptions],
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise ConfigurationError(
                f"AnthropicChatModel(max_tokens=...) must be an int >= 0, got {max_tokens!r}"
            )
        if not isinstance(anthropic_version, str) or not anthropic_version:
            raise ConfigurationError(
                "AnthropicChatModel(anthropic_version=...) must be a version string such as "
                f"'2023-06-01', got {anthropic_version!r}"
            )
        self.max_tokens = max_tokens
        self.anthropic_version = anthropic_version
        self.betas: tuple[str, ...] = (betas,) if isinstance(betas, str) else tuple(betas or ())
        super().__init__(model, **common)
        self._url_value = f"{self.base_url}/v1/messages"

    def _make_formatter(self) -> AnthropicFormatter:
        return AnthropicFormatter(max_tokens=self.max_tokens, api_version=self.anthropic_version)

    def _auth_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": self.anthropic_version}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        if self.betas:
            headers["anthropic-beta"] = ",".join(self.betas)
        return headers

    def _url(self, *, stream: bool) -> str:
        return self._url_value
