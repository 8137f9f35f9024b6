"""Clients for OpenAI Chat Completions: OpenAI itself, compatible servers, and Azure OpenAI.

`OpenAIChatModel` posts to `{base_url}/chat/completions` (OpenAI, DeepSeek, vLLM, Ollama's `/v1`,
any compatible server); `AzureOpenAIChatModel` posts to an Azure OpenAI deployment. Both stream
Server-Sent Events through `OpenAIFormatter`, share one pooled aiohttp session per event loop and
retry like every `HTTPChatModel`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, Unpack
from urllib.parse import quote

from rxagent.errors import ConfigurationError
from rxagent.formatters.openai import OpenAIFormatter
from rxagent.models._http import HTTPChatModel

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rxagent.formatters.base import Formatter
    from rxagent.models._http import HTTPOptions
    from rxagent.models.base import Capabilities

__all__ = ["DEFAULT_AZURE_API_VERSION", "AzureOpenAIChatModel", "OpenAIChatModel"]

DEFAULT_AZURE_API_VERSION = "2024-10-21"
"""The Azure OpenAI API version used when neither `api_version` nor `OPENAI_API_VERSION` is set."""


class OpenAIChatModel(HTTPChatModel):
    """OpenAI Chat Completions (`POST {base_url}/chat/completions`), and compatible servers.

    Args:
        model: The model name (`"gpt-4o-mini"`).
        organization: Sent as `OpenAI-Organization` (default: `OPENAI_ORG_ID`).
        project: Sent as `OpenAI-Project` (default: `OPENAI_PROJECT_ID`).
        system_role: `"developer"` sends system messages with the developer role (o-series).
        reasoning_content: Send thinking blocks back as `reasoning_content` (DeepSeek).
        max_tokens_field: `"max_completion_tokens"` (default) or `"max_tokens"` for servers
            that only know the older name.
        capabilities: What the server supports, when it differs from OpenAI: a `Capabilities`,
            or a mapping of the fields that differ (`{"supports_json_schema": False}` for a
            server without the `json_schema` response format). It decides the structured-output
            strategy `"auto"` picks (see `OpenAIFormatter`).

    Keyword Args:
        base_url (str | None): The API root, `https://api.openai.com/v1` by default or
            `OPENAI_BASE_URL`.
        api_key (str | None): The key, or `OPENAI_API_KEY`; sent as `Authorization: Bearer ...`.
        timeout (float | aiohttp.ClientTimeout): Seconds to wait for a connection and for each read,
            or an `aiohttp.ClientTimeout`.
        max_retries (int | RetryPolicy): Retries of a failed request, or a `RetryPolicy`.
        stream (bool): Stream responses (the default) or ask for whole ones.
        headers (Mapping[str, str] | None): Extra HTTP headers for every request.
        options (ModelOptions | None): Default `ModelOptions`, merged under each request's options.
        context_window (int | None): The model's context window in tokens, when you know it.

    Raises:
        ConfigurationError: No API key given or found, or a bad argument.

    Example:
        ```python
        import asyncio

        from rxagent import Msg
        from rxagent.models import OpenAIChatModel
        from rxagent.testing.providers import FakeOpenAIServer


        async def main() -> None:
            async with FakeOpenAIServer(["Hello!"]) as server:
                model = OpenAIChatModel("gpt-4o-mini", base_url=server.base_url, api_key="k")
                async with model:
                    reply = await model.complete([Msg.user("Hi")])
            assert reply.message.text == "Hello!" and reply.finish_reason == "stop"
            assert server.requests[0].headers["Authorization"] == "Bearer k"


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "openai"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    base_url_env: ClassVar[tuple[str, ...]] = ("OPENAI_BASE_URL",)
    api_key_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)

    def __init__(
        self,
        model: str,
        *,
        organization: str | None = None,
        project: str | None = None,
        system_role: Literal["system", "developer"] = "system",
        reasoning_content: bool = False,
        max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens",
        capabilities: Capabilities | Mapping[str, object] | None = None,
        **common: Unpack[HTTPOptions],
    ) -> None:
        self.organization = organization or self._env(("OPENAI_ORG_ID",))
        self.project = project or self._env(("OPENAI_PROJECT_ID",))
        self._formatter_options: dict[str, Any] = {
            "system_role": system_role,
            "reasoning_content": reasoning_content,
            "max_tokens_field": max_tokens_field,
            "capabilities": capabilities,
        }
        super().__init__(model, **common)
        self._chat_url = f"{self.base_url}/chat/completions"

    def _make_formatter(self) -> Formatter[Any]:
        try:
            return OpenAIFormatter(provider=self.provider, **self._formatter_options)
        except ValueError as exc:
            raise ConfigurationError(f"{type(self).__name__}: {exc}") from None

    def _auth_headers(self) -> dict[str, str]:
        headers = super()._auth_headers()
        if self.organization:
            headers["OpenAI-Organization"] = self.organization
        if self.project:
            headers["OpenAI-Project"] = self.project
        return headers

    def _url(self, *, stream: bool) -> str:
        return self._chat_url


class AzureOpenAIChatModel(OpenAIChatModel):
    """Azure OpenAI: a deployment's chat completions, authenticated with the `api-key` header.

    Requests go to `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...`.
    The body is the same as OpenAI's (the deployment name is sent as `model`).

    Args:
        deployment: The deployment name (it selects the model).
        api_version: The API version; `OPENAI_API_VERSION`, else `"2024-10-21"`.
        **kwargs: The other arguments of `OpenAIChatModel` (`timeout`, `max_retries`, ...).

    Keyword Args:
        base_url (str | None): The resource endpoint (`https://<resource>.openai.azure.com`), or
            `AZURE_OPENAI_ENDPOINT`.
        api_key (str | None): The key, or `AZURE_OPENAI_API_KEY`; sent as `api-key: ...`.

    Raises:
        ConfigurationError: No endpoint or no key given or found.

    Example:
        ```python
        import asyncio

        from rxagent import Msg
        from rxagent.models import AzureOpenAIChatModel
        from rxagent.testing.providers import FakeOpenAIServer


        async def main() -> None:
            async with FakeOpenAIServer(["Hi from Azure"]) as server:
                model = AzureOpenAIChatModel("my-gpt4o", base_url=server.endpoint, api_key="k")
                async with model:
                    reply = await model.complete([Msg.user("Hi")])
            assert reply.message.text == "Hi from Azure"
            request = server.requests[0]
            assert request.path == "/openai/deployments/my-gpt4o/chat/completions"
            assert request.query["api-version"] == "2024-10-21"
            assert request.headers["api-key"] == "k"


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "azure"
    default_base_url: ClassVar[str] = ""
    base_url_env: ClassVar[tuple[str, ...]] = ("AZURE_OPENAI_ENDPOINT",)
    api_key_env: ClassVar[tuple[str, ...]] = ("AZURE_OPENAI_API_KEY",)

    def __init__(
        self,
        deployment: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_version: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.api_version = (
            api_version or self._env(("OPENAI_API_VERSION",)) or DEFAULT_AZURE_API_VERSION
        )
        super().__init__(deployment, base_url=base_url, api_key=api_key, **kwargs)
        if not self.base_url:
            raise ConfigurationError(
                "AzureOpenAIChatModel needs the resource endpoint: pass "
                "base_url='https://<resource>.openai.azure.com' or set AZURE_OPENAI_ENDPOINT"
            )
        self.deployment = deployment
        self._chat_url = (
            f"{self.base_url}/openai/deployments/{quote(deployment, safe='')}/chat/completions"
            f"?api-version={quote(self.api_version, safe='')}"
        )

    def _auth_headers(self) -> dict[str, str]:
        return {"api-key": self.api_key} if self.api_key else {}
