"""Gemini conformance against the official google-genai SDK (a test-only dependency).

- every request body we build validates against the SDK's types (camelCase, extra fields
  forbidden, base64 checked), and for the same conversation equals what the SDK itself sends;
- every response and stream chunk of `FakeGeminiServer` validates as a `GenerateContentResponse`;
- the SDK's own async client, pointed at the fake server, reads text, function calls, thought
  signatures, streams and errors.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.formatters.framing import SSEDecoder
from rxagent.formatters.gemini import GeminiFormatter
from rxagent.messages import (
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models import ModelOptions, ResponseBuilder, ToolSchema, Usage
from rxagent.testing import Turn, text, thinking, tool_call
from rxagent.testing import strategies as rst
from rxagent.testing._builders import turn_to_blocks
from rxagent.testing.providers import FakeGeminiServer, Fault, RecordedRequest, Reply
from rxagent.testing.providers._base import ScriptedResponse, ScriptItem

genai = pytest.importorskip("google.genai")
types = pytest.importorskip("google.genai.types")
errors = pytest.importorskip("google.genai.errors")

# google-genai subclasses aiohttp.ClientSession for its async transport, which aiohttp warns about.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

FMT = GeminiFormatter()
SIG = base64.b64encode(b"opaque thought signature").decode()
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()
ADD = ToolSchema(
    name="add",
    description="Add two numbers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


def _many(model: Any) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        assert isinstance(value, list)
        for item in value:
            model.model_validate_json(json.dumps(item))

    return check


def _one(model: Any) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        model.model_validate_json(json.dumps(value))

    return check


REQUEST_FIELDS: dict[str, Callable[[Any], None]] = {
    "contents": _many(types.Content),
    "systemInstruction": _one(types.Content),
    "tools": _many(types.Tool),
    "toolConfig": _one(types.ToolConfig),
    "generationConfig": _one(types.GenerationConfig),
    "safetySettings": _many(types.SafetySetting),
    "cachedContent": lambda value: None if isinstance(value, str) else pytest.fail("cachedContent"),
}


def validate_request(body: dict[str, Any]) -> None:
    assert set(body) <= set(REQUEST_FIELDS), set(body) - set(REQUEST_FIELDS)
    for key, value in body.items():
        REQUEST_FIELDS[key](value)


RICH_HISTORY = [
    Msg.system("You are terse."),
    Msg.user(
        [
            TextBlock(text="What is in these, and what is 2 + 3?"),
            ImageBlock(data=PNG, media_type="image/png"),
            ImageBlock(url="https://example.com/cat.jpg", media_type="image/jpeg"),
            ImageBlock(url="gs://bucket/dog.png"),
        ],
        name="alice",
    ),
    Msg.assistant(
        [
            ThinkingBlock(thinking="The user wants a sum.", signature=SIG),
            TextBlock(text="Adding."),
            ThinkingBlock(thinking="", signature=SIG),
            ToolUseBlock(id="call_1", name="add", input={"a": 2, "b": 3}),
            ToolUseBlock(id="", name="add", input={"a": 1, "b": 1}),
        ]
    ),
    Msg.tool(ToolResultBlock(id="call_1", name="add", output="5")),
    Msg.tool(
        ToolResultBlock(
            id="",
            name="add",
            output=(TextBlock(text="2"), ImageBlock(data=PNG, media_type="image/png")),
            is_error=True,
        )
    ),
    Msg.assistant([TextBlock(text="5 and 2."), ThinkingBlock(thinking="", signature=SIG)]),
]

OPTIONS = [
    ModelOptions(),
    ModelOptions(
        temperature=0.2,
        max_output_tokens=256,
        stop=("END",),
        seed=3,
        tool_choice="add",
        parallel_tool_calls=True,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "sum", "schema": {"type": "object"}, "strict": True},
        },
        extra={
            "generationConfig": {
                "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 1024}
            },
            "safetySettings": [
                {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}
            ],
            "tools": [{"googleSearch": {}}],
            "toolConfig": {"retrievalConfig": {"languageCode": "en"}},
            "cachedContent": "cachedContents/abc",
        },
    ),
    ModelOptions(tool_choice="required", response_format={"type": "json_object"}),
    ModelOptions(tool_choice="none"),
]


@pytest.mark.parametrize("options", OPTIONS)
def test_request_bodies_validate_against_sdk_types(options: ModelOptions) -> None:
    body = FMT.format(RICH_HISTORY, [ADD], options, model="gemini-2.5-flash", stream=True)
    validate_request(body)


@given(
    history=rst.conversations(),
    tools=st.lists(rst.tool_schemas(["add", "echo"]), max_size=2, unique_by=lambda t: t.name),
    options=rst.model_options(),
)
def test_random_request_bodies_validate(
    history: list[Msg], tools: list[ToolSchema], options: ModelOptions
) -> None:
    options = options.model_copy(update={"extra": {}, "parallel_tool_calls": None})
    history = [with_base64_images(m) for m in history]
    validate_request(FMT.format(history, tools, options, model="m", stream=False))


def with_base64_images(msg: Msg) -> Msg:
    """The strategies draw image data as hex; Gemini's types check that it is base64."""

    def fix(block: Any) -> Any:
        if isinstance(block, ImageBlock) and block.data is not None:
            raw = bytes.fromhex(block.data)
            return block.model_copy(update={"data": base64.b64encode(raw).decode()})
        if isinstance(block, ToolResultBlock) and not isinstance(block.output, str):
            return block.model_copy(update={"output": tuple(fix(b) for b in block.output)})
        return block

    return msg.model_copy(update={"content": tuple(fix(b) for b in msg.blocks)})


# -- responses ---------------------------------------------------------------------------------

TURNS: list[ScriptItem] = [
    "Hello there, how are you today?",
    [thinking("Let me think about it.", signature=SIG), text("It is 4.")],
    [thinking("", signature=SIG), tool_call("add", id="c1", a=2, b=3), tool_call("add", a=1, b=1)],
    [text("Done."), thinking("", signature=SIG)],
    Reply(
        "cut off",
        finish="length",
        usage=Usage(input_tokens=9, output_tokens=2, cache_read_tokens=4),
    ),
    Reply("", finish="content_filter"),
    Reply("x", finish="RECITATION"),
]


def scripted(item: ScriptItem, index: int = 1) -> ScriptedResponse:
    reply = item if isinstance(item, Reply) else Reply(item)
    blocks = turn_to_blocks(reply.turn)
    calls = any(isinstance(b, ToolUseBlock) for b in blocks)
    return ScriptedResponse(
        Msg.assistant(blocks),
        reply.usage or Usage(input_tokens=5, output_tokens=7, requests=1),
        reply.finish or ("tool_calls" if calls else "stop"),
        index,
    )


REQUEST = RecordedRequest(
    method="POST",
    path="/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    query={"alt": "sse"},
    headers={},
    body={"contents": []},
)


@pytest.mark.parametrize("item", TURNS)
@pytest.mark.parametrize("call_ids", [True, False])
def test_fake_server_responses_validate_against_sdk_types(item: ScriptItem, call_ids: bool) -> None:
    server = FakeGeminiServer([item], chunk_size=5, call_ids=call_ids)
    response = scripted(item)
    whole = server.render(response, REQUEST)
    sdk = types.GenerateContentResponse.model_validate_json(json.dumps(whole))
    assert sdk.candidates[0].finish_reason is not None
    decoder = SSEDecoder()
    events = [e for frame in server.render_stream(response, REQUEST) for e in decoder.feed(frame)]
    assert events
    for event in events:
        types.GenerateContentResponse.model_validate_json(event.data)
    # streamed and whole responses parse to the same response
    builder = ResponseBuilder(id_factory=str)
    for delta in FMT.parse_stream(events):
        builder.add(delta)
    streamed, parsed = builder.response(), FMT.parse(whole)
    assert streamed.message.content == parsed.message.content
    assert (streamed.usage, streamed.finish_reason) == (parsed.usage, parsed.finish_reason)
    assert parsed.usage == response.usage.model_copy(update={"requests": 1})


def test_fake_server_error_bodies_validate() -> None:
    server = FakeGeminiServer()
    for fault in (Fault(status=429), Fault(status=400, error_type="API_KEY_INVALID")):
        _, body = server.render_error(fault)
        error = body["error"]
        assert set(error) <= {"code", "message", "status", "details"}
        assert isinstance(error["code"], int)
        assert isinstance(error["status"], str)
    frame = server.render_stream_error(Fault(mid_stream_error=1, error_type="UNAVAILABLE"))
    [event] = SSEDecoder().feed(frame)
    assert json.loads(event.data)["error"]["code"] == 503


# -- the SDK's own client ------------------------------------------------------------------------


@asynccontextmanager
async def sdk_client(server: FakeGeminiServer) -> AsyncIterator[Any]:
    client = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(base_url=server.base_url, api_version="v1beta"),
    )
    try:
        yield client.aio
    finally:
        await client.aio.aclose()
        client.close()


ADD_DECL = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="add", description="Add two numbers.", parameters_json_schema=dict(ADD.parameters)
        )
    ]
)


async def test_sdk_reads_text_and_sends_what_we_send() -> None:
    async with FakeGeminiServer(["Hello from the fake."]) as server, sdk_client(server) as aio:
        config = types.GenerateContentConfig(
            system_instruction="Be terse.", temperature=0.5, max_output_tokens=64, seed=1
        )
        response = await aio.models.generate_content(
            model="gemini-2.5-flash", contents="hi", config=config
        )
    assert response.candidates[0].content.parts[0].text == "Hello from the fake."
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    assert response.usage_metadata.prompt_token_count > 0
    [request] = server.requests
    assert request.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert request.headers["x-goog-api-key"] == "k"
    ours = FMT.format(
        [Msg.system("Be terse."), Msg.user("hi")],
        [],
        ModelOptions(temperature=0.5, max_output_tokens=64, seed=1),
        model="gemini-2.5-flash",
        stream=False,
    )
    sent = dict(request.body)
    assert sent["systemInstruction"].pop("role") == "user"  # the SDK adds it; Gemini needs none
    assert sent == ours


async def test_sdk_reads_function_calls_and_signatures() -> None:
    turn: Turn = [thinking("", signature=SIG), tool_call("add", id="c7", a=2, b=3)]
    async with FakeGeminiServer([turn]) as server, sdk_client(server) as aio:
        response = await aio.models.generate_content(
            model="gemini-2.5-flash",
            contents="2 + 3?",
            config=types.GenerateContentConfig(
                tools=[ADD_DECL],
                tool_config=types.ToolConfig(
                    function_calling_config=types.FunctionCallingConfig(
                        mode="ANY", allowed_function_names=["add"]
                    )
                ),
                automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            ),
        )
    [part] = response.candidates[0].content.parts
    assert part.function_call.name == "add"
    assert part.function_call.id == "c7"
    assert part.function_call.args == {"a": 2, "b": 3}
    assert part.thought_signature == base64.b64decode(SIG)
    _, tools, options = FMT.parse_request(server.requests[0].body)
    assert tools[0].name == "add"
    assert tools[0].parameters == ADD.parameters
    assert options.tool_choice == "add"


async def test_sdk_streams_text_thoughts_and_calls() -> None:
    turns: list[ScriptItem] = [
        [thinking("Summing up.", signature=SIG), text("The answer follows.")],
        [tool_call("add", a=1, b=2)],
    ]
    async with FakeGeminiServer(turns, chunk_size=4, call_ids=False) as server:
        async with sdk_client(server) as aio:
            chunks = [
                c
                async for c in await aio.models.generate_content_stream(
                    model="gemini-2.5-flash", contents="go"
                )
            ]
            calls = [
                c
                async for c in await aio.models.generate_content_stream(
                    model="gemini-2.5-flash",
                    contents="add",
                    config=types.GenerateContentConfig(tools=[ADD_DECL]),
                )
            ]
    assert server.requests[0].query == {"alt": "sse"}
    parts = [p for c in chunks for p in c.candidates[0].content.parts]
    assert "".join(p.text for p in parts if p.thought) == "Summing up."
    assert "".join(p.text for p in parts if not p.thought) == "The answer follows."
    assert [p.thought_signature for p in parts if p.thought_signature] == [base64.b64decode(SIG)]
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    assert chunks[-1].usage_metadata.candidates_token_count > 0
    assert chunks[0].usage_metadata.candidates_token_count is None  # cumulative: only at the end
    [call_chunk] = calls
    call = call_chunk.candidates[0].content.parts[0].function_call
    assert (call.id, call.name, call.args) == (None, "add", {"a": 1, "b": 2})


async def test_sdk_history_with_signatures_parses_back() -> None:
    contents = [
        types.Content(role="user", parts=[types.Part(text="2 + 3?")]),
        types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(id="c1", name="add", args={"a": 2, "b": 3}),
                    thought_signature=base64.b64decode(SIG),
                )
            ],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="c1", name="add", response={"result": "5"}
                    )
                )
            ],
        ),
    ]
    async with FakeGeminiServer(["5"]) as server, sdk_client(server) as aio:
        await aio.models.generate_content(model="gemini-2.5-flash", contents=contents)
    body = server.requests[0].body
    messages, _, _ = FMT.parse_request(body)
    assert messages[1].content == (
        ThinkingBlock(thinking="", signature=SIG),
        ToolUseBlock(id="c1", name="add", input={"a": 2, "b": 3}),
    )
    assert messages[2].tool_results == (ToolResultBlock(id="c1", name="add", output="5"),)
    # and the same history built by rxagent goes out exactly as the SDK sends it
    assert FMT.format(messages, [], ModelOptions(), model="m", stream=False) == body


async def test_sdk_reads_error_bodies() -> None:
    async with FakeGeminiServer(["unused"]) as server, sdk_client(server) as aio:
        server.fail(1, status=429, message="Quota exceeded")
        server.fail(2, status=400, error_type="API_KEY_INVALID", message="API key not valid")
        with pytest.raises(errors.ClientError) as limited:
            await aio.models.generate_content(model="gemini-2.5-flash", contents="hi")
        with pytest.raises(errors.ClientError) as bad_key:
            await aio.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert limited.value.code == 429
    assert limited.value.status == "RESOURCE_EXHAUSTED"
    assert limited.value.message == "Quota exceeded"
    assert bad_key.value.code == 400
    assert bad_key.value.details["error"]["details"][0]["reason"] == ("API_KEY_INVALID")
