"""`OpenAIEmbedder`: the `/v1/embeddings` wire format over aiohttp, with the chat clients' retries.

OpenAI, Azure OpenAI (`AzureOpenAIEmbedder`) and the servers that copy OpenAI's API (Ollama's
`/v1`, vLLM, Hugging Face TEI, LiteLLM) all take the same request. Errors are classified as the
chat client classifies them (`OpenAIFormatter.error_from_response`): a 429 is a
`RateLimitedError`, a 5xx a `ProviderError`, both retried with backoff and jitter under a
`RetryPolicy`, honouring `retry-after`.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any, ClassVar, Final

import aiohttp

from rxagent._version import __version__
from rxagent.errors import AgentRunError, ConfigurationError
from rxagent.formatters.base import json_body
from rxagent.formatters.openai import OpenAIFormatter
from rxagent.models._http import DEFAULT_TIMEOUT_S, PooledHTTPClient, transport_error
from rxagent.models.base import Usage
from rxagent.models.openai import DEFAULT_AZURE_API_VERSION
from rxagent.models.retry import RetryPolicy
from rxagent.rag._embedding import text_list
from rxagent.rag._wire import embeddings_request, read_embeddings

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["KNOWN_DIMENSIONS", "AzureOpenAIEmbedder", "OpenAIEmbedder"]

KNOWN_DIMENSIONS: Final[Mapping[str, int]] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
"""The vector size of OpenAI's models when no `dimensions` is asked for."""

_OPENAI_URL: Final = "https://api.openai.com/v1"


class OpenAIEmbedder(PooledHTTPClient):
    """Embeddings from any server with OpenAI's `POST {base_url}/embeddings`.

    Texts are sent in batches of `batch_size` (up to `concurrency` requests at once) with
    `encoding_format="float"`; the vectors come back in input order (by each item's `index`).
    A failed request is retried like a chat request (see `RetryPolicy`), and a failure that is
    not retried, or still fails, raises the typed error (`RateLimitedError`,
    `AuthenticationError`, `InvalidRequestError`, `ProviderError`, ...). Tokens used are added
    up in `usage`.

    Args:
        model: The embedding model (`"text-embedding-3-small"`; `"nomic-embed-text"` on Ollama).
        base_url: The API root, `https://api.openai.com/v1` by default or `OPENAI_BASE_URL`
            (`http://localhost:11434/v1` for Ollama).
        api_key: The key, or `OPENAI_API_KEY`; sent as `Authorization: Bearer ...`. Needed for
            OpenAI itself; local servers may do without.
        dimensions: Ask for vectors of this size (text-embedding-3 models shorten theirs);
            None takes the model's own size.
        batch_size: Texts per request (OpenAI takes up to 2048, and 300,000 tokens in all).
        concurrency: Requests in flight at once for one `embed` call.
        timeout: Seconds to wait for a connection and for each read, or an
            `aiohttp.ClientTimeout`.
        max_retries: Retries of a failed request, or a `RetryPolicy`.
        headers: Extra HTTP headers for every request.

    Raises:
        ConfigurationError: A bad argument (the message names it), or no API key for OpenAI.

    Example:
        ```python
        import asyncio

        from rxagent.rag import OpenAIEmbedder
        from rxagent.testing.providers import FakeOpenAIServer


        async def main() -> None:
            async with FakeOpenAIServer() as server:
                embedder = OpenAIEmbedder(base_url=server.base_url, api_key="k", dimensions=64)
                async with embedder:
                    vectors = await embedder.embed(["first text", "second text"])
            assert [len(v) for v in vectors] == [64, 64]
            assert server.requests[0].body["input"] == ["first text", "second text"]
            assert embedder.usage.requests == 1


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "openai"
    """The provider named in errors."""

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 512,
        concurrency: int = 4,
        timeout: float | aiohttp.ClientTimeout = DEFAULT_TIMEOUT_S,
        max_retries: int | RetryPolicy = 2,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        cls = type(self).__name__
        if not isinstance(model, str) or not model:
            raise ConfigurationError(
                f"{cls}(model=...) must be a non-empty model name, got {model!r}"
            )
        for field, value in (("batch_size", batch_size), ("concurrency", concurrency)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"{cls}({field}=...) must be an int >= 1, got {value!r}")
        if dimensions is not None and (
            isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1
        ):
            raise ConfigurationError(
                f"{cls}(dimensions=...) must be an int >= 1 or None, got {dimensions!r}"
            )
        self._open_pool(timeout)
        try:
            self.retry = RetryPolicy.coerce(max_retries)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{cls}(max_retries=...): {exc}") from None
        self.model = model
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.requested_dimensions = dimensions
        self._dimensions = dimensions or KNOWN_DIMENSIONS.get(model)
        self._learnt: int | None = None
        self.base_url, self.api_key = self._endpoint(base_url, api_key)
        self.usage = Usage()
        """Tokens and requests used so far by this embedder (retries count as requests)."""
        self._headers = {
            "Content-Type": "application/json",
            "User-Agent": f"rxagent/{__version__}",
            **self._auth_headers(),
            **(dict(headers) if headers else {}),
        }
        self._errors = OpenAIFormatter(provider=self.provider)

    # -- what a subclass changes -------------------------------------------------------------------

    def _endpoint(self, base_url: str | None, api_key: str | None) -> tuple[str, str | None]:
        root = (base_url or os.environ.get("OPENAI_BASE_URL") or _OPENAI_URL).rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None and root == _OPENAI_URL:
            raise ConfigurationError(
                f"{type(self).__name__} needs an API key for OpenAI: pass api_key=... or set "
                "OPENAI_API_KEY (a local server at base_url=... may need none)"
            )
        return root, key

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _url(self) -> str:
        return f"{self.base_url}/embeddings"

    # -- the Embedder protocol ---------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The model's name, as sent in requests."""
        return self.model

    @property
    def dimensions(self) -> int | None:
        """The vectors' size: the one asked for, else the one of the answers so far.

        Before the first answer it is the usual size of OpenAI's models (1536 for
        `text-embedding-3-small`) and None for another model.
        """
        return self._dimensions

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order; an empty list sends no request.

        Raises:
            ConfigurationError: `texts` is a single string or holds something else than strings.
            AgentRunError: The typed failure of a request, once retries are spent.
        """
        items = text_list(type(self).__name__, texts)
        if not items:
            return []
        size = self.batch_size
        batches = [items[i : i + size] for i in range(0, len(items), size)]
        if len(batches) == 1:
            return await self._embed_batch(batches[0])
        gate = asyncio.Semaphore(self.concurrency)

        async def one(batch: list[str]) -> list[list[float]]:
            async with gate:
                return await self._embed_batch(batch)

        results = await asyncio.gather(*(one(batch) for batch in batches))
        return [vector for batch in results for vector in batch]

    # -- requests ----------------------------------------------------------------------------------

    def request_body(self, texts: Sequence[str]) -> dict[str, Any]:
        """The JSON body sent for one batch (for tests and debugging)."""
        return embeddings_request(self.model, texts, self.requested_dimensions)

    async def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        payload = json.dumps(self.request_body(texts), ensure_ascii=False).encode()
        policy = self.retry
        retries = 0
        started = policy.clock()
        while True:
            try:
                data = await self._post(payload)
                # the size asked for, or else the one of earlier answers, is a promise; a known
                # model's usual size is only a guess (a server may serve another model by its name)
                expected = self.requested_dimensions or self._learnt
                vectors, tokens = read_embeddings(self.provider, data, len(texts), expected)
            except AgentRunError as exc:
                if not await policy.wait_to_retry(exc, retries_done=retries, started=started):
                    raise
                retries += 1
                continue
            self._dimensions = self._learnt = len(vectors[0])
            self.usage = self.usage + Usage(input_tokens=tokens, requests=retries + 1)
            return vectors

    async def _post(self, payload: bytes) -> Any:
        provider = self.provider
        try:
            async with self._session().post(
                self._url(), data=payload, headers=self._headers
            ) as resp:
                body = await resp.read()
                if resp.status >= 400:
                    raise self._redacted(
                        self._errors.error_from_response(resp.status, body, resp.headers)
                    )
                return json_body(provider, body, resp.status)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise transport_error(exc, provider, self.timeout, self._redact) from exc


class AzureOpenAIEmbedder(OpenAIEmbedder):
    """Azure OpenAI: a deployment's embeddings, authenticated with the `api-key` header.

    Requests go to `{endpoint}/openai/deployments/{deployment}/embeddings?api-version=...`.

    Args:
        deployment: The deployment name (it selects the model).
        base_url: The resource endpoint (`https://<resource>.openai.azure.com`), or
            `AZURE_OPENAI_ENDPOINT`.
        api_key: The key, or `AZURE_OPENAI_API_KEY`.
        api_version: The API version; `OPENAI_API_VERSION`, else `"2024-10-21"`.
        **kwargs: The other arguments of `OpenAIEmbedder` (`dimensions`, `batch_size`, ...).

    Raises:
        ConfigurationError: No endpoint or no key given or found.

    Example:
        ```python
        import asyncio

        from rxagent.rag import AzureOpenAIEmbedder
        from rxagent.testing.providers import FakeOpenAIServer


        async def main() -> None:
            async with FakeOpenAIServer(embedding_dimensions=8) as server:
                async with AzureOpenAIEmbedder(
                    "embed-prod", base_url=server.endpoint, api_key="k"
                ) as embedder:
                    (vector,) = await embedder.embed(["hello"])
            assert len(vector) == 8
            assert server.requests[0].path == "/openai/deployments/embed-prod/embeddings"


        asyncio.run(main())
        ```
    """

    provider: ClassVar[str] = "azure"

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
            api_version or os.environ.get("OPENAI_API_VERSION") or DEFAULT_AZURE_API_VERSION
        )
        super().__init__(deployment, base_url=base_url, api_key=api_key, **kwargs)

    def _endpoint(self, base_url: str | None, api_key: str | None) -> tuple[str, str | None]:
        root = base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
        key = api_key or os.environ.get("AZURE_OPENAI_API_KEY")
        if not root or not key:
            raise ConfigurationError(
                "AzureOpenAIEmbedder needs an endpoint and a key: pass base_url=... and "
                "api_key=..., or set AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY"
            )
        return root.rstrip("/"), key

    def _auth_headers(self) -> dict[str, str]:
        return {"api-key": self.api_key or ""}

    def _url(self) -> str:
        return (
            f"{self.base_url}/openai/deployments/{self.model}/embeddings"
            f"?api-version={self.api_version}"
        )
