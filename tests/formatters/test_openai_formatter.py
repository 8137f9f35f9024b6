"""OpenAIFormatter: request bodies, whole responses, chunk streams and error classification."""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
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
from rxagent.formatters.framing import SSEDecoder, SSEEvent
from rxagent.formatters.openai import (
    ERROR_PREFIX,
    IMAGES_ONLY_NOTE,
    OpenAIFormatter,
)
from rxagent.messages import (
    FrozenDict,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    thaw,
)
from rxagent.models import (
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

FMT = OpenAIFormatter()
ADD = ToolSchema(
    name="add",
    description="Add two numbers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


def body_of(messages: list[Msg], tools: list[ToolSchema] | None = None, **opts: Any) -> Any:
    return FMT.format(messages, tools or [], ModelOptions(**opts), model="gpt-4o", stream=False)


def call(id: str, name: str, **args: Any) -> ToolUseBlock:
    return ToolUseBlock(id=id, name=name, input=args)


def result(id: str, output: Any, *, name: str = "add", is_error: bool = False) -> Msg:
    return Msg.tool(ToolResultBlock(id=id, name=name, output=output, is_error=is_error))


# -- requests: messages ----------------------------------------------------------------------------


def test_system_user_assistant_and_names() -> None:
    body = body_of(
        [
            Msg.system("Be brief.", name="rules"),
            Msg.user("Hi", name="ann"),
            Msg.assistant("Hello", name="bot"),
        ]
    )
    assert body == {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Be brief.", "name": "rules"},
            {"role": "user", "content": "Hi", "name": "ann"},
            {"role": "assistant", "content": "Hello", "name": "bot"},
        ],
    }


def test_developer_role_is_a_formatter_option() -> None:
    fmt = OpenAIFormatter(system_role="developer")
    body = fmt.format([Msg.system("Rules")], [], ModelOptions(), model="o3-mini", stream=False)
    assert body["messages"] == [{"role": "developer", "content": "Rules"}]
    messages, _, _ = fmt.parse_request(body)
    assert messages[0].role == "system"
    assert messages[0].content == "Rules"


def test_system_blocks_are_sent_as_joined_text_and_images_are_refused() -> None:
    msg = Msg(role="system", content=(TextBlock(text="a"), TextBlock(text="b")))
    assert body_of([msg])["messages"][0]["content"] == "ab"
    with pytest.raises(InvalidRequestError, match="image block in a system message") as info:
        body_of([Msg(role="system", content=(ImageBlock(url="https://x/i.png"),))])
    assert info.value.provider == "openai"


def test_user_text_and_images_become_parts_with_data_urls() -> None:
    msg = Msg.user(
        [
            TextBlock(text="What is this?"),
            ImageBlock(url="https://example.com/cat.png"),
            ImageBlock(data="aGVsbG8=", media_type="image/png"),
        ]
    )
    assert body_of([msg])["messages"][0]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}},
    ]


def test_assistant_text_and_tool_calls() -> None:
    msg = Msg.assistant(
        [TextBlock(text="Adding."), call("call_1", "add", a=1, b=2), call("call_2", "echo")]
    )
    assert body_of([msg])["messages"][0] == {
        "role": "assistant",
        "content": "Adding.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
            },
            {"id": "call_2", "type": "function", "function": {"name": "echo", "arguments": "{}"}},
        ],
    }


def test_assistant_with_only_tool_calls_has_null_content_and_raw_arguments_go_verbatim() -> None:
    raw = ToolUseBlock(id="c1", name="add", input={}, raw_input='{"a": 1,')
    wire = body_of([Msg.assistant([raw])])["messages"][0]
    assert wire["content"] is None
    assert wire["tool_calls"][0]["function"]["arguments"] == '{"a": 1,'


def test_thinking_is_left_out_by_default_and_sent_as_reasoning_content_when_asked() -> None:
    msg = Msg.assistant([ThinkingBlock(thinking="hmm", signature="sig"), TextBlock(text="4")])
    assert body_of([msg])["messages"] == [{"role": "assistant", "content": "4"}]
    fmt = OpenAIFormatter(reasoning_content=True)
    body = fmt.format([msg], [], ModelOptions(), model="deepseek-reasoner", stream=False)
    assert body["messages"] == [{"role": "assistant", "content": "4", "reasoning_content": "hmm"}]
    back, _, _ = fmt.parse_request(body)
    assert back[0].blocks == (ThinkingBlock(thinking="hmm"), TextBlock(text="4"))


def test_tool_results_carry_the_call_id_and_mark_errors() -> None:
    body = body_of(
        [
            Msg.assistant([call("c1", "add", a=1, b=2), call("c2", "add")]),
            result("c1", "3"),
            result("c2", (TextBlock(text="bad"), TextBlock(text="args")), is_error=True),
        ]
    )
    assert body["messages"][1:] == [
        {"role": "tool", "tool_call_id": "c1", "content": "3"},
        {"role": "tool", "tool_call_id": "c2", "content": ERROR_PREFIX + "bad\nargs"},
    ]
    messages, _, _ = FMT.parse_request(body)
    assert messages[2].tool_results[0] == ToolResultBlock(
        id="c2", name="add", output="bad\nargs", is_error=True
    )


def test_tool_result_images_follow_the_tool_run_in_one_user_message() -> None:
    png = ImageBlock(data="aGVsbG8=", media_type="image/png")
    url = ImageBlock(url="https://example.com/chart.png")
    history = [
        Msg.assistant([call("c1", "shot"), call("c2", "plot")]),
        result("c1", (TextBlock(text="the screen"), png), name="shot"),
        result("c2", (url,), name="plot"),
        Msg.user("thanks"),
    ]
    body = body_of(history)
    assert [m["role"] for m in body["messages"]] == ["assistant", "tool", "tool", "user", "user"]
    assert body["messages"][1]["content"] == "the screen"
    assert body["messages"][2]["content"] == IMAGES_ONLY_NOTE
    assert body["messages"][3]["content"] == [
        {"type": "text", "text": "Images returned by tool call c1:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}},
        {"type": "text", "text": "Images returned by tool call c2:"},
        {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}},
    ]
    messages, _, _ = FMT.parse_request(body)
    assert [m.role for m in messages] == ["assistant", "tool", "tool", "user"]
    assert messages[1].tool_results[0].output == (TextBlock(text="the screen"), png)
    assert messages[2].tool_results[0].output == (url,)
    assert messages[2].tool_results[0].name == "plot"


def test_images_at_the_end_of_the_history_are_still_sent() -> None:
    history = [Msg.assistant([call("c1", "shot")]), result("c1", (ImageBlock(url="u"),))]
    assert body_of(history)["messages"][-1]["role"] == "user"


@pytest.mark.parametrize(
    ("msg", "what"),
    [
        (Msg.user([ToolUseBlock(id="c", name="x")]), "tool_use block in a user message"),
        (
            Msg.user([ToolResultBlock(id="c", name="x", output="r")]),
            "tool_result block in a user message",
        ),
        (Msg.assistant([ImageBlock(url="u")]), "image block in an assistant message"),
        (Msg(role="tool", content="plain"), "a tool message without a ToolResultBlock"),
        (Msg(role="tool", content=(TextBlock(text="t"),)), "text block in a tool message"),
        (
            result("c", (ThinkingBlock(thinking="t"),)),
            "thinking block in a tool result",
        ),
    ],
)
def test_blocks_a_role_cannot_hold_are_refused(msg: Msg, what: str) -> None:
    with pytest.raises(InvalidRequestError, match=what) as info:
        body_of([msg])
    assert not info.value.recoverable


# -- requests: tools and options -------------------------------------------------------------------


def test_tools_and_every_option() -> None:
    body = FMT.format(
        [Msg.user("hi")],
        [ADD, ToolSchema(name="now")],
        ModelOptions(
            temperature=0.5,
            max_output_tokens=100,
            tool_choice="required",
            parallel_tool_calls=False,
            stop=("END",),
            seed=7,
            response_format={"type": "json_object"},
            extra={"user": "u-1", "logprobs": True},
        ),
        model="gpt-4o",
        stream=True,
    )
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two numbers.",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                },
            },
        },
        {
            "type": "function",
            "function": {"name": "now", "parameters": {"type": "object", "properties": {}}},
        },
    ]
    assert body["tool_choice"] == "required"
    assert body["parallel_tool_calls"] is False
    assert body["temperature"] == 0.5
    assert body["max_completion_tokens"] == 100
    assert "max_tokens" not in body
    assert body["stop"] == ["END"]
    assert body["seed"] == 7
    assert body["response_format"] == {"type": "json_object"}
    assert body["user"] == "u-1"
    assert body["logprobs"] is True
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    json.dumps(body)  # plain JSON all the way down


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("add", {"type": "function", "function": {"name": "add"}}),
    ],
)
def test_tool_choice(choice: str, wire: Any) -> None:
    body = body_of([Msg.user("x")], [ADD], tool_choice=choice)
    assert body["tool_choice"] == wire
    assert FMT.parse_request(body)[2].tool_choice == choice


def test_tool_choice_and_parallel_calls_are_not_sent_without_tools() -> None:
    body = body_of([Msg.user("x")], tool_choice="required", parallel_tool_calls=True)
    assert "tool_choice" not in body
    assert "parallel_tool_calls" not in body
    assert "tools" not in body


def test_json_schema_response_format_is_passed_as_openai_expects() -> None:
    schema = {"name": "point", "schema": {"type": "object"}, "strict": True}
    body = body_of([Msg.user("x")], response_format={"type": "json_schema", "json_schema": schema})
    assert body["response_format"] == {"type": "json_schema", "json_schema": schema}
    with pytest.raises(InvalidRequestError, match="response_format"):
        body_of([Msg.user("x")], response_format={"type": "yaml"})


def test_max_tokens_field_is_configurable() -> None:
    fmt = OpenAIFormatter(max_tokens_field="max_tokens")
    body = fmt.format(
        [Msg.user("x")], [], ModelOptions(max_output_tokens=9), model="m", stream=False
    )
    assert body["max_tokens"] == 9
    assert "max_completion_tokens" not in body
    assert fmt.parse_request(body)[2].max_output_tokens == 9


def test_extra_is_merged_last_and_overrides() -> None:
    body = body_of([Msg.user("x")], temperature=0.1, extra={"temperature": 0.9})
    assert body["temperature"] == 0.9


# -- requests: what is cached per frozen object ----------------------------------------------------


def test_tool_parameters_are_computed_once_per_schema_and_shared_read_only() -> None:
    first = body_of([Msg.user("x")], [ADD])["tools"][0]
    second = body_of([Msg.user("x")], [ADD])["tools"][0]
    assert first is not second  # the dicts around the schema are new each time
    assert first["function"] is not second["function"]
    params = first["function"]["parameters"]
    assert second["function"]["parameters"] is params  # the cached value, shared
    assert params == thaw(ADD.parameters)
    assert params["required"] == ["a", "b"]  # a list, as before (not a tuple)
    assert json.dumps(params) == json.dumps(thaw(ADD.parameters))
    with pytest.raises(TypeError, match="cannot be changed"):
        params["properties"]["a"]["type"] = "string"
    with pytest.raises(TypeError, match="cannot be changed"):
        params["required"].append("c")
    with pytest.raises(TypeError, match="cannot be changed"):
        params["required"] += ["c"]
    mutable = thaw(params)  # the documented way to change it
    mutable["required"].append("c")
    assert body_of([Msg.user("x")], [ADD])["tools"][0]["function"]["parameters"] == params
    first["function"]["name"] = "renamed"  # the dicts around it are the caller's own
    assert body_of([Msg.user("x")], [ADD])["tools"][0]["function"]["name"] == "add"


def freed_when_dropped(make: Callable[[], object]) -> bool:
    """Whether an object from `make` is freed by its last reference going, with no collector run.

    The two tests below drop each object once it is sent and make the next one: CPython often
    builds it in the freed memory, with the same `id()`, which a cache looking up `id()` alone
    would answer with the dropped object's value. That needs the objects freed at once, by
    reference counting, not left in a reference cycle for `gc.collect()`.
    """
    ref = weakref.ref(make())
    return ref() is None


def test_each_schema_object_gets_its_own_parameters_even_when_an_old_one_is_gone() -> None:
    assert freed_when_dropped(lambda: ToolSchema(name="t", parameters={"type": "object"}))
    for n in range(50):  # new schemas, the old ones dropped: a reused id() must not match
        schema = ToolSchema(
            name="t", parameters={"type": "object", "properties": {f"p{n}": {"type": "string"}}}
        )
        sent = body_of([Msg.user("x")], [schema])["tools"][0]["function"]["parameters"]
        assert list(sent["properties"]) == [f"p{n}"]
        del schema, sent
    copied = ADD.model_copy(update={"parameters": FrozenDict({"type": "object"})})
    assert body_of([Msg.user("x")], [copied])["tools"][0]["function"]["parameters"] == {
        "type": "object"
    }


def test_tool_call_arguments_are_written_once_per_block() -> None:
    block = call("c1", "add", a=1, b="é")
    msg = Msg.assistant([block])
    first = body_of([msg])["messages"][0]["tool_calls"][0]["function"]["arguments"]
    second = body_of([msg])["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert first == '{"a": 1, "b": "é"}'
    assert second is first
    changed = block.model_copy(update={"input": FrozenDict({"a": 2})})  # same id, new input
    wire = body_of([Msg.assistant([changed])])["messages"][0]["tool_calls"][0]["function"]
    assert wire["arguments"] == '{"a": 2}'
    assert freed_when_dropped(lambda: call("c1", "add", n=-1))
    for n in range(50):  # blocks dropped and made again: each one's own input
        fresh = call("c1", "add", n=n)
        sent = body_of([Msg.assistant([fresh])])["messages"][0]["tool_calls"][0]["function"]
        assert sent["arguments"] == f'{{"n": {n}}}'
        del fresh


def test_a_tool_call_whose_input_is_a_plain_dict_is_not_cached() -> None:
    args: dict[str, Any] = {"a": 1}
    block = ToolUseBlock.model_construct(id="c1", name="add", input=args, raw_input=None)
    msg = Msg.assistant([block])
    assert body_of([msg])["messages"][0]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
    args["a"] = 2  # not frozen: it may change, so it is written each time
    assert body_of([msg])["messages"][0]["tool_calls"][0]["function"]["arguments"] == '{"a": 2}'


@pytest.mark.parametrize(
    "kwargs",
    [{"system_role": "admin"}, {"max_tokens_field": "tokens"}],
)
def test_bad_formatter_arguments(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must be"):
        OpenAIFormatter(**kwargs)


def test_parse_request_inverts_options() -> None:
    options = ModelOptions(
        temperature=0.5,
        max_output_tokens=100,
        tool_choice="add",
        parallel_tool_calls=True,
        stop=("a", "b"),
        seed=3,
        response_format={"type": "json_object"},
        extra={"user": "u"},
    )
    body = FMT.format([Msg.user("x")], [ADD], options, model="m", stream=True)
    messages, tools, back = FMT.parse_request(body)
    assert back == options
    assert tools == [ADD]
    assert messages == [Msg.user("x", id=messages[0].id)]


def test_parse_request_of_a_non_request_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="not a chat completions request"):
        FMT.parse_request({"messages": [{"role": "robot", "content": "x"}]})
    with pytest.raises(ProviderError):
        FMT.parse_request({"model": "m"})


# -- whole responses -------------------------------------------------------------------------------


def completion(message: dict[str, Any], finish: Any = "stop", usage: Any = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage,
    }


def test_parse_text_tool_calls_and_usage_with_cached_tokens() -> None:
    body = completion(
        {
            "role": "assistant",
            "content": "Adding.",
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a":1,"b":2}'},
                }
            ],
        },
        finish="tool_calls",
        usage={
            "prompt_tokens": 120,
            "completion_tokens": 8,
            "total_tokens": 128,
            "prompt_tokens_details": {"cached_tokens": 100},
        },
    )
    response = FMT.parse(body)
    assert response.message.text == "Adding."
    assert response.message.tool_calls == (call("call_9", "add", a=1, b=2),)
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(
        input_tokens=120, output_tokens=8, cache_read_tokens=100, requests=1
    )


def test_parse_reasoning_content_refusal_and_missing_usage() -> None:
    response = FMT.parse(
        completion({"role": "assistant", "content": "4", "reasoning_content": "2+2"}, usage=None)
    )
    assert response.message.blocks == (ThinkingBlock(thinking="2+2"), TextBlock(text="4"))
    assert response.usage == Usage(requests=1)
    refused = FMT.parse(completion({"role": "assistant", "content": None, "refusal": "No."}))
    assert refused.message.text == "No."


def test_parse_keeps_non_json_tool_arguments_raw() -> None:
    body = completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
            ],
        },
        finish="tool_calls",
    )
    [block] = FMT.parse(body).message.tool_calls
    assert block.raw_input == "{oops"
    assert dict(block.input) == {}


@pytest.mark.parametrize(
    ("wire", "reason"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("tool_calls", "tool_calls"),
        ("content_filter", "content_filter"),
        ("function_call", "tool_calls"),
        (None, None),
    ],
)
def test_finish_reasons(wire: Any, reason: str | None) -> None:
    assert (
        FMT.parse(completion({"role": "assistant", "content": "x"}, wire)).finish_reason == reason
    )


@pytest.mark.parametrize(
    "body",
    [
        {},
        [],
        "text",
        {"choices": []},
        {"choices": [{"index": 0}]},
        {"choices": [{"message": "hello"}]},
        {"choices": {"0": {}}},
        completion({"role": "assistant", "content": "x"}, finish="eos"),
        completion({"role": "assistant", "content": "x"}, usage=["bad"]),
        completion({"role": "assistant", "tool_calls": [{"function": {}}]}),
    ],
)
def test_malformed_responses_are_provider_errors(body: Any) -> None:
    with pytest.raises(ProviderError, match="malformed") as info:
        FMT.parse(body)
    assert info.value.provider == "openai"
    assert not info.value.recoverable


def test_an_error_object_as_a_response_is_typed() -> None:
    body = {"error": {"message": "too long", "type": "x", "code": "context_length_exceeded"}}
    with pytest.raises(ContextTooLongError):
        FMT.parse(body)


# -- parse_deltas: whole responses straight into deltas --------------------------------------------


def build(deltas: list[Any]) -> ResponseBuilder:
    builder = ResponseBuilder()
    for delta in deltas:
        builder.add(delta)
    return builder


def test_parse_deltas_passes_the_arguments_text_through() -> None:
    body = completion(
        {
            "role": "assistant",
            "content": "Adding.",
            "reasoning_content": "1 + 2",
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a":1}'},
                },
                {"type": "function", "function": {"name": "f", "arguments": "{oops"}},
            ],
        },
        finish="tool_calls",
        usage=USAGE,
    )
    deltas = FMT.parse_deltas(body)
    assert deltas == [
        ThinkingDelta(index=0, text="1 + 2"),
        TextDelta(index=1, text="Adding."),
        ToolCallDelta(index=2, id="call_9", name="add", args='{"a":1}'),  # as sent, not re-written
        ToolCallDelta(index=3, id=None, name="f", args="{oops"),
        UsageDelta(usage=Usage(input_tokens=50, output_tokens=5, cache_read_tokens=32, requests=1)),
        FinishDelta(reason="tool_calls"),
    ]
    built = build(deltas)
    parsed = FMT.parse(body)
    assert built.build().blocks[:3] == parsed.message.blocks[:3]
    assert built.build().blocks[3] == ToolUseBlock(
        id="call_4", name="f", input={}, raw_input="{oops"
    )
    assert (built.usage, built.finish_reason) == (parsed.usage, parsed.finish_reason)


@pytest.mark.parametrize(
    "body",
    [
        {},
        [],
        None,
        {"choices": [{"message": "hello"}]},
        completion({"role": "assistant", "content": "x"}, finish="eos"),
        completion({"role": "assistant", "content": "x"}, usage=["bad"]),
        completion({"role": "assistant", "tool_calls": [{"function": {}}]}),
        completion(
            {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": 5}}]}
        ),
    ],
)
def test_parse_deltas_refuses_what_parse_refuses_with_the_same_error(body: Any) -> None:
    with pytest.raises(ProviderError) as expected:
        FMT.parse(body)
    with pytest.raises(ProviderError) as got:
        FMT.parse_deltas(body)
    assert str(got.value) == str(expected.value)
    assert (got.value.code, got.value.recoverable) == (expected.value.code, False)


def test_parse_deltas_types_an_error_object() -> None:
    body = {"error": {"message": "slow", "type": "requests", "code": "rate_limit_exceeded"}}
    with pytest.raises(RateLimitedError):
        FMT.parse_deltas(body)


# -- streams ---------------------------------------------------------------------------------------

HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return json.dumps({**HEAD, "choices": choices, **extra})


def tc(
    index: int, args: str = "", id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if id is not None:
        fragment.update(id=id, type="function")
        fragment["function"]["name"] = name
    return {"tool_calls": [fragment]}


def run(*data: str, close: bool = True) -> list[Any]:
    parser = FMT.stream_parser()
    deltas = [d for item in data for d in parser.feed(SSEEvent(data=item))]
    if close:
        deltas += parser.close()
    return deltas


USAGE = {
    "prompt_tokens": 50,
    "completion_tokens": 5,
    "total_tokens": 55,
    "prompt_tokens_details": {"cached_tokens": 32},
}


def test_a_stream_as_openai_sends_it() -> None:
    deltas = run(
        chunk({"role": "assistant", "content": "", "refusal": None}),
        chunk({"content": "Let me "}),
        chunk({"content": "add."}),
        chunk(tc(0, id="call_1", name="add")),
        chunk(tc(0, '{"a": 1, ')),
        chunk(tc(0, '"b": 2}')),
        chunk({}, "tool_calls"),
        chunk(None, usage=USAGE),
        "[DONE]",
    )
    assert deltas == [
        TextDelta(index=0, text="Let me "),
        TextDelta(index=0, text="add."),
        ToolCallDelta(index=1, id="call_1", name="add", args=""),
        ToolCallDelta(index=1, args='{"a": 1, '),
        ToolCallDelta(index=1, args='"b": 2}'),
        UsageDelta(usage=Usage(input_tokens=50, output_tokens=5, cache_read_tokens=32, requests=1)),
        FinishDelta(reason="tool_calls"),
    ]


def test_interleaved_parallel_calls_keep_stable_indexes() -> None:
    deltas = run(
        chunk(tc(0, id="a", name="add")),
        chunk(tc(1, id="b", name="echo")),
        chunk(tc(0, '{"a":')),
        chunk(tc(1, '{"text":')),
        chunk(tc(0, "1}")),
        chunk(tc(1, '"x"}')),
        chunk({}, "tool_calls"),
        "[DONE]",
    )
    builder = ResponseBuilder()
    for d in deltas:
        builder.add(d)
    msg = builder.build()
    assert [(c.id, c.name, dict(c.input)) for c in msg.tool_calls] == [
        ("a", "add", {"a": 1}),
        ("b", "echo", {"text": "x"}),
    ]
    assert {d.index for d in deltas if isinstance(d, ToolCallDelta) and d.name == "add"} == {0}
    assert [d.index for d in deltas if isinstance(d, ToolCallDelta)] == [0, 1, 0, 1, 0, 1]


def test_several_calls_in_one_chunk_and_calls_without_index() -> None:
    both: dict[str, Any] = {
        "tool_calls": [
            {
                "index": 0,
                "id": "a",
                "type": "function",
                "function": {"name": "f", "arguments": "{}"},
            },
            {"index": 1, "id": "b", "type": "function", "function": {"name": "g", "arguments": ""}},
        ]
    }
    deltas = run(chunk(both), chunk(tc(1, "{}")), "[DONE]")
    assert [(d.index, d.id, d.args) for d in deltas if isinstance(d, ToolCallDelta)] == [
        (0, "a", "{}"),
        (1, "b", ""),
        (1, None, "{}"),
    ]
    no_index: list[dict[str, Any]] = [
        {"tool_calls": [{"id": "x", "function": {"name": "f", "arguments": "{"}}]},
        {"tool_calls": [{"function": {"arguments": "}"}}]},
        {"tool_calls": [{"id": "y", "function": {"name": "g", "arguments": "{}"}}]},
    ]
    deltas = run(*(chunk(d) for d in no_index), "[DONE]")
    assert [d.index for d in deltas if isinstance(d, ToolCallDelta)] == [0, 0, 1]


def test_reasoning_content_streams_as_thinking_before_text() -> None:
    deltas = run(
        chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
        chunk({"content": None, "reasoning_content": "Two plus "}),
        chunk({"content": None, "reasoning_content": "two."}),
        chunk({"content": "4", "reasoning_content": None}),
        chunk({}, "stop"),
        "[DONE]",
    )
    assert deltas[:3] == [
        ThinkingDelta(index=0, text="Two plus "),
        ThinkingDelta(index=0, text="two."),
        TextDelta(index=1, text="4"),
    ]


def test_streamed_non_json_arguments_are_kept_raw() -> None:
    deltas = run(
        chunk(tc(0, id="c", name="f")), chunk(tc(0, "{not js")), chunk(tc(0, "on")), "[DONE]"
    )
    builder = ResponseBuilder()
    for d in deltas:
        builder.add(d)
    [block] = builder.build().tool_calls
    assert block.raw_input == "{not json"
    assert dict(block.input) == {}


def test_only_choice_zero_is_read() -> None:
    other = json.dumps({**HEAD, "choices": [{"index": 1, "delta": {"content": "B"}}]})
    deltas = run(chunk({"content": "A"}), other, chunk({}, "stop"), "[DONE]")
    assert [d.text for d in deltas if isinstance(d, TextDelta)] == ["A"]


def test_a_stream_without_usage_still_counts_the_request() -> None:
    deltas = run(chunk({"content": "x"}, "stop"), "[DONE]")
    assert deltas[-2:] == [UsageDelta(usage=Usage(requests=1)), FinishDelta(reason="stop")]


def test_usage_is_the_last_one_reported() -> None:
    running = {**USAGE, "completion_tokens": 1}
    deltas = run(chunk({"content": "x"}, usage=running), chunk({}, "stop", usage=USAGE), "[DONE]")
    usages = [d for d in deltas if isinstance(d, UsageDelta)]
    assert len(usages) == 1
    assert usages[0].usage.output_tokens == 5


def test_the_stream_is_complete_only_after_done() -> None:
    parser = FMT.stream_parser()
    parser.feed(SSEEvent(data=chunk({"content": "x"}, "stop")))
    with pytest.raises(ProviderError, match="ended early") as info:
        parser.close()
    assert info.value.recoverable
    assert info.value.provider == "openai"


def test_keep_alives_and_events_after_done_are_ignored() -> None:
    parser = FMT.stream_parser()
    assert parser.feed(SSEEvent(comments=(" keep-alive",))) == []
    parser.feed(SSEEvent(data=chunk({"content": "x"}, "stop")))
    assert len(parser.feed(SSEEvent(data="[DONE]"))) == 2
    assert parser.feed(SSEEvent(data="garbage")) == []
    assert parser.close() == []


@pytest.mark.parametrize(
    ("error", "cls", "recoverable"),
    [
        (
            {"message": "slow", "type": "requests", "code": "rate_limit_exceeded"},
            RateLimitedError,
            True,
        ),
        ({"message": "quota", "type": "insufficient_quota", "code": None}, RateLimitedError, False),
        ({"message": "boom", "type": "server_error", "code": None}, ProviderError, True),
        (
            {"message": "x", "type": "y", "code": "context_length_exceeded"},
            ContextTooLongError,
            False,
        ),
        (
            {"message": "bad", "type": "invalid_request_error", "code": None},
            InvalidRequestError,
            False,
        ),
        ({"message": "?"}, ProviderError, True),
    ],
)
def test_an_error_event_mid_stream_is_typed(
    error: dict[str, Any], cls: type[AgentRunError], recoverable: bool
) -> None:
    parser = FMT.stream_parser()
    parser.feed(SSEEvent(data=chunk({"content": "partial"})))
    with pytest.raises(cls) as info:
        parser.feed(SSEEvent(data=json.dumps({"error": error})))
    assert type(info.value) is cls
    assert info.value.recoverable is recoverable
    assert info.value.provider == "openai"
    assert info.value.excerpt is not None
    assert error["message"] in info.value.excerpt


def test_a_vllm_style_error_event_is_typed() -> None:
    data = json.dumps(
        {
            "object": "error",
            "message": "This model's maximum context length is 4096 tokens.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    )
    with pytest.raises(ContextTooLongError):
        run(data)


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        "<html>502 Bad Gateway</html>",
        "[]",
        '"text"',
        "42",
        '{"choices": {"a": 1}}',
        '{"choices": [{"delta": "text"}]}',
        '{"choices": [{"delta": {"content": 5}}]}',
        '{"choices": [{"delta": {"tool_calls": {"index": 0}}}]}',
        '{"choices": [{"delta": {"tool_calls": [{"index": 0, "function": "f"}]}}]}',
        '{"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": 1}}]}}]}',
        '{"choices": [], "usage": [1]}',
        '{"choices": [{"delta": {}, "finish_reason": "eos"}]}',
        '{"choices": [{"delta": {}, "finish_reason": 3}]}',
    ],
)
def test_malformed_stream_events_are_provider_errors(data: str) -> None:
    with pytest.raises(ProviderError, match="malformed") as info:
        run(data, close=False)
    assert info.value.provider == "openai"
    assert info.value.excerpt


def test_parse_stream_over_raw_bytes() -> None:
    raw = (
        f"data: {chunk({'role': 'assistant', 'content': ''})}\n\n"
        f"data: {chunk({'content': 'hé'})}\r\n\r\n"
        ": keep-alive\n\n"
        f"data: {chunk({}, 'length')}\n\n"
        "data: [DONE]\n\n"
    ).encode()
    deltas = list(FMT.parse_stream(SSEDecoder().feed(raw)))
    assert deltas[0] == TextDelta(index=0, text="hé")
    assert deltas[-1] == FinishDelta(reason="length")


# -- HTTP errors -----------------------------------------------------------------------------------


def err_body(code: Any, type_: Any = "invalid_request_error", message: str = "m") -> bytes:
    return json.dumps(
        {"error": {"message": message, "type": type_, "param": None, "code": code}}
    ).encode()


@pytest.mark.parametrize(
    ("status", "body", "headers", "code", "recoverable", "provider_code", "retry_after"),
    [
        (
            400,
            err_body("context_length_exceeded"),
            {},
            ErrorCode.CONTEXT_TOO_LONG,
            False,
            "context_length_exceeded",
            None,
        ),
        (
            429,
            err_body("insufficient_quota", "insufficient_quota"),
            {},
            ErrorCode.RATE_LIMITED,
            False,
            "insufficient_quota",
            None,
        ),
        (
            429,
            err_body("rate_limit_exceeded", "requests"),
            {"retry-after-ms": "1500"},
            ErrorCode.RATE_LIMITED,
            True,
            "rate_limit_exceeded",
            1.5,
        ),
        (
            429,
            err_body("rate_limit_exceeded", "tokens"),
            {"Retry-After": "3"},
            ErrorCode.RATE_LIMITED,
            True,
            "rate_limit_exceeded",
            3.0,
        ),
        (401, err_body("invalid_api_key"), {}, ErrorCode.AUTH, False, "invalid_api_key", None),
        (
            403,
            err_body("unsupported_country_region_territory", "request_forbidden"),
            {},
            ErrorCode.AUTH,
            False,
            "unsupported_country_region_territory",
            None,
        ),
        (
            404,
            err_body("model_not_found"),
            {},
            ErrorCode.INVALID_REQUEST,
            False,
            "model_not_found",
            None,
        ),
        (
            400,
            err_body(None, message="This model's maximum context length is 8192 tokens"),
            {},
            ErrorCode.CONTEXT_TOO_LONG,
            False,
            "invalid_request_error",
            None,
        ),
        (
            400,
            err_body("content_filter", None),
            {},
            ErrorCode.INVALID_REQUEST,
            False,
            "content_filter",
            None,
        ),
        (
            429,
            err_body("429", None),
            {"retry-after": "2"},
            ErrorCode.RATE_LIMITED,
            True,
            "429",
            2.0,
        ),
        (
            500,
            err_body(None, "server_error"),
            {},
            ErrorCode.PROVIDER_ERROR,
            True,
            "server_error",
            None,
        ),
        (503, b'{"error": "overloaded"}', {}, ErrorCode.PROVIDER_ERROR, True, None, None),
        (
            502,
            b"<html><body>502 Bad Gateway</body></html>",
            {},
            ErrorCode.PROVIDER_ERROR,
            True,
            None,
            None,
        ),
        (400, b"", {}, ErrorCode.INVALID_REQUEST, False, None, None),
    ],
)
def test_error_mapping(
    status: int,
    body: bytes,
    headers: dict[str, str],
    code: ErrorCode,
    recoverable: bool,
    provider_code: str | None,
    retry_after: float | None,
) -> None:
    err = FMT.error_from_response(status, body, headers)
    assert err.code == code
    assert err.recoverable is recoverable
    assert err.provider == "openai"
    assert err.status == status
    assert err.provider_code == provider_code
    assert err.retry_after == retry_after
    assert err.source == "model"


def test_an_html_page_from_a_proxy_gives_a_typed_error_with_an_excerpt() -> None:
    page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    err = FMT.error_from_response(502, page, {"Content-Type": "text/html"})
    assert isinstance(err, ProviderError)
    assert err.excerpt is not None
    assert "502 Bad Gateway" in err.excerpt
    assert "openai HTTP 502" in str(err)


def test_error_messages_name_the_provider_code() -> None:
    err = FMT.error_from_response(401, err_body("invalid_api_key", message="Incorrect key"), {})
    assert isinstance(err, AuthenticationError)
    assert str(err) == "openai HTTP 401 [invalid_api_key]: Incorrect key"
