"""Conformance with the official `anthropic` SDK (a test dependency only).

- Every request body AnthropicFormatter builds validates against the SDK's request TypedDicts,
  key by key (pydantic validates `Iterable` fields lazily, so nested content is checked
  explicitly, and TypedDicts ignore unknown keys, so keys are compared too).
- Every FakeAnthropicServer response, stream event and error body validates against the SDK's
  response models, with no field the SDK does not know.
- The official client, pointed at the fake server, reads text, tool calls, thinking and streams.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter

from rxagent.formatters.anthropic import REDACTED_THINKING_PREFIX, AnthropicFormatter
from rxagent.formatters.framing import SSEDecoder
from rxagent.messages import ImageBlock, Msg, TextBlock, ThinkingBlock, ToolResultBlock
from rxagent.models import AnthropicChatModel, ModelOptions, ResponseBuilder, ToolSchema, Usage
from rxagent.testing import Turn, text, thinking, tool_call
from rxagent.testing import strategies as rst
from rxagent.testing.providers import FakeAnthropicServer, Reply

anthropic = pytest.importorskip("anthropic")
types = anthropic.types
from anthropic.types import MessageParam, ToolParam  # noqa: E402
from anthropic.types.message_create_params import (  # noqa: E402
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)

F = AnthropicFormatter()
ADD = ToolSchema(
    name="add",
    description="Add two integers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
ECHO = ToolSchema(name="echo", parameters={"type": "object", "properties": {"text": {}}})

BLOCKS: dict[str, Any] = {
    "text": types.TextBlockParam,
    "image": types.ImageBlockParam,
    "thinking": types.ThinkingBlockParam,
    "redacted_thinking": types.RedactedThinkingBlockParam,
    "tool_use": types.ToolUseBlockParam,
    "tool_result": types.ToolResultBlockParam,
}
SOURCES: dict[str, Any] = {
    "base64": types.Base64ImageSourceParam,
    "url": types.URLImageSourceParam,
}
CHOICES: dict[str, Any] = {
    "auto": types.ToolChoiceAutoParam,
    "any": types.ToolChoiceAnyParam,
    "none": types.ToolChoiceNoneParam,
    "tool": types.ToolChoiceToolParam,
}
_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def adapter(tp: Any) -> TypeAdapter[Any]:
    if tp not in _ADAPTERS:
        _ADAPTERS[tp] = TypeAdapter(tp)
    return _ADAPTERS[tp]


def strict(td: Any, value: Any) -> None:
    """Validate `value` against TypedDict `td`, and refuse keys `td` does not declare."""
    adapter(td).validate_python(value)
    known = td.__required_keys__ | td.__optional_keys__
    assert set(value) <= known, f"{td.__name__} has no {set(value) - known}"
    assert td.__required_keys__ <= set(value)


def check_block(block: dict[str, Any], allowed: set[str]) -> None:
    assert block["type"] in allowed, block
    strict(BLOCKS[block["type"]], block)
    if "cache_control" in block:
        strict(types.CacheControlEphemeralParam, block["cache_control"])
    if block["type"] == "image":
        strict(SOURCES[block["source"]["type"]], block["source"])
    if block["type"] == "tool_result" and not isinstance(block.get("content", ""), str):
        for inner in block["content"]:
            check_block(inner, {"text", "image"})


def check_body(body: dict[str, Any]) -> None:
    """Validate a request body against the SDK, all the way down.

    `temperature` is the one key the SDK's TypedDict lacks: SDK 2.x targets anthropic-version
    2026-10-21, which has no sampling parameters, while our client sends 2023-06-01, which takes
    a number there (and the formatter refuses it for 2026-10-21).
    """
    if "temperature" in body:
        assert type(body["temperature"]) in (int, float)
    rest = {k: v for k, v in body.items() if k != "temperature"}
    strict(
        MessageCreateParamsStreaming if body.get("stream") else MessageCreateParamsNonStreaming,
        rest,
    )
    adapter(list[MessageParam]).validate_python(body["messages"])
    for message in body["messages"]:
        role = message["role"]
        strict(types.UserMessageParam if role == "user" else types.AssistantMessageParam, message)
        if isinstance(message["content"], str):
            continue
        allowed = (
            {"text", "image", "tool_result"}
            if role == "user"
            else {"text", "thinking", "redacted_thinking", "tool_use"}
        )
        for block in message["content"]:
            check_block(block, allowed)
    for block in body.get("system", []):
        check_block(block, {"text"})
    adapter(list[ToolParam]).validate_python(body.get("tools", []))
    for tool in body.get("tools", []):
        strict(types.ToolParam, tool)
        if "cache_control" in tool:
            strict(types.CacheControlEphemeralParam, tool["cache_control"])
    if "tool_choice" in body:
        strict(CHOICES[body["tool_choice"]["type"]], body["tool_choice"])
    if "thinking" in body:
        strict(types.ThinkingConfigEnabledParam, body["thinking"])
    if "metadata" in body:
        strict(types.MetadataParam, body["metadata"])
    json.dumps(body)  # and it is JSON


def no_extra(model: Any) -> None:
    """Assert that a parsed SDK model (recursively) has no field the SDK does not know."""
    if isinstance(model, BaseModel):
        assert not model.model_extra, f"{type(model).__name__} got unknown {model.model_extra}"
        for name in type(model).model_fields:
            no_extra(getattr(model, name))
    elif isinstance(model, list):
        for item in model:
            no_extra(item)


HISTORY = [
    Msg.system("You are terse."),
    Msg.user(
        [
            TextBlock(text="What is in these?"),
            ImageBlock(data="iVBORw0KGgo=", media_type="image/png"),
            ImageBlock(url="https://example.com/cat.jpg"),
        ]
    ),
    Msg.assistant(
        [
            ThinkingBlock(thinking="Two images.", signature="RXVTaWc="),
            ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + "ZW5j"),
            ThinkingBlock(thinking="unsigned, from elsewhere"),
            TextBlock(text="Checking."),
            tool_call("add", id="toolu_1", a=1, b=2),
            tool_call("echo", id="toolu_2", text="hi"),
        ]
    ),
    Msg.tool(ToolResultBlock(id="toolu_1", name="add", output="3")),
    Msg.tool(
        ToolResultBlock(
            id="toolu_2",
            name="echo",
            output=(TextBlock(text="hi"), ImageBlock(data="R0lGOD=", media_type="image/gif")),
            is_error=True,
        )
    ),
    Msg.user("Go on", name="ann"),
    Msg.system("Late system note."),
]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    "options",
    [
        ModelOptions(),
        ModelOptions(temperature=0.2, max_output_tokens=300, stop=("END", "STOP")),
        ModelOptions(tool_choice="required", parallel_tool_calls=False),
        ModelOptions(tool_choice="none"),
        ModelOptions(tool_choice="add", parallel_tool_calls=True),
        ModelOptions(parallel_tool_calls=False),
        ModelOptions(
            extra={
                "thinking": {"type": "enabled", "budget_tokens": 2048},
                "metadata": {"user_id": "u-1"},
                "cache_breakpoints": True,
            }
        ),
    ],
)
def test_request_bodies_validate_against_the_sdk(options: ModelOptions, stream: bool) -> None:
    body = F.format(HISTORY, [ADD, ECHO], options, model="claude-sonnet-5-5", stream=stream)
    check_body(body)


def test_history_breakpoint_on_string_content_validates() -> None:
    options = ModelOptions(extra={"cache_breakpoints": ["history", "system"]})
    check_body(F.format([Msg.system("s"), Msg.user("q")], [], options, model="m", stream=True))


def test_the_validation_catches_a_wrong_body() -> None:
    body = F.format([Msg.user("q")], [ADD], ModelOptions(), model="m", stream=False)
    with pytest.raises(AssertionError, match="has no"):
        check_body({**body, "tool_choices": {"type": "auto"}})
    body["messages"][0]["content"] = [{"type": "text", "txt": "q"}]
    with pytest.raises(ValueError, match="text"):
        check_body(body)


@st.composite
def requests(draw: st.DrawFn) -> tuple[list[Msg], ModelOptions]:
    history = draw(rst.conversations(max_turns=2))
    options = draw(rst.model_options())
    return history, options.model_copy(update={"seed": None, "response_format": None, "extra": {}})


@given(requests(), st.booleans())
def test_random_conversations_validate_against_the_sdk(
    request_: tuple[list[Msg], ModelOptions], stream: bool
) -> None:
    history, options = request_
    body = F.format(history, [ADD, ECHO], options, model="claude", stream=stream)
    check_body(body)


# -- the fake server's responses ----------------------------------------------------------------

TURNS: list[Any] = [
    "Plain answer.",
    [
        thinking("Let me think.", signature="c2lnbmF0dXJl"),
        text("So:"),
        tool_call("add", id="toolu_x", a=1, b=2),
    ],
    [ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + "b3BhcXVl"), text("Hidden.")],
    [tool_call("add", id="toolu_a", a=1, b=1), tool_call("echo", id="toolu_b", text="x")],
    Reply("Cut o", finish="length"),
    Reply("No.", finish="content_filter"),
    Reply("Paused.", finish="pause"),
    Reply(
        "Cached.",
        usage=Usage(
            input_tokens=500, output_tokens=9, cache_read_tokens=400, cache_write_tokens=50
        ),
    ),
]


async def post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> Any:
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    async with session.post(f"{url}/v1/messages", json=body, headers=headers) as resp:
        return resp.status, await resp.read()


@pytest.mark.parametrize("index", range(len(TURNS)))
async def test_whole_and_streamed_responses_validate(index: int) -> None:
    body = F.format([Msg.user("q")], [ADD, ECHO], ModelOptions(), model="claude-x", stream=False)
    async with FakeAnthropicServer([TURNS[index]] * 2, chunk_size=3) as server:
        async with aiohttp.ClientSession() as session:
            status, whole = await post(session, server.base_url, body)
            status_s, streamed = await post(session, server.base_url, {**body, "stream": True})
    assert status == status_s == 200
    message = types.Message.model_validate_json(whole)
    no_extra(message)
    events = SSEDecoder().feed(streamed)
    kinds = [e.event for e in events]
    assert kinds[:2] == ["message_start", "ping"]
    assert kinds[-2:] == [
        "message_delta",
        "message_stop",
    ]
    event_adapter = adapter(types.RawMessageStreamEvent)
    for event in events:
        data = json.loads(event.data)
        assert data["type"] == event.event
        if event.event == "ping":
            assert data == {"type": "ping"}
            continue
        no_extra(event_adapter.validate_python(data))
    # our parser reads both the same way
    parsed = F.parse(json.loads(whole))
    parser = F.stream_parser()
    builder = ResponseBuilder()
    for event in events:
        for delta in parser.feed(event):
            builder.add(delta)
    parser.close()
    assert builder.build().content == parsed.message.content
    assert builder.finish_reason == parsed.finish_reason
    # the fake server estimates input tokens from the body, which differs by `"stream": true`
    no_input = {"input_tokens": 0}
    assert builder.usage.model_copy(update=no_input) == parsed.usage.model_copy(update=no_input)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 429, 500, 529])
async def test_error_bodies_validate(status: int) -> None:
    body = F.format([Msg.user("q")], [], ModelOptions(), model="m", stream=False)
    async with FakeAnthropicServer(["x"]) as server:
        server.fail(1, status=status)
        async with aiohttp.ClientSession() as session:
            got, raw = await post(session, server.base_url, body)
    assert got == status
    no_extra(types.ErrorResponse.model_validate_json(raw))


async def test_a_mid_stream_error_frame_validates() -> None:
    body = F.format([Msg.user("q")], [], ModelOptions(), model="m", stream=True)
    async with FakeAnthropicServer(["a long reply"], chunk_size=2) as server:
        server.fail(1, mid_stream_error=3, error_type="rate_limit_error")
        async with aiohttp.ClientSession() as session:
            _, raw = await post(session, server.base_url, body)
    last = SSEDecoder().feed(raw)[-1]
    assert last.event == "error"
    error = types.ErrorResponse.model_validate_json(last.data)
    assert error.error.type == "rate_limit_error"


# -- the official client against the fake server -------------------------------------------------


def client(server: FakeAnthropicServer) -> Any:
    return anthropic.AsyncAnthropic(base_url=server.base_url, api_key="k", max_retries=0)


async def test_sdk_create_reads_text_thinking_tool_use_and_usage() -> None:
    turn: Turn = [
        thinking("Plan.", signature="c2ln"),
        text("Adding."),
        tool_call("add", id="toolu_1", a=1, b=2),
    ]
    usage = Usage(input_tokens=120, output_tokens=30, cache_read_tokens=100, cache_write_tokens=0)
    async with FakeAnthropicServer([Reply(turn, usage=usage)]) as server:
        async with client(server) as sdk:
            message = await sdk.messages.create(
                model="claude-sonnet-5-5",
                max_tokens=256,
                messages=[{"role": "user", "content": "1 + 2?"}],
                tools=[{"name": "add", "input_schema": dict(ADD.parameters)}],
            )
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].signature == "c2ln"
    assert message.content[0].thinking == "Plan."
    assert message.content[2].input == {"a": 1, "b": 2}
    assert message.content[2].id == "toolu_1"
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens) == (20, 100)
    assert message.usage.output_tokens == 30
    messages, tools, _ = server.decode(server.requests[0])
    assert messages[0].text == "1 + 2?"
    assert tools[0].name == "add"


async def test_sdk_stream_reads_the_final_message() -> None:
    turn: Turn = [
        thinking("Think step by step.", signature="U2ln"),
        text("Here goes a longer answer."),
        tool_call("echo", id="toolu_9", text="hello world"),
    ]
    async with FakeAnthropicServer([turn, "Plain streamed text."], chunk_size=4) as server:
        async with client(server) as sdk:
            async with sdk.messages.stream(
                model="claude", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                final = await stream.get_final_message()
            async with sdk.messages.stream(
                model="claude", max_tokens=64, messages=[{"role": "user", "content": "again"}]
            ) as stream:
                pieces = [piece async for piece in stream.text_stream]
    assert final.content[0].type == "thinking"
    assert final.content[0].signature == "U2ln"
    assert final.content[0].thinking == "Think step by step."
    assert final.content[1].text == "Here goes a longer answer."
    assert final.content[2].input == {"text": "hello world"}
    assert final.stop_reason == "tool_use"
    assert "".join(pieces) == "Plain streamed text."
    assert len(pieces) == 5


async def test_sdk_reads_redacted_thinking_and_sends_it_back() -> None:
    turn: list[Any] = [
        ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + "b3BhcXVl"),
        "ok",
    ]
    async with FakeAnthropicServer([turn, "done"]) as server:
        async with client(server) as sdk:
            first = await sdk.messages.create(
                model="claude", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
            )
            await sdk.messages.create(
                model="claude",
                max_tokens=64,
                messages=[
                    {"role": "user", "content": "hi"},
                    first.to_param(),
                    {"role": "user", "content": "more"},
                ],
            )
    assert first.content[0].type == "redacted_thinking"
    assert first.content[0].data == "b3BhcXVl"
    messages, _, _ = server.decode(server.requests[1])
    assert messages[1].content[0] == turn[0]


async def test_sdk_errors_from_the_fake_server() -> None:
    async with FakeAnthropicServer(["a long reply", "x"], chunk_size=2) as server:
        server.fail(1, status=429, headers={"retry-after": "1"})
        server.fail(2, mid_stream_error=4, message="Overloaded")
        async with client(server) as sdk:
            with pytest.raises(anthropic.RateLimitError):
                await sdk.messages.create(
                    model="claude", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
                )
            with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
                async with sdk.messages.stream(
                    model="claude", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
                ) as stream:
                    await stream.get_final_message()


async def test_our_client_and_the_sdk_agree_on_the_same_stream() -> None:
    turn: Turn = [
        thinking("Hmm.", signature="c2c="),
        text("Both."),
        tool_call("add", id="toolu_3", a=4, b=5),
    ]
    async with FakeAnthropicServer([turn, turn], chunk_size=3) as server:
        async with client(server) as sdk:
            async with sdk.messages.stream(
                model="claude", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                sdk_final = await stream.get_final_message()
        async with AnthropicChatModel("claude", base_url=server.base_url, api_key="k") as ours:
            response = await ours.complete([Msg.user("hi")])
    blocks = response.message.content
    assert isinstance(blocks[0], ThinkingBlock)
    assert (blocks[0].thinking, blocks[0].signature) == (
        sdk_final.content[0].thinking,
        sdk_final.content[0].signature,
    )
    assert response.message.text == sdk_final.content[1].text
    assert dict(response.message.tool_calls[0].input) == sdk_final.content[2].input
    assert response.usage.output_tokens == sdk_final.usage.output_tokens
