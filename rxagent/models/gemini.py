"""The Google Gemini client: `generateContent` on the Gemini Developer API, over aiohttp."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Unpack
from urllib.parse import quote

from rxagent.errors import ConfigurationError
from rxagent.formatters.gemini import CallIds, GeminiFormatter
from rxagent.models._http import HTTPChatModel

if TYPE_CHECKING:
    from rxagent.formatters.base import Formatter
    from rxagent.models._http import HTTPOptions

__all__ = ["DEFAULT_API_VERSION", "GeminiChatModel"]

DEFAULT_API_VERSION: Final = "v1beta"
"""The API version in request paths (`v1beta` has thinking, `parametersJsonSchema` and more)."""

_VERSIONED: Final = re.compile(r"/v\d+(?:alpha|beta)?\d*$")


class GeminiChatModel(HTTPChatModel):
    """Google Gemini through `generateContent` / `streamGenerateContent?alt=sse`.

    Requests go to `{base_url}/{api_version}/models/{model}:streamGenerateContent?alt=sse` (or
    `:generateContent` with `stream=False`), authenticated with the `x-goog-api-key` header.
    See `rxagent.formatters.gemini` for how messages are translated.

    Args:
        model: The model name (`"gemini-2.5-flash"`). A name with a slash (`"models/x"`,
            `"tunedModels/y"`) is used as the resource path as it is.
        api_version: The version path segment (`"v1beta"`).
        call_ids: Which tool-call ids to send (see `GeminiFormatter`): the model's own ids
            only (`"model"`), `"always"` or `"never"`.

    Keyword Args:
        base_url (str | None): The API root, without the version; `GEMINI_BASE_URL` or
            `https://generativelanguage.googleapis.com` by default. A root that already ends in a
            version (`.../v1beta`) is used as it is.
        api_key (str | None): The key; `GEMINI_API_KEY`, then `GOOGLE_API_KEY`, by default.
        timeout (float | aiohttp.ClientTimeout): Seconds to wait for a connection and for each read,
            or an `aiohttp.ClientTimeout`.
        max_retries (int | RetryPolicy): Retries of a failed request, or a `RetryPolicy`.
        stream (bool): Stream responses (`alt=sse`, the default) or ask for whole responses.
        headers (Mapping[str, str] | None): Extra HTTP headers sent with every request.
        options (ModelOptions | None): Default `ModelOptions`, merged under each request's options.
        context_window (int | None): The model's context window in tokens, when you know it.

    Raises:
        ConfigurationError: No API key, or an empty `api_version`.

    Example:
        ```python
        import asyncio

        from rxagent.messages import Msg
        from rxagent.models import GeminiChatModel
        from rxagent.testing.providers import FakeGeminiServer


        async def main() -> str:
            async with FakeGeminiServer(["Hello from Gemini."]) as server:
                async with GeminiChatModel(
                    "gemini-2.5-flash", base_url=server.base_url, api_key="k"
                ) as model:
                    response = await model.complete([Msg.user("hi")])
                assert server.requests[0].path == (
                    "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
                )
                assert server.requests[0].headers["x-goog-api-key"] == "k"
            return response.message.text


        assert asyncio.run(main()) == "Hello from Gemini."
        ```
    """

    provider: ClassVar[str] = "gemini"
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com"
    base_url_env: ClassVar[tuple[str, ...]] = ("GEMINI_BASE_URL",)
    api_key_env: ClassVar[tuple[str, ...]] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    requires_api_key: ClassVar[bool] = True
    framing: ClassVar[Literal["sse", "ndjson"]] = "sse"

    def __init__(
        self,
        model: str,
        *,
        api_version: str = DEFAULT_API_VERSION,
        call_ids: CallIds = "model",
        **common: Unpack[HTTPOptions],
    ) -> None:
        if not isinstance(api_version, str) or not api_version.strip("/"):
            raise ConfigurationError(
                f"GeminiChatModel(api_version=...) must be a version such as 'v1beta', "
                f"got {api_version!r}"
            )
        if call_ids not in ("model", "always", "never"):
            raise ConfigurationError(
                f"GeminiChatModel(call_ids=...) must be 'model', 'always' or 'never', "
                f"got {call_ids!r}"
            )
        self.api_version = api_version.strip("/")
        self.call_ids: CallIds = call_ids
        super().__init__(model, **common)
        resource = self.model if "/" in self.model else f"models/{self.model}"
        root = (
            self.base_url
            if _VERSIONED.search(self.base_url)
            else f"{self.base_url}/{self.api_version}"
        )
        stem = f"{root}/{quote(resource, safe='/')}"
        self._stream_url = f"{stem}:streamGenerateContent?alt=sse"
        self._whole_url = f"{stem}:generateContent"

    def _make_formatter(self) -> Formatter[Any]:
        return GeminiFormatter(call_ids=self.call_ids, provider=self.provider)

    def _auth_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.api_key} if self.api_key else {}

    def _url(self, *, stream: bool) -> str:
        return self._stream_url if stream else self._whole_url
