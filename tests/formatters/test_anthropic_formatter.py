"""AnthropicFormatter: request bodies, responses, SSE streams and error classification."""

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
from rxagent.formatters.anthropic import (
    REDACTED_THINKING_PREFIX,
    AnthropicFormatter,
    AnthropicStreamParser,
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
from rxagent.models.base import (
    FinishDelta,
    ModelOptions,
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSchema,
    Usage,
    UsageDelta,
)

F = AnthropicFormatter()
ADD = ToolSchema(
    name="add",
    description="Add two numbers.",
    parameters={"type": "object", "properties": {"a": {"type": "integer"}}},
)


def fmt(
    messages: list[Msg],
    tools: Any = (),
    options: ModelOptions | None = None,
    *,
    stream: bool = False,
    formatter: AnthropicFormatter = F,
) -> dict[str, Any]:
    return formatter.format(
        list(messages), list(tools), options or ModelOptions(), model="claude-x", stream=stream
    )


def ev(obj: Any, event: str | None = None) -> SSEEvent:
    name = event or (obj.get("type") if isinstance(obj, dict) else None)
    return SSEEvent(event=name, data=obj if isinstance(obj, str) else json.dumps(obj))


def call(id_: str = "t1", name: str = "add", **args: Any) -> ToolUseBlock:
    return ToolUseBlock(id=id_, name=name, input=args)


def result(id_: str = "t1", output: Any = "3", *, is_error: bool = False) -> Msg:
    return Msg.tool(ToolResultBlock(id=id_, name="add", output=output, is_error=is_error))


# -- requests: messages --------------------------------------------------------------------------


def test_minimal_body_has_model_max_tokens_and_messages() -> None:
    body = fmt([Msg.user("Hi")])
    assert body == {
        "model": "claude-x",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Hi"}],
    }


def test_max_tokens_default_is_a_constructor_argument_and_options_win() -> None:
    assert fmt([Msg.user("Hi")], formatter=AnthropicFormatter(max_tokens=99))["max_tokens"] == 99
    body = fmt([Msg.user("Hi")], options=ModelOptions(max_output_tokens=7))
    assert body["max_tokens"] == 7
    with pytest.raises(ValueError, match="max_tokens"):
        AnthropicFormatter(max_tokens=-1)


def test_system_messages_become_top_level_text_blocks_wherever_they_stand() -> None:
    body = fmt(
        [
            Msg.system("One."),
            Msg.user("Hi"),
            Msg.assistant("Hello"),
            Msg.system("Two."),
            Msg(role="system", content=[TextBlock(text="Three.")]),
            Msg.user("Bye"),
        ]
    )
    assert body["system"] == [
        {"type": "text", "text": "One."},
        {"type": "text", "text": "Two."},
        {"type": "text", "text": "Three."},
    ]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    messages, _, _ = F.parse_request(body)
    assert [m.role for m in messages] == ["system", "system", "system", "user", "assistant", "user"]


def test_a_system_message_with_an_image_is_refused() -> None:
    with pytest.raises(InvalidRequestError, match="image block in a system message"):
        fmt([Msg(role="system", content=[ImageBlock(url="https://x/y.png")])])


def test_images_base64_url_and_data_url() -> None:
    body = fmt(
        [
            Msg.user(
                [
                    TextBlock(text="Look"),
                    ImageBlock(data="aGk=", media_type="image/png"),
                    ImageBlock(url="https://example.com/a.jpg"),
                    ImageBlock(url="data:image/webp;base64,AAAA"),
                ]
            )
        ]
    )
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "Look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "AAAA"}},
    ]


def test_a_data_url_that_is_not_base64_is_refused() -> None:
    with pytest.raises(InvalidRequestError, match="not base64"):
        fmt([Msg.user([ImageBlock(url="data:image/svg+xml,<svg/>")])])


def test_assistant_text_thinking_with_signature_and_tool_use() -> None:
    reply = Msg.assistant(
        [
            ThinkingBlock(thinking="Let me add.", signature="c2lnbmF0dXJl"),
            TextBlock(text="Adding"),
            call(a=1),
        ]
    )
    body = fmt([Msg.user("1+?"), reply])
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Let me add.", "signature": "c2lnbmF0dXJl"},
            {"type": "text", "text": "Adding"},
            {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}},
        ],
    }
    assert F.parse_request(body)[0][1].content == reply.content


def test_a_tool_call_with_non_object_arguments_is_sent_with_an_empty_input() -> None:
    broken = ToolUseBlock(id="t1", name="add", raw_input='{"a": 1')
    body = fmt([Msg.user("q"), Msg.assistant([broken])])
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "t1", "name": "add", "input": {}}
    ]


def test_redacted_thinking_round_trips_through_the_signature_prefix() -> None:
    block = ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + "ZW5jcnlwdGVk")
    body = fmt([Msg.user("q"), Msg.assistant([block, TextBlock(text="a")])])
    assert body["messages"][1]["content"][0] == {
        "type": "redacted_thinking",
        "data": "ZW5jcnlwdGVk",
    }
    assert F.parse_request(body)[0][1].content[0] == block


def test_thinking_without_signature_is_sent_as_tagged_text_and_read_back() -> None:
    block = ThinkingBlock(thinking="from another provider")
    body = fmt([Msg.user("q"), Msg.assistant([block, TextBlock(text="a")])])
    assert body["messages"][1]["content"][0] == {
        "type": "text",
        "text": "<thinking>\nfrom another provider\n</thinking>",
    }
    assert F.parse_request(body)[0][1].content == (block, TextBlock(text="a"))


def test_empty_unsigned_thinking_is_not_sent() -> None:
    body = fmt([Msg.user("q"), Msg.assistant([ThinkingBlock(thinking=""), TextBlock(text="a")])])
    assert body["messages"][1]["content"] == [{"type": "text", "text": "a"}]
    only = fmt([Msg.user("q"), Msg.assistant([ThinkingBlock(thinking="")]), Msg.user("r")])
    assert [m["role"] for m in only["messages"]] == ["user", "user"]


def test_tool_results_merge_into_one_user_message_and_a_following_user_joins_it() -> None:
    history = [
        Msg.user("Add twice"),
        Msg.assistant([call("t1", a=1), call("t2", a=2)]),
        result("t1", "1"),
        result("t2", [TextBlock(text="two"), ImageBlock(data="aGk=", media_type="image/png")]),
        Msg.user("and now?"),
        Msg.user("still there?"),
    ]
    body = fmt(history)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "user"]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "1"},
        {
            "type": "tool_result",
            "tool_use_id": "t2",
            "content": [
                {"type": "text", "text": "two"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "aGk="},
                },
            ],
        },
        {"type": "text", "text": "and now?"},
    ]
    assert body["messages"][3] == {"role": "user", "content": "still there?"}
    back, _, _ = F.parse_request(body)
    assert [m.role for m in back] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert back[2].tool_results[0].name == "add"  # recovered from the tool_use
    assert back[3].content == history[3].content
    assert back[4].blocks == history[4].blocks


def test_tool_result_is_error_is_sent_only_when_true() -> None:
    body = fmt([Msg.user("x"), Msg.assistant([call()]), result(output="boom", is_error=True)])
    assert body["messages"][2]["content"][0]["is_error"] is True
    back, _, _ = F.parse_request(body)
    assert back[2].tool_results[0].is_error


def test_a_tool_result_after_user_text_starts_a_new_user_message() -> None:
    body = fmt([result("a"), Msg.user("hi"), result("b")])
    assert [len(m["content"]) for m in body["messages"]] == [2, 1]


@pytest.mark.parametrize(
    ("msg", "match"),
    [
        (Msg(role="tool", content="plain"), "one ToolResultBlock"),
        (Msg.user([ThinkingBlock(thinking="x", signature="s")]), "thinking block in a user"),
        (Msg.user([call()]), "tool_use block in a user"),
        (Msg.assistant([ImageBlock(url="https://x/y.png")]), "image block in an assistant"),
        (result(output=[ThinkingBlock(thinking="x")]), "thinking block in a tool result"),
    ],
)
def test_blocks_a_role_cannot_carry_are_refused(msg: Msg, match: str) -> None:
    with pytest.raises(InvalidRequestError, match=match) as info:
        fmt([msg])
    assert info.value.provider == "anthropic"
    assert not info.value.recoverable


def test_a_named_user_message_gets_its_name_as_a_prefix() -> None:
    body = fmt(
        [
            Msg.user("hi", name="alice"),
            Msg.user([TextBlock(text="yo")], name="bob"),
            Msg.assistant("hey", name="bot"),
        ]
    )
    assert body["messages"][0]["content"] == "alice: hi"
    assert body["messages"][1]["content"][0] == {"type": "text", "text": "bob:"}
    assert body["messages"][2] == {"role": "assistant", "content": "hey"}


# -- requests: options ---------------------------------------------------------------------------


def test_tools_temperature_stop_and_stream() -> None:
    bare = ToolSchema(name="noop")
    options = ModelOptions(temperature=0.3, stop=("END",))
    body = fmt([Msg.user("Hi")], [ADD, bare], options, stream=True)
    assert body["tools"] == [
        {"name": "add", "description": "Add two numbers.", "input_schema": ADD.parameters},
        {"name": "noop", "input_schema": {"type": "object", "properties": {}}},
    ]
    assert body["temperature"] == 0.3
    assert body["stop_sequences"] == ["END"]
    assert body["stream"] is True
    assert "tool_choice" not in body


@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        ("auto", None, {"type": "auto"}),
        ("none", None, {"type": "none"}),
        ("required", None, {"type": "any"}),
        ("add", None, {"type": "tool", "name": "add"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        ("add", True, {"type": "tool", "name": "add", "disable_parallel_tool_use": False}),
    ],
)
def test_tool_choice_and_parallel_tool_calls(choice: Any, parallel: Any, wire: Any) -> None:
    options = ModelOptions(tool_choice=choice, parallel_tool_calls=parallel)
    body = fmt([Msg.user("Hi")], [ADD], options)
    assert body["tool_choice"] == wire
    back = F.parse_request(body)[2]
    assert back.tool_choice == (choice or "auto")
    assert back.parallel_tool_calls == parallel


def test_tool_choice_is_not_sent_without_tools() -> None:
    body = fmt(
        [Msg.user("Hi")], [], ModelOptions(tool_choice="required", parallel_tool_calls=False)
    )
    assert "tool_choice" not in body
    assert "tools" not in body


def test_seed_is_refused() -> None:
    with pytest.raises(InvalidRequestError, match="seed"):
        fmt([Msg.user("Hi")], options=ModelOptions(seed=1))


@pytest.mark.parametrize(
    "response_format",
    [{"type": "json_object"}, {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}],
)
def test_response_format_is_refused_with_a_hint(response_format: Any) -> None:
    with pytest.raises(InvalidRequestError, match="structured-output"):
        fmt([Msg.user("Hi")], options=ModelOptions(response_format=response_format))


def test_extra_is_merged_at_the_top_level() -> None:
    extra = {"thinking": {"type": "enabled", "budget_tokens": 2048}, "metadata": {"user_id": "u"}}
    body = fmt([Msg.user("Hi")], options=ModelOptions(extra=extra))
    assert body["thinking"] == extra["thinking"]
    assert body["metadata"] == {"user_id": "u"}
    assert F.parse_request(body)[2].extra == extra


def test_cache_breakpoints_true_marks_system_tools_and_history_and_is_consumed() -> None:
    options = ModelOptions(extra={"cache_breakpoints": True})
    history = [
        Msg.system("a"),
        Msg.system("b"),
        Msg.user("q"),
        Msg.assistant([call()]),
        result(),
    ]
    body = fmt(history, [ADD, ToolSchema(name="noop")], options)
    ephemeral = {"type": "ephemeral"}
    assert "cache_breakpoints" not in body
    assert [b.get("cache_control") for b in body["system"]] == [None, ephemeral]
    assert [t.get("cache_control") for t in body["tools"]] == [None, ephemeral]
    assert body["messages"][-1]["content"][-1]["cache_control"] == ephemeral
    assert all("cache_control" not in b for b in body["messages"][1]["content"])
    assert F.parse_request(body)[2].extra == {"cache_breakpoints": True}


def test_cache_breakpoints_list_and_string_content() -> None:
    options = ModelOptions(extra={"cache_breakpoints": ["history"]})
    body = fmt([Msg.system("s"), Msg.user("question")], [ADD], options)
    assert body["messages"][-1]["content"] == [
        {"type": "text", "text": "question", "cache_control": {"type": "ephemeral"}}
    ]
    assert "cache_control" not in body["system"][0]
    assert "cache_control" not in body["tools"][0]
    assert F.parse_request(body)[2].extra == {"cache_breakpoints": ("history",)}


def test_history_breakpoint_skips_thinking_blocks() -> None:
    prefill = Msg.assistant([TextBlock(text="a"), ThinkingBlock(thinking="t", signature="s")])
    body = fmt([Msg.user("q"), prefill], options=ModelOptions(extra={"cache_breakpoints": True}))
    content = body["messages"][-1]["content"]
    assert "cache_control" in content[0]
    assert "cache_control" not in content[1]


@pytest.mark.parametrize("value", [["prompt"], "system", 3])
def test_bad_cache_breakpoints_are_refused(value: Any) -> None:
    with pytest.raises(InvalidRequestError, match="cache_breakpoints"):
        fmt([Msg.user("Hi")], options=ModelOptions(extra={"cache_breakpoints": value}))


def test_cache_breakpoints_false_marks_nothing() -> None:
    body = fmt([Msg.user("Hi")], options=ModelOptions(extra={"cache_breakpoints": False}))
    assert body == fmt([Msg.user("Hi")])


# -- parse_request -------------------------------------------------------------------------------


def test_parse_request_reads_sdk_style_bodies() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "system": "Be nice.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "t", "signature": ""}],
            },
        ],
        "top_k": 3,
        "stream": True,
    }
    messages, tools, options = F.parse_request(body)
    assert messages[0] == Msg(role="system", content="Be nice.", id=messages[0].id)
    assert messages[2].content == (ThinkingBlock(thinking="t"),)
    assert tools == []
    assert options == ModelOptions(max_output_tokens=10, extra={"top_k": 3})


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"model": "m", "messages": []},
        {"model": "m", "max_tokens": 1, "messages": "hi"},
        {"model": "m", "max_tokens": 1, "messages": [{"role": "robot", "content": "x"}]},
        {"model": "m", "max_tokens": 1, "messages": [{"role": "user"}]},
        {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "x"}]}]},
        {"model": "m", "max_tokens": 1, "messages": [], "tool_choice": {"type": "maybe"}},
        {"model": "m", "max_tokens": 1, "messages": [], "system": [{"type": "image"}]},
    ],
)
def test_parse_request_refuses_what_is_not_a_messages_request(body: Any) -> None:
    with pytest.raises(InvalidRequestError, match="invalid request body"):
        F.parse_request(body)


# -- whole responses -----------------------------------------------------------------------------


def message(content: Any, stop: Any = "end_turn", **usage: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5, **usage},
    }


def test_parse_a_whole_response_with_every_block_kind() -> None:
    body = message(
        [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "redacted_thinking", "data": "enc"},
            {"type": "text", "text": "Sure"},
            {"type": "text", "text": ""},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1}},
        ],
        stop="tool_use",
        cache_read_input_tokens=100,
        cache_creation_input_tokens=20,
    )
    response = F.parse(body)
    assert response.message.content == (
        ThinkingBlock(thinking="hmm", signature="sig"),
        ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + "enc"),
        TextBlock(text="Sure"),
        ToolUseBlock(id="toolu_1", name="add", input={"a": 1}),
    )
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(
        input_tokens=130, output_tokens=5, cache_read_tokens=100, cache_write_tokens=20, requests=1
    )


@pytest.mark.parametrize(
    ("wire", "ours"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause"),
        ("model_context_window_exceeded", "length"),
    ],
)
def test_stop_reasons(wire: str, ours: str) -> None:
    assert F.parse(message([{"type": "text", "text": "x"}], stop=wire)).finish_reason == ours
    parser = AnthropicStreamParser()
    deltas = parser.feed(
        ev({"type": "message_delta", "delta": {"stop_reason": wire}, "usage": {"output_tokens": 1}})
    )
    assert deltas[-1] == FinishDelta(reason=ours)


def test_unknown_stop_reason_is_malformed() -> None:
    with pytest.raises(ProviderError, match="unknown stop_reason 'bored'"):
        F.parse(message([], stop="bored"))
    parser = AnthropicStreamParser()
    with pytest.raises(ProviderError, match="bored"):
        parser.feed(ev({"type": "message_delta", "delta": {"stop_reason": "bored"}, "usage": {}}))


def test_tool_input_that_is_not_an_object_is_kept_raw() -> None:
    body = message([{"type": "tool_use", "id": "t", "name": "f", "input": [1, 2]}])
    block = F.parse(body).message.tool_calls[0]
    assert block.input == {}
    assert block.raw_input == "[1, 2]"


@pytest.mark.parametrize(
    "body",
    [
        "<html>",
        [],
        {"type": "message"},
        message("not a list"),
        message([{"type": "text"}]),
        message([{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}]),
        message([{"type": "redacted_thinking", "data": 3}]),
        {**message([]), "usage": {"input_tokens": "ten", "output_tokens": 1}},
        {**message([]), "usage": None},
    ],
)
def test_malformed_whole_responses_raise_provider_error(body: Any) -> None:
    with pytest.raises(ProviderError) as info:
        F.parse(body)
    assert info.value.provider == "anthropic"
    assert info.value.excerpt


def test_an_error_object_in_a_200_body_is_typed() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(ProviderError, match="Overloaded") as info:
        F.parse(body)
    assert info.value.recoverable
    assert info.value.provider_code == "overloaded_error"


# -- streams -------------------------------------------------------------------------------------


def start_event(**usage: Any) -> dict[str, Any]:
    msg = message([], stop=None, **usage)
    msg["usage"]["output_tokens"] = 1
    return {"type": "message_start", "message": msg}


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def block_delta(index: int, delta: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


FULL_STREAM: list[dict[str, Any]] = [
    start_event(cache_read_input_tokens=50, cache_creation_input_tokens=5),
    {"type": "ping"},
    block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
    block_delta(0, {"type": "thinking_delta", "thinking": "Two "}),
    block_delta(0, {"type": "thinking_delta", "thinking": "numbers."}),
    block_delta(0, {"type": "signature_delta", "signature": "EqQB"}),
    stop(0),
    block_start(1, {"type": "redacted_thinking", "data": "secret"}),
    stop(1),
    block_start(2, {"type": "text", "text": ""}),
    block_delta(2, {"type": "text_delta", "text": "Adding"}),
    block_delta(2, {"type": "text_delta", "text": " now"}),
    stop(2),
    block_start(3, {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {}}),
    block_delta(3, {"type": "input_json_delta", "partial_json": ""}),
    block_delta(3, {"type": "input_json_delta", "partial_json": '{"a": 1,'}),
    block_delta(3, {"type": "input_json_delta", "partial_json": ' "b": 2}'}),
    stop(3),
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}},
    {"type": "message_stop"},
]


def run_stream(events: list[Any]) -> tuple[list[Any], ResponseBuilder]:
    parser = F.stream_parser()
    deltas = [d for e in events for d in parser.feed(ev(e))]
    deltas += parser.close()
    builder = ResponseBuilder()
    for d in deltas:
        builder.add(d)
    return deltas, builder


def test_a_full_stream_gives_every_block_with_wire_indexes() -> None:
    deltas, builder = run_stream(FULL_STREAM)
    assert deltas[0] == UsageDelta(
        usage=Usage(
            input_tokens=65, output_tokens=1, cache_read_tokens=50, cache_write_tokens=5, requests=1
        )
    )
    thinking = [d for d in deltas if isinstance(d, ThinkingDelta)]
    assert [(d.index, d.text, d.signature) for d in thinking] == [
        (0, "Two ", None),
        (0, "numbers.", None),
        (0, "", "EqQB"),
        (1, "", REDACTED_THINKING_PREFIX + "secret"),
    ]
    assert [d.index for d in deltas if isinstance(d, TextDelta)] == [2, 2]
    tool = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert tool[0] == ToolCallDelta(index=3, id="toolu_9", name="add")
    assert {d.index for d in tool} == {3}
    response = builder.response()
    assert response.message.content == (
        ThinkingBlock(thinking="Two numbers.", signature="EqQB"),
        ThinkingBlock(thinking="", signature=REDACTED_THINKING_PREFIX + "secret"),
        TextBlock(text="Adding now"),
        ToolUseBlock(id="toolu_9", name="add", input={"a": 1, "b": 2}),
    )
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(
        input_tokens=65, output_tokens=42, cache_read_tokens=50, cache_write_tokens=5, requests=1
    )


def test_the_stream_and_the_whole_response_agree() -> None:
    _, builder = run_stream(FULL_STREAM)
    whole = message(
        [
            {"type": "thinking", "thinking": "Two numbers.", "signature": "EqQB"},
            {"type": "redacted_thinking", "data": "secret"},
            {"type": "text", "text": "Adding now"},
            {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {"a": 1, "b": 2}},
        ],
        stop="tool_use",
        cache_read_input_tokens=50,
        cache_creation_input_tokens=5,
    )
    whole["usage"]["output_tokens"] = 42
    streamed, parsed = builder.response(), F.parse(whole)
    assert streamed.message.content == parsed.message.content
    assert (streamed.usage, streamed.finish_reason) == (parsed.usage, parsed.finish_reason)


def test_cumulative_message_delta_usage_is_not_counted_twice() -> None:
    events = [
        start_event(),
        {
            "type": "message_delta",
            "delta": {"stop_reason": None},
            "usage": {"output_tokens": 3, "input_tokens": 10},
        },
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 9, "input_tokens": 10, "cache_read_input_tokens": 4},
        },
        {"type": "message_stop"},
    ]
    _, builder = run_stream(events)
    assert builder.usage == Usage(input_tokens=14, output_tokens=9, cache_read_tokens=4, requests=1)


def test_a_tool_input_given_whole_at_block_start_is_sent_at_block_stop() -> None:
    events = [
        block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {"x": [1]}}),
        stop(0),
        {"type": "message_stop"},
    ]
    _, builder = run_stream(events)
    assert dict(builder.build().tool_calls[0].input) == {"x": (1,)}


def test_non_json_tool_arguments_are_kept_raw() -> None:
    events = [
        block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
        block_delta(0, {"type": "input_json_delta", "partial_json": '{"a": '}),
        block_delta(0, {"type": "input_json_delta", "partial_json": "oops"}),
        stop(0),
        {"type": "message_stop"},
    ]
    _, builder = run_stream(events)
    call_ = builder.build().tool_calls[0]
    assert call_.input == {}
    assert call_.raw_input == '{"a": oops'


def test_ping_comments_citations_and_unknown_events_are_ignored() -> None:
    parser = AnthropicStreamParser()
    assert parser.feed(ev({"type": "ping"})) == []
    assert parser.feed(SSEEvent(comments=("keep-alive",))) == []
    assert parser.feed(ev({"type": "future_event", "stuff": 1})) == []
    citation = {"type": "citations_delta", "citation": {"type": "char_location"}}
    assert parser.feed(ev(block_delta(0, citation))) == []


def test_a_stream_without_message_stop_is_a_recoverable_error() -> None:
    parser = AnthropicStreamParser()
    parser.feed(ev(block_start(0, {"type": "text", "text": ""})))
    parser.feed(ev(block_delta(0, {"type": "text_delta", "text": "cut"})))
    with pytest.raises(ProviderError, match="ended early") as info:
        parser.close()
    assert info.value.recoverable
    assert info.value.provider == "anthropic"


@pytest.mark.parametrize(
    ("kind", "cls", "recoverable"),
    [
        ("overloaded_error", ProviderError, True),
        ("api_error", ProviderError, True),
        ("timeout_error", ProviderError, True),
        ("rate_limit_error", RateLimitedError, True),
        ("invalid_request_error", InvalidRequestError, False),
        ("authentication_error", AuthenticationError, False),
        ("permission_error", AuthenticationError, False),
        ("request_too_large", ContextTooLongError, False),
        ("brand_new_error", ProviderError, True),
    ],
)
def test_error_events_are_typed_by_error_type(
    kind: str, cls: type[AgentRunError], recoverable: bool
) -> None:
    parser = AnthropicStreamParser()
    data = {"type": "error", "error": {"type": kind, "message": "it broke"}}
    with pytest.raises(cls, match="it broke") as info:
        parser.feed(ev(data))
    err = info.value
    assert type(err) is cls
    assert err.recoverable is recoverable
    assert err.provider_code == kind
    assert err.provider == "anthropic"
    assert err.status is None
    assert "it broke" in (err.excerpt or "")


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        "[1, 2]",
        "null",
        {"no": "type"},
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}},
        {"type": "content_block_delta", "index": "0", "delta": {"type": "text_delta", "text": "x"}},
        block_delta(0, {"type": "text_delta", "text": 5}),
        block_delta(0, {"type": "text_delta"}),
        block_delta(0, {"type": "input_json_delta", "partial_json": None}),
        block_delta(0, {"type": "thinking_delta", "thinking": 1}),
        block_delta(0, {"type": "signature_delta", "signature": []}),
        block_delta(0, {"type": "mystery_delta"}),
        block_delta(0, "text"),
        block_start(0, {"type": "server_tool_use", "id": "s", "name": "web_search"}),
        block_start(0, {"type": "tool_use", "id": 1, "name": "f"}),
        block_start(0, {"type": "text", "text": 3}),
        block_start(0, {"type": "thinking", "thinking": "", "signature": 5}),
        block_start(0, {"type": "redacted_thinking"}),
        {"type": "content_block_stop"},
        {"type": "message_start", "message": {"usage": {}}},
        {"type": "message_start", "message": {"content": [{"type": "text"}], "usage": {}}},
        {"type": "message_start", "message": {"content": [], "usage": {"input_tokens": "9"}}},
        {"type": "message_delta", "delta": {}},
        {"type": "message_delta", "delta": None, "usage": {}},
    ],
)
def test_malformed_stream_events_raise_provider_error_never_key_error(data: Any) -> None:
    parser = AnthropicStreamParser()
    parser.feed(ev(block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}})))
    with pytest.raises(ProviderError, match="malformed") as info:
        parser.feed(ev(data, event="message"))
    assert info.value.provider == "anthropic"
    assert info.value.excerpt
    assert not info.value.recoverable


def test_a_stream_split_into_bytes_parses_the_same() -> None:
    raw = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in FULL_STREAM)
    decoder, parser = SSEDecoder(), F.stream_parser()
    deltas = []
    for i in range(len(raw)):
        for event in decoder.feed(raw[i : i + 1]):
            deltas.extend(parser.feed(event))
    for event in decoder.close():
        deltas.extend(parser.feed(event))
    deltas.extend(parser.close())
    assert deltas == run_stream(FULL_STREAM)[0]


# -- HTTP errors ---------------------------------------------------------------------------------


def error_body(kind: str, message: str = "nope") -> bytes:
    return json.dumps(
        {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}
    ).encode()


@pytest.mark.parametrize(
    ("status", "kind", "code", "recoverable"),
    [
        (400, "invalid_request_error", ErrorCode.INVALID_REQUEST, False),
        (401, "authentication_error", ErrorCode.AUTH, False),
        (402, "billing_error", ErrorCode.AUTH, False),
        (403, "permission_error", ErrorCode.AUTH, False),
        (404, "not_found_error", ErrorCode.INVALID_REQUEST, False),
        (413, "request_too_large", ErrorCode.CONTEXT_TOO_LONG, False),
        (429, "rate_limit_error", ErrorCode.RATE_LIMITED, True),
        (500, "api_error", ErrorCode.PROVIDER_ERROR, True),
        (504, "timeout_error", ErrorCode.PROVIDER_ERROR, True),
        (529, "overloaded_error", ErrorCode.PROVIDER_ERROR, True),
        (418, "teapot_error", ErrorCode.INVALID_REQUEST, False),
        (503, "new_error", ErrorCode.PROVIDER_ERROR, True),
    ],
)
def test_error_mapping_table(status: int, kind: str, code: ErrorCode, recoverable: bool) -> None:
    err = F.error_from_response(status, error_body(kind, "it failed"), {})
    assert (err.code, err.recoverable) == (code, recoverable)
    assert err.provider == "anthropic"
    assert err.status == status
    assert err.provider_code == kind
    assert "it failed" in err.message
    assert err.excerpt
    assert "it failed" in err.excerpt


def test_prompt_too_long_is_an_invalid_request_without_a_stable_marker() -> None:
    body = error_body("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    err = F.error_from_response(400, body, {})
    assert err.code == ErrorCode.INVALID_REQUEST
    assert not err.recoverable


def test_retry_after_is_read_from_the_headers() -> None:
    err = F.error_from_response(429, error_body("rate_limit_error"), {"retry-after": "7"})
    assert err.retry_after == 7.0
    err = F.error_from_response(529, error_body("overloaded_error"), {"Retry-After": "2"})
    assert err.retry_after == 2.0
    assert err.recoverable


@pytest.mark.parametrize(
    ("status", "cls", "recoverable"),
    [
        (502, ProviderError, True),
        (403, AuthenticationError, False),
        (400, InvalidRequestError, False),
    ],
)
def test_an_html_page_from_a_proxy_is_typed_with_an_excerpt(
    status: int, cls: type[AgentRunError], recoverable: bool
) -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1>" + b" " * 5000 + b"</body></html>"
    err = F.error_from_response(status, page, {})
    assert type(err) is cls
    assert err.recoverable is recoverable
    assert err.provider == "anthropic"
    assert err.status == status
    assert err.excerpt is not None
    assert err.excerpt.startswith("<html><body><h1>502 Bad Gateway")
    assert len(err.excerpt) <= 300


@pytest.mark.parametrize(
    "body", [b"", b"{", b'{"error": "flat"}', b"[1]", b'{"error": {"type": 5}}']
)
def test_odd_error_bodies_are_classified_by_status(body: bytes) -> None:
    err = F.error_from_response(429, body, {})
    assert err.code == ErrorCode.RATE_LIMITED
    assert err.recoverable
    assert err.status == 429


def test_capabilities() -> None:
    caps = F.capabilities
    assert caps.supports_tools
    assert caps.supports_vision
    assert caps.supports_tool_choice_required
    assert not caps.supports_json_schema
    assert F.provider == "anthropic"


def test_a_history_breakpoint_before_signed_thinking_is_read_back() -> None:
    thought = ThinkingBlock(thinking="", signature="sig")
    messages = [Msg.user("hi"), Msg.assistant([TextBlock(text="ok"), thought])]
    options = ModelOptions(extra={"cache_breakpoints": ["history"]})
    body = json.loads(json.dumps(F.format(messages, [], options, model="m", stream=False)))
    last = body["messages"][-1]["content"]
    assert [("cache_control" in b) for b in last] == [True, False]  # thinking takes no mark
    assert F.parse_request(body)[2].extra["cache_breakpoints"] == ("history",)
