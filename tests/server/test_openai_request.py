"""The OpenAI route's request side: parameter checks, message conversion, session input."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent.errors import ApiError
from rxagent.messages import Msg, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from rxagent.models import ModelOptions
from rxagent.server._openai_messages import new_input
from rxagent.server._openai_request import read_chat_request


def body(**fields: Any) -> dict[str, Any]:
    return {"model": "bot", "messages": [{"role": "user", "content": "hi"}], **fields}


def error_of(raw: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        read_chat_request(raw)
    return info.value


# -- reading ---------------------------------------------------------------------------------------


def test_a_minimal_request_reads_with_defaults():
    chat = read_chat_request(body())
    assert chat.model == "bot"
    assert not chat.stream
    assert not chat.include_usage
    assert [(m.role, m.content) for m in chat.messages] == [("user", "hi")]
    assert chat.options == ModelOptions()


def test_sampling_parameters_map_to_model_options():
    chat = read_chat_request(
        body(
            temperature=0.5,
            max_tokens=10,
            max_completion_tokens=20,
            stop="END",
            seed=7,
            response_format={"type": "json_object"},
            top_p=0.9,
            user="u-1",
            frequency_penalty=0.1,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chat.options == ModelOptions(
        temperature=0.5,
        max_output_tokens=20,
        stop=("END",),
        seed=7,
        response_format={"type": "json_object"},
    )
    assert chat.stream
    assert chat.include_usage


def test_max_tokens_alone_and_text_response_format():
    chat = read_chat_request(body(max_tokens=5, response_format={"type": "text"}, stop=["a", "b"]))
    assert chat.options == ModelOptions(max_output_tokens=5, stop=("a", "b"))


@pytest.mark.parametrize(
    ("raw", "status", "code", "param"),
    [
        ([], 422, "invalid_type", "body"),
        ({"messages": []}, 422, "missing_required_parameter", "model"),
        (body(model=3), 422, "invalid_type", "model"),
        (body(model=""), 422, "invalid_value", "model"),
        ({"model": "bot"}, 422, "missing_required_parameter", "messages"),
        (body(messages=[]), 422, "invalid_value", "messages"),
        (body(messages="hi"), 422, "invalid_type", "messages"),
        (body(messages=[3]), 422, "invalid_type", "messages[0]"),
        (body(messages=[{"content": "x"}]), 422, "missing_required_parameter", "messages[0].role"),
        (
            body(messages=[{"role": "bot", "content": "x"}]),
            422,
            "invalid_value",
            "messages[0].role",
        ),
        (
            body(messages=[{"role": "user"}]),
            422,
            "missing_required_parameter",
            "messages[0].content",
        ),
        (
            body(messages=[{"role": "user", "content": 5}]),
            422,
            "invalid_type",
            "messages[0].content",
        ),
        (
            body(messages=[{"role": "user", "content": [{"type": "text"}]}]),
            422,
            "missing_required_parameter",
            "messages[0].content[0].text",
        ),
        (
            body(messages=[{"role": "user", "content": [{"type": "video"}]}]),
            422,
            "invalid_value",
            "messages[0].content[0].type",
        ),
        (
            body(messages=[{"role": "user", "content": [{"type": "input_audio"}]}]),
            400,
            "unsupported_parameter",
            "messages[0].content[0].type",
        ),
        (
            body(messages=[{"role": "system", "content": [{"type": "image_url"}]}]),
            400,
            "unsupported_parameter",
            "messages[0].content[0].type",
        ),
        (
            body(messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]),
            422,
            "missing_required_parameter",
            "messages[0].content[0].image_url.url",
        ),
        (
            body(messages=[{"role": "user", "content": "x", "name": 1}]),
            422,
            "invalid_type",
            "messages[0].name",
        ),
        (
            body(messages=[{"role": "function", "content": "x"}]),
            400,
            "unsupported_parameter",
            "messages[0].role",
        ),
        (
            body(messages=[{"role": "tool", "content": "x"}]),
            422,
            "missing_required_parameter",
            "messages[0].tool_call_id",
        ),
        (
            body(
                messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
            ),
            422,
            "invalid_value",
            "messages",
        ),
        (
            body(
                messages=[
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f"}}]},
                ]
            ),
            422,
            "missing_required_parameter",
            "messages[1].tool_calls[0].function.arguments",
        ),
        (
            body(
                messages=[
                    {"role": "user", "content": "x"},
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "custom",
                                "function": {"name": "f", "arguments": "{}"},
                            }
                        ],
                    },
                ]
            ),
            400,
            "unsupported_parameter",
            "messages[1].tool_calls[0].type",
        ),
        (body(temperature="hot"), 422, "invalid_type", "temperature"),
        (body(temperature=True), 422, "invalid_type", "temperature"),
        (body(temperature=3), 422, "invalid_value", "temperature"),
        (body(max_tokens=0), 422, "invalid_value", "max_tokens"),
        (body(max_completion_tokens=1.5), 422, "invalid_type", "max_completion_tokens"),
        (body(stop=[1]), 422, "invalid_type", "stop"),
        (body(seed="x"), 422, "invalid_type", "seed"),
        (body(response_format={"type": "xml"}), 422, "invalid_value", "response_format.type"),
        (
            body(response_format={"type": "json_schema"}),
            422,
            "invalid_type",
            "response_format.json_schema",
        ),
        (body(stream="yes"), 422, "invalid_type", "stream"),
        (body(stream_options=[]), 422, "invalid_type", "stream_options"),
        (
            body(stream_options={"include_usage": 1}),
            422,
            "invalid_type",
            "stream_options.include_usage",
        ),
        (
            body(tools=[{"type": "function", "function": {"name": "f"}}]),
            400,
            "unsupported_parameter",
            "tools",
        ),
        (body(functions=[{"name": "f"}]), 400, "unsupported_parameter", "functions"),
        (body(tool_choice="required"), 400, "unsupported_parameter", "tool_choice"),
        (body(function_call={"name": "f"}), 400, "unsupported_parameter", "function_call"),
        (body(n=2), 400, "unsupported_parameter", "n"),
        (body(n="2"), 422, "invalid_type", "n"),
        (body(logprobs=True), 400, "unsupported_parameter", "logprobs"),
        (body(logprobs=0), 422, "invalid_type", "logprobs"),
        (
            body(
                response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": []}}
            ),
            422,
            "invalid_type",
            "response_format.json_schema.schema",
        ),
        (body(logprobs=1), 422, "invalid_type", "logprobs"),
        (body(logprobs="no"), 422, "invalid_type", "logprobs"),
        (body(top_logprobs=2), 400, "unsupported_parameter", "top_logprobs"),
        (body(modalities=["text", "audio"]), 400, "unsupported_parameter", "modalities"),
        (body(audio={"voice": "x"}), 400, "unsupported_parameter", "audio"),
    ],
)
def test_bad_requests_name_the_parameter(raw: Any, status: int, code: str, param: str):
    error = error_of(raw)
    assert (error.status, error.code, error.field) == (status, code, param)
    assert error.message


def test_client_tools_error_says_why_and_the_fix():
    error = error_of(body(tools=[{"type": "function", "function": {"name": "f"}}]))
    assert "runs its own tools on the server" in error.message
    assert "Remove 'tools'" in error.message


def test_harmless_tool_fields_are_accepted():
    chat = read_chat_request(body(tools=[], tool_choice="none", parallel_tool_calls=True, n=1))
    assert chat.options == ModelOptions()


def _history(*items: dict[str, Any]) -> dict[str, Any]:
    return body(
        messages=[{"role": "user", "content": "q"}, *items, {"role": "user", "content": "z"}]
    )


def _call(call_id: str, name: str = "add", arguments: str = '{"a": 1}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize(
    ("items", "param", "needle"),
    [
        (
            [{"role": "tool", "tool_call_id": "c9", "content": "x"}],
            "messages[1].tool_call_id",
            "c9",
        ),
        (
            [
                {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
                {"role": "tool", "tool_call_id": "c1", "content": "1"},
            ],
            "messages[1].tool_calls",
            "c2",
        ),
        (
            [{"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c1")]}],
            "messages[1].tool_calls",
            "unique",
        ),
        (
            [
                {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
                {"role": "tool", "tool_call_id": "c1", "content": "1"},
                {"role": "tool", "tool_call_id": "c1", "content": "1"},
            ],
            "messages[3].tool_call_id",
            "c1",
        ),
    ],
)
def test_tool_messages_must_pair_with_calls(items: list[dict[str, Any]], param: str, needle: str):
    error = error_of(_history(*items))
    assert (error.status, error.field) == (422, param)
    assert needle in error.message


def test_an_unanswered_call_at_the_end_is_refused():
    raw = body(
        messages=[
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
        ]
    )
    assert error_of(raw).field == "messages[1].tool_calls"


def test_a_history_converts_with_the_inverse_formatter():
    raw = _history(
        {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
        {
            "role": "assistant",
            "content": "Let me add.",
            "reasoning_content": "1 + 2",
            "tool_calls": [_call("c1", "add", '{"a": 1, "b": 2}')],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "3"},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}], "name": "bob"},
    )
    messages = read_chat_request(raw).messages
    assert [m.role for m in messages] == [
        "user",
        "system",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert messages[1].content == "Be brief."
    assert messages[2].content == (
        ThinkingBlock(thinking="1 + 2"),
        TextBlock(text="Let me add."),
        ToolUseBlock(id="c1", name="add", input={"a": 1, "b": 2}),
    )
    assert messages[3].content == (ToolResultBlock(id="c1", name="add", output="3"),)
    assert (messages[4].content, messages[4].name) == ("no", "bob")


def test_user_images_convert():
    raw = body(
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is it?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}},
                ],
            }
        ]
    )
    (msg,) = read_chat_request(raw).messages
    assert [b.type for b in msg.blocks] == ["text", "image", "image"]


# -- sessions: the new input -----------------------------------------------------------------------


def test_new_input_with_history_takes_the_user_messages_after_the_last_answer():
    sent = [
        Msg.system("s"),
        Msg.user("a"),
        Msg.assistant("b"),
        Msg.system("s2"),
        Msg.user("c"),
        Msg.user("d"),
    ]
    assert [m.text for m in new_input(sent, has_history=True)] == ["c", "d"]
    assert new_input(sent, has_history=False) == tuple(sent)
    assert [m.text for m in new_input([Msg.user("only")], has_history=True)] == ["only"]


@pytest.mark.parametrize(
    "sent",
    [
        [Msg.user("a"), Msg.assistant("b"), Msg.system("only instructions")],
        [
            Msg.user("a"),
            Msg.assistant([ToolUseBlock(id="c1", name="t")]),
            Msg.tool(ToolResultBlock(id="c1", name="t", output="x")),
        ],
    ],
)
def test_new_input_with_history_needs_user_messages(sent: list[Msg]):
    with pytest.raises(ApiError) as info:
        new_input(sent, has_history=True)
    assert (info.value.status, info.value.field) == (422, "messages")


def test_a_whole_number_written_with_a_fraction_is_an_integer():
    chat = read_chat_request(body(max_tokens=5.0, seed=7.0, n=1.0))
    assert (chat.options.max_output_tokens, chat.options.seed) == (5, 7)
    assert isinstance(chat.options.max_output_tokens, int)
    assert read_chat_request(body(max_tokens=2**31 - 1)).options.max_output_tokens == 2**31 - 1
    too_many = error_of(body(max_completion_tokens=2**31))
    assert (too_many.status, too_many.field) == (422, "max_completion_tokens")
    error = error_of(body(max_tokens=5.5))
    assert (error.status, error.code, error.field) == (422, "invalid_type", "max_tokens")
