"""Every provider client behaves alike against its fake server: one suite, run for each provider.

What differs between providers (the fake server, the wire's frames, its error codes) comes from
the `Provider` adapters in `client_providers`, and the `provider` fixture (in `conftest.py`) runs
each scenario once per provider. What only one provider does stays in its own
`test_<provider>_client.py`. Failures and retries are in `test_client_conformance_failures`, agent
runs in `test_client_conformance_agent`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web
from client_providers import KEY, PROVIDERS, SLOW, Provider, collect, texts  # type: ignore[import-not-found]

import rxagent.models
from rxagent.errors import ConfigurationError
from rxagent.messages import Msg
from rxagent.models import (
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSchema,
    resolve,
)
from rxagent.models._http import HTTPChatModel
from rxagent.testing import text, thinking, tool_call
from rxagent.testing.providers import FakeProviderServer, Reply

ADD = ToolSchema(name="add", description="Add.", parameters={"type": "object"})


Handler = Callable[..., Awaitable[web.StreamResponse]]


def watch_requests(server: FakeProviderServer) -> tuple[list[int], asyncio.Event, asyncio.Event]:
    """Record the client port of each request `server` receives, and two events: one set when a
    request arrives, one when a request's handler is cancelled because its client went away."""
    ports: list[int] = []
    arrived, abandoned = asyncio.Event(), asyncio.Event()
    handle: Handler = server.handle

    async def watched(request: web.Request, *, stream: bool) -> web.StreamResponse:
        assert request.transport is not None
        ports.append(request.transport.get_extra_info("peername")[1])
        arrived.set()
        try:
            return await handle(request, stream=stream)
        except asyncio.CancelledError:
            abandoned.set()
            raise

    server.handle = watched  # type: ignore[method-assign]
    return ports, arrived, abandoned


# -- responses -------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_thinking_text_tool_calls_and_usage_come_back(provider: Provider, stream: bool):
    turn = Reply(
        [
            thinking("Sum it."),
            text("Adding."),
            tool_call("add", id="call_a", a=1, b=2),
            tool_call("add", a=3, b=4),
        ],
        usage=provider.usage,
    )
    async with provider.server([turn], chunk_size=2) as server:
        async with provider.build(server, stream=stream) as model:
            response = await model.complete([Msg.user("sums?")], [ADD])
    msg = response.message
    assert [b.type for b in msg.blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert msg.blocks[0].thinking == "Sum it."
    assert msg.text == "Adding."
    assert [(c.name, dict(c.input)) for c in msg.tool_calls] == [
        ("add", {"a": 1, "b": 2}),
        ("add", {"a": 3, "b": 4}),
    ]
    ids = [c.id for c in msg.tool_calls]
    if provider.call_ids:  # the scripted id, and the one the fake server gave
        assert ids == ["call_a", "call_1_3"]
    else:  # none on the wire: made up on our side (distinct: see the test below)
        assert all(ids)
    assert response.finish_reason == "tool_calls"
    assert response.usage == provider.usage  # reported once, not summed over the chunks
    [request] = server.requests
    name, value = provider.key_header(KEY)
    assert request.headers[name] == value
    assert provider.tool_names(request.body) == ["add"]


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if not p.call_ids], ids=lambda p: p.name)
async def test_calls_that_came_without_ids_get_distinct_ids(provider: Provider):
    turn = [tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)]
    async with provider.server([turn]) as server, provider.build(server) as model:
        response = await model.complete([Msg.user("sums?")], [ADD])
    ids = [c.id for c in response.message.tool_calls]
    assert len(set(ids)) == 2


async def test_streamed_deltas_keep_one_index_per_block(provider: Provider):
    turn = [thinking("Two and two."), text("Four."), tool_call("add", a=2, b=2), tool_call("add")]
    async with provider.server([turn], chunk_size=2) as server, provider.build(server) as model:
        deltas = await collect(model)
    assert isinstance(deltas[0], ThinkingDelta)
    thoughts = [d for d in deltas if isinstance(d, ThinkingDelta)]
    assert "".join(d.text for d in thoughts) == "Two and two."
    assert len(thoughts) > 1
    assert {d.index for d in thoughts} == {0}
    assert texts(deltas) == ["Fo", "ur", "."]
    assert {d.index for d in deltas if isinstance(d, TextDelta)} == {1}
    assert {d.index for d in deltas if isinstance(d, ToolCallDelta)} == {2, 3}
    assert deltas[-1].type == "finish_delta"
    builder = ResponseBuilder()
    assert {builder.add(d) for d in deltas} - {-1} == {0, 1, 2, 3}
    assert [dict(c.input) for c in builder.build().tool_calls] == [{"a": 2, "b": 2}, {}]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_finish_reason_comes_back_in_rxagents_words(provider: Provider, stream: bool):
    async with provider.server([Reply("cut sho", finish="length")]) as server:
        async with provider.build(server, stream=stream) as model:
            response = await model.complete([Msg.user("hi")])
    assert (response.message.text, response.finish_reason) == ("cut sho", "length")


# -- configuration ---------------------------------------------------------------------------------


async def test_a_missing_api_key_names_its_variables_unless_none_is_needed(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
):
    client = provider.client
    for name in (*client.api_key_env, *client.base_url_env):
        monkeypatch.delenv(name, raising=False)
    if client.requires_api_key:
        with pytest.raises(ConfigurationError, match=" or ".join(client.api_key_env)):
            client(provider.model)
        return
    async with provider.server(["no key"]) as server:  # Ollama: a local server needs none
        async with client(provider.model, base_url=server.base_url) as model:
            await model.complete([Msg.user("hi")])
    assert provider.key_header(KEY)[0] not in server.requests[0].headers


async def test_the_base_url_and_key_come_from_the_environment(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
):
    client = provider.client
    first, *others = client.api_key_env
    for name in others:
        monkeypatch.delenv(name, raising=False)
    async with provider.server(["from env"]) as server:
        monkeypatch.setenv(client.base_url_env[0], server.base_url)
        monkeypatch.setenv(first, "sk-env-0123456789abcdef")
        async with client(provider.model) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "from env"
    name, value = provider.key_header("sk-env-0123456789abcdef")
    assert server.requests[0].headers[name] == value


async def test_the_registry_builds_the_client(provider: Provider):
    async with provider.server(["resolved"]) as server:
        model = resolve(f"{provider.name}:{provider.model}", api_key=KEY, base_url=server.base_url)
        assert isinstance(model, HTTPChatModel)
        assert type(model) is provider.client
        assert model.model == provider.model
        async with model:
            assert (await model.complete([Msg.user("hi")])).message.text == "resolved"


# -- connections -----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_requests_one_after_another_reuse_the_connection(provider: Provider, stream: bool):
    async with provider.server(["one", "two"]) as server:
        ports, _, _ = watch_requests(server)
        async with provider.build(server, stream=stream) as model:
            await model.complete([Msg.user("1")])
            await model.complete([Msg.user("2")])
    assert len(ports) == 2
    assert ports[0] == ports[1]


async def test_a_cancelled_request_closes_its_connection(provider: Provider):
    async with provider.server(["next"]) as server:
        ports, arrived, abandoned = watch_requests(server)
        server.fail(1, first_byte_delay=SLOW)
        async with provider.build(server, max_retries=0) as model:
            call = asyncio.create_task(model.complete([Msg.user("1")]))
            await arrived.wait()
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            # the server sees its client go: the connection was closed, not kept for reuse
            await asyncio.wait_for(abandoned.wait(), timeout=SLOW / 2)
            assert (await model.complete([Msg.user("2")])).message.text == "next"
    assert len(ports) == 2
    assert ports[0] != ports[1]


def test_the_suite_covers_every_provider_client() -> None:
    """Each HTTP client rxagent ships has an adapter here (Azure is OpenAI's client on another
    route: `test_openai_client` covers what differs)."""
    exported = (getattr(rxagent.models, name) for name in rxagent.models.__all__)
    shipped = {c for c in exported if isinstance(c, type) and HTTPChatModel in c.__bases__}
    assert shipped == {p.client for p in PROVIDERS}
