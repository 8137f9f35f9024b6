"""Ollama conformance: our requests validate against the official `ollama` SDK's types, every line
FakeOllamaServer sends validates as an `ollama.ChatResponse`, and the SDK's own clients (async and
sync) read text, thinking, tool calls and errors from the fake server.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.formatters.ollama import OllamaFormatter
from rxagent.messages import ImageBlock, Msg, TextBlock, ToolResultBlock
from rxagent.models import ModelOptions, ToolSchema
from rxagent.testing import Turn, text, thinking, tool_call
from rxagent.testing import strategies as rst
from rxagent.testing.providers import FakeOllamaServer, Reply

ollama = pytest.importorskip("ollama")
ollama_types = pytest.importorskip("ollama._types")
ChatRequest = ollama_types.ChatRequest

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
ADD = ToolSchema(
    name="add",
    description="Add two numbers.",
    parameters={
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "The first."},
            "b": {"type": "integer", "description": "The second."},
        },
        "required": ["a", "b"],
    },
)
OLLAMA_TOOLS = OllamaFormatter().format([], [ADD], ModelOptions(), model="m", stream=True)["tools"]
# Keys we send that the SDK's Message / ToolCall types do not declare (newer servers read them).
EXTENSIONS = {"tool_call_id"}
TURNS: list[Turn] = [
    "Hello there, how can I help?",
    [thinking("The user wants a sum."), text("Adding."), tool_call("add", a=1, b=2)],
    [tool_call("add", a=1, b=2), tool_call("echo", text="héllo")],
]


def conversation() -> list[Msg]:
    return [
        Msg.system("You add numbers."),
        Msg.user(
            [
                TextBlock(text="What is in this picture?"),
                ImageBlock(data=PNG, media_type="image/png"),
            ]
        ),
        Msg.assistant(
            [thinking("A sum."), text("Let me add."), tool_call("add", id="call_1", a=1, b=2)]
        ),
        Msg.tool(ToolResultBlock(id="call_1", name="add", output="3")),
        Msg.tool(
            ToolResultBlock(
                id="call_2",
                name="plot",
                output=(TextBlock(text="chart"), ImageBlock(data=PNG, media_type="image/png")),
                is_error=True,
            )
        ),
        Msg.assistant("1 + 2 = 3"),
    ]


def validate_message(wire: dict[str, Any]) -> Any:
    """Validate one of our wire messages as the SDK does before sending (`_copy_messages`)."""
    assert set(wire) <= set(ollama.Message.model_fields) | EXTENSIONS
    for call in wire.get("tool_calls", ()):
        assert set(call) <= {"function", "id"}
        ollama.Message.ToolCall.model_validate(call)
        assert isinstance(call["function"]["arguments"], dict)
    data = {
        k: [ollama.Image(value=v) for v in val] if k == "images" else val for k, val in wire.items()
    }
    return ollama.Message.model_validate(data)


# -- our requests ----------------------------------------------------------------------------------


def test_request_body_validates_against_the_sdk_types() -> None:
    fmt = OllamaFormatter(think=True, keep_alive="5m")
    options = ModelOptions(
        temperature=0.3,
        max_output_tokens=128,
        stop=("###",),
        seed=42,
        response_format={"type": "json_object"},
        extra={"options": {"num_ctx": 8192, "top_k": 20}},
    )
    body = fmt.format(conversation(), [ADD], options, model="llama3.2", stream=True)
    request = ChatRequest.model_validate(body)
    assert request.model == "llama3.2"
    assert request.stream is True
    assert request.think is True
    assert request.keep_alive == "5m"
    assert request.format == "json"
    sdk_options = ollama.Options.model_validate(body["options"])
    assert (sdk_options.temperature, sdk_options.num_predict) == (0.3, 128)
    assert (sdk_options.seed, list(sdk_options.stop or ()), sdk_options.num_ctx) == (
        42,
        ["###"],
        8192,
    )
    messages = [validate_message(m) for m in body["messages"]]
    assert messages[2].thinking == "A sum."
    assert messages[2].tool_calls[0].function.arguments == {"a": 1, "b": 2}
    assert messages[3].tool_name == "add"
    assert messages[4].content.startswith("Error: ")
    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    # what the SDK would put on the wire for our messages: the same, minus our extensions
    dumped = ChatRequest(model="llama3.2", messages=messages).model_dump(exclude_none=True)
    for ours, theirs in zip(body["messages"], dumped["messages"], strict=True):
        assert theirs == {
            k: v for k, v in ours.items() if k not in EXTENSIONS and k != "tool_calls"
        } | (
            {"tool_calls": [{"function": c["function"]} for c in ours["tool_calls"]]}
            if "tool_calls" in ours
            else {}
        )
    [tool] = [ollama.Tool.model_validate(t) for t in body["tools"]]
    assert tool.function.name == "add"
    assert tool.function.parameters.required == ["a", "b"]
    assert set(tool.function.parameters.properties) == {"a", "b"}


def test_json_schema_format_validates() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    options = ModelOptions(
        response_format={"type": "json_schema", "json_schema": {"name": "place", "schema": schema}}
    )
    body = OllamaFormatter().format([Msg.user("Where?")], [], options, model="m", stream=False)
    assert ChatRequest.model_validate(body).format == schema


@given(rst.conversations(max_turns=2))
def test_random_conversations_validate(history: list[Msg]) -> None:
    safe = [
        m.model_copy(update={"content": tuple(_bytes_only(b) for b in m.content)})
        if not isinstance(m.content, str)
        else m
        for m in history
    ]
    body = OllamaFormatter().format(safe, [ADD], ModelOptions(), model="m", stream=True)
    ChatRequest.model_validate(body)
    for wire in body["messages"]:
        validate_message(wire)


def _bytes_only(block: Any) -> Any:
    if isinstance(block, ToolResultBlock) and not isinstance(block.output, str):
        output = tuple(
            ImageBlock(data=PNG, media_type="image/png") if isinstance(b, ImageBlock) else b
            for b in block.output
        )
        return block.model_copy(update={"output": output})
    return block


# -- the fake server's responses -------------------------------------------------------------------


async def _post(server: FakeOllamaServer, body: dict[str, Any]) -> tuple[str, bytes]:
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{server.base_url}/api/chat", json=body) as resp:
            return resp.headers["Content-Type"], await resp.read()


@pytest.mark.parametrize("turn", TURNS)
async def test_every_stream_line_and_whole_response_validates(turn: Turn) -> None:
    request = {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}]}
    async with FakeOllamaServer([turn, turn], chunk_size=4) as server:
        ctype, streamed = await _post(server, request)  # no "stream": Ollama streams
        _, whole = await _post(server, {**request, "stream": False})
    assert ctype == "application/x-ndjson"
    lines = streamed.decode().splitlines()
    chunks = [ollama.ChatResponse.model_validate(json.loads(line)) for line in lines]
    assert all(c.model == "llama3.2" and c.message.role == "assistant" for c in chunks)
    assert [c.done for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert chunks[-1].done_reason == "stop"
    assert chunks[-1].eval_count
    assert chunks[-1].prompt_eval_count
    response = ollama.ChatResponse.model_validate(json.loads(whole))
    assert response.done is True
    assert response.message.content == "".join(c.message.content or "" for c in chunks)
    assert response.message.thinking == ("".join(c.message.thinking or "" for c in chunks) or None)
    streamed_calls = [t for c in chunks for t in c.message.tool_calls or ()]
    assert streamed_calls == list(response.message.tool_calls or ())


async def test_tags_and_version_answer() -> None:
    async with FakeOllamaServer([]) as server:
        async with ollama.AsyncClient(host=server.base_url) as sdk:
            assert list((await sdk.list()).models) == []
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{server.base_url}/api/version") as resp:
                assert "version" in await resp.json()


# -- the official clients against the fake server -------------------------------------------------


async def test_async_client_reads_text_thinking_and_tool_calls() -> None:
    turn: Turn = [thinking("The user wants a sum."), text("Adding."), tool_call("add", a=1, b=2)]
    async with FakeOllamaServer([turn, turn, "Plain text."], chunk_size=5) as server:
        async with ollama.AsyncClient(host=server.base_url) as sdk:
            messages = [{"role": "user", "content": "1 + 2?"}]
            whole = await sdk.chat(
                model="llama3.2", messages=messages, tools=OLLAMA_TOOLS, stream=False
            )
            parts = [
                p async for p in await sdk.chat(model="llama3.2", messages=messages, stream=True)
            ]
            plain = await sdk.chat(model="llama3.2", messages=messages)
    assert whole.message.thinking == "The user wants a sum."
    assert whole.message.content == "Adding."
    [call] = whole.message.tool_calls
    assert (call.function.name, dict(call.function.arguments)) == ("add", {"a": 1, "b": 2})
    assert whole.done_reason == "stop"
    assert "".join(p.message.thinking or "" for p in parts) == "The user wants a sum."
    assert "".join(p.message.content for p in parts) == "Adding."
    assert [t.function.name for p in parts for t in p.message.tool_calls or ()] == ["add"]
    assert parts[-1].done
    assert plain.message.content == "Plain text."
    # what the SDK sent is an /api/chat request our formatter reads back
    first = server.requests[0].body
    assert first["stream"] is False
    assert first["tools"][0]["function"]["name"] == "add"
    history, tools, _ = OllamaFormatter().parse_request(first)
    assert history[0].text == "1 + 2?"
    assert tools[0].name == "add"


def test_sync_client_against_a_threaded_server() -> None:
    with FakeOllamaServer([Reply("Hello from a thread.", finish="length"), "again"]) as server:
        sdk = ollama.Client(host=server.base_url)
        try:
            parts = list(
                sdk.chat(
                    model="llama3.2", messages=[{"role": "user", "content": "hi"}], stream=True
                )
            )
            whole = sdk.chat(model="llama3.2", messages=[{"role": "user", "content": "hi"}])
        finally:
            sdk.close()
    assert "".join(p.message.content for p in parts) == "Hello from a thread."
    assert parts[-1].done_reason == "length"
    assert whole.message.content == "again"


async def test_sdk_sees_http_and_stream_errors() -> None:
    async with FakeOllamaServer(["never", "a long answer"], chunk_size=2) as server:
        server.fail(
            1,
            status=404,
            message='model "llama9" not found, try pulling it first',
            consume_turn=True,
        )
        server.fail(2, mid_stream_error=2, message="the runner crashed")
        async with ollama.AsyncClient(host=server.base_url) as sdk:
            with pytest.raises(ollama.ResponseError) as missing:
                await sdk.chat(model="llama9", messages=[{"role": "user", "content": "hi"}])
            stream = await sdk.chat(
                model="llama3.2", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            seen: list[str] = []
            with pytest.raises(ollama.ResponseError) as crashed:
                await _drain(stream, seen)
    assert missing.value.status_code == 404
    assert "not found" in missing.value.error
    assert seen == ["a ", "lo"]
    assert crashed.value.error == "the runner crashed"


async def _drain(stream: Any, seen: list[str]) -> None:
    async for part in stream:
        seen.append(part.message.content)


@given(st.sampled_from(TURNS), st.integers(min_value=1, max_value=12))
def test_rendered_lines_validate_for_any_chunk_size(turn: Turn, size: int) -> None:
    from rxagent.testing.providers._base import RecordedRequest, ScriptedResponse

    server = FakeOllamaServer([turn], chunk_size=size)
    request = RecordedRequest("POST", "/api/chat", {}, {}, {"model": "m", "messages": []})
    response = server._next_response(request, 1)
    assert response is not None
    for line in server.render_stream(response, request):
        assert line.endswith(b"\n")
        ollama.ChatResponse.model_validate(json.loads(line))
    ollama.ChatResponse.model_validate(server.render(response, request))
    assert isinstance(response, ScriptedResponse)
