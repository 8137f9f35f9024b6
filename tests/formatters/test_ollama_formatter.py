"""OllamaFormatter: request bodies, whole responses, NDJSON stream lines and error mapping."""

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
from rxagent.formatters.framing import NDJSONDecoder
from rxagent.formatters.ollama import TOOL_ERROR_PREFIX, OllamaFormatter
from rxagent.messages import (
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models import (
    FinishDelta,
    ModelDelta,
    ModelOptions,
    ResponseBuilder,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSchema,
    Usage,
    UsageDelta,
)

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
ADD = ToolSchema(
    name="add",
    description="Add two numbers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


@pytest.fixture
def fmt() -> OllamaFormatter:
    return OllamaFormatter()


def body_of(
    fmt: OllamaFormatter,
    messages: list[Msg],
    tools: list[ToolSchema] | None = None,
    stream: bool = True,
    **options: Any,
) -> dict[str, Any]:
    return fmt.format(
        messages, tools or [], ModelOptions(**options), model="llama3.2", stream=stream
    )


def chunk(content: str = "", **message: Any) -> dict[str, Any]:
    return {
        "model": "llama3.2",
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": content, **message},
        "done": False,
    }


def done(
    reason: str | None = "stop", prompt: int = 12, output: int = 5, **extra: Any
) -> dict[str, Any]:
    line = {
        "model": "llama3.2",
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "total_duration": 1000,
        "load_duration": 10,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": 100,
        "eval_count": output,
        "eval_duration": 200,
        **extra,
    }
    if reason is not None:
        line["done_reason"] = reason
    return line


def feed_all(fmt: OllamaFormatter, events: list[Any]) -> list[ModelDelta]:
    return list(fmt.parse_stream(events))


def build(deltas: list[ModelDelta]) -> ResponseBuilder:
    builder = ResponseBuilder()
    for delta in deltas:
        builder.add(delta)
    return builder


# -- format: messages ------------------------------------------------------------------------------


def test_minimal_body_has_model_messages_and_stream(fmt: OllamaFormatter) -> None:
    body = body_of(fmt, [Msg.system("Be brief."), Msg.user("Hi")], stream=False)
    assert body == {
        "model": "llama3.2",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
        "stream": False,
    }


def test_user_text_blocks_are_joined_and_images_sent_as_base64(fmt: OllamaFormatter) -> None:
    msg = Msg.user(
        [
            TextBlock(text="What is this?"),
            ImageBlock(data=PNG, media_type="image/png"),
            TextBlock(text="And this?"),
            ImageBlock(url=f"data:image/png;base64,{PNG}"),
        ]
    )
    [wire] = body_of(fmt, [msg])["messages"]
    assert wire == {"role": "user", "content": "What is this?\nAnd this?", "images": [PNG, PNG]}


@pytest.mark.parametrize(
    "url", ["https://example.com/cat.png", "data:image/svg+xml,<svg></svg>", "file:///tmp/x.png"]
)
def test_url_images_are_refused_with_a_hint(fmt: OllamaFormatter, url: str) -> None:
    with pytest.raises(InvalidRequestError, match=r"base64") as info:
        body_of(fmt, [Msg.user([TextBlock(text="see"), ImageBlock(url=url)])])
    assert info.value.provider == "ollama"
    assert not info.value.recoverable


@pytest.mark.parametrize(
    ("msg", "what"),
    [
        (Msg(role="system", content=[ImageBlock(data=PNG, media_type="image/png")]), "image"),
        (Msg.user([ThinkingBlock(thinking="hm")]), "thinking"),
        (Msg.user([ToolUseBlock(id="c", name="add")]), "tool_use"),
        (Msg.assistant([ImageBlock(data=PNG, media_type="image/png")]), "image"),
        (
            Msg.assistant([ToolResultBlock(id="c", name="add", output="1")]),
            "tool_result",
        ),
        (Msg(role="tool", content="plain text"), "tool result"),
        (
            Msg.tool(ToolResultBlock(id="c", name="add", output=(ThinkingBlock(thinking="no"),))),
            "thinking",
        ),
    ],
)
def test_blocks_a_role_cannot_carry_are_refused(fmt: OllamaFormatter, msg: Msg, what: str) -> None:
    with pytest.raises(InvalidRequestError, match=what):
        body_of(fmt, [msg])


def test_speaker_names_are_refused(fmt: OllamaFormatter) -> None:
    with pytest.raises(InvalidRequestError, match="name='alice'"):
        body_of(fmt, [Msg.user("hi", name="alice")])


def test_assistant_thinking_text_and_tool_calls(fmt: OllamaFormatter) -> None:
    msg = Msg.assistant(
        [
            ThinkingBlock(thinking="The user wants a sum.", signature="sig-from-elsewhere"),
            TextBlock(text="Adding."),
            ToolUseBlock(id="call_1", name="add", input={"a": 1, "b": 2}),
            ToolUseBlock(id="", name="add", input={"a": 3, "b": 4}),
        ]
    )
    [wire] = body_of(fmt, [msg])["messages"]
    assert wire == {
        "role": "assistant",
        "content": "Adding.",
        "thinking": "The user wants a sum.",  # no signature: Ollama has none
        "tool_calls": [
            {"id": "call_1", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}},
            {"function": {"name": "add", "arguments": {"a": 3, "b": 4}}},
        ],
    }
    assert isinstance(wire["tool_calls"][0]["function"]["arguments"], dict)  # an object
    json.dumps(wire)  # frozen inputs were thawed into plain JSON


def test_assistant_with_only_tool_calls_sends_empty_content(fmt: OllamaFormatter) -> None:
    [wire] = body_of(fmt, [Msg.assistant([ToolUseBlock(id="c1", name="add")])])["messages"]
    assert wire["content"] == ""
    assert "thinking" not in wire


def test_raw_input_calls_are_sent_with_their_parsed_input(fmt: OllamaFormatter) -> None:
    call = ToolUseBlock(id="c1", name="add", raw_input="{not json")
    [wire] = body_of(fmt, [Msg.assistant([call])])["messages"]
    assert wire["tool_calls"][0]["function"]["arguments"] == {}


def test_tool_results_carry_name_id_and_error_prefix(fmt: OllamaFormatter) -> None:
    ok = Msg.tool(ToolResultBlock(id="call_1", name="add", output="3"))
    failed = Msg.tool(ToolResultBlock(id="call_2", name="add", output="bad input", is_error=True))
    pictured = Msg.tool(
        ToolResultBlock(
            id="call_3",
            name="plot",
            output=(TextBlock(text="a chart"), ImageBlock(data=PNG, media_type="image/png")),
        )
    )
    wires = body_of(fmt, [ok, failed, pictured])["messages"]
    assert wires == [
        {"role": "tool", "content": "3", "tool_name": "add", "tool_call_id": "call_1"},
        {
            "role": "tool",
            "content": TOOL_ERROR_PREFIX + "bad input",
            "tool_name": "add",
            "tool_call_id": "call_2",
        },
        {
            "role": "tool",
            "content": "a chart",
            "tool_name": "plot",
            "tool_call_id": "call_3",
            "images": [PNG],
        },
    ]


# -- format: tools and options ---------------------------------------------------------------------


def test_tools_are_function_schemas(fmt: OllamaFormatter) -> None:
    body = body_of(fmt, [Msg.user("1 + 2?")], [ADD])
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
        }
    ]


@pytest.mark.parametrize("choice", [None, "auto"])
def test_tool_choice_auto_sends_tools(fmt: OllamaFormatter, choice: str | None) -> None:
    assert "tools" in body_of(fmt, [Msg.user("x")], [ADD], tool_choice=choice)


def test_tool_choice_none_omits_tools(fmt: OllamaFormatter) -> None:
    assert "tools" not in body_of(fmt, [Msg.user("x")], [ADD], tool_choice="none")


@pytest.mark.parametrize("choice", ["required", "add"])
def test_forcing_a_tool_is_refused(fmt: OllamaFormatter, choice: str) -> None:
    with pytest.raises(InvalidRequestError, match="tool_choice"):
        body_of(fmt, [Msg.user("x")], [ADD], tool_choice=choice)


def test_parallel_tool_calls(fmt: OllamaFormatter) -> None:
    assert "tools" in body_of(fmt, [Msg.user("x")], [ADD], parallel_tool_calls=True)
    assert "tools" not in body_of(fmt, [Msg.user("x")], [], parallel_tool_calls=False)
    with pytest.raises(InvalidRequestError, match="parallel_tool_calls"):
        body_of(fmt, [Msg.user("x")], [ADD], parallel_tool_calls=False)


def test_sampling_options(fmt: OllamaFormatter) -> None:
    body = body_of(
        fmt, [Msg.user("x")], temperature=0.2, max_output_tokens=64, stop=("###",), seed=7
    )
    assert body["options"] == {"temperature": 0.2, "num_predict": 64, "stop": ["###"], "seed": 7}


def test_response_format_json_object_and_schema(fmt: OllamaFormatter) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    as_json = body_of(fmt, [Msg.user("x")], response_format={"type": "json_object"})
    as_schema = body_of(
        fmt,
        [Msg.user("x")],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "place", "schema": schema, "strict": True},
        },
    )
    assert as_json["format"] == "json"
    assert as_schema["format"] == schema


@pytest.mark.parametrize(
    "response_format",
    [
        {"type": "text"},
        {"type": "json_schema"},
        {"type": "json_schema", "json_schema": {"name": "x"}},
    ],
)
def test_other_response_formats_are_refused(
    fmt: OllamaFormatter, response_format: dict[str, Any]
) -> None:
    with pytest.raises(InvalidRequestError, match="response_format"):
        body_of(fmt, [Msg.user("x")], response_format=response_format)


def test_extra_merges_at_top_level_and_into_options(fmt: OllamaFormatter) -> None:
    body = body_of(
        fmt,
        [Msg.user("x")],
        temperature=0.2,
        extra={
            "keep_alive": "10m",
            "think": True,
            "options": {"num_ctx": 8192, "temperature": 0.9},
        },
    )
    assert body["keep_alive"] == "10m"
    assert body["think"] is True
    assert body["options"] == {"temperature": 0.9, "num_ctx": 8192}  # extra wins


@pytest.mark.parametrize("key", ["model", "messages", "stream"])
def test_extra_may_not_replace_what_the_client_sets(fmt: OllamaFormatter, key: str) -> None:
    with pytest.raises(InvalidRequestError, match=key):
        body_of(fmt, [Msg.user("x")], extra={key: "other"})


def test_extra_options_must_be_an_object(fmt: OllamaFormatter) -> None:
    with pytest.raises(InvalidRequestError, match="options"):
        body_of(fmt, [Msg.user("x")], extra={"options": 3})


def test_think_and_keep_alive_from_the_constructor_and_extra_wins() -> None:
    fmt = OllamaFormatter(think="high", keep_alive=0)
    body = body_of(fmt, [Msg.user("x")])
    assert body["think"] == "high"
    assert body["keep_alive"] == 0
    assert body_of(fmt, [Msg.user("x")], extra={"think": False})["think"] is False


# -- parse_request ---------------------------------------------------------------------------------


def test_parse_request_is_the_inverse_of_format(fmt: OllamaFormatter) -> None:
    messages = [
        Msg.system("sys"),
        Msg.user([TextBlock(text="look"), ImageBlock(data=PNG, media_type="image/png")]),
        Msg.assistant(
            [
                ThinkingBlock(thinking="sum it"),
                TextBlock(text="ok"),
                ToolUseBlock(id="call_1", name="add", input={"a": 1, "b": 2}),
            ]
        ),
        Msg.tool(ToolResultBlock(id="call_1", name="add", output="oops", is_error=True)),
        Msg.assistant("3"),
    ]
    options = ModelOptions(
        temperature=0.5,
        max_output_tokens=10,
        stop=("x",),
        seed=1,
        response_format={"type": "json_object"},
        extra={"options": {"num_ctx": 2048}, "keep_alive": "1m"},
    )
    body = fmt.format(messages, [ADD], options, model="m", stream=True)
    parsed, tools, parsed_options = fmt.parse_request(json.loads(json.dumps(body)))
    assert [(m.role, m.content) for m in parsed] == [(m.role, m.content) for m in messages]
    assert tools == [ADD]
    assert parsed_options == options
    assert fmt.format(parsed, tools, parsed_options, model="m", stream=True) == body


def test_parse_request_pairs_results_without_ids_with_the_pending_calls(
    fmt: OllamaFormatter,
) -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "add", "arguments": {"a": 1}}},
                    {"function": {"name": "echo", "arguments": {"text": "x"}}},
                ],
            },
            {"role": "tool", "content": "x", "tool_name": "echo"},
            {"role": "tool", "content": "1"},
        ],
    }
    messages, _, _ = fmt.parse_request(body)
    echo, add = messages[2].tool_results[0], messages[3].tool_results[0]
    assert (echo.name, echo.output) == ("echo", "x")
    assert (add.name, add.output) == ("add", "1")


def test_parse_request_guesses_image_types(fmt: OllamaFormatter) -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "", "images": [PNG, "/9j/4A", "AAAA"]}],
    }
    [msg] = fmt.parse_request(body)[0]
    assert [b.media_type for b in msg.blocks if isinstance(b, ImageBlock)] == [
        "image/png",
        "image/jpeg",
        "application/octet-stream",
    ]


@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        {"model": "m"},
        {"messages": [{"content": "no role"}]},
        {"messages": [{"role": "robot", "content": "x"}]},
        {"messages": [{"role": "user", "content": 3}]},
        {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {}}]}]},
        {"messages": [], "options": "hot"},
        {"messages": [], "tools": [{"type": "function"}]},
    ],
)
def test_parse_request_rejects_bodies_that_are_not_chat_requests(
    fmt: OllamaFormatter, body: Any
) -> None:
    with pytest.raises(ProviderError, match="malformed"):
        fmt.parse_request(body)


# -- parse -----------------------------------------------------------------------------------------


def test_parse_text_response_with_usage(fmt: OllamaFormatter) -> None:
    body = done("stop", prompt=26, output=298)
    body["message"]["content"] = "The sky is blue."
    response = fmt.parse(body)
    assert response.message.text == "The sky is blue."
    assert response.finish_reason == "stop"
    assert response.usage == Usage(input_tokens=26, output_tokens=298, requests=1)


def test_parse_thinking_text_and_tool_calls_in_order(fmt: OllamaFormatter) -> None:
    body = done("stop")
    body["message"] = {
        "role": "assistant",
        "content": "Let me add.",
        "thinking": "A sum.",
        "tool_calls": [
            {"function": {"name": "add", "arguments": {"a": 1, "b": 2}}},
            {"id": "call_xyz", "function": {"index": 1, "name": "add", "arguments": {"a": 3}}},
        ],
    }
    response = fmt.parse(body)
    thinking, text, first, second = response.message.blocks
    assert thinking == ThinkingBlock(thinking="A sum.")
    assert text == TextBlock(text="Let me add.")
    assert isinstance(first, ToolUseBlock)
    assert isinstance(second, ToolUseBlock)
    assert (first.id, first.name, dict(first.input)) == ("", "add", {"a": 1, "b": 2})
    assert second.id == "call_xyz"
    assert response.finish_reason == "tool_calls"
    # stable ids: the id-less call streams with id=None, so the agent assigns call_<n>
    calls = [d for d in response_to_deltas(response) if isinstance(d, ToolCallDelta)]
    assert [c.id for c in calls] == [None, "call_xyz"]


def test_parse_string_arguments(fmt: OllamaFormatter) -> None:
    body = done("stop")
    body["message"]["tool_calls"] = [
        {"function": {"name": "add", "arguments": '{"a": 1}'}},
        {"function": {"name": "add", "arguments": "not json"}},
    ]
    good, bad = fmt.parse(body).message.tool_calls
    assert dict(good.input) == {"a": 1}
    assert good.raw_input is None
    assert bad.input == {}
    assert bad.raw_input == "not json"


FINISH_TABLE = [
    ("stop", False, "stop"),
    ("stop", True, "tool_calls"),
    (None, False, "stop"),
    (None, True, "tool_calls"),
    ("length", False, "length"),
    ("length", True, "length"),
    ("load", False, "stop"),
    ("unload", False, "stop"),
]


@pytest.mark.parametrize(("reason", "calls", "expected"), FINISH_TABLE)
def test_finish_reasons(
    fmt: OllamaFormatter, reason: str | None, calls: bool, expected: str
) -> None:
    body = done(reason)
    if calls:
        body["message"]["tool_calls"] = [{"function": {"name": "add", "arguments": {}}}]
    assert fmt.parse(body).finish_reason == expected
    events = [chunk(tool_calls=body["message"]["tool_calls"])] if calls else []
    deltas = feed_all(fmt, [*events, done(reason)])
    assert deltas[-1] == FinishDelta(reason=expected)


def test_unknown_done_reason_is_malformed(fmt: OllamaFormatter) -> None:
    with pytest.raises(ProviderError, match="unknown done_reason 'exploded'"):
        fmt.parse(done("exploded"))
    with pytest.raises(ProviderError, match="unknown done_reason"):
        feed_all(fmt, [chunk("hi"), done("exploded")])


@pytest.mark.parametrize(
    "body",
    [
        None,
        "text",
        [1, 2],
        {"done": True},
        {"message": "hi", "done": True},
        {"message": {"role": "assistant", "content": "hi"}, "done": False},
        {"message": {"role": "assistant", "content": "hi"}},
        {"message": {"role": "assistant", "content": 3}, "done": True},
        {"message": {"role": "assistant", "thinking": ["x"]}, "done": True},
        {"message": {"role": "assistant", "tool_calls": {"a": 1}}, "done": True},
        {"message": {"role": "assistant", "tool_calls": [{"function": {}}]}, "done": True},
        {"message": {"role": "assistant", "tool_calls": [{"name": "add"}]}, "done": True},
        {
            "message": {
                "role": "assistant",
                "tool_calls": [{"function": {"name": "a", "arguments": [1]}}],
            },
            "done": True,
        },
        {"message": {"role": "assistant", "content": ""}, "done": True, "eval_count": "5"},
    ],
)
def test_parse_malformed_bodies_raise_provider_error(fmt: OllamaFormatter, body: Any) -> None:
    with pytest.raises(ProviderError, match="malformed") as info:
        fmt.parse(body)
    assert info.value.provider == "ollama"
    assert not info.value.recoverable


def test_parse_of_an_error_body_is_typed(fmt: OllamaFormatter) -> None:
    with pytest.raises(InvalidRequestError, match="not found"):
        fmt.parse({"error": 'model "llama9" not found, try pulling it first'})


# -- stream ----------------------------------------------------------------------------------------


def test_stream_text_pieces_share_one_index_and_end_with_usage_and_finish(
    fmt: OllamaFormatter,
) -> None:
    deltas = feed_all(fmt, [chunk("The sky"), chunk(" is "), chunk("blue."), done("stop", 26, 3)])
    assert deltas == [
        TextDelta(index=0, text="The sky"),
        TextDelta(index=0, text=" is "),
        TextDelta(index=0, text="blue."),
        UsageDelta(usage=Usage(input_tokens=26, output_tokens=3, requests=1)),
        FinishDelta(reason="stop"),
    ]


def test_stream_thinking_then_text_then_tool_calls(fmt: OllamaFormatter) -> None:
    call_a = {"function": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    call_b = {"function": {"name": "echo", "arguments": {"text": "hé"}}}
    deltas = feed_all(
        fmt,
        [
            chunk(thinking="Sum "),
            chunk(thinking="needed."),
            chunk("Adding."),
            chunk(tool_calls=[call_a, call_b]),
            done("stop"),
        ],
    )
    assert deltas[:5] == [
        ThinkingDelta(index=0, text="Sum "),
        ThinkingDelta(index=0, text="needed."),
        TextDelta(index=1, text="Adding."),
        ToolCallDelta(index=2, id=None, name="add", args='{"a": 1, "b": 2}'),
        ToolCallDelta(index=3, id=None, name="echo", args=json.dumps({"text": "hé"})),
    ]
    assert deltas[-1] == FinishDelta(reason="tool_calls")
    message = build(deltas).build()
    assert [b.type for b in message.blocks] == ["thinking", "text", "tool_use", "tool_use"]
    assert dict(message.tool_calls[1].input) == {"text": "hé"}
    assert message.blocks[0] == ThinkingBlock(thinking="Sum needed.", signature=None)


def test_stream_keeps_a_tool_call_id_the_server_sends(fmt: OllamaFormatter) -> None:
    call = {"id": "call_abc", "function": {"index": 0, "name": "add", "arguments": {}}}
    [delta, *_] = feed_all(fmt, [chunk(tool_calls=[call]), done()])
    assert delta == ToolCallDelta(index=0, id="call_abc", name="add", args="{}")


def test_stream_non_json_string_arguments_become_raw_input(fmt: OllamaFormatter) -> None:
    call = {"function": {"name": "add", "arguments": "{'a': 1"}}
    message = build(feed_all(fmt, [chunk(tool_calls=[call]), done()])).build()
    assert message.tool_calls[0].raw_input == "{'a': 1"


def test_stream_done_line_may_carry_content_and_lack_a_message(fmt: OllamaFormatter) -> None:
    last = done("length")
    last["message"]["content"] = "tail"
    deltas = feed_all(fmt, [chunk("head "), last])
    assert build(deltas).build().text == "head tail"
    bare = {"done": True, "done_reason": "stop", "eval_count": 1}
    assert feed_all(fmt, [chunk("x"), bare])[-1] == FinishDelta(reason="stop")


def test_lines_after_the_done_line_are_ignored(fmt: OllamaFormatter) -> None:
    parser = fmt.stream_parser()
    parser.feed(done())
    assert parser.feed(chunk("late")) == []
    assert parser.close() == []


def test_stream_without_done_line_raises_recoverable_on_close(fmt: OllamaFormatter) -> None:
    parser = fmt.stream_parser()
    assert parser.feed(chunk("partial")) == [TextDelta(index=0, text="partial")]
    with pytest.raises(ProviderError, match="ended early") as info:
        parser.close()
    assert info.value.recoverable
    assert info.value.provider == "ollama"


def test_truncated_byte_stream_never_hangs_or_raises_key_error(fmt: OllamaFormatter) -> None:
    raw = (json.dumps(chunk("Hello")) + "\n" + json.dumps(done())).encode()
    cut = raw[: len(raw) - 10]  # the done line is cut mid-JSON
    decoder, parser = NDJSONDecoder(), fmt.stream_parser()
    deltas = [d for event in decoder.feed(cut) for d in parser.feed(event)]
    assert deltas == [TextDelta(index=0, text="Hello")]
    with pytest.raises(ProviderError):
        decoder.close()
    with pytest.raises(ProviderError, match="ended early"):
        parser.close()


@pytest.mark.parametrize(
    ("message", "error", "recoverable"),
    [
        ('model "llama9" not found, try pulling it first', InvalidRequestError, False),
        ("model 'llama9' not found", InvalidRequestError, False),
        ("input length exceeds maximum context length", ContextTooLongError, False),
        ("an error was encountered while running the model: unexpected EOF", ProviderError, True),
    ],
)
def test_error_lines_in_a_stream_are_typed(
    fmt: OllamaFormatter, message: str, error: type[AgentRunError], recoverable: bool
) -> None:
    parser = fmt.stream_parser()
    parser.feed(chunk("partial"))
    with pytest.raises(error, match="ollama") as info:
        parser.feed({"error": message})
    assert type(info.value) is error
    assert info.value.recoverable is recoverable
    assert message in str(info.value)
    assert info.value.excerpt


def test_error_line_whose_error_is_an_object(fmt: OllamaFormatter) -> None:
    with pytest.raises(ProviderError, match="boom"):
        fmt.stream_parser().feed({"error": {"message": "boom"}})


@pytest.mark.parametrize(
    "event",
    [
        None,
        3,
        "text",
        [chunk("x")],
        {"done": False},
        {"model": "m"},
        {"message": ["x"], "done": False},
        {"message": {"role": "assistant", "content": 3}, "done": False},
        {"message": {"role": "assistant", "thinking": 1}, "done": False},
        {"message": {"role": "assistant", "tool_calls": "add"}, "done": False},
        {"message": {"role": "assistant", "tool_calls": ["add"]}, "done": False},
        {
            "message": {"role": "assistant", "tool_calls": [{"function": {"name": 1}}]},
            "done": False,
        },
        {"message": {"role": "assistant", "content": ""}, "done": True, "prompt_eval_count": 1.5},
    ],
)
def test_malformed_stream_lines_raise_provider_error(fmt: OllamaFormatter, event: Any) -> None:
    with pytest.raises(ProviderError, match="malformed") as info:
        fmt.stream_parser().feed(event)
    assert not info.value.recoverable


# -- errors ----------------------------------------------------------------------------------------


ERROR_TABLE = [
    (404, {"error": 'model "llama9" not found, try pulling it first'}, InvalidRequestError, False),
    (400, {"error": "invalid options: num_predict"}, InvalidRequestError, False),
    (400, {"error": "input length exceeds maximum context length"}, ContextTooLongError, False),
    (401, {"error": "unauthorized"}, AuthenticationError, False),
    (403, {"error": "forbidden"}, AuthenticationError, False),
    (429, {"error": "too many requests"}, RateLimitedError, True),
    (500, {"error": "llama runner process has terminated"}, ProviderError, True),
    (500, {"error": "input length exceeds maximum context length"}, ContextTooLongError, False),
    (502, {"error": {"message": "upstream down", "type": "proxy"}}, ProviderError, True),
    (503, {"error": "server busy"}, ProviderError, True),
]


@pytest.mark.parametrize(("status", "payload", "error", "recoverable"), ERROR_TABLE)
def test_error_mapping_table(
    fmt: OllamaFormatter,
    status: int,
    payload: dict[str, Any],
    error: type[AgentRunError],
    recoverable: bool,
) -> None:
    err = fmt.error_from_response(status, json.dumps(payload).encode(), {})
    assert type(err) is error
    assert err.recoverable is recoverable
    assert (err.provider, err.status, err.provider_code) == ("ollama", status, None)
    message = payload["error"] if isinstance(payload["error"], str) else payload["error"]["message"]
    assert message in str(err)


def test_retry_after_is_read(fmt: OllamaFormatter) -> None:
    err = fmt.error_from_response(429, b'{"error": "slow down"}', {"Retry-After": "3"})
    assert err.code == ErrorCode.RATE_LIMITED
    assert err.retry_after == 3.0


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (502, b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>"),
        (404, b"404 page not found"),
        (500, b""),
        (500, b'["not", "an", "object"]'),
        (500, b"\xff\xfe garbage"),
    ],
)
def test_non_json_error_bodies_still_give_typed_errors(
    fmt: OllamaFormatter, status: int, body: bytes
) -> None:
    err = fmt.error_from_response(status, body, {"Content-Type": "text/html"})
    assert isinstance(err, AgentRunError)
    assert err.provider == "ollama"
    assert err.status == status
    if body.startswith(b"<html>"):
        assert err.excerpt is not None
        assert "502 Bad Gateway" in err.excerpt
        assert err.recoverable


def test_capabilities_are_truthful(fmt: OllamaFormatter) -> None:
    caps = fmt.capabilities
    assert caps.supports_tools
    assert caps.supports_vision
    assert caps.supports_json_schema
    assert not caps.supports_tool_choice_required
    assert fmt.provider == "ollama"
