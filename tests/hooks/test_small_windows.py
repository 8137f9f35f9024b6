"""Small context windows (4k, 8k) work out of the box: the reply's reserve adapts to the window
unless someone set `max_output_tokens`, and an unknown window's warning says how to declare it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxagent import ErrorCode, ReActAgent, tool
from rxagent.errors import ConfigurationError
from rxagent.events import ContextTrimmedEvent, PreReasoningEvent
from rxagent.hooks.builtin import DEFAULT_CONTEXT_WINDOW, ContextWindow
from rxagent.hooks.builtin.context import DEFAULT_MAX_OUTPUT_TOKENS
from rxagent.models import ModelOptions, OpenAIChatModel, resolve
from rxagent.testing import ScriptedModel, Turn, assert_event_protocol, tool_call
from rxagent.tokens import counter_for
from rxagent.tools import Tool

COUNTER = counter_for("scripted")

SYSTEM_PROMPT = (
    "You are a helpful assistant for the operations team. Answer briefly and precisely. Use the "
    "tools when they help: look tickets up before you talk about them, compute with the "
    "calculator rather than in your head, and say so plainly when you do not know. Never invent "
    "ticket numbers, names or figures. Reply in the language of the question."
)


@tool
def lookup_ticket(ticket_id: str) -> str:
    """Look a support ticket up by its id and return its title, status and owner.

    Args:
        ticket_id: The ticket's id, for example "OPS-1234".
    """
    return f"{ticket_id}: disk full on db-2 · open · owner: ada " + "log line " * 300


@tool
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression.

    Args:
        expression: For example "17 * 23 + 4".
    """
    return "42"


@tool
def search_runbooks(query: str, limit: int = 3) -> list[str]:
    """Search the team's runbooks by keywords and return the best matching titles.

    Args:
        query: Keywords, for example "disk full".
        limit: How many titles to return.
    """
    return [f"Runbook {i}: {query}" for i in range(limit)]


TOOLS: list[Tool[..., Any]] = [lookup_ticket, calculate, search_runbooks]


# -- the reserve adapts when nobody set it --------------------------------------------------


@pytest.mark.parametrize(("window", "reserve"), [(4_096, 1_024), (8_192, 2_048)])
async def test_a_small_window_works_with_a_real_prompt_and_tools(window: int, reserve: int) -> None:
    script: list[Turn] = [
        tool_call("lookup_ticket", ticket_id="OPS-1"),
        "OPS-1 is open.",
        tool_call("lookup_ticket", ticket_id="OPS-2"),
        "OPS-2 is open too.",
        "Both are Ada's.",
    ]
    model = ScriptedModel(script, name="small-local", context_window=window)
    agent = ReActAgent("ops", SYSTEM_PROMPT, model, tools=TOOLS)  # no ConfigurationError
    (hook,) = [h for h in agent.hooks if isinstance(h, ContextWindow)]
    assert hook.max_output_for(window) == reserve
    for question in ("What is OPS-1?", "And OPS-2? " * 40, "Whose are they?"):
        events = [e async for e in agent.events(question)]
        assert_event_protocol(events)
        result = events[-1].result  # type: ignore[attr-defined]
        assert result.ok, result.error
        for sent in model.requests[-2:]:
            tokens = COUNTER.count_messages(list(sent.messages))
            assert tokens + COUNTER.count_tools(list(sent.tools)) + reserve <= window
    assert model.calls == len(script)


async def test_a_long_history_in_a_4k_window_is_trimmed_not_refused() -> None:
    model = ScriptedModel(["Noted. " * 50] * 15, context_window=4_096)
    agent = ReActAgent("a", SYSTEM_PROMPT, model, tools=TOOLS)
    trimmed = 0
    for turn in range(15):
        events = [e async for e in agent.events(f"fact {turn}: " + "detail " * 150)]
        assert events[-1].result.ok  # type: ignore[attr-defined]
        trimmed += sum(isinstance(e, ContextTrimmedEvent) for e in events)
        sent = model.requests[-1]
        tokens = COUNTER.count_messages(list(sent.messages)) + COUNTER.count_tools(list(sent.tools))
        assert tokens + 1_024 <= 4_096
    assert trimmed > 0
    assert len(model.requests[-1].messages) < 2 * 15  # older turns were left out of the request


def test_the_reserve_never_exceeds_the_default_nor_a_quarter_of_the_window() -> None:
    hook = ContextWindow()
    assert hook.max_output_for(DEFAULT_CONTEXT_WINDOW) == DEFAULT_MAX_OUTPUT_TOKENS == 4_096
    assert hook.max_output_for(16_384) == 4_096
    assert hook.max_output_for(2_048) == 512
    assert hook.max_output_for(3) == 1


def test_the_models_own_options_count_as_set() -> None:
    model = OpenAIChatModel(
        "small-local",
        api_key="k",
        base_url="http://127.0.0.1:9/v1",
        context_window=8_192,
        options=ModelOptions(max_output_tokens=3_000),
    )
    assert ContextWindow().max_output_for(8_192, model=model) == 3_000
    assert ContextWindow().validate_for(model) == 8_192 - 3 - 3_000
    # the request's options win over the model's
    request = ModelOptions(max_output_tokens=100)
    assert ContextWindow().max_output_for(8_192, request, model) == 100


# -- a setting that cannot fit still fails, naming the numbers and the fix ------------------


@pytest.mark.parametrize(
    ("where", "source"),
    [
        ("agent options", "from ModelOptions.max_output_tokens"),
        ("hook", "from ContextWindow(max_output_tokens=...)"),
        ("model options", "from the model's options"),
    ],
)
def test_an_explicit_max_output_that_cannot_fit_is_refused(where: str, source: str) -> None:
    big = ModelOptions(max_output_tokens=4_096)
    model: object = ScriptedModel(["hi"], context_window=4_096)
    kwargs: dict[str, object] = {}
    if where == "agent options":
        kwargs["options"] = big
    elif where == "hook":
        kwargs["hooks"] = [ContextWindow(max_output_tokens=4_096)]
    else:
        model = resolve(
            "openai:small-local",
            api_key="k",
            base_url="http://127.0.0.1:9/v1",
            context_window=4_096,
            options=big,
        )
    with pytest.raises(ConfigurationError) as info:
        ReActAgent("a", SYSTEM_PROMPT, model, tools=TOOLS, **kwargs)  # type: ignore[arg-type]
    message = str(info.value)
    assert "has no room for messages: context window 4,096 - system prompt " in message
    assert f"max_output_tokens 4,096 ({source}) = -" in message
    assert "lower max_output_tokens" in message


def test_a_prompt_that_fills_three_quarters_is_refused_naming_the_default_reserve() -> None:
    model = ScriptedModel(["hi"], context_window=4_096)
    with pytest.raises(ConfigurationError) as info:
        ReActAgent("a", "rule " * 3_500, model)
    message = str(info.value)
    assert "max_output_tokens 1,024 (from a quarter of the window)" in message
    assert "set max_output_tokens, shorten the system prompt" in message


async def test_a_request_option_that_cannot_fit_fails_the_run() -> None:
    model = ScriptedModel(["never"], context_window=4_096)
    agent = ReActAgent("a", SYSTEM_PROMPT, model, tools=TOOLS)
    result = await agent.call("hi", options=ModelOptions(max_output_tokens=4_000))
    assert result.error is not None
    assert result.error.code is ErrorCode.CONTEXT_TOO_LONG
    assert "max output 4,000" in result.error.message
    assert model.calls == 0


# -- the property ----------------------------------------------------------------------------

MIN_WINDOW = 1_024
"""The smallest window the property covers: three quarters of it hold the prompt and tools."""


@settings(deadline=None)
@given(
    window=st.integers(min_value=MIN_WINDOW, max_value=2_000_000),
    questions=st.lists(st.text(max_size=300), min_size=1, max_size=4),
    tools=st.integers(min_value=0, max_value=len(TOOLS)),
)
def test_any_window_above_the_minimum_fits_every_request_when_max_output_is_unset(
    window: int, questions: list[str], tools: int
) -> None:
    model = ScriptedModel(["Answer. " * 40] * len(questions), context_window=window)
    agent = ReActAgent("a", SYSTEM_PROMPT, model, tools=TOOLS[:tools])
    reserve = ContextWindow().max_output_for(window)

    async def run() -> list[PreReasoningEvent]:
        sent: list[PreReasoningEvent] = []
        for question in questions:
            events = [e async for e in agent.events(question or "?")]
            assert_event_protocol(events)
            assert events[-1].result.ok, events[-1].result.error  # type: ignore[attr-defined]
            sent.extend(e for e in events if isinstance(e, PreReasoningEvent))
        return sent

    asyncio.run(run())
    assert model.calls == len(questions)
    for request in model.requests:
        tokens = COUNTER.count_messages(list(request.messages))
        assert tokens + COUNTER.count_tools(list(request.tools)) + reserve <= window


# -- the unknown-window warning names the fix ----------------------------------------------


def test_the_unknown_window_warning_names_the_exact_fix(caplog: pytest.LogCaptureFixture) -> None:
    model = resolve("openai:my-finetune-x9", api_key="k", base_url="http://127.0.0.1:9/v1")
    with caplog.at_level(logging.WARNING, logger="rxagent.hooks.context_window"):
        assert ContextWindow().window_for(model.name, model) == DEFAULT_CONTEXT_WINDOW
    (record,) = [r for r in caplog.records if "my-finetune-x9" in r.getMessage()]
    message = record.getMessage()
    assert "has an unknown context window; assuming 128,000 tokens" in message
    assert 'resolve("openai:my-finetune-x9", context_window=8192)' in message
    assert 'OpenAIChatModel("my-finetune-x9", context_window=8192)' in message
    assert "ContextWindow(context_window=8192) in ReActAgent(hooks=[...])" in message


def test_the_unknown_window_warning_for_a_model_without_a_provider(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel(["hi"], name="homemade-q7")
    model.context_window = None
    with caplog.at_level(logging.WARNING, logger="rxagent.hooks.context_window"):
        ContextWindow().window_for(model.name, model)
    (record,) = [r for r in caplog.records if "homemade-q7" in r.getMessage()]
    assert "resolve(" not in record.getMessage()
    assert "ContextWindow(context_window=8192)" in record.getMessage()
