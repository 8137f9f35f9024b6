"""Conformance of the fake `/v1/embeddings` with the official `openai` SDK, both ways: the SDK
reads the fake's answers (floats, base64, errors, Azure), and our request bodies validate
against the SDK's request type."""

from __future__ import annotations

import base64
import struct
from typing import Any

import pytest
from pydantic import ConfigDict, TypeAdapter

from rxagent.rag import OpenAIEmbedder
from rxagent.testing.providers import FakeOpenAIServer, Fault, fake_embedding

pytest.importorskip("openai")

import openai
from openai.types import CreateEmbeddingResponse, EmbeddingCreateParams

# wrapped in a list: a TypedDict takes no config of its own, a list of them does
REQUEST = TypeAdapter(list[EmbeddingCreateParams], config=ConfigDict(extra="forbid"))


@pytest.mark.parametrize("encoding", ["float", "base64", None])
async def test_the_sdk_reads_the_fakes_vectors(encoding: str | None):
    texts = ["the first text", "the second one"]
    async with FakeOpenAIServer() as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        extra: dict[str, Any] = {"encoding_format": encoding} if encoding else {}
        answer = await client.embeddings.create(
            model="text-embedding-3-small", input=texts, dimensions=64, **extra
        )
        await client.close()
    assert isinstance(answer, CreateEmbeddingResponse)
    assert answer.object == "list"
    assert answer.model == "text-embedding-3-small"
    assert [item.index for item in answer.data] == [0, 1]
    for item, text in zip(answer.data, texts, strict=True):
        assert item.object == "embedding"
        vector: Any = item.embedding
        if encoding == "base64":  # asked for explicitly, the SDK hands the string over as it is
            assert isinstance(vector, str)
            vector = list(struct.unpack("<64f", base64.b64decode(vector)))
        # base64 carries float32: equal to 1e-7
        assert vector == pytest.approx(fake_embedding(text, 64), abs=1e-7)
    assert answer.usage.prompt_tokens == answer.usage.total_tokens > 0
    # the SDK asks for base64 unless told otherwise; the fake answered what was asked
    assert server.requests[0].body["encoding_format"] == (encoding or "base64")


async def test_the_fakes_answer_has_exactly_the_sdks_fields():
    async with FakeOpenAIServer(embedding_dimensions=8) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        raw = await client.embeddings.with_raw_response.create(
            model="m", input="one", encoding_format="float"
        )
        await client.close()
    body = raw.http_response.json()
    assert set(body) == set(CreateEmbeddingResponse.model_fields)
    assert set(body["data"][0]) == {"object", "index", "embedding"}
    assert set(body["usage"]) == {"prompt_tokens", "total_tokens"}
    CreateEmbeddingResponse.model_validate(body, strict=True)


async def test_the_sdk_reads_the_fakes_errors():
    server = FakeOpenAIServer().fail(1, Fault(status=429, message="slow down"))
    async with server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.RateLimitError, match="slow down"):
            await client.embeddings.create(model="m", input="x")
        with pytest.raises(openai.BadRequestError) as caught:
            await client.embeddings.create(model="m", input="")
        await client.close()
    assert caught.value.param == "input"


async def test_the_azure_sdk_reads_the_fakes_deployment_route():
    async with FakeOpenAIServer(embedding_dimensions=4) as server:
        client = openai.AsyncAzureOpenAI(
            azure_endpoint=server.endpoint, api_key="k", api_version="2024-10-21", max_retries=0
        )
        answer = await client.embeddings.create(model="deploy", input=["x"])
        await client.close()
    assert answer.data[0].embedding == pytest.approx(fake_embedding("x", 4), abs=1e-7)
    assert server.requests[0].path == "/openai/deployments/deploy/embeddings"


@pytest.mark.parametrize("dimensions", [None, 256])
def test_our_request_bodies_are_valid_sdk_requests(dimensions: int | None):
    embedder = OpenAIEmbedder(api_key="k", dimensions=dimensions)
    body = embedder.request_body(["a", "b"])
    REQUEST.validate_python([body])
    with pytest.raises(ValueError, match="extra"):
        REQUEST.validate_python([{**body, "encoding": "float"}])  # the check does check
    assert body["encoding_format"] == "float"
    assert ("dimensions" in body) is (dimensions is not None)
