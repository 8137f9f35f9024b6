"""GeminiFormatter: request bodies, responses, streams and errors of Gemini `generateContent`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxagent.errors import (
    AgentRunError,
    AuthenticationError,
    ContextTooLongError,
    ErrorCode,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
)
from rxagent.formatters.base import response_to_deltas
from rxagent.formatters.framing import SSEDecoder, SSEEvent
from rxagent.formatters.gemini import (
    FINISH_ERRORS,
    FINISH_REASON_MAP,
    GeminiFormatter,
    GeminiStreamParser,
)
from rxagent.messages import (
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    thaw,
)
from rxagent.models import ModelOptions, ResponseBuilder, ToolSchema
from rxagent.models.base import FinishDelta, TextDelta, ThinkingDelta, ToolCallDelta, UsageDelta

FMT = GeminiFormatter()
ADD = ToolSchema(
    name="add",
    description="Add two numbers.",
    parameters={"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
)
SIG = "c2lnbmF0dXJlLTE="  # base64, as Gemini sends


def body_for(
    messages: list[Msg], tools: list[ToolSchema] | None = None, **options: Any
) -> dict[str, Any]:
    return FMT.format(messages, tools or [], ModelOptions(**options), model="m", stream=True)


def chunk(parts: list[dict[str, Any]] | None = None, finish: str | None = None, **top: Any) -> str:
    candidate: dict[str, Any] = {"index": 0}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    if finish is not None:
        candidate["finishReason"] = finish
    return json.dumps({"candidates": [candidate], **top})


def stream(*datas: str) -> list[Any]:
    parser = FMT.stream_parser()
    deltas: list[Any] = []
    for data in datas:
        deltas.extend(parser.feed(SSEEvent(data=data)))
    deltas.extend(parser.close())
    return deltas


def built(deltas: list[Any]) -> Msg:
    builder = ResponseBuilder(id_factory=str)
    for delta in deltas:
        builder.add(delta)
    return builder.build()


# -- requests ----------------------------------------------------------------------------------


def test_roles_and_system_instruction_hoisted() -> None:
    body = body_for(
        [
            Msg.system("Be brief."),
            Msg.user("hi"),
            Msg.assistant("hello"),
            Msg(
                role="system", content=(TextBlock(text="Now in French."), TextBlock(text="Really."))
            ),
            Msg.user("again"),
        ]
    )
    assert body == {
        "systemInstruction": {
            "parts": [{"text": "Be brief."}, {"text": "Now in French."}, {"text": "Really."}]
        },
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"text": "hello"}]},
            {"role": "user", "parts": [{"text": "again"}]},
        ],
    }
    assert "model" not in body
    assert "stream" not in body


def test_images_inline_file_and_data_url() -> None:
    body = body_for(
        [
            Msg.user(
                [
                    TextBlock(text="Compare:"),
                    ImageBlock(data="iVBORw0KGgo=", media_type="image/png"),
                    ImageBlock(url="https://example.com/cat.jpg"),
                    ImageBlock(url="gs://bucket/dog.png", media_type="image/png"),
                    ImageBlock(url="data:image/jpeg;base64,/9j/4AAQ"),
                ]
            )
        ]
    )
    assert body["contents"][0]["parts"] == [
        {"text": "Compare:"},
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"fileData": {"fileUri": "https://example.com/cat.jpg"}},
        {"fileData": {"fileUri": "gs://bucket/dog.png", "mimeType": "image/png"}},
        {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}},
    ]
    with pytest.raises(InvalidRequestError, match="not base64"):
        body_for([Msg.user([ImageBlock(url="data:text/plain,hello")])])


def test_tool_calls_and_consecutive_results_share_one_user_content() -> None:
    body = body_for(
        [
            Msg.user("sum and echo"),
            Msg.assistant(
                [
                    TextBlock(text="On it."),
                    ToolUseBlock(id="c1", name="add", input={"a": 1, "b": 2}),
                    ToolUseBlock(id="c2", name="echo", input={"text": "x"}),
                ]
            ),
            Msg.tool(ToolResultBlock(id="c1", name="add", output="3")),
            Msg.tool(ToolResultBlock(id="c2", name="echo", output="boom", is_error=True)),
            Msg.user("thanks"),
        ],
        [ADD],
    )
    contents = body["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"text": "On it."},
            {"functionCall": {"id": "c1", "name": "add", "args": {"a": 1, "b": 2}}},
            {"functionCall": {"id": "c2", "name": "echo", "args": {"text": "x"}}},
        ],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"id": "c1", "name": "add", "response": {"result": "3"}}},
            {"functionResponse": {"id": "c2", "name": "echo", "response": {"error": "boom"}}},
        ],
    }
    assert contents[3] == {"role": "user", "parts": [{"text": "thanks"}]}
    assert len(contents) == 4


def test_tool_result_blocks_send_joined_text_and_image_parts() -> None:
    result = ToolResultBlock(
        id="c1",
        name="shot",
        output=(
            TextBlock(text="line 1"),
            ImageBlock(data="AAAA", media_type="image/png"),
            TextBlock(text="line 2"),
            ImageBlock(url="https://example.com/a.png", media_type="image/png"),
        ),
    )
    [part] = body_for([Msg.tool(result)])["contents"][0]["parts"]
    assert part == {
        "functionResponse": {
            "id": "c1",
            "name": "shot",
            "response": {"result": "line 1\nline 2"},
            "parts": [
                {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
                {"fileData": {"fileUri": "https://example.com/a.png", "mimeType": "image/png"}},
            ],
        }
    }
    bad = ToolResultBlock(id="c", name="t", output=(ThinkingBlock(thinking="x"),))
    with pytest.raises(InvalidRequestError, match="thinking block in a tool result"):
        body_for([Msg.tool(bad)])


def test_tool_declarations_use_parameters_json_schema() -> None:
    bare = ToolSchema(name="ping")
    body = body_for([Msg.user("hi")], [ADD, bare])
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "add",
                    "description": "Add two numbers.",
                    "parametersJsonSchema": {
                        "type": "object",
                        "properties": {"a": {"type": "integer"}},
                        "required": ["a"],
                    },
                },
                {"name": "ping", "parametersJsonSchema": {"type": "object", "properties": {}}},
            ]
        }
    ]
    assert type(body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]) is dict


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ("add", {"mode": "ANY", "allowedFunctionNames": ["add"]}),
    ],
)
def test_tool_choice_becomes_function_calling_config(choice: str, config: dict[str, Any]) -> None:
    body = body_for([Msg.user("hi")], [ADD], tool_choice=choice)
    assert body["toolConfig"] == {"functionCallingConfig": config}
    assert FMT.parse_request(body)[2].tool_choice == choice
    assert "toolConfig" not in body_for([Msg.user("hi")], [], tool_choice=choice)


def test_generation_config_from_options() -> None:
    body = body_for(
        [Msg.user("hi")],
        temperature=0.3,
        max_output_tokens=64,
        stop=("END", "STOP"),
        seed=7,
        parallel_tool_calls=True,
        response_format={"type": "json_object"},
    )
    assert body["generationConfig"] == {
        "temperature": 0.3,
        "maxOutputTokens": 64,
        "stopSequences": ["END", "STOP"],
        "seed": 7,
        "responseMimeType": "application/json",
    }
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": True}}
    config = body_for([Msg.user("hi")], response_format=fmt)["generationConfig"]
    assert config == {"responseMimeType": "application/json", "responseJsonSchema": schema}
    assert "generationConfig" not in body_for([Msg.user("hi")], response_format={"type": "text"})
    with pytest.raises(InvalidRequestError, match="response_format"):
        body_for([Msg.user("hi")], response_format={"type": "xml"})


def test_parallel_tool_calls_false_is_refused() -> None:
    with pytest.raises(InvalidRequestError, match="parallel_tool_calls=False") as info:
        body_for([Msg.user("hi")], [ADD], parallel_tool_calls=False)
    assert info.value.provider == "gemini"
    assert not info.value.recoverable


def test_extra_merges_generation_config_tool_config_and_tools() -> None:
    extra = {
        "generationConfig": {"thinkingConfig": {"includeThoughts": True, "thinkingBudget": 512}},
        "toolConfig": {"retrievalConfig": {"languageCode": "en"}},
        "tools": [{"googleSearch": {}}],
        "safetySettings": [
            {"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}
        ],
    }
    body = body_for([Msg.user("hi")], [ADD], temperature=0.5, tool_choice="auto", extra=extra)
    assert body["generationConfig"] == {
        "temperature": 0.5,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 512},
    }
    assert body["toolConfig"] == {
        "functionCallingConfig": {"mode": "AUTO"},
        "retrievalConfig": {"languageCode": "en"},
    }
    assert body["tools"][1] == {"googleSearch": {}}
    assert body["tools"][0]["functionDeclarations"][0]["name"] == "add"
    assert body["safetySettings"][0]["threshold"] == "BLOCK_ONLY_HIGH"
    _, tools, options = FMT.parse_request(body)
    assert [t.name for t in tools] == ["add"]
    assert options.temperature == 0.5
    assert options.tool_choice == "auto"
    assert thaw(options.extra) == extra
    # extra's generationConfig wins key by key
    config = body_for(
        [Msg.user("x")], temperature=0.5, extra={"generationConfig": {"temperature": 1}}
    )
    assert config["generationConfig"] == {"temperature": 1}


@pytest.mark.parametrize(
    "extra",
    [
        {"contents": []},
        {"systemInstruction": {"parts": [{"text": "x"}]}},
        {"generationConfig": 3},
        {"tools": {"googleSearch": {}}},
    ],
)
def test_bad_extra_is_refused(extra: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequestError, match="extra"):
        body_for([Msg.user("hi")], extra=extra)


def test_names_become_a_leading_text_part() -> None:
    body = body_for(
        [
            Msg.system("Rules.", name="host"),
            Msg.user("hi", name="alice"),
            Msg.assistant([ToolUseBlock(id="c", name="add", input={})], name="bot"),
        ]
    )
    assert body["systemInstruction"]["parts"] == [{"text": "host: "}, {"text": "Rules."}]
    assert body["contents"][0]["parts"] == [{"text": "alice: "}, {"text": "hi"}]
    assert body["contents"][1]["parts"][0] == {"text": "bot: "}
    named_tool = Msg.tool(ToolResultBlock(id="c", name="add", output="1"), name="adder")
    with pytest.raises(InvalidRequestError, match="name='adder'"):
        body_for([named_tool])


@pytest.mark.parametrize(
    ("msg", "what"),
    [
        (Msg.user([ThinkingBlock(thinking="x")]), "thinking block in a user message"),
        (Msg.user([ToolUseBlock(id="c", name="t")]), "tool_use block in a user message"),
        (
            Msg.assistant([ToolResultBlock(id="c", name="t", output="x")]),
            "tool_result block in an assistant message",
        ),
        (
            Msg(role="system", content=(ImageBlock(url="https://x/y.png"),)),
            "image block in a system message",
        ),
        (Msg(role="tool", content="loose text"), "a tool message without a ToolResultBlock"),
        (Msg(role="tool", content=(TextBlock(text="x"),)), "text block in a tool message"),
    ],
)
def test_blocks_a_role_cannot_hold_are_refused(msg: Msg, what: str) -> None:
    with pytest.raises(InvalidRequestError, match=what) as info:
        body_for([msg])
    assert info.value.provider == "gemini"


def test_empty_messages_are_not_sent() -> None:
    body = body_for([Msg.system(""), Msg.user(""), Msg.assistant([]), Msg.user("hi")])
    assert body == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def test_thinking_parts_and_signatures() -> None:
    reply = Msg.assistant(
        [
            ThinkingBlock(thinking="plan", signature=None),
            ThinkingBlock(thinking="more", signature="s1"),
            ThinkingBlock(thinking="", signature="s2"),
            TextBlock(text="Calling."),
            ThinkingBlock(thinking="", signature="s3"),
            ToolUseBlock(id="c1", name="add", input={"a": 1}),
            ThinkingBlock(thinking="", signature="s4"),
            ThinkingBlock(thinking="late thought"),
            ThinkingBlock(thinking="", signature="s5"),
        ]
    )
    assert body_for([reply])["contents"][0]["parts"] == [
        {"text": "plan", "thought": True},
        {"text": "more", "thought": True, "thoughtSignature": "s1"},
        {"text": "Calling.", "thoughtSignature": "s2"},
        {"functionCall": {"id": "c1", "name": "add", "args": {"a": 1}}, "thoughtSignature": "s3"},
        {"text": "", "thoughtSignature": "s4"},
        {"text": "late thought", "thought": True},
        {"text": "", "thoughtSignature": "s5"},
    ]
    messages, _, _ = FMT.parse_request(body_for([reply]))
    assert messages == [messages[0]]
    assert messages[0].content == reply.content


def test_raw_input_is_sent_as_its_parsed_input() -> None:
    call = ToolUseBlock(id="c1", name="add", input={}, raw_input="{not json")
    [part] = body_for([Msg.assistant([call])])["contents"][0]["parts"]
    assert part == {"functionCall": {"id": "c1", "name": "add", "args": {}}}


def test_call_without_id_sends_no_id() -> None:
    call = ToolUseBlock(id="", name="add", input={"a": 1})
    result = ToolResultBlock(id="", name="add", output="1")
    contents = body_for([Msg.assistant([call]), Msg.tool(result)])["contents"]
    assert contents[0]["parts"][0] == {"functionCall": {"name": "add", "args": {"a": 1}}}
    assert contents[1]["parts"][0] == {
        "functionResponse": {"name": "add", "response": {"result": "1"}}
    }


# -- the thought-signature round trip ------------------------------------------------------------


def test_signature_round_trips_from_response_to_next_request() -> None:
    response = json.loads(
        chunk(
            [{"functionCall": {"name": "add", "args": {"a": 2}}, "thoughtSignature": SIG}],
            "STOP",
        )
    )
    parsed = FMT.parse(response)
    assert parsed.finish_reason == "tool_calls"
    assert parsed.message.content == (
        ThinkingBlock(thinking="", signature=SIG),
        ToolUseBlock(id="", name="add", input={"a": 2}),
    )
    deltas = response_to_deltas(parsed)
    assert deltas[1] == ToolCallDelta(index=1, id=None, name="add", args='{"a": 2}')
    # what the agent stores after assigning its id, then sends back
    reply = built(deltas).model_copy()
    call = reply.tool_calls[0].model_copy(update={"id": "call_1"})
    reply = Msg.assistant([reply.blocks[0], call])
    nxt = body_for(
        [Msg.user("2?"), reply, Msg.tool(ToolResultBlock(id="call_1", name="add", output="2"))]
    )
    # the agent's own id is not sent: the history reads as Gemini wrote it
    assert nxt["contents"][1]["parts"] == [
        {"functionCall": {"name": "add", "args": {"a": 2}}, "thoughtSignature": SIG}
    ]
    assert nxt["contents"][2]["parts"] == [
        {"functionResponse": {"name": "add", "response": {"result": "2"}}}
    ]


@pytest.mark.parametrize(
    ("mode", "sent"),
    [
        ("model", ["g-1", None, "call_x"]),
        ("always", ["g-1", "call_2", "call_x"]),
        ("never", [None] * 3),
    ],
)
def test_call_ids_modes(mode: Any, sent: list[str | None]) -> None:
    ids = ["g-1", "call_2", "call_x"]
    calls = [ToolUseBlock(id=i, name="t", input={}) for i in ids]
    results = [Msg.tool(ToolResultBlock(id=i, name="t", output="ok")) for i in ids]
    fmt = GeminiFormatter(call_ids=mode)
    body = fmt.format([Msg.assistant(calls), *results], [], ModelOptions(), model="m", stream=False)
    model_parts, result_parts = body["contents"][0]["parts"], body["contents"][1]["parts"]
    assert [p["functionCall"].get("id") for p in model_parts] == sent
    assert [p["functionResponse"].get("id") for p in result_parts] == sent
    with pytest.raises(ValueError, match="call_ids"):
        GeminiFormatter(call_ids="sometimes")  # type: ignore[arg-type]


def test_streamed_signature_round_trips_on_first_text_part() -> None:
    deltas = stream(
        chunk([{"text": "plan", "thought": True}]),
        chunk([{"text": "Hel", "thoughtSignature": SIG}]),
        chunk([{"text": "lo"}], "STOP"),
    )
    reply = built(deltas)
    assert reply.content == (
        ThinkingBlock(thinking="plan"),
        ThinkingBlock(thinking="", signature=SIG),
        TextBlock(text="Hello"),
    )
    parts = body_for([reply])["contents"][0]["parts"]
    assert parts == [{"text": "plan", "thought": True}, {"text": "Hello", "thoughtSignature": SIG}]


# -- whole responses -----------------------------------------------------------------------------


def test_parse_text_and_usage() -> None:
    body = json.loads(
        chunk(
            [{"text": "Hello "}, {"text": "world"}],
            "STOP",
            usageMetadata={
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 30,
                "cachedContentTokenCount": 64,
                "toolUsePromptTokenCount": 5,
                "totalTokenCount": 155,
            },
            modelVersion="gemini-2.5-flash",
        )
    )
    response = FMT.parse(body)
    assert response.message.content == (TextBlock(text="Hello world"),)
    assert response.finish_reason == "stop"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (105, 50, 64)
    assert (usage.cache_write_tokens, usage.requests) == (0, 1)


def test_parse_parallel_calls_with_and_without_ids() -> None:
    body = json.loads(
        chunk(
            [
                {"functionCall": {"id": "g1", "name": "add", "args": {"a": 1}}},
                {"functionCall": {"name": "echo"}},
            ],
            "STOP",
        )
    )
    response = FMT.parse(body)
    assert response.finish_reason == "tool_calls"
    assert response.message.tool_calls == (
        ToolUseBlock(id="g1", name="add", input={"a": 1}),
        ToolUseBlock(id="", name="echo", input={}),
    )
    assert [d.id for d in response_to_deltas(response) if isinstance(d, ToolCallDelta)] == [
        "g1",
        None,
    ]


def test_parse_non_object_arguments_keep_raw_input() -> None:
    body = json.loads(chunk([{"functionCall": {"name": "add", "args": "not json"}}], "STOP"))
    [call] = FMT.parse(body).message.tool_calls
    assert call.input == {}
    assert call.raw_input == '"not json"'


@pytest.mark.parametrize(("word", "reason"), sorted(FINISH_REASON_MAP.items()))
def test_finish_reason_table(word: str, reason: str) -> None:
    response = FMT.parse(json.loads(chunk([{"text": "x"}], word)))
    assert response.finish_reason == reason
    call = FMT.parse(json.loads(chunk([{"functionCall": {"name": "t", "args": {}}}], word)))
    assert call.finish_reason == ("tool_calls" if reason == "stop" else reason)


@pytest.mark.parametrize(("word", "code"), sorted(FINISH_ERRORS.items()))
def test_failing_finish_reasons_raise(word: str, code: ErrorCode) -> None:
    with pytest.raises(AgentRunError) as info:
        FMT.parse(json.loads(chunk([], word)))
    err = info.value
    assert err.code == code
    assert err.provider_code == word
    assert err.provider == "gemini"
    assert err.recoverable is (code == ErrorCode.PROVIDER_ERROR)
    with pytest.raises(AgentRunError) as streamed:
        stream(chunk([{"text": "partial"}]), chunk([], word))
    assert streamed.value.code == code


def test_unknown_finish_reason_is_malformed() -> None:
    with pytest.raises(ProviderError, match="unknown finishReason 'GAVE_UP'") as info:
        FMT.parse(json.loads(chunk([{"text": "x"}], "GAVE_UP")))
    assert not info.value.recoverable
    assert info.value.excerpt


def test_blocked_prompt_is_a_content_filter_finish() -> None:
    body = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 9}}
    response = FMT.parse(body)
    assert response.finish_reason == "content_filter"
    assert response.message.content == ()
    assert response.usage.input_tokens == 9
    assert stream(json.dumps(body))[-1] == FinishDelta(reason="content_filter")


@pytest.mark.parametrize(
    "body",
    [
        [],
        "text",
        {},
        {"candidates": "nope"},
        {"candidates": [{"content": {"parts": "nope"}, "finishReason": "STOP"}]},
        {"candidates": [{"content": {"parts": [{"text": 3}]}, "finishReason": "STOP"}]},
        {"candidates": [{"content": {"parts": [{"functionCall": {}}]}, "finishReason": "STOP"}]},
        {"candidates": [{"content": {"parts": [{}]}, "finishReason": "STOP"}]},
        {"candidates": [{"finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": "9"}},
        {"candidates": [{"finishReason": "STOP"}], "usageMetadata": [1]},
        {"candidates": [7]},
    ],
)
def test_malformed_bodies_raise_provider_error(body: Any) -> None:
    with pytest.raises(ProviderError) as info:
        FMT.parse(body)
    assert info.value.provider == "gemini"
    assert not info.value.recoverable


@pytest.mark.parametrize(
    ("part", "kind"),
    [
        ({"inlineData": {"mimeType": "image/png", "data": "AAAA"}}, "inlineData"),
        ({"executableCode": {"language": "PYTHON", "code": "1"}}, "executableCode"),
    ],
)
def test_output_parts_rxagent_cannot_read_are_refused(part: dict[str, Any], kind: str) -> None:
    with pytest.raises(ProviderError, match=f"a {kind} part"):
        FMT.parse(json.loads(chunk([part], "STOP")))


def test_a_200_body_that_is_an_error_is_typed() -> None:
    body = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
    with pytest.raises(ProviderError) as info:
        FMT.parse(body)
    assert info.value.status == 503
    assert info.value.recoverable


# -- streams -------------------------------------------------------------------------------------


def test_stream_text_continues_one_block_and_usage_is_reported_once() -> None:
    usage = {"promptTokenCount": 10, "totalTokenCount": 10}
    deltas = stream(
        chunk([{"text": "The "}], usageMetadata=usage),
        chunk([{"text": "answer "}], usageMetadata=usage),
        chunk(
            [{"text": "is 4."}],
            "STOP",
            usageMetadata={
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
        ),
    )
    assert deltas[:3] == [
        TextDelta(index=0, text="The "),
        TextDelta(index=0, text="answer "),
        TextDelta(index=0, text="is 4."),
    ]
    [usage_delta] = [d for d in deltas if isinstance(d, UsageDelta)]
    assert (usage_delta.usage.input_tokens, usage_delta.usage.output_tokens) == (10, 5)
    assert deltas[-1] == FinishDelta(reason="stop")


def test_stream_indexes_change_with_part_kind() -> None:
    deltas = stream(
        chunk([{"text": "think ", "thought": True}]),
        chunk([{"text": "more", "thought": True}]),
        chunk([{"text": "Sure."}]),
        chunk([{"functionCall": {"id": "a", "name": "add", "args": {"a": 1}}}]),
        chunk([{"functionCall": {"name": "echo", "args": {"text": "hi"}}}]),
        chunk([{"text": "After."}], "STOP"),
    )
    content = [d for d in deltas if not isinstance(d, UsageDelta | FinishDelta)]
    assert content == [
        ThinkingDelta(index=0, text="think "),
        ThinkingDelta(index=0, text="more"),
        TextDelta(index=1, text="Sure."),
        ToolCallDelta(index=2, id="a", name="add", args='{"a": 1}'),
        ToolCallDelta(index=3, id=None, name="echo", args='{"text": "hi"}'),
        TextDelta(index=4, text="After."),
    ]
    assert deltas[-1] == FinishDelta(reason="tool_calls")


def test_stream_trailing_signature_only_part() -> None:
    deltas = stream(
        chunk([{"text": "Done."}]), chunk([{"text": "", "thoughtSignature": SIG}], "STOP")
    )
    reply = built(deltas)
    assert reply.content == (TextBlock(text="Done."), ThinkingBlock(thinking="", signature=SIG))
    assert body_for([reply])["contents"][0]["parts"] == [
        {"text": "Done."},
        {"text": "", "thoughtSignature": SIG},
    ]


def test_truncated_stream_is_a_recoverable_error() -> None:
    parser = FMT.stream_parser()
    assert parser.feed(SSEEvent(data=chunk([{"text": "Hel"}]))) == [TextDelta(index=0, text="Hel")]
    with pytest.raises(ProviderError, match="ended early") as info:
        parser.close()
    assert info.value.recoverable
    assert info.value.provider == "gemini"


def test_stream_bad_events() -> None:
    parser = FMT.stream_parser()
    assert parser.feed(SSEEvent(comments=(" keep-alive",))) == []
    with pytest.raises(ProviderError, match="not JSON") as info:
        parser.feed(SSEEvent(data="<html>502</html>"))
    assert "<html>502" in (info.value.excerpt or "")
    with pytest.raises(ProviderError, match="not a JSON object"):
        parser.feed(SSEEvent(data="[1, 2]"))
    with pytest.raises(ProviderError, match="not a response chunk"):
        parser.feed(SSEEvent(data='{"candidates": [{"content": {"parts": [null]}}]}'))
    with pytest.raises(ProviderError, match="without an error object"):
        parser.feed(SSEEvent(data='{"error": "bad"}'))


@pytest.mark.parametrize(
    ("error", "cls", "status", "recoverable"),
    [
        (
            {"code": 429, "message": "slow", "status": "RESOURCE_EXHAUSTED"},
            RateLimitedError,
            429,
            True,
        ),
        ({"code": 500, "message": "oops", "status": "INTERNAL"}, ProviderError, 500, True),
        ({"message": "gone", "status": "UNAVAILABLE"}, ProviderError, 503, True),
        (
            {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"},
            InvalidRequestError,
            400,
            False,
        ),
    ],
)
def test_error_event_inside_a_stream_is_typed(
    error: dict[str, Any], cls: type[AgentRunError], status: int, recoverable: bool
) -> None:
    parser = FMT.stream_parser()
    parser.feed(SSEEvent(data=chunk([{"text": "Hi"}])))
    with pytest.raises(cls) as info:
        parser.feed(SSEEvent(data=json.dumps({"error": error})))
    assert info.value.status == status
    assert info.value.recoverable is recoverable
    assert info.value.provider_code == error["status"]


def test_stream_from_raw_bytes_with_crlf_framing() -> None:
    raw = (
        'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"¡Hola"}]},"index":0}]}'
        "\r\n\r\n"
        'data: {"candidates":[{"content":{"role":"model","parts":[{"text":" señor!"}]},'
        '"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":2,'
        '"candidatesTokenCount":3,"totalTokenCount":5}}\r\n\r\n'
    ).encode()
    decoder, parser = SSEDecoder(), GeminiStreamParser()
    deltas = [
        d for i in range(len(raw)) for e in decoder.feed(raw[i : i + 1]) for d in parser.feed(e)
    ]
    deltas += [d for e in decoder.close() for d in parser.feed(e)] + parser.close()
    assert built(deltas).text == "¡Hola señor!"


# -- errors ---------------------------------------------------------------------------------------


def google_error(code: int, status: str, message: str = "m", **extra: Any) -> bytes:
    return json.dumps(
        {"error": {"code": code, "message": message, "status": status, **extra}}
    ).encode()


CONTEXT_MESSAGE = (
    "The input token count (1245730) exceeds the maximum number of tokens allowed (1048576)."
)
RETRY_INFO = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}
KEY_INVALID = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    "reason": "API_KEY_INVALID",
    "domain": "googleapis.com",
}


@pytest.mark.parametrize(
    ("status", "body", "code", "recoverable"),
    [
        (400, google_error(400, "INVALID_ARGUMENT"), ErrorCode.INVALID_REQUEST, False),
        (
            400,
            google_error(400, "INVALID_ARGUMENT", CONTEXT_MESSAGE),
            ErrorCode.CONTEXT_TOO_LONG,
            False,
        ),
        (400, google_error(400, "INVALID_ARGUMENT", details=[KEY_INVALID]), ErrorCode.AUTH, False),
        (400, google_error(400, "FAILED_PRECONDITION"), ErrorCode.INVALID_REQUEST, False),
        (401, google_error(401, "UNAUTHENTICATED"), ErrorCode.AUTH, False),
        (403, google_error(403, "PERMISSION_DENIED"), ErrorCode.AUTH, False),
        (404, google_error(404, "NOT_FOUND"), ErrorCode.INVALID_REQUEST, False),
        (429, google_error(429, "RESOURCE_EXHAUSTED"), ErrorCode.RATE_LIMITED, True),
        (500, google_error(500, "INTERNAL"), ErrorCode.PROVIDER_ERROR, True),
        (503, google_error(503, "UNAVAILABLE"), ErrorCode.PROVIDER_ERROR, True),
        (504, google_error(504, "DEADLINE_EXCEEDED"), ErrorCode.PROVIDER_ERROR, True),
        (502, b"<html><body>Bad Gateway</body></html>", ErrorCode.PROVIDER_ERROR, True),
        (413, b"Request Entity Too Large", ErrorCode.CONTEXT_TOO_LONG, False),
        (400, b'{"unexpected": true}', ErrorCode.INVALID_REQUEST, False),
    ],
)
def test_error_mapping_table(status: int, body: bytes, code: ErrorCode, recoverable: bool) -> None:
    err = FMT.error_from_response(status, body, {})
    assert err.code == code
    assert err.recoverable is recoverable
    assert err.provider == "gemini"
    assert err.status == status
    assert err.excerpt


def test_html_error_page_from_a_proxy() -> None:
    page = b"<!DOCTYPE html><html><title>502 Bad Gateway</title>" + b"x" * 2000
    err = FMT.error_from_response(502, page, {"Content-Type": "text/html"})
    assert isinstance(err, ProviderError)
    assert err.recoverable
    assert err.excerpt is not None
    assert err.excerpt.startswith("<!DOCTYPE html>")
    assert len(err.excerpt) <= 300
    assert "gemini HTTP 502" in str(err)


def test_context_marker_and_auth_reason_are_typed() -> None:
    err = FMT.error_from_response(400, google_error(400, "INVALID_ARGUMENT", CONTEXT_MESSAGE), {})
    assert isinstance(err, ContextTooLongError)
    assert err.provider_code == "INVALID_ARGUMENT"
    err = FMT.error_from_response(
        400, google_error(400, "INVALID_ARGUMENT", details=[KEY_INVALID]), {}
    )
    assert isinstance(err, AuthenticationError)
    # the marker counts only with INVALID_ARGUMENT: a quota message mentioning tokens stays a 429
    err = FMT.error_from_response(429, google_error(429, "RESOURCE_EXHAUSTED", CONTEXT_MESSAGE), {})
    assert isinstance(err, RateLimitedError)


def test_retry_info_delay_unless_a_header_says() -> None:
    body = google_error(429, "RESOURCE_EXHAUSTED", details=[RETRY_INFO])
    assert FMT.error_from_response(429, body, {}).retry_after == 37.0
    assert FMT.error_from_response(429, body, {"Retry-After": "2"}).retry_after == 2.0
    odd = google_error(429, "RESOURCE_EXHAUSTED", details=[{"@type": "x"}, 3, {"@type": 1}])
    assert FMT.error_from_response(429, odd, {}).retry_after is None


def test_array_wrapped_error_body() -> None:
    body = b"[" + google_error(403, "PERMISSION_DENIED", "no access") + b"]"
    err = FMT.error_from_response(403, body, {})
    assert isinstance(err, AuthenticationError)
    assert "no access" in err.message


# -- parse_request ------------------------------------------------------------------------------


def test_parse_request_inverts_format() -> None:
    messages = [
        Msg.system("Be brief."),
        Msg.user([TextBlock(text="look"), ImageBlock(url="https://x.dev/a.png")]),
        Msg.assistant(
            [
                ThinkingBlock(thinking="", signature=SIG),
                ToolUseBlock(id="c1", name="add", input={"a": 1}),
            ]
        ),
        Msg.tool(ToolResultBlock(id="c1", name="add", output="1")),
        Msg.tool(
            ToolResultBlock(
                id="c2",
                name="shot",
                output=(TextBlock(text="see"), ImageBlock(data="AAAA", media_type="image/png")),
                is_error=True,
            )
        ),
        Msg.assistant("Done."),
    ]
    options = ModelOptions(
        temperature=0.1,
        max_output_tokens=9,
        stop=("x",),
        seed=1,
        tool_choice="required",
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": {"type": "object"}},
        },
        extra={"cachedContent": "cachedContents/abc"},
    )
    body = FMT.format(messages, [ADD], options, model="m", stream=False)
    back, tools, parsed = FMT.parse_request(body)
    assert [(m.role, m.blocks) for m in back] == [(m.role, m.blocks) for m in messages]
    assert tools == [ADD]
    assert parsed == options


def test_parse_request_reads_foreign_shapes() -> None:
    body = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "w", "response": {"temp": 20}}},
                    {"text": "and?"},
                ],
            }
        ],
        "tools": [
            {"functionDeclarations": [{"name": "w", "parameters_json_schema": {"type": "object"}}]}
        ],
    }
    messages, tools, _ = FMT.parse_request(body)
    assert messages[0].tool_results[0].output == '{"temp": 20}'
    assert messages[1].text == "and?"
    assert tools[0].parameters == {"type": "object"}
    with pytest.raises(ProviderError, match="not a generateContent request"):
        FMT.parse_request({"contents": [{"role": "user", "parts": [{"video": 1}]}]})
