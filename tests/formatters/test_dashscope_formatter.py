"""DashScopeFormatter: request bodies, whole responses, SSE streams and error classification."""

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
from rxagent.formatters.dashscope import (
    TOOL_ERROR_PREFIX,
    TOOL_IMAGE_NOTE,
    DashScopeFormatter,
    is_multimodal_model,
)
from rxagent.formatters.framing import SSEDecoder, SSEEvent
from rxagent.messages import (
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models import ModelOptions, ResponseBuilder, ToolSchema
from rxagent.models.base import (
    FinishDelta,
    ModelDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)

F = DashScopeFormatter()
VL = DashScopeFormatter(multimodal=True)
ADD = ToolSchema(
    name="add",
    description="Add two numbers.",
    parameters={"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
)


def fmt(
    messages: list[Msg], tools: list[ToolSchema] | None = None, formatter=F, stream=False, **opts
):
    body = formatter.format(
        messages, tools or [], ModelOptions(**opts), model="qwen-plus", stream=stream
    )
    return json.loads(json.dumps(body))  # as sent: tuples become lists


def frame(n: int, data: dict[str, Any], *, event: str = "result", status: int = 200) -> bytes:
    payload = json.dumps(data, separators=(",", ":"))
    return f"id:{n}\nevent:{event}\n:HTTP_STATUS/{status}\ndata:{payload}\n\n".encode()


def result(message: dict[str, Any], finish: str = "null", usage: dict[str, Any] | None = None):
    data: dict[str, Any] = {
        "output": {
            "choices": [{"message": {"role": "assistant", **message}, "finish_reason": finish}]
        },
        "request_id": "req-1",
    }
    if usage is not None:
        data["usage"] = usage
    return data


def usage(inp: int, out: int, **extra: Any) -> dict[str, Any]:
    return {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out, **extra}


def events(raw: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    return decoder.feed(raw) + decoder.close()


def stream(raw: bytes, formatter: DashScopeFormatter = F) -> list[ModelDelta]:
    return list(formatter.parse_stream(events(raw)))


def build(deltas: list[ModelDelta]) -> ResponseBuilder:
    builder = ResponseBuilder()
    for delta in deltas:
        builder.add(delta)
    return builder


# -- requests --------------------------------------------------------------------------------------


def test_the_body_is_model_input_messages_and_parameters() -> None:
    body = fmt([Msg.system("Be brief."), Msg.user("Hi")])
    assert body == {
        "model": "qwen-plus",
        "input": {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
            ]
        },
        "parameters": {"result_format": "message"},
    }


def test_streaming_asks_for_incremental_output_and_whole_responses_do_not() -> None:
    assert fmt([Msg.user("x")], stream=True)["parameters"]["incremental_output"] is True
    assert "incremental_output" not in fmt([Msg.user("x")], stream=False)["parameters"]


def test_every_option_has_its_parameter() -> None:
    schema = {"name": "answer", "schema": {"type": "object"}, "strict": True}
    params = fmt(
        [Msg.user("x")],
        [ADD],
        temperature=0.3,
        max_output_tokens=99,
        tool_choice="auto",
        parallel_tool_calls=True,
        response_format={"type": "json_schema", "json_schema": schema},
        stop=("END", "STOP"),
        seed=7,
    )["parameters"]
    assert params == {
        "result_format": "message",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "add",
                    "description": "Add two numbers.",
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "integer"}},
                        "required": ["a"],
                    },
                },
            }
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "temperature": 0.3,
        "max_tokens": 99,
        "stop": ["END", "STOP"],
        "seed": 7,
        "response_format": {"type": "json_schema", "json_schema": schema},
    }


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("add", {"type": "function", "function": {"name": "add"}}),
    ],
)
def test_tool_choice(choice: str, wire: Any) -> None:
    assert fmt([Msg.user("x")], [ADD], tool_choice=choice)["parameters"]["tool_choice"] == wire


def test_tool_choice_required_is_refused_with_the_fix() -> None:
    with pytest.raises(InvalidRequestError, match="name the tool"):
        fmt([Msg.user("x")], [ADD], tool_choice="required")
    assert not F.capabilities.supports_tool_choice_required


def test_json_object_passes_and_an_unknown_response_format_is_refused() -> None:
    params = fmt([Msg.user("x")], response_format={"type": "json_object"})["parameters"]
    assert params["response_format"] == {"type": "json_object"}
    with pytest.raises(InvalidRequestError, match="response_format"):
        fmt([Msg.user("x")], response_format={"type": "grammar"})


def test_extra_goes_into_parameters_except_top_level_keys() -> None:
    body = fmt(
        [Msg.user("x")],
        extra={"enable_thinking": True, "thinking_budget": 100, "resources": [{"id": "r"}]},
    )
    assert body["parameters"]["enable_thinking"] is True
    assert body["parameters"]["thinking_budget"] == 100
    assert body["resources"] == [{"id": "r"}]
    assert "resources" not in body["parameters"]


def test_extra_may_not_change_what_the_parser_reads() -> None:
    with pytest.raises(InvalidRequestError, match="result_format"):
        fmt([Msg.user("x")], extra={"result_format": "text"})
    with pytest.raises(InvalidRequestError, match="incremental_output"):
        fmt([Msg.user("x")], stream=True, extra={"incremental_output": False})
    # not streaming, the flag is DashScope's business
    assert (
        fmt([Msg.user("x")], extra={"incremental_output": False})["parameters"][
            "incremental_output"
        ]
        is False
    )


def test_assistant_text_thinking_and_tool_calls() -> None:
    reply = Msg.assistant(
        [
            ThinkingBlock(thinking="The user wants ", signature="sig"),
            ThinkingBlock(thinking="a sum."),
            TextBlock(text="Adding"),
            TextBlock(text=" now."),
            ToolUseBlock(id="call_1", name="add", input={"a": 1}),
            ToolUseBlock(id="call_2", name="add", raw_input="{not json"),
        ]
    )
    [wire] = fmt([reply])["input"]["messages"]
    assert wire == {
        "role": "assistant",
        "content": "Adding now.",
        "reasoning_content": "The user wants a sum.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "add", "arguments": "{not json"},
            },
        ],
    }


def test_an_assistant_message_with_only_tool_calls_has_empty_content() -> None:
    [wire] = fmt([Msg.assistant([ToolUseBlock(id="c", name="add", input={})])])["input"]["messages"]
    assert wire["content"] == ""
    assert "reasoning_content" not in wire


def test_tool_results_become_tool_messages() -> None:
    ok = Msg.tool(ToolResultBlock(id="call_1", name="add", output="3"))
    failed = Msg.tool(
        ToolResultBlock(id="call_2", name="div", output="division by zero", is_error=True)
    )
    blocks = Msg.tool(
        ToolResultBlock(
            id="call_3", name="read", output=(TextBlock(text="line 1"), TextBlock(text="line 2"))
        )
    )
    assert fmt([ok, failed, blocks])["input"]["messages"] == [
        {"role": "tool", "content": "3", "tool_call_id": "call_1", "name": "add"},
        {
            "role": "tool",
            "content": TOOL_ERROR_PREFIX + "division by zero",
            "tool_call_id": "call_2",
            "name": "div",
        },
        {"role": "tool", "content": "line 1\nline 2", "tool_call_id": "call_3", "name": "read"},
    ]


def test_speaker_names_are_sent_on_user_and_assistant_messages() -> None:
    wire = fmt([Msg.user("hi", name="alice"), Msg.assistant("hello", name="bot")])
    assert [m.get("name") for m in wire["input"]["messages"]] == ["alice", "bot"]


def test_an_image_for_a_text_model_is_refused_with_the_fix() -> None:
    msg = Msg.user([ImageBlock(url="https://x/a.png"), TextBlock(text="what?")])
    with pytest.raises(InvalidRequestError, match="multimodal=True") as info:
        fmt([msg])
    assert info.value.provider == "dashscope"
    assert not info.value.recoverable
    assert not F.capabilities.supports_vision


def test_multimodal_contents_are_lists_of_text_and_image_items() -> None:
    messages = [
        Msg.system("Look closely."),
        Msg.user(
            [
                ImageBlock(url="https://x/a.png"),
                ImageBlock(data="aGk=", media_type="image/png"),
                TextBlock(text="Compare."),
            ]
        ),
        Msg.assistant("Same."),
        Msg.assistant([ToolUseBlock(id="c", name="zoom", input={})]),
        Msg.tool(ToolResultBlock(id="c", name="zoom", output="ok")),
    ]
    wire = fmt(messages, formatter=VL)["input"]["messages"]
    assert wire[0] == {"role": "system", "content": [{"text": "Look closely."}]}
    assert wire[1]["content"] == [
        {"image": "https://x/a.png"},
        {"image": "data:image/png;base64,aGk="},
        {"text": "Compare."},
    ]
    assert wire[2]["content"] == [{"text": "Same."}]
    assert wire[3]["content"] == []
    assert wire[4]["content"] == [{"text": "ok"}]
    assert VL.capabilities.supports_vision


@pytest.mark.parametrize("formatter", [F, VL])
def test_images_inside_tool_results_become_a_note_the_model_reads(
    formatter: DashScopeFormatter,
) -> None:
    output = (TextBlock(text="Screenshot taken."), ImageBlock(url="https://x/s.png"))
    msg = Msg.tool(ToolResultBlock(id="c", name="shot", output=output))
    (wire,) = fmt([msg], formatter=formatter)["input"]["messages"]
    expected = "Screenshot taken.\n" + TOOL_IMAGE_NOTE
    assert wire["content"] == ([{"text": expected}] if formatter is VL else expected)


def test_other_blocks_inside_tool_results_are_refused() -> None:
    thought = ThinkingBlock(thinking="hm")
    msg = Msg.tool(ToolResultBlock(id="c", name="t", output=(thought,)))
    with pytest.raises(InvalidRequestError, match="inside a tool result"):
        fmt([msg])


@pytest.mark.parametrize(
    "msg",
    [
        Msg.assistant([ImageBlock(url="https://x/a.png")]),
        Msg.user([ToolResultBlock(id="c", name="add", output="3")]),
        Msg(role="system", content=(ImageBlock(url="https://x/a.png"),)),
        Msg(role="tool", content="3"),
        Msg(role="tool", content=(TextBlock(text="3"),)),
    ],
    ids=["assistant-image", "user-tool-result", "system-image", "tool-str", "tool-text"],
)
def test_blocks_a_role_cannot_carry_are_refused(msg: Msg) -> None:
    with pytest.raises(InvalidRequestError):
        fmt([msg], formatter=VL)


def test_the_model_name_decides_multimodal() -> None:
    assert is_multimodal_model("qwen-vl-max")
    assert is_multimodal_model("qwen2.5-VL-72b-instruct")
    assert is_multimodal_model("qvq-max")
    assert not is_multimodal_model("qwen-plus")
    assert not is_multimodal_model("qwen3-max")


def test_parse_request_inverts_format() -> None:
    messages = [
        Msg.system("sys"),
        Msg.user("hi", name="alice"),
        Msg.assistant(
            [
                ThinkingBlock(thinking="hm"),
                TextBlock(text="calling"),
                ToolUseBlock(id="c1", name="add", input={"a": 1}),
            ]
        ),
        Msg.tool(ToolResultBlock(id="c1", name="add", output="oops", is_error=True)),
        Msg.assistant("done"),
    ]
    options = ModelOptions(tool_choice="add", stop=("x",), seed=3, extra={"top_p": 0.5})
    body = F.format(messages, [ADD], options, model="qwen-plus", stream=True)
    back, tools, opts = F.parse_request(json.loads(json.dumps(body)))
    assert [(m.role, m.content, m.name) for m in back] == [
        (m.role, m.content, m.name) for m in messages
    ]
    assert tools == [ADD]
    assert opts == options


def test_parse_request_refuses_a_foreign_body() -> None:
    with pytest.raises(ProviderError, match="not a generation request"):
        F.parse_request({"messages": []})


# -- whole responses -------------------------------------------------------------------------------


def test_parse_a_text_response_with_usage_and_cached_tokens() -> None:
    body = {
        "status_code": 200,
        "request_id": "r",
        "output": {
            "choices": [
                {
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": "Hello",
                        "reasoning_content": "greet",
                    },
                }
            ]
        },
        "usage": usage(
            10,
            2,
            prompt_tokens_details={"cached_tokens": 4, "cache_creation_input_tokens": 3},
        ),
    }
    response = F.parse(body)
    assert response.message.blocks == (ThinkingBlock(thinking="greet"), TextBlock(text="Hello"))
    assert response.finish_reason == "stop"
    u = response.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (
        10,
        2,
        4,
        3,
    )
    assert u.requests == 1


def test_parse_tool_calls_keeping_non_json_arguments() -> None:
    body = {
        "output": {
            "choices": [
                {
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "add", "arguments": '{"a": 1}'},
                            },
                            {
                                "id": "c2",
                                "type": "function",
                                "function": {"name": "add", "arguments": "{oops"},
                            },
                        ],
                    },
                }
            ]
        },
        "usage": usage(5, 5),
        "request_id": "r",
    }
    response = F.parse(body)
    first, second = response.message.tool_calls
    assert (first.id, first.name, dict(first.input)) == ("c1", "add", {"a": 1})
    assert (second.id, second.raw_input, dict(second.input)) == ("c2", "{oops", {})
    assert response.finish_reason == "tool_calls"


def test_parse_multimodal_list_content() -> None:
    body = {
        "output": {
            "choices": [
                {
                    "finish_reason": "length",
                    "message": {"role": "assistant", "content": [{"text": "A cat"}]},
                }
            ]
        },
        "usage": usage(1, 1),
    }
    response = VL.parse(body)
    assert response.message.text == "A cat"
    assert response.finish_reason == "length"


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ([], "not a JSON object"),
        ({"request_id": "r"}, "no output object"),
        ({"output": {"choices": []}}, "no output.choices"),
        ({"output": {"choices": [{"finish_reason": "stop"}]}}, "message"),
        (
            {"output": {"choices": [{"finish_reason": "exploded", "message": {"content": "x"}}]}},
            "exploded",
        ),
        ({"output": {"choices": [{"finish_reason": "null", "message": {"content": "x"}}]}}, "null"),
        (
            {"output": {"choices": [{"finish_reason": "stop", "message": {"content": 5}}]}},
            "content",
        ),
        (
            {
                "output": {
                    "choices": [{"finish_reason": "stop", "message": {"tool_calls": [{"id": "c"}]}}]
                }
            },
            "function",
        ),
    ],
)
def test_malformed_responses_are_provider_errors(body: Any, what: str) -> None:
    with pytest.raises(ProviderError, match="malformed") as info:
        F.parse(body)
    assert what in str(info.value) or what in (info.value.excerpt or "")
    assert info.value.provider == "dashscope"


def test_parse_reads_the_text_result_format_too() -> None:
    response = F.parse({"output": {"text": "plain", "finish_reason": "stop"}, "usage": usage(1, 1)})
    assert response.message.text == "plain"
    assert response.finish_reason == "stop"


def test_a_200_body_with_an_error_code_is_typed() -> None:
    with pytest.raises(RateLimitedError) as info:
        F.parse({"status_code": 429, "code": "Throttling", "message": "slow", "request_id": "r"})
    assert info.value.provider_code == "Throttling"
    assert info.value.status == 429


def test_parse_deltas_gives_one_delta_per_block_with_the_arguments_text_as_sent() -> None:
    fragments = [
        {"index": 0, "id": "c1", "function": {"name": "add", "arguments": '{"a":'}},
        {"index": 0, "function": {"arguments": " 1}"}},
        {"index": 1, "function": {"name": "echo", "arguments": "{oops"}},  # no id
    ]
    message = {"role": "assistant", "content": "Adding.", "tool_calls": fragments}
    message["reasoning_content"] = "hmm"
    body = {
        "output": {"choices": [{"finish_reason": "tool_calls", "message": message}]},
        "usage": usage(5, 5),
    }
    deltas = F.parse_deltas(body)
    parsed = F.parse(body)
    assert deltas[:4] == [
        ThinkingDelta(index=0, text="hmm"),
        TextDelta(index=1, text="Adding."),
        ToolCallDelta(index=2, id="c1", name="add", args='{"a": 1}'),
        ToolCallDelta(index=3, id="call_4", name="echo", args="{oops"),  # parse's id for it
    ]
    assert deltas[4:] == [UsageDelta(usage=parsed.usage), FinishDelta(reason="tool_calls")]
    builder = ResponseBuilder()
    for delta in deltas:
        builder.add(delta)
    assert builder.build().blocks == parsed.message.blocks
    assert (builder.usage, builder.finish_reason) == (parsed.usage, parsed.finish_reason)


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"request_id": "r"},
        {"output": {"choices": [{"finish_reason": "null", "message": {"content": "x"}}]}},
        {
            "output": {
                "choices": [{"finish_reason": "stop", "message": {"tool_calls": [{"id": 1}]}}]
            }
        },
    ],
)
def test_parse_deltas_refuses_what_parse_refuses_with_the_same_error(body: Any) -> None:
    with pytest.raises(ProviderError) as expected:
        F.parse(body)
    with pytest.raises(ProviderError) as got:
        F.parse_deltas(body)
    assert str(got.value) == str(expected.value)
    with pytest.raises(RateLimitedError):
        F.parse_deltas({"status_code": 429, "code": "Throttling", "message": "slow"})


# -- streams ---------------------------------------------------------------------------------------


def test_the_exact_wire_frames_stream_text_and_report_the_last_usage_once() -> None:
    raw = (
        b'id:1\nevent:result\n:HTTP_STATUS/200\ndata:{"output":{"choices":[{"message":'
        b'{"content":"Hi","role":"assistant"},"finish_reason":"null"}]},"usage":{"input_tokens":9,'
        b'"output_tokens":1,"total_tokens":10},"request_id":"abc"}\n\n'
        + frame(2, result({"content": " there"}, usage=usage(9, 2)))
        + frame(3, result({"content": ""}, "stop", usage(9, 3)))
    )
    deltas = stream(raw)
    assert deltas == [
        TextDelta(index=0, text="Hi"),
        TextDelta(index=0, text=" there"),
        UsageDelta(usage=deltas[2].usage),  # type: ignore[union-attr]
        FinishDelta(reason="stop"),
    ]
    u = deltas[2].usage  # type: ignore[union-attr]
    assert (u.input_tokens, u.output_tokens, u.requests) == (9, 3, 1)  # the last, not the sum


def test_reasoning_content_streams_as_thinking_before_the_text() -> None:
    raw = (
        frame(1, result({"content": "", "reasoning_content": "Let me "}, usage=usage(1, 1)))
        + frame(2, result({"content": "", "reasoning_content": "think."}, usage=usage(1, 2)))
        + frame(3, result({"content": "Done", "reasoning_content": ""}, usage=usage(1, 3)))
        + frame(4, result({"content": ""}, "stop", usage(1, 3)))
    )
    deltas = stream(raw)
    assert deltas[:3] == [
        ThinkingDelta(index=0, text="Let me "),
        ThinkingDelta(index=0, text="think."),
        TextDelta(index=1, text="Done"),
    ]
    msg = build(deltas).build()
    assert msg.blocks == (ThinkingBlock(thinking="Let me think."), TextBlock(text="Done"))


def test_tool_call_fragments_with_empty_id_and_name_accumulate_by_index() -> None:
    def call(index: int, id: str, name: str, args: str) -> dict[str, Any]:
        return {
            "index": index,
            "id": id,
            "type": "function",
            "function": {"name": name, "arguments": args},
        }

    raw = (
        frame(1, result({"content": "Adding."}, usage=usage(3, 1)))
        + frame(2, result({"content": "", "tool_calls": [call(0, "call_a", "add", "")]}))
        + frame(3, result({"content": "", "tool_calls": [call(0, "", "", '{"a": ')]}))
        + frame(4, result({"content": "", "tool_calls": [call(1, "call_b", "echo", '{"text"')]}))
        + frame(5, result({"content": "", "tool_calls": [call(0, "", "", "1}")]}))
        + frame(6, result({"content": "", "tool_calls": [call(1, "", "", ': "hi"}')]}))
        + frame(7, result({"content": ""}, "tool_calls", usage(3, 9)))
    )
    deltas = stream(raw)
    assert deltas[:3] == [
        TextDelta(index=0, text="Adding."),
        ToolCallDelta(index=1, id="call_a", name="add", args=""),
        ToolCallDelta(index=1, args='{"a": '),
    ]
    assert ToolCallDelta(index=2, id="call_b", name="echo", args="") in deltas
    builder = build(deltas)
    msg = builder.build()
    assert [(c.id, c.name, dict(c.input)) for c in msg.tool_calls] == [
        ("call_a", "add", {"a": 1}),
        ("call_b", "echo", {"text": "hi"}),
    ]
    assert builder.finish_reason == "tool_calls"
    assert builder.usage.output_tokens == 9


def test_tool_call_fragments_without_an_index_continue_the_last_call() -> None:
    raw = (
        frame(
            1,
            result(
                {"tool_calls": [{"id": "c1", "function": {"name": "add", "arguments": '{"a"'}}]}
            ),
        )
        + frame(2, result({"tool_calls": [{"function": {"arguments": ": 2}"}}]}))
        + frame(3, result({"content": ""}, "tool_calls"))
    )
    msg = build(stream(raw)).build()
    assert [(c.id, dict(c.input)) for c in msg.tool_calls] == [("c1", {"a": 2})]


def test_cached_tokens_come_from_prompt_tokens_details() -> None:
    raw = frame(
        1,
        result(
            {"content": "x"},
            "stop",
            usage(100, 1, prompt_tokens_details={"cached_tokens": 64}),
        ),
    )
    [_, used, _] = stream(raw)
    assert isinstance(used, UsageDelta)
    assert used.usage.cache_read_tokens == 64


def test_multimodal_streams_have_list_contents() -> None:
    raw = frame(1, result({"content": [{"text": "A "}]})) + frame(
        2, result({"content": [{"text": "cat"}]}, "stop")
    )
    assert build(stream(raw, VL)).build().text == "A cat"


def test_keep_alive_comments_are_ignored() -> None:
    raw = b":ping\n\n" + frame(1, result({"content": "x"}, "stop"))
    assert [type(d) for d in stream(raw)] == [TextDelta, UsageDelta, FinishDelta]


def test_a_stream_without_a_finish_reason_ends_early_recoverably() -> None:
    raw = frame(1, result({"content": "Hel"}, usage=usage(1, 1)))
    parser = F.stream_parser()
    for event in events(raw):
        parser.feed(event)
    with pytest.raises(ProviderError, match="ended early") as info:
        parser.close()
    assert info.value.recoverable


def test_a_truncated_byte_stream_ends_early() -> None:
    raw = frame(1, result({"content": "Hel"})) + frame(2, result({"content": ""}, "stop"))
    cut = raw[: len(raw) - 30]  # inside the last frame's data line
    with pytest.raises(ProviderError) as info:
        stream(cut)
    assert info.value.code == ErrorCode.PROVIDER_ERROR


def test_an_error_event_mid_stream_is_typed_by_its_code_and_status() -> None:
    raw = frame(1, result({"content": "Hi"})) + frame(
        2,
        {
            "code": "Throttling.RateQuota",
            "message": "Requests rate limit exceeded",
            "request_id": "r",
        },
        event="error",
        status=429,
    )
    parser = F.stream_parser()
    first, second = events(raw)
    assert parser.feed(first) == [TextDelta(index=0, text="Hi")]
    with pytest.raises(RateLimitedError) as info:
        parser.feed(second)
    err = info.value
    assert (err.status, err.provider_code, err.recoverable) == (429, "Throttling.RateQuota", True)
    assert "rate limit exceeded" in err.message


def test_an_error_event_with_an_internal_error_is_a_recoverable_provider_error() -> None:
    raw = frame(1, {"code": "InternalError", "message": "boom"}, event="error", status=500)
    with pytest.raises(ProviderError) as info:
        stream(raw)
    assert info.value.recoverable
    assert info.value.status == 500


def test_an_error_event_with_non_json_data_is_typed_too() -> None:
    raw = b"event:error\n:HTTP_STATUS/503\ndata:<html>Service Unavailable</html>\n\n"
    with pytest.raises(ProviderError) as info:
        stream(raw)
    assert info.value.status == 503
    assert "Service Unavailable" in (info.value.excerpt or "")


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        "[1, 2]",
        '{"request_id": "r"}',
        '{"output": {"choices": "x"}}',
        '{"output": {"choices": [5]}}',
        '{"output": {"choices": [{"message": "x", "finish_reason": "null"}]}}',
        '{"output": {"choices": [{"message": {"content": 5}, "finish_reason": "null"}]}}',
        '{"output": {"choices": [{"message": {"reasoning_content": 5}, "finish_reason": "null"}]}}',
        '{"output": {"choices": [{"message": {"tool_calls": {"a": 1}}, "finish_reason": "null"}]}}',
        '{"output": {"choices": [{"message": {"tool_calls": [5]}, "finish_reason": "null"}]}}',
        '{"output": {"choices": [{"message": {"tool_calls": [{"function": {"arguments": 5}}]}}]}}',
        '{"output": {"choices": [{"message": {"tool_calls": [{"function": {"name": 5}}]}}]}}',
        '{"output": {"choices": [{"message": {"content": "x"}, "finish_reason": "exploded"}]}}',
        '{"output": {"choices": [{"message": {"content": "x"}, "finish_reason": 3}]}}',
    ],
)
def test_malformed_frames_are_provider_errors_not_key_errors(data: str) -> None:
    parser = F.stream_parser()
    with pytest.raises(ProviderError, match="malformed") as info:
        parser.feed(SSEEvent(event="result", data=data))
    assert not info.value.recoverable
    assert info.value.provider == "dashscope"


def test_a_result_frame_that_holds_an_error_body_is_typed() -> None:
    event = SSEEvent(event="result", data='{"code": "InvalidApiKey", "message": "bad key"}')
    with pytest.raises(AuthenticationError):
        F.stream_parser().feed(event)


# -- errors ----------------------------------------------------------------------------------------


def _error(status: int, code: str, message: str = "m", headers: dict[str, str] | None = None):
    body = json.dumps({"code": code, "message": message, "request_id": "r"}).encode()
    return F.error_from_response(status, body, headers or {})


@pytest.mark.parametrize(
    ("status", "code", "message", "expected", "recoverable"),
    [
        (429, "Throttling", "Requests throttling triggered.", RateLimitedError, True),
        (429, "Throttling.RateQuota", "Requests rate limit exceeded.", RateLimitedError, True),
        (429, "Throttling.AllocationQuota", "Allocated quota exceeded.", RateLimitedError, True),
        (401, "InvalidApiKey", "Invalid API-key provided.", AuthenticationError, False),
        (403, "AccessDenied", "Access denied.", AuthenticationError, False),
        (400, "InvalidParameter", "Temperature should be in [0, 2).", InvalidRequestError, False),
        (
            400,
            "InvalidParameter",
            "Range of input length should be [1, 30720]",
            ContextTooLongError,
            False,
        ),
        (
            400,
            "InternalError.Algo.InvalidParameter",
            "Range of input length should be [1, 983616]",
            ContextTooLongError,
            False,
        ),
        (
            400,
            "DataInspectionFailed",
            "Input data may contain inappropriate content.",
            InvalidRequestError,
            False,
        ),
        (
            400,
            "InternalError.Algo.DataInspectionFailed",
            "Output data may contain inappropriate content.",
            InvalidRequestError,
            False,
        ),
        (500, "InternalError", "An internal error has occured.", ProviderError, True),
        (500, "InternalError.Algo", "Inference error.", ProviderError, True),
        (503, "ServiceUnavailable", "Service unavailable.", ProviderError, True),
        (
            400,
            "Arrearage",
            "Access denied, please make sure your account is in good standing.",
            RateLimitedError,
            False,
        ),
        (404, "ModelNotFound", "Model not exist.", InvalidRequestError, False),
        (502, "SomethingNew", "bad gateway", ProviderError, True),
    ],
)
def test_error_mapping(
    status: int, code: str, message: str, expected: type[AgentRunError], recoverable: bool
) -> None:
    err = _error(status, code, message)
    assert type(err) is expected
    assert err.recoverable is recoverable
    assert (err.provider, err.status, err.provider_code) == ("dashscope", status, code)
    assert message in err.message
    assert err.source == "model"


def test_rate_limits_carry_the_providers_wait() -> None:
    assert _error(429, "Throttling.RateQuota", headers={"Retry-After": "3"}).retry_after == 3.0


def test_an_html_page_from_a_proxy_is_typed_with_an_excerpt() -> None:
    page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    err = F.error_from_response(502, page, {"Content-Type": "text/html"})
    assert isinstance(err, ProviderError)
    assert err.recoverable
    assert (err.provider, err.status) == ("dashscope", 502)
    assert err.excerpt is not None
    assert "502 Bad Gateway" in err.excerpt
    err = F.error_from_response(401, b"<html>Unauthorized</html>", {})
    assert isinstance(err, AuthenticationError)
    assert err.provider_code is None


def test_an_openai_style_error_body_is_read_too() -> None:
    body = json.dumps({"error": {"code": "InvalidApiKey", "message": "bad"}}).encode()
    assert isinstance(F.error_from_response(401, body, {}), AuthenticationError)
