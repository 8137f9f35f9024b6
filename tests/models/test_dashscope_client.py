"""What only DashScopeChatModel does, against FakeDashScopeServer.

What every provider client does is in `test_client_conformance*.py`.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from rxagent import ReActAgent, tool
from rxagent.errors import AgentRunError, InvalidRequestError, RateLimitedError
from rxagent.events import PostCallEvent
from rxagent.formatters.framing import SSEDecoder
from rxagent.messages import ImageBlock, Msg, TextBlock
from rxagent.models import DashScopeChatModel, ModelOptions, TextDelta, ThinkingDelta
from rxagent.models.base import ModelDelta
from rxagent.models.dashscope import INTL_BASE_URL
from rxagent.models.retry import RetryPolicy
from rxagent.testing import RecordingSleep, text, thinking, tool_call
from rxagent.testing.providers import FakeDashScopeServer, Reply
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


async def test_enable_thinking_goes_in_the_parameters() -> None:
    async with FakeDashScopeServer([[thinking("abcdef"), text("ok")]], chunk_size=2) as server:
        async with qwen(server, options=ModelOptions(extra={"enable_thinking": True})) as model:
            deltas = await collect(model)
    assert isinstance(deltas[0], ThinkingDelta)
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


async def test_a_base_url_in_the_sdks_form_works_too(monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeDashScopeServer(["from env"]) as server:
        monkeypatch.setenv("DASHSCOPE_BASE_URL", server.base_url + "/api/v1")
        async with DashScopeChatModel("qwen-plus", api_key="k") as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "from env"
    assert server.requests[0].path == TEXT_PATH


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


# -- failures and retries --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "message", "expected"),
    [
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
async def test_dashscope_codes_decide_the_error_and_are_never_retried(
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


async def test_a_throttling_event_after_the_first_delta_is_a_recoverable_rate_limit() -> None:
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


# -- through an agent ------------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


async def test_an_agent_sends_back_calls_and_results_in_dashscope_shape() -> None:
    async with FakeDashScopeServer([tool_call("add", a=2, b=3), "2 + 3 = 5"]) as server:
        async with qwen(server) as model:
            agent = ReActAgent("calc", "You add.", model=model, tools=[add])
            events = [e async for e in agent.events("What is 2 + 3?")]
    final = events[-1]
    assert isinstance(final, PostCallEvent)
    assert final.reply.text == "2 + 3 = 5"
    second = server.requests[1].body["input"]["messages"]
    assert second[0] == {"role": "system", "content": "You add."}
    call = second[2]["tool_calls"][0]
    assert call["function"] == {"name": "add", "arguments": '{"a": 2, "b": 3}'}
    assert second[3] == {"role": "tool", "content": "5", "tool_call_id": call["id"], "name": "add"}
    tools = server.requests[0].body["parameters"]["tools"]
    assert tools[0]["function"]["name"] == "add"
    assert tools[0]["function"]["parameters"]["required"] == ["a", "b"]
