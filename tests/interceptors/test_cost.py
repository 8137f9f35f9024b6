"""Cost: the price table, Usage.cost per response, per run, per session, and in /metrics."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from rxagent import PostReasoningEvent, ReActAgent
from rxagent.errors import ConfigurationError, RateLimitedError
from rxagent.interceptors import FallbackModels, ModelPrice, Prices, price_key
from rxagent.models import OpenAIChatModel
from rxagent.models.base import Usage
from rxagent.server import create_app
from rxagent.testing import FunctionModel, ScriptedModel
from rxagent.testing.providers import FakeOpenAIServer, Reply

MINI = Prices.default().get("openai:gpt-4o-mini")


def test_the_shipped_table_has_the_main_providers():
    prices = Prices.default()
    assert len(prices) >= 10
    for key in (
        "openai:gpt-4o-mini",
        "anthropic:claude-3-5-sonnet-latest",
        "gemini:gemini-2.5-pro",
    ):
        assert prices.get(key) is not None
    assert Prices.default() is prices  # read once


def test_a_price_covers_cached_reads_and_cache_writes():
    price = ModelPrice(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)
    usage = Usage(
        input_tokens=1_000_000, cache_read_tokens=200_000, cache_write_tokens=100_000,
        output_tokens=10_000,
    )  # fmt: skip
    expected = (700_000 * 3.0 + 200_000 * 0.3 + 100_000 * 3.75 + 10_000 * 15.0) / 1e6
    assert price.cost(usage) == pytest.approx(expected)
    plain = ModelPrice(input=1.0, output=1.0)  # no cache prices: the input price
    assert plain.cost(usage) == pytest.approx((1_000_000 + 10_000) / 1e6)


def test_overriding_prices():
    mine = Prices.default().with_prices({"openai:gpt-4o-mini": {"input": 1.0, "output": 2.0}})
    assert mine.get("openai:gpt-4o-mini") == ModelPrice(input=1.0, output=2.0)
    assert Prices.default().get("openai:gpt-4o-mini") == MINI  # the shipped one is unchanged


@pytest.mark.parametrize(
    "bad",
    [{"m": {"input": -1, "output": 1}}, {"m": {"input": 1}}, {"m": {"inputs": 1, "output": 1}}],
)
def test_bad_prices_are_refused(bad: dict[str, Any]):
    with pytest.raises(ConfigurationError):
        Prices(bad)


def test_a_bad_prices_argument_is_refused():
    with pytest.raises(ConfigurationError, match="prices= takes"):
        ReActAgent("a", "", ScriptedModel([]), prices={"m": 1})  # type: ignore[arg-type]


def test_price_keys():
    assert price_key(ScriptedModel([], name="local")) == "local"


async def test_cost_per_response_per_run_and_per_session():
    usage = Usage(input_tokens=1000, output_tokens=500)
    turns = [Reply("one", usage=usage), Reply("two", usage=usage)]
    async with FakeOpenAIServer(turns) as server:
        model = OpenAIChatModel("gpt-4o-mini", base_url=server.base_url, api_key="sk-test")
        agent = ReActAgent("a", "", model)
        events = [e async for e in agent.events("hi")]
        second = await agent.call("again")
        await agent.aclose()
    assert MINI is not None
    one = MINI.cost(usage)
    post = next(e for e in events if isinstance(e, PostReasoningEvent))
    assert post.usage.cost == pytest.approx(one)
    assert second.usage.cost == pytest.approx(one)  # per run
    state = await agent.state_dict()
    assert state["usage"]["cost"] == pytest.approx(2 * one)  # per session


async def test_a_fallback_is_priced_at_its_own_model():
    def limited(messages: Any, tools: Any, options: Any) -> str:
        raise RateLimitedError("429")

    prices = Prices(
        {"primary": ModelPrice(input=1.0, output=1.0), "backup": ModelPrice(input=1e6, output=0)}
    )
    backup = ScriptedModel(["fine"], name="backup")
    agent = ReActAgent(
        "a", "", FunctionModel(limited, name="primary"),
        interceptors=[FallbackModels([backup])], prices=prices,
    )  # fmt: skip
    result = await agent.call("hi")
    assert result.usage.cost == pytest.approx(result.usage.input_tokens * 1.0)


async def test_metrics_count_cost():
    usage = Usage(input_tokens=2000, output_tokens=1000)
    async with FakeOpenAIServer([Reply("x", usage=usage)]) as server:
        model = OpenAIChatModel("gpt-4o-mini", base_url=server.base_url, api_key="sk-test")
        agent = ReActAgent("bot", "", model)
        auth = {"Authorization": "Bearer k"}
        async with TestClient(TestServer(create_app(agent, auth=["k"]))) as client:
            await client.post("/v1/agents/bot/runs", json={"input": "go"}, headers=auth)
            text = await (await client.get("/metrics", headers=auth)).text()
        await agent.aclose()
    found = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert MINI is not None
    assert found[("rxagent_cost_usd_total", (("agent", "bot"),))] == pytest.approx(MINI.cost(usage))
