"""Conformance with the official `dashscope` SDK.

The SDK has no typed request or response models to validate against, so it is run for real:

- pointed at `FakeDashScopeServer` (through `dashscope.base_http_api_url`), it must read the fake's
  whole responses, SSE frames, tool-call fragments, usage and errors the way it reads DashScope's;
- the body it posts for a conversation must be the body `DashScopeFormatter` builds for the same
  conversation and options (same keys, same shapes).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from rxagent.formatters.dashscope import DashScopeFormatter
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models import DashScopeChatModel, ModelOptions, ToolSchema, Usage
from rxagent.testing import text, thinking, tool_call
from rxagent.testing.providers import FakeDashScopeServer, Reply

dashscope = pytest.importorskip("dashscope")
from dashscope.aigc.generation import AioGeneration as _AioGeneration  # noqa: E402
from dashscope.api_entities.aio_session import close_shared_aio_session  # noqa: E402
from dashscope.api_entities.http_request import close_shared_sync_session  # noqa: E402

AioGeneration: Any = _AioGeneration  # its return hint is a union of the stream and whole forms

ADD = ToolSchema(
    name="add",
    description="Add two integers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    }
]
USER = [{"role": "user", "content": "What is 2 + 3?"}]
TURN: list[Block] = [
    thinking("Add them."),
    text("Let me add."),
    tool_call("add", id="call_1", a=2, b=3),
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDashScopeServer]:
    """A threaded fake server the SDK is pointed at; the SDK's global is restored afterwards."""
    with FakeDashScopeServer(chunk_size=3) as fake:
        monkeypatch.setattr(dashscope, "base_http_api_url", fake.base_url + "/api/v1")
        yield fake
        close_shared_sync_session()


@pytest.fixture
async def aio_session() -> AsyncIterator[None]:
    yield
    await close_shared_aio_session()


def call(**kwargs: Any) -> Any:
    kwargs.setdefault("model", "qwen-plus")
    kwargs.setdefault("messages", USER)
    return dashscope.Generation.call(api_key="k", result_format="message", **kwargs)


def check_chunk(chunk: Any) -> None:
    """What the SDK makes of one frame: a 200 with an assistant message and integer usage."""
    assert chunk.status_code == 200, chunk
    choice = chunk.output.choices[0]
    assert choice.finish_reason in ("null", "stop", "length", "tool_calls")
    assert choice.message.role == "assistant"
    assert isinstance(chunk.usage.input_tokens, int)
    assert isinstance(chunk.usage.output_tokens, int)
    assert chunk.request_id


def merged(chunks: list[Any]) -> dict[str, Any]:
    """Accumulate incremental SDK chunks the way an SDK user does."""
    content = reasoning = ""
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        message = chunk.output.choices[0].message
        content += message.get("content") or ""
        reasoning += message.get("reasoning_content") or ""
        for fragment in message.get("tool_calls") or ():
            slot = calls.setdefault(fragment["index"], {"id": "", "name": "", "arguments": ""})
            slot["id"] += fragment["id"]
            slot["name"] += fragment["function"]["name"]
            slot["arguments"] += fragment["function"]["arguments"]
    return {"content": content, "reasoning": reasoning, "calls": list(calls.values())}


# -- the SDK reads the fake server -----------------------------------------------------------------


def test_the_sdk_reads_a_whole_response(server: FakeDashScopeServer) -> None:
    used = Usage(input_tokens=30, output_tokens=9, cache_read_tokens=12, requests=1)
    server.add(Reply(TURN, usage=used))
    response = call(tools=TOOLS)
    assert response.status_code == 200
    choice = response.output.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me add."
    assert choice.message.reasoning_content == "Add them."
    [tc] = choice.message.tool_calls
    assert (tc["id"], tc["type"], tc["function"]["name"]) == ("call_1", "function", "add")
    assert json.loads(tc["function"]["arguments"]) == {"a": 2, "b": 3}
    assert (response.usage.input_tokens, response.usage.output_tokens) == (30, 9)
    assert response.usage.prompt_tokens_details == {"cached_tokens": 12}
    assert "X-DashScope-SSE" not in server.requests[0].headers


def test_the_sdk_reads_an_incremental_stream(server: FakeDashScopeServer) -> None:
    server.add(Reply(TURN, usage=Usage(input_tokens=30, output_tokens=9, requests=1)))
    chunks = list(call(tools=TOOLS, stream=True, incremental_output=True))
    for chunk in chunks:
        check_chunk(chunk)
    assert [c.output.choices[0].finish_reason for c in chunks[:-1]] == ["null"] * (len(chunks) - 1)
    assert chunks[-1].output.choices[0].finish_reason == "tool_calls"
    got = merged(chunks)
    assert got["content"] == "Let me add."
    assert got["reasoning"] == "Add them."
    assert got["calls"] == [{"id": "call_1", "name": "add", "arguments": '{"a": 2, "b": 3}'}]
    usage = chunks[-1].usage  # cumulative: the last frame has the total
    assert (usage.input_tokens, usage.output_tokens) == (30, 9)
    assert [c.usage.output_tokens for c in chunks] == sorted(c.usage.output_tokens for c in chunks)
    assert server.requests[0].headers["X-DashScope-SSE"] == "enable"


def test_the_sdk_merges_incremental_frames_into_full_ones(server: FakeDashScopeServer) -> None:
    """With incremental_output=False the SDK asks for increments and merges them itself."""
    server.add(TURN)
    chunks = list(call(tools=TOOLS, stream=True, incremental_output=False))
    assert server.requests[0].body["parameters"]["incremental_output"] is True
    last = chunks[-1].output.choices[0]
    assert last.message.content == "Let me add."
    [tc] = last.message.tool_calls
    assert (tc["id"], tc["function"]["name"]) == ("call_1", "add")
    assert json.loads(tc["function"]["arguments"]) == {"a": 2, "b": 3}


def test_the_sdk_reads_cumulative_frames_when_it_asks_for_them(server: FakeDashScopeServer) -> None:
    server.add("Hello there, friend.")
    chunks = list(call(stream=True))  # no incremental_output: DashScope's cumulative default
    assert "incremental_output" not in server.requests[0].body["parameters"]
    texts = [c.output.choices[0].message.content for c in chunks]
    assert texts[-1] == "Hello there, friend."
    assert all(texts[-1].startswith(t) for t in texts)
    assert len(set(texts)) > 2


def test_the_sdk_reads_multimodal_responses(server: FakeDashScopeServer) -> None:
    server.add("A cat.", "A cat on a mat.")
    messages = [
        {"role": "user", "content": [{"image": "https://example.com/cat.png"}, {"text": "What?"}]}
    ]
    whole = dashscope.MultiModalConversation.call(
        model="qwen-vl-max", messages=messages, api_key="k"
    )
    assert whole.status_code == 200
    assert whole.output.choices[0].message.content == [{"text": "A cat."}]
    chunks = list(
        dashscope.MultiModalConversation.call(
            model="qwen-vl-max",
            messages=messages,
            api_key="k",
            stream=True,
            incremental_output=True,
        )
    )
    pieces = [c.output.choices[0].message.content for c in chunks]
    assert "".join(p[0]["text"] for p in pieces if p) == "A cat on a mat."
    assert chunks[-1].output.choices[0].finish_reason == "stop"
    assert {r.path for r in server.requests} == {
        "/api/v1/services/aigc/multimodal-generation/generation"
    }


def test_the_sdk_reads_error_responses(server: FakeDashScopeServer) -> None:
    server.add("never", "Hello there")
    server.fail(
        1, status=429, error_type="Throttling.RateQuota", message="Requests rate limit exceeded"
    )
    response = call()
    assert response.status_code == 429
    assert (response.code, response.message) == (
        "Throttling.RateQuota",
        "Requests rate limit exceeded",
    )
    assert response.request_id
    server.fail(2, mid_stream_error=2, error_type="InternalError", message="boom")
    chunks = list(call(stream=True, incremental_output=True))
    assert chunks[0].status_code == 200
    assert (chunks[-1].code, chunks[-1].message) == ("InternalError", "boom")


async def test_the_async_sdk_reads_streams_and_whole_responses(
    server: FakeDashScopeServer, aio_session: None
) -> None:
    server.add(TURN, "whole answer")
    stream = await AioGeneration.call(
        model="qwen-plus",
        messages=USER,
        api_key="k",
        result_format="message",
        tools=TOOLS,
        stream=True,
        incremental_output=True,
    )
    chunks = [chunk async for chunk in stream]
    for chunk in chunks:
        check_chunk(chunk)
    got = merged(chunks)
    assert got["calls"] == [{"id": "call_1", "name": "add", "arguments": '{"a": 2, "b": 3}'}]
    whole = await AioGeneration.call(
        model="qwen-plus", messages=USER, api_key="k", result_format="message"
    )
    assert whole.output.choices[0].message.content == "whole answer"


# -- we send what the SDK sends --------------------------------------------------------------------


def _ours(
    messages: list[Msg],
    options: ModelOptions,
    *,
    stream: bool,
    multimodal: bool = False,
    tools: tuple[ToolSchema, ...] = (ADD,),
) -> Any:
    formatter = DashScopeFormatter(multimodal=multimodal)
    body = formatter.format(messages, tools, options, model="qwen-plus", stream=stream)
    return json.loads(json.dumps(body))


CONVERSATION = [
    Msg.system("You add."),
    Msg.user("What is 2 + 3?"),
    Msg.assistant(
        [
            ThinkingBlock(thinking="Add them."),
            TextBlock(text="Let me add."),
            ToolUseBlock(id="call_1", name="add", input={"a": 2, "b": 3}),
        ]
    ),
    Msg.tool(ToolResultBlock(id="call_1", name="add", output="5")),
]
WIRE = [
    {"role": "system", "content": "You add."},
    {"role": "user", "content": "What is 2 + 3?"},
    {
        "role": "assistant",
        "content": "Let me add.",
        "reasoning_content": "Add them.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
            }
        ],
    },
    {"role": "tool", "content": "5", "tool_call_id": "call_1", "name": "add"},
]


@pytest.mark.parametrize("stream", [True, False])
def test_our_body_is_the_sdks_body(server: FakeDashScopeServer, stream: bool) -> None:
    schema = {"name": "sum", "schema": {"type": "object"}}
    options = ModelOptions(
        temperature=0.5,
        max_output_tokens=64,
        tool_choice="add",
        parallel_tool_calls=True,
        response_format={"type": "json_schema", "json_schema": schema},
        stop=("END",),
        seed=42,
        extra={"enable_thinking": False, "top_p": 0.8},
    )
    server.add("5")
    sdk_kwargs: dict[str, Any] = {"incremental_output": True} if stream else {}
    result = call(
        messages=WIRE,
        tools=TOOLS,
        temperature=0.5,
        max_tokens=64,
        tool_choice={"type": "function", "function": {"name": "add"}},
        parallel_tool_calls=True,
        response_format={"type": "json_schema", "json_schema": schema},
        stop=["END"],
        seed=42,
        enable_thinking=False,
        top_p=0.8,
        stream=stream,
        **sdk_kwargs,
    )
    if stream:
        list(result)
    sent = server.requests[0]
    ours = _ours(CONVERSATION, options, stream=stream)
    assert sent.body == ours
    assert sent.path == "/api/v1/services/aigc/text-generation/generation"
    if stream:
        assert sent.headers["X-DashScope-SSE"] == "enable"
        assert sent.headers["Accept"] == "text/event-stream"


def test_our_multimodal_body_is_the_sdks_body(server: FakeDashScopeServer) -> None:
    server.add("A cat.")
    messages = [
        {"role": "system", "content": [{"text": "Look."}]},
        {"role": "user", "content": [{"image": "https://example.com/cat.png"}, {"text": "What?"}]},
    ]
    dashscope.MultiModalConversation.call(
        model="qwen-plus", messages=messages, api_key="k", result_format="message"
    )
    ours = _ours(
        [
            Msg.system("Look."),
            Msg.user([ImageBlock(url="https://example.com/cat.png"), TextBlock(text="What?")]),
        ],
        ModelOptions(),
        stream=False,
        multimodal=True,
        tools=(),
    )
    assert server.requests[0].body == ours


async def test_our_client_sends_the_sdks_headers(server: FakeDashScopeServer) -> None:
    server.add("x", "y")
    list(call(stream=True, incremental_output=True))
    async with DashScopeChatModel("qwen-plus", base_url=server.base_url, api_key="k") as model:
        await model.complete([Msg.user("What is 2 + 3?")])
    sdk, ours = server.requests
    for name in ("Authorization", "X-DashScope-SSE", "Accept"):
        assert ours.headers[name] == sdk.headers[name], name
    assert ours.path == sdk.path
    assert ours.body == sdk.body
