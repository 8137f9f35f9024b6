"""`parse_deltas`, the formatters' fast path for whole responses, agrees with `parse`.

For random OpenAI and DashScope responses, valid and corrupted: `ResponseBuilder` over
`parse_deltas(body)` gives the message, usage and finish reason of `parse(body)` (and exactly what
the old non-streaming path, `response_to_deltas(parse(body))`, gave); the deltas are the same one
per block, only a tool call's argument text is passed through instead of written back as JSON; a
body `parse` refuses raises the same typed error (never a `KeyError`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rxagent.errors import AgentRunError
from rxagent.formatters.base import response_to_deltas
from rxagent.formatters.dashscope import DashScopeFormatter
from rxagent.formatters.openai import FINISH_REASON_MAP, OpenAIFormatter
from rxagent.messages import Block, Msg, TextBlock, ThinkingBlock, ToolUseBlock
from rxagent.models import ResponseBuilder, ToolCallDelta, Usage
from rxagent.models.base import ModelDelta, ModelResponse
from rxagent.testing import strategies as rst
from rxagent.testing.providers import FakeOpenAIServer
from rxagent.testing.providers._base import RecordedRequest, ScriptedResponse

OPENAI = OpenAIFormatter()
DASHSCOPE = DashScopeFormatter()

# the disagreements these look for are corner cases: more examples than the profile's few
_PROFILE = settings.default
_MANY = settings(max_examples=max(_PROFILE.max_examples if _PROFILE else 0, 400))

# -- strategies ------------------------------------------------------------------------------------

_junk: st.SearchStrategy[Any] = st.one_of(
    rst.json_values(),
    st.sampled_from(["eos", "stop", "", 0, 7, 1.5, True, None, [], {}, [{}], {"text": 1}, ["x"]]),
)


def _or_junk(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`strategy`'s values, and now and then (1 in 6) a JSON value of any other kind."""
    return st.tuples(st.integers(min_value=0, max_value=5), strategy, _junk).map(
        lambda drawn: drawn[2] if drawn[0] == 0 else drawn[1]
    )


_texts = _or_junk(st.one_of(st.none(), st.just(""), st.text(max_size=12)))
_ids = _or_junk(st.one_of(st.none(), st.just(""), st.text(max_size=6)))
_counts = st.one_of(st.none(), st.integers(min_value=0, max_value=10**6))
_arguments = st.one_of(
    st.dictionaries(st.text(max_size=4), rst.json_values(), max_size=3).map(json.dumps),
    st.dictionaries(st.text(max_size=4), rst.json_values(), max_size=3).map(
        lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    ),
    rst.json_values().map(json.dumps),  # JSON that is not an object: kept raw
    st.sampled_from(["", "  ", "{}", "{oops", '{"a": 1', "null", "[1, 2]", "1e999", "NaN"]),
    st.text(max_size=12),
)


def _present(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects with any subset of `fields`."""
    return st.fixed_dictionaries({}, optional=fields)


_openai_calls = st.fixed_dictionaries(
    {
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {"name": _or_junk(st.text(max_size=8))},
            optional={"arguments": _or_junk(st.none() | _arguments)},
        ),
    },
    optional={"id": _ids},
)
_openai_messages = st.fixed_dictionaries(
    {"role": st.just("assistant")},
    optional={
        "content": _texts,
        "refusal": _texts,
        "reasoning_content": _texts,
        "reasoning": _texts,
        "tool_calls": _or_junk(st.none() | st.lists(_or_junk(_openai_calls), max_size=3)),
    },
)
_openai_usage = st.none() | _present(
    prompt_tokens=_counts,
    completion_tokens=_counts,
    total_tokens=_counts,
    prompt_tokens_details=st.none() | _present(cached_tokens=_counts),
)


@st.composite
def _openai_bodies(draw: st.DrawFn) -> Any:
    if draw(st.integers(min_value=0, max_value=4)) == 0:  # as the fake server renders a turn
        return _rendered(draw(_turns))
    choice = {
        "index": 0,
        "message": draw(_openai_messages),
        "finish_reason": draw(_or_junk(st.sampled_from([*FINISH_REASON_MAP, None]))),
        "logprobs": None,
    }
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [choice]}
    usage = draw(_or_junk(_openai_usage))
    if usage is not None or draw(st.booleans()):
        body["usage"] = usage
    return body


_calls = st.builds(
    ToolUseBlock,
    id=st.text(min_size=1, max_size=6).map(lambda s: f"call_{s}"),
    name=st.sampled_from(["add", "echo"]),
    input=st.dictionaries(st.text(max_size=4), rst.json_values(), max_size=3),
)
_turns = st.tuples(st.text(max_size=12), st.text(max_size=12), st.lists(_calls, max_size=3))


def _rendered(turn: tuple[str, str, list[ToolUseBlock]]) -> Any:
    thinking, text, calls = turn
    blocks: list[Block] = [
        *([ThinkingBlock(thinking=thinking)] if thinking else []),
        *([TextBlock(text=text)] if text else []),
        *calls,
    ]
    usage = Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2, requests=1)
    response = ScriptedResponse(Msg.assistant(blocks), usage, "tool_calls" if calls else "stop", 1)
    body = FakeOpenAIServer().render(response, RecordedRequest("POST", "/", {}, {}, {"model": "m"}))
    return json.loads(json.dumps(body))


_dashscope_calls = _present(
    index=st.integers(min_value=0, max_value=2),
    id=_ids,
    type=st.just("function"),
    function=_or_junk(_present(name=_ids, arguments=_or_junk(st.none() | _arguments))),
)
_dashscope_content = st.one_of(
    _texts, st.lists(st.fixed_dictionaries({"text": st.text(max_size=8)}), max_size=2)
)
_dashscope_messages = st.fixed_dictionaries(
    {"role": st.just("assistant")},
    optional={
        "content": _dashscope_content,
        "reasoning_content": _texts,
        "tool_calls": _or_junk(st.none() | st.lists(_or_junk(_dashscope_calls), max_size=4)),
    },
)
_dashscope_usage = st.none() | _present(
    input_tokens=_counts,
    output_tokens=_counts,
    prompt_tokens=_counts,
    completion_tokens=_counts,
    prompt_tokens_details=_present(cached_tokens=_counts, cache_creation_input_tokens=_counts),
)
_dashscope_finish = _or_junk(st.sampled_from(["stop", "length", "tool_calls", "null", None]))


@st.composite
def _dashscope_bodies(draw: st.DrawFn) -> Any:
    output: dict[str, Any]
    if draw(st.integers(min_value=0, max_value=5)) == 0:  # result_format="text"
        output = {"text": draw(st.text(max_size=8)), "finish_reason": draw(_dashscope_finish)}
    else:
        choice = {"message": draw(_dashscope_messages), "finish_reason": draw(_dashscope_finish)}
        output = {"choices": [choice]}
    body: dict[str, Any] = {"request_id": "r-1", "output": output}
    usage = draw(_or_junk(_dashscope_usage))
    if usage is not None:
        body["usage"] = usage
    return body


def _places(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) inside a JSON value."""
    places: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            places.append((value, key))
            places.extend(_places(item))
    elif isinstance(value, list):
        for key, item in enumerate(value):
            places.append((value, key))
            places.extend(_places(item))
    return places


@st.composite
def _corrupted(draw: st.DrawFn, bodies: st.SearchStrategy[Any]) -> Any:
    """A body with one or two values replaced by junk or keys removed, or the whole body junk."""
    body = copy.deepcopy(draw(bodies))  # changed in place: never a value hypothesis keeps
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        places = _places(body)
        if not places or draw(st.integers(min_value=0, max_value=19)) == 0:
            return draw(_junk)
        container, key = draw(st.sampled_from(places))
        if isinstance(container, dict) and draw(st.booleans()):
            del container[key]
        else:
            container[key] = copy.deepcopy(draw(_junk))
    return body


def _error_bodies() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries(
            {
                "error": st.fixed_dictionaries(
                    {
                        "message": st.text(max_size=8),
                        "code": st.sampled_from(
                            ["rate_limit_exceeded", "context_length_exceeded", "x", None]
                        ),
                    }
                )
            }
        ),
        st.fixed_dictionaries(
            {
                "code": st.sampled_from(["Throttling", "InvalidApiKey", "InternalError"]),
                "message": st.text(max_size=8),
                "status_code": st.sampled_from([400, 429, 500]),
            }
        ),
    )


# -- the comparison --------------------------------------------------------------------------------


def _outcome(read: Any, body: Any) -> tuple[str, Any]:
    """What reading `body` gives: ("ok", value) or the typed error's identity. Any other
    exception (a KeyError, say) is not caught: the property fails."""
    try:
        return "ok", read(copy.deepcopy(body))
    except AgentRunError as exc:
        return "error", (type(exc), exc.code, str(exc), exc.recoverable, exc.excerpt)


def _build(deltas: list[ModelDelta]) -> Any:
    builder = ResponseBuilder()
    try:
        for delta in deltas:
            builder.add(delta)
    except TypeError as exc:  # usage counts that are not numbers: both paths fail alike
        return ("TypeError", str(exc))
    return builder.build().content, builder.usage, builder.finish_reason


def _same_deltas(fast: list[ModelDelta], slow: list[ModelDelta]) -> None:
    """One delta per block on both paths; tool-call arguments may differ as text only."""
    assert len(fast) == len(slow)
    for mine, theirs in zip(fast, slow, strict=True):
        if isinstance(mine, ToolCallDelta):
            assert isinstance(theirs, ToolCallDelta)
            assert (mine.index, mine.id, mine.name) == (theirs.index, theirs.id, theirs.name)
            assert _build([mine])[0] == _build([theirs])[0]  # the same input or raw text
        else:
            assert mine == theirs


def _check(formatter: Any, body: Any) -> None:
    parsed = _outcome(formatter.parse, body)
    fast = _outcome(formatter.parse_deltas, body)
    if parsed[0] == "error":
        assert fast == parsed
        return
    assert fast[0] == "ok"
    response: ModelResponse = parsed[1]
    old = response_to_deltas(response)  # what the non-streaming path gave before
    _same_deltas(fast[1], old)
    built = _build(fast[1])
    assert built == _build(old)
    if built[0] == "TypeError":
        return
    content, usage, finish = built
    assert usage == response.usage
    assert finish == response.finish_reason
    # parse leaves a missing call id empty; a builder names it `call_<its block's number>`
    expected = tuple(
        block.model_copy(update={"id": f"call_{number}"})
        if isinstance(block, ToolUseBlock) and not block.id
        else block
        for number, block in enumerate(response.message.blocks, start=1)
    )
    assert content == expected


def _openai(message: Any, finish: Any = "stop", **fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}], **fields}


@_MANY
@given(st.one_of(_openai_bodies(), _corrupted(_openai_bodies()), _error_bodies()))
@example(_openai({"tool_calls": [{"function": {"name": "f", "arguments": 5}}]}))
@example(_openai({"tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}))
@example(_openai({"tool_calls": [{"function": {"name": 5, "arguments": "{}"}}]}, "eos", usage=[1]))
@example(_openai({"content": 5, "refusal": ["no"], "reasoning": {"r": 1}}))
@example(
    _openai(
        {
            "content": "a",
            "tool_calls": [
                {"function": {"name": "f", "arguments": '{"a":1}'}},
                {"id": "", "function": {"name": "g", "arguments": "[1]"}},
                {"id": "c", "function": {"name": "h", "arguments": "  "}},
            ],
        },
        "tool_calls",
    )
)
def test_openai_parse_deltas_builds_what_parse_reads(body: Any) -> None:
    _check(OPENAI, body)


@_MANY
@given(st.one_of(_dashscope_bodies(), _corrupted(_dashscope_bodies()), _error_bodies()))
@example(
    {
        "output": {
            "choices": [
                {
                    "message": {
                        "content": [{"text": "x"}],
                        "reasoning_content": "r",
                        "tool_calls": [
                            {"index": 0, "function": {"name": "f", "arguments": '{"a"'}},
                            {"index": 0, "id": "c1", "function": {"arguments": ":1}"}},
                            {"index": 1, "function": {"name": "g"}},
                            {"index": 0, "id": "c2", "function": {"name": "h"}},
                            {"index": 2, "function": {"arguments": "{}"}},
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        },
        "usage": {"input_tokens": 3, "prompt_tokens_details": {"cached_tokens": 1}},
    }
)
@example({"output": {"choices": [{"message": {"tool_calls": [{"function": 1}]}}]}})
def test_dashscope_parse_deltas_builds_what_parse_reads(body: Any) -> None:
    _check(DASHSCOPE, body)


@given(_turns)
def test_a_rendered_completion_reads_back_as_its_turn(
    turn: tuple[str, str, list[ToolUseBlock]],
) -> None:
    thinking, text, calls = turn
    builder = ResponseBuilder()
    for delta in OPENAI.parse_deltas(_rendered(turn)):
        builder.add(delta)
    expected = [
        *([ThinkingBlock(thinking=thinking)] if thinking else []),
        *([TextBlock(text=text)] if text else []),
        *calls,
    ]
    assert builder.build().blocks == tuple(expected)
    assert builder.usage == Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2, requests=1)
    assert builder.finish_reason == ("tool_calls" if calls else "stop")
