"""Conformance with the official `openai` SDK: our request bodies validate against its request
types, the fake server's responses and chunks against its response types, and the SDK itself
(async and sync, OpenAI and Azure) reads the fake server correctly.

Request TypedDicts are validated with `extra="forbid"`, and every lazily validated `Iterable`
field is drained, so a misspelt or misplaced key anywhere in a body fails.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ConfigDict, TypeAdapter

from rxagent.formatters.openai import OpenAIFormatter
from rxagent.messages import (
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models import ModelOptions, OpenAIChatModel, ToolSchema, Usage
from rxagent.testing import strategies as rst
from rxagent.testing import text, thinking, tool_call
from rxagent.testing.providers import FakeOpenAIServer, Fault, Reply

pytest.importorskip("openai")

import openai
from openai.types import ErrorObject
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageParam,
)
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)

STRICT = ConfigDict(extra="forbid")
STREAMING = TypeAdapter(list[CompletionCreateParamsStreaming], config=STRICT)
NON_STREAMING = TypeAdapter(list[CompletionCreateParamsNonStreaming], config=STRICT)
MESSAGES = TypeAdapter(list[ChatCompletionMessageParam], config=STRICT)
TOOLS = TypeAdapter(list[ChatCompletionFunctionToolParam], config=STRICT)
LENIENT_MESSAGES = TypeAdapter(list[ChatCompletionMessageParam])


def drain(value: Any) -> None:
    """Walk a validated value, consuming pydantic's lazy iterators (which validates them)."""
    if isinstance(value, dict):
        for item in value.values():
            drain(item)
    elif isinstance(value, list | tuple):
        for item in value:
            drain(item)
    elif hasattr(value, "__next__"):
        for item in value:
            drain(item)


def validate_request(body: dict[str, Any], *, stream: bool) -> None:
    drain((STREAMING if stream else NON_STREAMING).validate_python([body]))
    drain(MESSAGES.validate_python(body["messages"]))
    if "tools" in body:
        drain(TOOLS.validate_python(body["tools"]))


ADD = ToolSchema(
    name="add",
    description="Add two numbers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
PNG = ImageBlock(data="aGVsbG8=", media_type="image/png")

RICH_HISTORY = [
    Msg.system("Be brief.", name="rules"),
    Msg.user([TextBlock(text="What is this?"), ImageBlock(url="https://x.test/a.png"), PNG]),
    Msg.assistant(
        [
            ThinkingBlock(thinking="Look at it", signature="sig"),
            TextBlock(text="Let me check."),
            ToolUseBlock(id="c1", name="add", input={"a": 1, "b": 2}),
            ToolUseBlock(id="c2", name="shot", input={}, raw_input="{not json"),
        ],
        name="bot",
    ),
    Msg.tool(ToolResultBlock(id="c1", name="add", output="3")),
    Msg.tool(
        ToolResultBlock(id="c2", name="shot", output=(TextBlock(text="x"), PNG), is_error=True)
    ),
    Msg.user("thanks", name="ann"),
    Msg.assistant("You're welcome."),
]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    "options",
    [
        ModelOptions(),
        ModelOptions(
            temperature=0.3,
            max_output_tokens=64,
            tool_choice="auto",
            parallel_tool_calls=False,
            stop=("END", "STOP"),
            seed=1,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "point", "schema": {"type": "object"}, "strict": True},
            },
            extra={"user": "u-1", "logprobs": True, "reasoning_effort": "low"},
        ),
        ModelOptions(tool_choice="required", response_format={"type": "json_object"}),
        ModelOptions(tool_choice="none", response_format={"type": "text"}),
        ModelOptions(tool_choice="add"),
    ],
)
@pytest.mark.parametrize(
    "fmt",
    [
        OpenAIFormatter(),
        OpenAIFormatter(system_role="developer", max_tokens_field="max_tokens"),
    ],
)
def test_request_bodies_validate(fmt: OpenAIFormatter, options: ModelOptions, stream: bool) -> None:
    body = fmt.format(
        RICH_HISTORY, [ADD, ToolSchema(name="now")], options, model="gpt-4o", stream=stream
    )
    validate_request(body, stream=stream)


def test_the_validation_is_strict() -> None:
    body = OpenAIFormatter().format(RICH_HISTORY, [ADD], ModelOptions(), model="m", stream=True)
    body["messages"][1]["content"][0]["bogus"] = 1
    with pytest.raises(ValueError, match="bogus"):
        validate_request(body, stream=True)


def test_reasoning_content_is_the_only_addition_for_deepseek() -> None:
    fmt = OpenAIFormatter(reasoning_content=True)
    body = fmt.format(RICH_HISTORY, [ADD], ModelOptions(), model="deepseek-reasoner", stream=True)
    assert body["messages"][2]["reasoning_content"] == "Look at it"
    drain(LENIENT_MESSAGES.validate_python(body["messages"]))
    for message in body["messages"]:
        message.pop("reasoning_content", None)
    validate_request(body, stream=True)


def _options_without_extra() -> st.SearchStrategy[ModelOptions]:
    return rst.model_options().map(lambda o: o.model_copy(update={"extra": {}}))


@given(
    history=rst.conversations(max_turns=2),
    tools=st.lists(rst.tool_schemas(), max_size=3),
    options=_options_without_extra(),
    stream=st.booleans(),
)
def test_random_conversations_validate(
    history: list[Msg], tools: list[ToolSchema], options: ModelOptions, stream: bool
) -> None:
    body = OpenAIFormatter().format(history, tools, options, model="gpt-4o", stream=stream)
    validate_request(body, stream=stream)


@given(messages=st.lists(rst.messages(), min_size=1, max_size=6))
def test_random_messages_of_every_role_validate(messages: list[Msg]) -> None:
    body = OpenAIFormatter().format(messages, [], ModelOptions(), model="gpt-4o", stream=True)
    validate_request(body, stream=True)


# -- what the fake server sends --------------------------------------------------------------------

TURNS: list[Any] = [
    "Hello there, how are you?",
    [text("Adding."), tool_call("add", id="call_x", a=1, b=2), tool_call("echo", text="hi")],
    [thinking("Two and two."), text("Four.")],
    Reply("cut", finish="length"),
    Reply("filtered", finish="content_filter"),
    Reply(tool_call("add", a=1, b=1), finish="function_call"),
]


async def test_whole_responses_validate_as_chat_completions() -> None:
    usage = Usage(input_tokens=10, output_tokens=3, cache_read_tokens=4, requests=1)
    async with FakeOpenAIServer([*TURNS, Reply("x", usage=usage)]) as server:
        async with aiohttp.ClientSession() as session:
            for _ in range(len(TURNS) + 1):
                body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}
                async with session.post(f"{server.base_url}/chat/completions", json=body) as r:
                    completion = ChatCompletion.model_validate(await r.json())
                assert completion.object == "chat.completion"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens_details is not None
    assert completion.usage.prompt_tokens_details.cached_tokens == 4


async def _raw_stream(server: FakeOpenAIServer, *, include_usage: bool) -> list[str]:
    body: dict[str, Any] = {
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "x"}],
        "stream": True,
    }
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{server.base_url}/chat/completions", json=body) as resp:
            assert resp.headers["Content-Type"].startswith("text/event-stream")
            raw = (await resp.read()).decode()
    assert raw.endswith("\n\n")
    return [event.removeprefix("data: ") for event in raw[:-2].split("\n\n")]


@pytest.mark.parametrize("include_usage", [True, False])
@pytest.mark.parametrize("interleave", [True, False])
async def test_every_stream_chunk_validates(include_usage: bool, interleave: bool) -> None:
    async with FakeOpenAIServer(TURNS, chunk_size=3, interleave_tool_calls=interleave) as server:
        for _ in TURNS:
            events = await _raw_stream(server, include_usage=include_usage)
            assert events[-1] == "[DONE]"
            chunks = [ChatCompletionChunk.model_validate_json(e) for e in events[:-1]]
            first = chunks[0].choices[0].delta
            assert first.role == "assistant"
            assert first.content == ""
            if include_usage:
                assert chunks[-1].choices == []
                assert chunks[-1].usage is not None
                finish = chunks[-2]
            else:
                assert all(c.usage is None for c in chunks)
                finish = chunks[-1]
            assert finish.choices[0].finish_reason is not None
            for c in chunks:
                for call in (c.choices[0].delta.tool_calls or []) if c.choices else []:
                    if call.id is not None:  # a first fragment: id, type, name, no arguments
                        assert call.type == "function"
                        assert call.function is not None
                        assert call.function.name
                        assert call.function.arguments == ""


async def test_error_bodies_and_stream_errors_have_openai_shape() -> None:
    async with FakeOpenAIServer(["a long answer"], chunk_size=2) as server:
        server.fail(1, status=429, error_type="rate_limit_exceeded", message="slow down")
        server.fail(2, mid_stream_error=2, error_type="server_error", message="boom")
        async with aiohttp.ClientSession() as session:
            body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
            async with session.post(f"{server.base_url}/chat/completions", json=body) as resp:
                assert resp.status == 429
                error = ErrorObject.model_validate((await resp.json())["error"])
        assert (error.code, error.type, error.message) == (
            "rate_limit_exceeded",
            "requests",
            "slow down",
        )
        events = await _raw_stream(server, include_usage=True)
    assert events[-1] != "[DONE]"
    stream_error = ErrorObject.model_validate(json.loads(events[-1])["error"])
    assert (stream_error.type, stream_error.message) == ("server_error", "boom")


async def test_our_recorded_requests_validate() -> None:
    async with FakeOpenAIServer(["ok", "ok"]) as server:
        for stream in (True, False):
            model = OpenAIChatModel("gpt-4o", base_url=server.base_url, api_key="k", stream=stream)
            async with model:
                await model.complete(RICH_HISTORY, [ADD], ModelOptions(tool_choice="add"))
    for request, stream in zip(server.requests, (True, False), strict=True):
        validate_request(request.body, stream=stream)


# -- the official SDK against the fake server ------------------------------------------------------

SDK_TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add.",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
    }
]


async def test_async_sdk_reads_text_and_tool_calls() -> None:
    usage = Usage(input_tokens=12, output_tokens=5, cache_read_tokens=8, requests=1)
    turns: list[Any] = [
        Reply("Hello!", usage=usage),
        [text("Adding."), tool_call("add", id="call_7", a=1), tool_call("add", id="call_8", a=2)],
    ]
    async with FakeOpenAIServer(turns) as server:
        client = openai.AsyncOpenAI(
            base_url=server.base_url, api_key="k", _strict_response_validation=True, max_retries=0
        )
        async with client:
            hello = await client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
            )
            calls = await client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "add"}], tools=SDK_TOOLS
            )
    assert hello.choices[0].message.content == "Hello!"
    assert hello.choices[0].finish_reason == "stop"
    assert hello.usage is not None
    assert hello.usage.prompt_tokens == 12
    assert hello.usage.prompt_tokens_details is not None
    assert hello.usage.prompt_tokens_details.cached_tokens == 8
    message = calls.choices[0].message
    assert message.content == "Adding."
    assert message.tool_calls is not None
    function_calls = [
        c for c in message.tool_calls if isinstance(c, ChatCompletionMessageFunctionToolCall)
    ]
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in function_calls] == [
        ("call_7", "add", {"a": 1}),
        ("call_8", "add", {"a": 2}),
    ]
    assert calls.choices[0].finish_reason == "tool_calls"
    # the SDK's own request bodies read back through our parse_request
    messages, tools, _ = OpenAIFormatter().parse_request(server.requests[1].body)
    assert messages[0].text == "add"
    assert tools[0].name == "add"


@pytest.mark.parametrize("interleave", [False, True])
async def test_async_sdk_streams_text_tool_calls_and_usage(interleave: bool) -> None:
    turn: list[Any] = [
        text("Sure."),
        tool_call("add", id="c0", a=10),
        tool_call("echo", id="c1", text="yo"),
    ]
    async with FakeOpenAIServer([turn], chunk_size=3, interleave_tool_calls=interleave) as server:
        client = openai.AsyncOpenAI(
            base_url=server.base_url, api_key="k", _strict_response_validation=True, max_retries=0
        )
        async with client:
            stream = await client.chat.completions.create(
                model="gpt-4o",
                messages=[{"role": "user", "content": "go"}],
                tools=SDK_TOOLS,
                stream=True,
                stream_options={"include_usage": True},
            )
            content: list[str] = []
            args: dict[int, list[str]] = {}
            names: dict[int, str] = {}
            finish = None
            usage = None
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    content.append(choice.delta.content or "")
                    finish = choice.finish_reason or finish
                    for call in choice.delta.tool_calls or []:
                        assert call.function is not None
                        if call.function.name:
                            names[call.index] = call.function.name
                        args.setdefault(call.index, []).append(call.function.arguments or "")
    assert "".join(content) == "Sure."
    assert names == {0: "add", 1: "echo"}
    assert [json.loads("".join(args[i])) for i in (0, 1)] == [{"a": 10}, {"text": "yo"}]
    assert finish == "tool_calls"
    assert usage is not None
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


async def test_async_sdk_stream_helper_accumulates_the_final_completion() -> None:
    async with FakeOpenAIServer([[text("Hi."), tool_call("add", id="c9", a=3)]]) as server:
        client = openai.AsyncOpenAI(
            base_url=server.base_url, api_key="k", _strict_response_validation=True, max_retries=0
        )
        async with client:
            async with client.chat.completions.stream(
                model="gpt-4o", messages=[{"role": "user", "content": "go"}]
            ) as stream:
                final = await stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Hi."
    assert message.tool_calls is not None
    assert message.tool_calls[0].function.arguments == '{"a": 3}'


async def test_async_sdk_sees_openai_errors() -> None:
    async with FakeOpenAIServer(["a long answer"], chunk_size=2) as server:
        server.fail(1, status=429, error_type="rate_limit_exceeded", headers={"retry-after": "1"})
        server.fail(2, status=400, error_type="context_length_exceeded", message="too long")
        server.fail(3, mid_stream_error=2, error_type="server_error", message="boom")
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        async with client:
            messages: list[Any] = [{"role": "user", "content": "x"}]
            with pytest.raises(openai.RateLimitError) as limited:
                await client.chat.completions.create(model="m", messages=messages)
            with pytest.raises(openai.BadRequestError) as too_long:
                await client.chat.completions.create(model="m", messages=messages)
            stream = await client.chat.completions.create(model="m", messages=messages, stream=True)
            with pytest.raises(openai.APIError, match="boom"):
                async for _ in stream:
                    pass
    assert limited.value.code == "rate_limit_exceeded"
    assert too_long.value.code == "context_length_exceeded"


async def test_async_azure_sdk_uses_the_deployment_route() -> None:
    async with FakeOpenAIServer(["from azure"]) as server:
        client = openai.AsyncAzureOpenAI(
            azure_endpoint=server.endpoint,
            api_key="az-key",
            api_version="2024-10-21",
            _strict_response_validation=True,
            max_retries=0,
        )
        async with client:
            completion = await client.chat.completions.create(
                model="my-deployment", messages=[{"role": "user", "content": "hi"}]
            )
    assert completion.choices[0].message.content == "from azure"
    [request] = server.requests
    assert request.path == "/openai/deployments/my-deployment/chat/completions"
    assert request.query["api-version"] == "2024-10-21"
    assert request.headers["api-key"] == "az-key"


def test_sync_sdk_against_a_threaded_server() -> None:
    turns: list[Any] = [
        "Plain answer",
        [tool_call("add", id="c1", a=1), tool_call("add", id="c2", a=2)],
    ]
    with FakeOpenAIServer(turns, chunk_size=4) as server:
        with openai.OpenAI(
            base_url=server.base_url, api_key="k", _strict_response_validation=True, max_retries=0
        ) as client:
            plain = client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
            )
            stream = client.chat.completions.create(
                model="gpt-4o",
                messages=[{"role": "user", "content": "add"}],
                tools=SDK_TOOLS,
                stream=True,
            )
            args: dict[int, str] = {}
            ids: dict[int, str] = {}
            for chunk in stream:
                for call in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
                    assert call.function is not None
                    if call.id:
                        ids[call.index] = call.id
                    args[call.index] = args.get(call.index, "") + (call.function.arguments or "")
    assert plain.choices[0].message.content == "Plain answer"
    assert ids == {0: "c1", 1: "c2"}
    assert {i: json.loads(a) for i, a in args.items()} == {0: {"a": 1}, 1: {"a": 2}}
    assert "stream_options" not in server.requests[1].body


def test_sync_sdk_reads_a_thinking_reply_as_extra_field() -> None:
    with FakeOpenAIServer([[thinking("hmm"), text("ok")]]) as server:
        with openai.OpenAI(
            base_url=server.base_url, api_key="k", _strict_response_validation=True, max_retries=0
        ) as client:
            completion = client.chat.completions.create(
                model="deepseek-reasoner", messages=[{"role": "user", "content": "hi"}]
            )
    message = completion.choices[0].message
    assert message.content == "ok"
    assert message.model_extra == {"reasoning_content": "hmm"}


def test_fault_types_round_trip_through_the_sdk() -> None:
    with FakeOpenAIServer(["x"]) as server:
        server.fail(1, Fault(status=429, error_type="insufficient_quota", message="quota"))
        with openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as client:
            with pytest.raises(openai.RateLimitError) as info:
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "x"}]
                )
    assert info.value.code == "insufficient_quota"
    assert info.value.type == "insufficient_quota"
