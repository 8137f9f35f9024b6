"""The DashScope (Alibaba Cloud Model Studio, Qwen) native API client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Unpack

from rxagent.formatters.dashscope import DashScopeFormatter, is_multimodal_model
from rxagent.models._http import HTTPChatModel

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rxagent.models._http import HTTPOptions

__all__ = ["INTL_BASE_URL", "DashScopeChatModel"]

INTL_BASE_URL: Final = "https://dashscope-intl.aliyuncs.com"
"""The international (Singapore) endpoint; pass it as `base_url` for keys from that region."""

_TEXT_PATH: Final = "/services/aigc/text-generation/generation"
_MULTIMODAL_PATH: Final = "/services/aigc/multimodal-generation/generation"


class DashScopeChatModel(HTTPChatModel):
    """Qwen models through DashScope's native generation API.

    Text models post to `{base_url}/api/v1/services/aigc/text-generation/generation`; Qwen-VL
    models (a name with `-vl`, or `qvq...`), or any model with `multimodal=True`, post to
    `.../multimodal-generation/generation`, where user messages may carry images. Streaming
    sends `X-DashScope-SSE: enable` and asks for incremental output. Thinking models (Qwen3 with
    `ModelOptions(extra={"enable_thinking": True})`, QwQ) stream `reasoning_content` as thinking.

    Args:
        model: The DashScope model name (`"qwen-plus"`, `"qwen3-max"`, `"qwen-vl-max"`).
        multimodal: Use the multimodal endpoint and content form; by default decided by the
            model's name (see `is_multimodal_model`).

    Keyword Args:
        base_url (str | None): The API host, `https://dashscope.aliyuncs.com` by default (or
            `DASHSCOPE_BASE_URL`); `INTL_BASE_URL` for the international region. A URL ending in
            `/api/v1` (as the SDK's `dashscope.base_http_api_url`) is accepted too.
        api_key (str | None): The key; `DASHSCOPE_API_KEY` when omitted.
        timeout (float | aiohttp.ClientTimeout): Seconds to wait for a connection and for each read,
            or an `aiohttp.ClientTimeout`.
        max_retries (int | RetryPolicy): Retries of a failed request, or a `RetryPolicy`.
        stream (bool): Stream responses (the default) or ask for whole responses.
        headers (Mapping[str, str] | None): Extra HTTP headers (for example
            `X-DashScope-WorkSpace`).
        options (ModelOptions | None): Default `ModelOptions`, merged under each request's options.
        context_window (int | None): The model's context window in tokens, when you know it.

    Raises:
        ConfigurationError: No API key was given or found, or an argument has the wrong type.

    Example:
        ```python
        import asyncio

        from rxagent.messages import ImageBlock, Msg, TextBlock
        from rxagent.models import DashScopeChatModel
        from rxagent.testing.providers import FakeDashScopeServer


        async def main() -> None:
            async with FakeDashScopeServer(["A cat."]) as server:
                model = DashScopeChatModel("qwen-vl-max", base_url=server.base_url, api_key="k")
                async with model:
                    photo = ImageBlock(url="https://example.com/cat.png")
                    reply = await model.complete([Msg.user([photo, TextBlock(text="What?")])])
            assert reply.message.text == "A cat."
            assert server.requests[0].path.endswith("/multimodal-generation/generation")


        asyncio.run(main())
        ```
    """

    provider = "dashscope"
    default_base_url = "https://dashscope.aliyuncs.com"
    base_url_env = ("DASHSCOPE_BASE_URL",)
    api_key_env = ("DASHSCOPE_API_KEY",)
    framing = "sse"

    def __init__(
        self,
        model: str,
        *,
        multimodal: bool | None = None,
        **common: Unpack[HTTPOptions],
    ) -> None:
        if multimodal is None:
            multimodal = isinstance(model, str) and is_multimodal_model(model)
        self.multimodal = bool(multimodal)
        super().__init__(model, **common)
        root = self.base_url if self.base_url.endswith("/api/v1") else self.base_url + "/api/v1"
        self.endpoint = root + (_MULTIMODAL_PATH if self.multimodal else _TEXT_PATH)
        """The URL requests are posted to."""
        self._stream_headers = {
            **self._headers,
            "Accept": "text/event-stream",
            "X-DashScope-SSE": "enable",
        }

    def _make_formatter(self) -> DashScopeFormatter:
        return DashScopeFormatter(multimodal=self.multimodal)

    def _url(self, *, stream: bool) -> str:
        return self.endpoint

    def _request_headers(self, *, stream: bool) -> Mapping[str, str]:
        return self._stream_headers if stream else self._headers
