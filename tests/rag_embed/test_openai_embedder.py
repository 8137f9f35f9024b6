"""OpenAIEmbedder and AzureOpenAIEmbedder against the fake OpenAI server's `/v1/embeddings`."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rxagent.errors import (
    AuthenticationError,
    ConfigurationError,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
)
from rxagent.models.retry import RetryPolicy
from rxagent.rag import AzureOpenAIEmbedder, Embedder, OpenAIEmbedder
from rxagent.testing import RecordingSleep
from rxagent.testing.providers import FakeOpenAIServer, Fault, fake_embedding


def policy(sleeps: RecordingSleep, retries: int = 2) -> RetryPolicy:
    return RetryPolicy(max_retries=retries, sleep=sleeps, random=lambda: 0.5)


def embedder(server: FakeOpenAIServer, **kwargs: Any) -> OpenAIEmbedder:
    return OpenAIEmbedder(base_url=server.base_url, api_key="sk-test-key-123", **kwargs)


# -- requests and answers ------------------------------------------------------------------------


async def test_one_request_carries_the_wire_format_and_vectors_come_back_in_order():
    async with FakeOpenAIServer() as server, embedder(server, dimensions=32) as client:
        vectors = await client.embed(["red apples", "green pears", "red apples"])
    [request] = server.requests
    assert request.path == "/v1/embeddings"
    assert request.headers["Authorization"] == "Bearer sk-test-key-123"
    assert request.body == {
        "model": "text-embedding-3-small",
        "input": ["red apples", "green pears", "red apples"],
        "encoding_format": "float",
        "dimensions": 32,
    }
    assert vectors == [fake_embedding(t, 32) for t in ["red apples", "green pears", "red apples"]]
    assert vectors[0] == vectors[2] != vectors[1]
    assert isinstance(client, Embedder)
    assert (client.name, client.dimensions) == ("text-embedding-3-small", 32)
    assert client.usage.requests == 1
    assert client.usage.input_tokens == 3 * 3  # the fake's estimate: chars // 4 + 1 each


async def test_large_inputs_are_split_into_batches_and_keep_their_order():
    texts = [f"text number {i}" for i in range(10)]
    async with FakeOpenAIServer(embedding_dimensions=16) as server:
        async with embedder(server, model="local-model", batch_size=3, concurrency=2) as client:
            before = client.dimensions  # an unknown model: learnt from the first answer
            vectors = await client.embed(texts)
    assert (before, client.dimensions) == (None, 16)
    assert sorted(len(r.body["input"]) for r in server.requests) == [1, 3, 3, 3]
    assert "dimensions" not in server.requests[0].body
    assert vectors == [fake_embedding(t, 16) for t in texts]
    assert client.usage.requests == 4


async def test_an_empty_list_sends_no_request():
    async with FakeOpenAIServer() as server, embedder(server) as client:
        assert await client.embed([]) == []
    assert server.requests == []


async def test_answers_out_of_order_are_put_back_by_index():
    async def shuffled(request: web.Request) -> web.Response:
        body = await request.json()
        data = [
            {"object": "embedding", "index": i, "embedding": [float(i), 1.0]}
            for i in range(len(body["input"]))
        ]
        return web.json_response({"object": "list", "data": data[::-1], "model": "m"})

    async with serve(shuffled) as url, OpenAIEmbedder("m", base_url=url) as client:
        assert await client.embed(["a", "b", "c"]) == [[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
        assert client.usage.input_tokens == 0  # no usage in the answer: nothing counted
        assert client.api_key is None  # a local server needs no key


async def test_base64_vectors_are_decoded_too():
    import base64
    import struct

    async def b64(request: web.Request) -> web.Response:
        raw = base64.b64encode(struct.pack("<3f", 0.5, -1.0, 2.0)).decode()
        item = {"object": "embedding", "index": 0, "embedding": raw}
        return web.json_response({"object": "list", "data": [item], "model": "m"})

    async with serve(b64) as url, OpenAIEmbedder("m", base_url=url) as client:
        assert await client.embed(["x"]) == [[0.5, -1.0, 2.0]]


# -- failures ------------------------------------------------------------------------------------


async def test_a_rate_limit_is_retried_after_the_servers_wait_then_succeeds():
    sleeps = RecordingSleep()
    server = FakeOpenAIServer(embedding_dimensions=8)
    server.fail(1, Fault(status=429, headers={"retry-after": "3"}))
    server.fail(2, Fault(status=500))
    async with server, embedder(server, max_retries=policy(sleeps)) as client:
        vectors = await client.embed(["retry me"])
    assert vectors == [fake_embedding("retry me", 8)]
    assert sleeps.delays == [3.0, 1.0]  # the server's wait, then the backoff (no jitter)
    assert len(server.requests) == 3
    assert client.usage.requests == 3


async def test_a_dropped_connection_is_retried():
    sleeps = RecordingSleep()
    server = FakeOpenAIServer(embedding_dimensions=8).fail(1, drop_after=0)
    async with server, embedder(server, max_retries=policy(sleeps)) as client:
        assert await client.embed(["x"]) == [fake_embedding("x", 8)]
    assert len(sleeps.delays) == 1


async def test_retries_spent_raise_the_typed_error():
    sleeps = RecordingSleep()
    server = FakeOpenAIServer()
    for n in (1, 2):
        server.fail(n, Fault(status=503, message="overloaded"))
    async with server, embedder(server, max_retries=policy(sleeps, retries=1)) as client:
        with pytest.raises(ProviderError, match="overloaded") as caught:
            await client.embed(["x"])
    assert caught.value.status == 503
    assert caught.value.provider == "openai"
    assert len(server.requests) == 2


async def test_no_retry_starts_past_the_time_budget():
    sleeps = RecordingSleep()
    budget = RetryPolicy(max_retries=3, max_elapsed_s=1.0, sleep=sleeps, random=lambda: 0.5)
    server = FakeOpenAIServer().fail(1, Fault(status=429, headers={"retry-after": "5"}))
    async with server, embedder(server, max_retries=budget) as client:
        with pytest.raises(RateLimitedError):
            await client.embed(["x"])
    assert sleeps.delays == []


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault(status=401, message="bad key sk-test-key-123"), AuthenticationError),
        (Fault(status=429, error_type="insufficient_quota"), RateLimitedError),
        (Fault(status=400, message="too long"), InvalidRequestError),
    ],
)
async def test_failures_that_are_never_retried_raise_at_once(fault: Fault, error: type[Exception]):
    sleeps = RecordingSleep()
    server = FakeOpenAIServer().fail(1, fault)
    async with server, embedder(server, max_retries=policy(sleeps)) as client:
        with pytest.raises(error) as caught:
            await client.embed(["x"])
    assert sleeps.delays == []
    assert len(server.requests) == 1
    assert "sk-test-key-123" not in str(caught.value)  # a key echoed back is redacted


async def test_the_fakes_own_400_for_a_bad_input_is_an_invalid_request():
    async with FakeOpenAIServer() as server, embedder(server) as client:
        with pytest.raises(InvalidRequestError, match="non-empty string"):
            await client.embed(["fine", ""])


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"data": []}, "expected 1 embeddings"),
        ({"data": [{"index": 5, "embedding": [1.0]}]}, "bad or repeated 'index'"),
        ({"data": [{"index": 0, "embedding": "nope!"}]}, "not a list of numbers"),
        ({"data": [{"index": 0, "embedding": [True]}]}, "not a list of numbers"),
        ({"data": [{"index": 0, "embedding": "AAE="}]}, "nor base64"),  # 2 bytes
        ("not json", "not JSON"),
    ],
)
async def test_malformed_answers_are_provider_errors(answer: Any, message: str):
    async def bad(request: web.Request) -> web.Response:
        if isinstance(answer, str):
            return web.Response(text=answer)
        return web.json_response(answer)

    async with serve(bad) as url, OpenAIEmbedder("m", base_url=url, max_retries=0) as client:
        with pytest.raises(ProviderError, match=message):
            await client.embed(["x"])


async def test_vectors_of_another_size_than_asked_are_refused():
    async def wrong(request: web.Request) -> web.Response:
        body = await request.json()
        data = [{"index": i, "embedding": [1.0] * (i + 2)} for i in range(len(body["input"]))]
        return web.json_response({"data": data})

    async with serve(wrong) as url:
        async with OpenAIEmbedder("m", base_url=url, dimensions=2) as client:
            with pytest.raises(ProviderError, match="sizes"):
                await client.embed(["a", "b"])


async def test_a_server_that_is_not_there_is_a_connection_failure():
    with socket_closed() as url:
        client = OpenAIEmbedder("m", base_url=url, max_retries=0)
        with pytest.raises(ProviderError, match="connection failed") as caught:
            await client.embed(["x"])
        assert caught.value.recoverable
        await client.aclose()


async def test_a_slow_server_is_a_timeout():
    server = FakeOpenAIServer().fail(1, first_byte_delay=5)
    async with server, embedder(server, timeout=0.05, max_retries=0) as client:
        with pytest.raises(ProviderError, match="timeout"):
            await client.embed(["x"])


async def test_other_client_errors_are_not_retried(monkeypatch: pytest.MonkeyPatch):
    async with FakeOpenAIServer() as server, embedder(server) as client:

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise aiohttp.InvalidURL("http://bad url sk-test-key-123")

        monkeypatch.setattr(client._session(), "post", broken)
        with pytest.raises(ProviderError, match="request failed") as caught:
            await client.embed(["x"])
    assert not caught.value.recoverable
    assert "sk-test-key-123" not in str(caught.value)


# -- Azure ---------------------------------------------------------------------------------------


async def test_azure_posts_to_the_deployment_with_its_key_and_version():
    async with FakeOpenAIServer(embedding_dimensions=4) as server:
        async with AzureOpenAIEmbedder(
            "embed-prod", base_url=server.endpoint, api_key="azure-key", api_version="2024-06-01"
        ) as client:
            assert await client.embed(["x"]) == [fake_embedding("x", 4)]
    [request] = server.requests
    assert request.path == "/openai/deployments/embed-prod/embeddings"
    assert request.query == {"api-version": "2024-06-01"}
    assert request.headers["api-key"] == "azure-key"
    assert "Authorization" not in request.headers
    assert client.provider == "azure"


async def test_the_fakes_azure_route_refuses_a_request_without_its_key():
    async with FakeOpenAIServer() as server, aiohttp.ClientSession() as session:
        url = f"{server.endpoint}/openai/deployments/d/embeddings?api-version=1"
        async with session.post(url, json={"model": "d", "input": "x"}) as resp:
            assert resp.status == 401
    assert len(server.requests) == 1


def test_azure_needs_an_endpoint_and_a_key(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_ENDPOINT"):
        AzureOpenAIEmbedder("d", api_key="k")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://r.openai.azure.com/")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k2")
    monkeypatch.setenv("OPENAI_API_VERSION", "2025-01-01")
    client = AzureOpenAIEmbedder("d")
    assert (client.base_url, client.api_key, client.api_version) == (
        "https://r.openai.azure.com",
        "k2",
        "2025-01-01",
    )


# -- configuration -------------------------------------------------------------------------------


def test_openai_itself_needs_a_key_from_the_argument_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIEmbedder()
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    client = OpenAIEmbedder("text-embedding-3-large")
    assert client.api_key == "from-env"
    assert client.dimensions == 3072
    assert repr(client) == (
        "OpenAIEmbedder('text-embedding-3-large', base_url='https://api.openai.com/v1')"
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/")
    assert OpenAIEmbedder().base_url == "http://127.0.0.1:11434/v1"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"model": ""}, "model"),
        ({"batch_size": 0}, "batch_size"),
        ({"concurrency": True}, "concurrency"),
        ({"dimensions": 0}, "dimensions"),
        ({"timeout": -1}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
    ],
)
def test_a_bad_argument_names_its_field(kwargs: dict[str, Any], field: str):
    with pytest.raises(ConfigurationError, match=rf"OpenAIEmbedder\({field}=\.\.\.\)"):
        OpenAIEmbedder(api_key="k", **kwargs)


async def test_bad_texts_are_refused_before_any_request():
    client = OpenAIEmbedder(api_key="k", base_url="http://127.0.0.1:9")
    with pytest.raises(ConfigurationError, match=r"embed\(\[text\]\)"):
        await client.embed("one text")
    with pytest.raises(ConfigurationError, match=r"texts\[0\] is a bytes"):
        await client.embed([b"raw"])  # type: ignore[list-item]


def test_a_client_timeout_is_taken_as_it_is():
    timeout = aiohttp.ClientTimeout(total=3)
    assert OpenAIEmbedder(api_key="k", timeout=timeout).timeout is timeout


# -- invariants ----------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(st.text(min_size=1, max_size=12), max_size=12),
    batch_size=st.integers(1, 5),
    concurrency=st.integers(1, 3),
)
def test_batching_never_changes_results_or_order(
    texts: list[str], batch_size: int, concurrency: int
):
    async def run() -> tuple[list[list[float]], int]:
        async with FakeOpenAIServer(embedding_dimensions=12) as server:
            async with embedder(server, batch_size=batch_size, concurrency=concurrency) as c:
                return await c.embed(texts), len(server.requests)

    vectors, requests = asyncio.run(run())
    assert vectors == [fake_embedding(t, 12) for t in texts]
    assert requests == -(-len(texts) // batch_size)


# -- helpers -------------------------------------------------------------------------------------


class serve:
    """A one-route server for `/embeddings` answers the fake server would never give."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler
        self.runner: web.AppRunner | None = None

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/embeddings", self.handler)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"http://127.0.0.1:{port}/v1"

    async def __aexit__(self, *exc: object) -> None:
        assert self.runner is not None
        await self.runner.cleanup()


class socket_closed:
    """A URL on a free port where nothing listens."""

    def __enter__(self) -> str:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    def __exit__(self, *exc: object) -> None:
        return None


def test_the_fake_checks_requests_as_openai_does():
    from rxagent.testing.providers._embeddings import embeddings_problem

    ok = {"model": "m", "input": ["a"]}
    assert embeddings_problem(ok) is None
    assert embeddings_problem({**ok, "input": "single"}) is None
    for body, param in [
        ([], "body"),
        ({"input": ["a"]}, "model"),
        ({**ok, "input": []}, "input"),
        ({**ok, "input": ["a"] * 2049}, "input"),
        ({**ok, "input": [1, 2]}, "input"),
        ({**ok, "dimensions": 0}, "dimensions"),
        ({**ok, "encoding_format": "int8"}, "encoding_format"),
    ]:
        problem = embeddings_problem(body)
        assert problem is not None, body
        assert problem[0] == param, (body, problem)
    with pytest.raises(ValueError, match="embedding_dimensions"):
        FakeOpenAIServer(embedding_dimensions=0)
    # in one dimension every word lands on the same number: +1 and -1 cancel out, yet the
    # vector stays a unit vector
    signs = {word: fake_embedding(word, 1)[0] for word in "abcdefghijklmnop"}
    plus = next(w for w, sign in signs.items() if sign > 0)
    minus = next(w for w, sign in signs.items() if sign < 0)
    assert fake_embedding(f"{plus} {minus}", 1) == [1.0]
    assert fake_embedding("!!!", 3) in (
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [-1.0, 0.0, 0.0],
        [0.0, -1.0, 0.0],
        [0.0, 0.0, -1.0],
    )
