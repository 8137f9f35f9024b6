"""DashScopeChatModel against FakeDashScopeServer: endpoints, headers, streams, retries, agents."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from rxagent import ReActAgent, tool
from rxagent.errors import (
    AgentRunError,
    ConfigurationError,
    ContextTooLongError,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
)
from rxagent.events import ErrorEvent, PostCallEvent, ReasoningChunkEvent, RetryEvent
from rxagent.messages import Block, ImageBlock, Msg, TextBlock
from rxagent.models import (
    DashScopeChatModel,
    ModelOptions,
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolSchema,
    Usage,
    resolve,
)
from rxagent.models.base import ModelDelta
from rxagent.models.dashscope import INTL_BASE_URL
from rxagent.models.framing import SSEDecoder
from rxagent.models.retry import RetryPolicy
from rxagent.testing import RecordingSleep, text, thinking, tool_call
from rxagent.testing.providers import FakeDashScopeServer, Fault, Reply
from rxagent.testing.providers.dashscope import MULTIMODAL_PATH, TEXT_PATH


def qwen(server: FakeDashScopeServer, model: str = "qwen-plus", **kw: Any) -> DashScopeChatModel:
    kw.setdefault("api_key", "sk-test")
    return DashScopeChatModel(model, base_url=server.base_url, **kw)


async def collect(model: DashScopeChatModel, *messages: Msg) -> list[ModelDelta]:
    msgs = list(messages) or [Msg.user("hi")]
    return [d async for d in model.stream(msgs, [], ModelOptions())]


def joined(deltas: list[ModelDelta]) -> str:
    return "".join(d.text for d in deltas if isinstance(d, TextDelta))


# -- requests --------------------------------------------------------------------------------------


async def test_streaming_posts_to_the_text_endpoint_with_the_sse_header() -> None:
    async with FakeDashScopeServer(["Hello there"], chunk_size=3) as server, qwen(server) as model:
        deltas = await collect(model)
    assert joined(deltas) == "Hello there"
    sent = server.requests[0]
    assert sent.path == TEXT_PATH
    assert sent.headers["Authorization"] == "Bearer sk-test"
    assert sent.headers["X-DashScope-SSE"] == "enable"
    assert sent.headers["Accept"] == "text/event-stream"
    assert sent.body["model"] == "qwen-plus"
    assert sent.body["parameters"] == {"result_format": "message", "incremental_output": True}
    assert sent.body["input"] == {"messages": [{"role": "user", "content": "hi"}]}


async def test_a_whole_response_is_asked_for_without_the_sse_header() -> None:
    async with FakeDashScopeServer(["whole"]) as server, qwen(server, stream=False) as model:
        response = await model.complete([Msg.user("hi")])
    assert response.message.text == "whole"
    assert response.finish_reason == "stop"
    assert "X-DashScope-SSE" not in server.requests[0].headers
    assert "incremental_output" not in server.requests[0].body["parameters"]


@pytest.mark.parametrize("stream", [True, False])
async def test_thinking_text_and_tool_calls_come_back(stream: bool) -> None:
    turn: list[Block] = [
        thinking("Sum it."),
        text("Adding."),
        tool_call("add", id="call_9", a=1, b=2),
    ]
    async with FakeDashScopeServer([turn], chunk_size=2) as server:
        async with qwen(server, stream=stream) as model:
            response = await model.complete([Msg.user("1+2?")], [ToolSchema(name="add")])
    msg = response.message
    assert [b.type for b in msg.blocks] == ["thinking", "text", "tool_use"]
    assert msg.blocks[0].thinking == "Sum it."  # type: ignore[union-attr]
    assert [(c.id, c.name, dict(c.input)) for c in msg.tool_calls] == [
        ("call_9", "add", {"a": 1, "b": 2})
    ]
    assert response.finish_reason == "tool_calls"
    assert response.usage.requests == 1


async def test_thinking_streams_as_thinking_deltas_first() -> None:
    async with FakeDashScopeServer([[thinking("abcdef"), text("ok")]], chunk_size=2) as server:
        async with qwen(server, options=ModelOptions(extra={"enable_thinking": True})) as model:
            deltas = await collect(model)
    assert [type(d) for d in deltas[:3]] == [ThinkingDelta] * 3
    assert server.requests[0].body["parameters"]["enable_thinking"] is True


async def test_a_vl_model_uses_the_multimodal_endpoint_with_list_contents() -> None:
    photo = ImageBlock(url="https://example.com/cat.png")
    async with FakeDashScopeServer(["A cat.", "Still a cat."]) as server:
        async with qwen(server, "qwen-vl-max") as model:
            reply = await model.complete([Msg.user([photo, TextBlock(text="What?")])])
        async with qwen(server, "qwen-vl-max", stream=False) as model:
            whole = await model.complete([Msg.user("And now?")])
    assert reply.message.text == "A cat."
    assert whole.message.text == "Still a cat."
    assert [r.path for r in server.requests] == [MULTIMODAL_PATH, MULTIMODAL_PATH]
    assert server.requests[0].body["input"]["messages"][0]["content"] == [
        {"image": "https://example.com/cat.png"},
        {"text": "What?"},
    ]


async def test_multimodal_can_be_forced_for_any_model_name() -> None:
    async with FakeDashScopeServer(["ok"]) as server, qwen(server, multimodal=True) as model:
        await model.complete([Msg.user([ImageBlock(data="aGk=", media_type="image/png")])])
    assert server.requests[0].path == MULTIMODAL_PATH
    assert model.formatter.capabilities.supports_vision


async def test_an_image_for_a_text_model_fails_before_any_request() -> None:
    async with FakeDashScopeServer(["never"]) as server, qwen(server) as model:
        with pytest.raises(InvalidRequestError, match="-vl"):
            await model.complete([Msg.user([ImageBlock(url="https://example.com/a.png")])])
    assert server.requests == []


async def test_usage_with_cached_tokens_is_reported_once() -> None:
    used = Usage(
        input_tokens=120, output_tokens=6, cache_read_tokens=100, cache_write_tokens=20, requests=1
    )
    async with FakeDashScopeServer([Reply("a longer reply", usage=used)], chunk_size=2) as server:
        async with qwen(server) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.usage == used


async def test_a_finish_reason_comes_back_in_rxagents_words() -> None:
    async with FakeDashScopeServer([Reply("cut sho", finish="length")]) as server:
        async with qwen(server) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.finish_reason == "length"


async def test_the_fake_sends_cumulative_text_when_incremental_output_is_off() -> None:
    """DashScope's default (incremental_output=false): every frame repeats the text so far."""
    body = {
        "model": "qwen-plus",
        "input": {"messages": [{"role": "user", "content": "hi"}]},
        "parameters": {"result_format": "message"},
    }
    async with FakeDashScopeServer(
        [["abcdef", tool_call("add", id="c1", a=1)]], chunk_size=2
    ) as server:
        async with aiohttp.ClientSession() as session:
            url = server.base_url + TEXT_PATH
            async with session.post(url, json=body, headers={"X-DashScope-SSE": "enable"}) as resp:
                raw = await resp.read()
    decoder = SSEDecoder()
    frames = [json.loads(e.data) for e in decoder.feed(raw) + decoder.close()]
    contents = [f["output"]["choices"][0]["message"]["content"] for f in frames]
    assert contents[:3] == ["ab", "abcd", "abcdef"]
    last = frames[-1]["output"]["choices"][0]
    assert last["finish_reason"] == "tool_calls"
    assert last["message"]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'


@pytest.mark.parametrize("finish", ["content_filter", "pause"])
def test_the_fake_refuses_finish_reasons_dashscope_does_not_have(finish: str) -> None:
    with pytest.raises(ValueError, match="DataInspectionFailed"):
        FakeDashScopeServer([Reply("x", finish=finish)])
    server = FakeDashScopeServer()
    with pytest.raises(ValueError, match="no finish reason"):
        server.add("fine", Reply("x", finish=finish))
    assert server.remaining == 0


async def test_the_base_url_and_key_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with FakeDashScopeServer(["from env"]) as server:
        monkeypatch.setenv(
            "DASHSCOPE_BASE_URL", server.base_url + "/api/v1"
        )  # the SDK's form works too
        monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-env")
        async with DashScopeChatModel("qwen-plus") as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "from env"
    assert server.requests[0].headers["Authorization"] == "Bearer sk-env"


def test_defaults_and_the_international_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DASHSCOPE_BASE_URL", raising=False)
    model = DashScopeChatModel("qwen-plus", api_key="k")
    assert (
        model.endpoint
        == "https://dashscope.aliyuncs.com/api/v1/services/aigc/text-generation/generation"
    )
    intl = DashScopeChatModel("qwen-vl-plus", api_key="k", base_url=INTL_BASE_URL)
    assert intl.endpoint == (
        "https://dashscope-intl.aliyuncs.com/api/v1/services/aigc/multimodal-generation/generation"
    )


def test_a_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DASHSCOPE_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="DASHSCOPE_API_KEY"):
        DashScopeChatModel("qwen-plus")
    with pytest.raises(ConfigurationError, match="model"):
        DashScopeChatModel("", api_key="k")


def test_the_registry_builds_it() -> None:
    model = resolve("dashscope:qwen-max", api_key="k", base_url="http://127.0.0.1:9")
    assert isinstance(model, DashScopeChatModel)
    assert model.model == "qwen-max"


# -- failures and retries --------------------------------------------------------------------------


async def test_429_is_retried_with_the_providers_wait() -> None:
    sleeps = RecordingSleep()
    async with FakeDashScopeServer(["ok"]) as server:
        server.fail(1, status=429, error_type="Throttling.RateQuota", headers={"Retry-After": "2"})
        server.fail(2, status=500, error_type="InternalError")
        policy = RetryPolicy(max_retries=3, initial_delay_s=0.5, jitter=0.0, sleep=sleeps)
        async with qwen(server, max_retries=policy) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert sleeps.delays == [2.0, 1.0]
    assert response.usage.requests == 3


@pytest.mark.parametrize(
    ("status", "code", "message", "expected"),
    [
        (400, "InvalidParameter", "Temperature out of range", "INVALID_REQUEST"),
        (401, "InvalidApiKey", "Invalid API-key provided.", "AUTH"),
        (403, "AccessDenied", "Access denied.", "AUTH"),
        (400, "InvalidParameter", "Range of input length should be [1, 30720]", "CONTEXT_TOO_LONG"),
        (
            400,
            "Arrearage",
            "Access denied, please make sure your account is in good standing.",
            "RATE_LIMITED",
        ),
        (
            400,
            "DataInspectionFailed",
            "Input data may contain inappropriate content.",
            "INVALID_REQUEST",
        ),
    ],
)
async def test_client_errors_are_never_retried(
    status: int, code: str, message: str, expected: str
) -> None:
    sleeps = RecordingSleep()
    async with FakeDashScopeServer(["never"]) as server:
        server.fail(1, status=status, error_type=code, message=message)
        async with qwen(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            with pytest.raises(AgentRunError) as info:
                await collect(model)
    err = info.value
    assert (err.code, err.status, err.provider_code, err.provider) == (
        expected,
        status,
        code,
        "dashscope",
    )
    assert not err.recoverable
    assert sleeps.delays == []
    assert len(server.requests) == 1


async def test_context_too_long_has_its_own_type() -> None:
    async with FakeDashScopeServer(["never"]) as server:
        server.fail(
            1,
            status=400,
            error_type="InvalidParameter",
            message="Range of input length should be [1, 6000]",
        )
        async with qwen(server) as model:
            with pytest.raises(ContextTooLongError):
                await collect(model)


async def test_an_error_event_before_the_first_delta_is_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeDashScopeServer(["fine"]) as server:
        server.fail(1, mid_stream_error=0, error_type="Throttling.RateQuota")
        async with qwen(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            deltas = await collect(model)
    assert joined(deltas) == "fine"
    assert len(sleeps.delays) == 1
    assert len(server.requests) == 2


async def test_an_error_event_after_the_first_delta_raises_recoverable() -> None:
    sleeps = RecordingSleep()
    async with FakeDashScopeServer(["a long enough reply"], chunk_size=2) as server:
        server.fail(1, mid_stream_error=3, error_type="Throttling.RateQuota", message="slow down")
        async with qwen(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            got: list[ModelDelta] = []

            async def consume() -> None:
                async for delta in model.stream([Msg.user("hi")], [], ModelOptions()):
                    got.append(delta)

            with pytest.raises(RateLimitedError) as info:
                await consume()
    assert info.value.recoverable
    assert (info.value.status, info.value.provider_code) == (429, "Throttling.RateQuota")
    assert joined(got) == "a long"
    assert sleeps.delays == []
    assert len(server.requests) == 1


async def test_a_dropped_connection_is_a_recoverable_provider_error() -> None:
    async with FakeDashScopeServer(["abcdefghijkl"], chunk_size=2) as server:
        server.fail(1, drop_after=3)
        async with qwen(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await collect(model)
    assert info.value.recoverable
    assert info.value.provider == "dashscope"


async def test_a_slow_first_byte_times_out_and_is_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeDashScopeServer(["late but fine"]) as server:
        server.fail(1, first_byte_delay=0.3)
        async with qwen(server, timeout=0.1, max_retries=RetryPolicy(sleep=sleeps)) as model:
            deltas = await collect(model)
    assert len(sleeps.delays) == 1
    assert joined(deltas) == "late but fine"


async def test_an_html_page_from_a_proxy_is_typed() -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    async with FakeDashScopeServer(["x"]) as server:
        server.fail(1, Fault(body=page, status=502, content_type="text/html"))
        async with qwen(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await collect(model)
    assert (info.value.status, info.value.provider) == (502, "dashscope")
    assert "502 Bad Gateway" in (info.value.excerpt or "")


# -- through an agent ------------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


async def test_an_agent_calls_a_tool_then_answers() -> None:
    async with FakeDashScopeServer([tool_call("add", a=2, b=3), "2 + 3 = 5"]) as server:
        async with qwen(server) as model:
            agent = ReActAgent("calc", "You add.", model=model, tools=[add])
            events = [e async for e in agent.events("What is 2 + 3?")]
    final = events[-1]
    assert isinstance(final, PostCallEvent)
    assert final.reply.text == "2 + 3 = 5"
    assert final.result.tools_used == ("add",)
    second = server.requests[1].body["input"]["messages"]
    assert second[0] == {"role": "system", "content": "You add."}
    call = second[2]["tool_calls"][0]
    assert call["function"] == {"name": "add", "arguments": '{"a": 2, "b": 3}'}
    assert second[3] == {"role": "tool", "content": "5", "tool_call_id": call["id"], "name": "add"}
    tools = server.requests[0].body["parameters"]["tools"]
    assert tools[0]["function"]["name"] == "add"
    assert tools[0]["function"]["parameters"]["required"] == ["a", "b"]


async def test_retries_are_run_events_before_the_first_chunk() -> None:
    sleeps = RecordingSleep()
    async with FakeDashScopeServer([tool_call("add", a=1, b=2), "3"]) as server:
        server.fail(1, status=429, error_type="Throttling", headers={"retry-after": "2"})
        async with qwen(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            agent = ReActAgent("calc", model=model, tools=[add])
            events = [e async for e in agent.events("1 + 2?")]
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert [(r.attempt, r.delay_s, r.code) for r in retries] == [(2, 2.0, "RATE_LIMITED")]
    first_chunk = next(i for i, e in enumerate(events) if isinstance(e, ReasoningChunkEvent))
    assert events.index(retries[0]) < first_chunk
    final = events[-1]
    assert isinstance(final, PostCallEvent)
    assert final.reply.text == "3"


async def test_a_stream_broken_mid_answer_restarts_the_step() -> None:
    async with FakeDashScopeServer(["a fairly long answer"], chunk_size=2) as server:
        server.fail(1, mid_stream_error=3, error_type="InternalError")
        async with qwen(server, max_retries=0) as model:
            agent = ReActAgent("helper", model=model)
            events = [e async for e in agent.events("go")]
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [(e.code, e.recoverable) for e in errors] == [("PROVIDER_ERROR", True)]
    final = events[-1]
    assert isinstance(final, PostCallEvent)
    assert final.reply.text == "a fairly long answer"


async def test_response_builder_sees_stable_indexes() -> None:
    async with FakeDashScopeServer(
        [["Both:", tool_call("add", a=1, b=1), tool_call("add", a=2, b=2)]], chunk_size=3
    ) as server:
        async with qwen(server) as model:
            deltas = await collect(model)
    builder = ResponseBuilder()
    positions = {builder.add(d) for d in deltas} - {-1}
    assert positions == {0, 1, 2}
    msg = builder.build()
    assert msg.text == "Both:"
    assert [dict(c.input) for c in msg.tool_calls] == [{"a": 1, "b": 1}, {"a": 2, "b": 2}]
