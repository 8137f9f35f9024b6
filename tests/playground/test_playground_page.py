"""The playground page in a real browser (Debian chromium driven by playwright) on a real server."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from playground_harness import (  # type: ignore[import-not-found]
    CHROMIUM,
    WATCH_SCRIPT,
    PageWatch,
    PlaygroundServer,
    browser_or_skip,
    chromium_args,
    playground_agents,
)

from rxagent.demo import DEMO_QUESTION
from rxagent.errors import ErrorCode
from rxagent.events import (
    EVENT_ADAPTER,
    ActingChunkEvent,
    ContextTrimmedEvent,
    CustomEvent,
    ErrorEvent,
    FallbackEvent,
    GuardEvent,
    GuardVerdict,
    HandoffEvent,
    Hit,
    InterruptedEvent,
    PostActingEvent,
    PreCallEvent,
    RetrievalEvent,
    RetryEvent,
)
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock

browser_or_skip()

from playwright.sync_api import expect, sync_playwright  # noqa: E402

TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def server() -> Iterator[PlaygroundServer]:
    with PlaygroundServer(playground_agents()) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=chromium_args())
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(WATCH_SCRIPT)
    opened = context.new_page()
    yield opened
    context.close()


def link(server: PlaygroundServer, agent: str, q: str | None = None, **more: str) -> str:
    params = {"agent": agent, **({"q": q} if q else {}), **more}
    return f"{server.url}/playground?{urllib.parse.urlencode(params)}"


def rows(page: Any, event_type: str, path: str | None = None) -> Any:
    selector = f'li.event[data-event-type="{event_type}"]'
    if path is not None:
        selector += f'[data-path="{path}"]'
    return page.locator(selector)


def finished(page: Any, count: int = 1, path: str | None = None) -> None:
    """Wait for `count` post_call rows (of `path`) and the end of the stream."""
    expect(rows(page, "post_call", path)).to_have_count(count)
    expect(page.locator("#interrupt")).to_be_hidden()


def test_a_deep_link_runs_the_demo_and_fills_the_timeline(server, page):
    watch = PageWatch(page)
    page.goto(link(server, "demo", DEMO_QUESTION))
    finished(page)
    order = page.eval_on_selector_all(
        "li.event",
        "els => els.filter(e => e.dataset.eventType !== 'reasoning_chunk')"
        ".map(e => [e.dataset.eventType, Number(e.dataset.seq)])",
    )
    kinds = [kind for kind, _ in order]
    for kind in ("pre_call", "pre_reasoning", "post_reasoning", "pre_acting", "post_acting"):
        assert kind in kinds
    assert kinds[0] == "pre_call"
    assert kinds[-1] == "post_call"
    seqs = [seq for _, seq in order]
    assert seqs == sorted(seqs)
    firsts = [kinds.index(k) for k in ("pre_reasoning", "post_reasoning", "pre_acting")]
    assert firsts == sorted(firsts)
    expect(page.locator("#messages .msg-assistant.final")).to_contain_text("= 395")
    assert page.locator("#agent").input_value() == "demo"
    # many chunk rows, one row each, folded into collapsible groups
    assert rows(page, "reasoning_chunk").count() > 20
    assert page.locator(".chunk-fold details").count() >= 2
    # a row's full JSON on click
    rows(page, "post_acting").first.locator(".row-head").click()
    expect(page.locator("#detail-json")).to_contain_text('"duration_ms"')
    assert watch.all() == []


def test_a_modified_by_diff_shows_the_line_the_hook_added(server, page):
    page.goto(link(server, "demo", DEMO_QUESTION))
    finished(page)
    request = rows(page, "pre_reasoning").first
    expect(request.locator(".changes-summary")).to_contain_text("modified by cite_tool_results")
    request.locator(".changes-summary").click()
    change = request.locator('.change[data-hook="cite_tool_results"][data-field="messages"]')
    expect(change.locator(".diff-add").first).to_be_visible()
    added = change.locator(".diff-add").all_inner_texts()
    assert any("Base your answer on tool results" in line for line in added)
    assert change.locator(".diff-del").count() == 0
    expect(change.locator(".change-head")).to_contain_text(re.compile(r"\+\d+ \u22120 lines"))


def test_approve_resumes_the_run_and_reject_reaches_the_model(server, page):
    page.goto(link(server, "ops", "Deploy version 1.2"))
    finished(page)
    parked = rows(page, "approval_requested")
    expect(parked).to_have_count(1)
    assert rows(page, "post_acting").count() == 0
    parked.locator("button.approve").click()
    finished(page, 2)
    expect(rows(page, "post_acting")).to_contain_text("deployed 1.2")
    expect(parked.locator(".decision")).to_have_text("approved")
    expect(page.locator("#messages")).to_contain_text("The deploy tool answered: deployed 1.2")
    first_session = page.locator("#session-label").inner_text()

    page.locator("#new-session").click()
    expect(page.locator("#timeline li.event")).to_have_count(0)
    page.locator("#input").fill("Deploy version 1.2 again")
    page.locator("#input").press("Enter")
    finished(page)
    parked = rows(page, "approval_requested")
    parked.locator(".reject-reason").fill("not on a Friday")
    parked.locator("button.reject").click()
    finished(page, 2)
    expect(parked.locator(".decision")).to_have_text("rejected")
    assert rows(page, "post_acting").count() == 0  # a rejected call never runs
    expect(page.locator("#messages .msg-assistant.final").last).to_contain_text(
        "The tool call was rejected: not on a Friday"
    )
    assert page.locator("#session-label").inner_text() != first_session


def test_the_interrupt_button_stops_a_slow_run(server, page):
    page.goto(link(server, "slow", DEMO_QUESTION))
    button = page.locator("#interrupt")
    expect(button).to_be_visible()
    expect(rows(page, "reasoning_chunk").nth(2)).to_be_attached()
    button.click()
    expect(rows(page, "interrupted")).to_have_count(1)
    finished(page)
    expect(button).to_be_hidden()
    expect(rows(page, "post_call")).to_contain_text("interrupted")


def test_the_sessions_panel_lists_opens_and_deletes(server, page):
    page.goto(link(server, "demo", "What is 2 + 2?", session="panel-1"))
    finished(page)
    item = page.locator('#sessions li.session[data-session-id="panel-1"]')
    expect(item).to_contain_text("What is 2 + 2?")
    expect(item).to_contain_text("1 run ·")
    # a deep link with session= continues it: its messages first, then the new run
    page.goto(link(server, "demo", "What is 6 * 7?", session="panel-1"))
    finished(page)
    expect(page.locator("#messages")).to_contain_text("2 + 2 = 4")
    expect(page.locator("#messages .msg-assistant.final")).to_contain_text("6 * 7 = 42")
    expect(item).to_contain_text("2 runs")
    expect(item).to_have_attribute("aria-current", "true")
    item.locator("button.open-session").click()
    view = page.locator("#session-view")
    expect(view).to_contain_text("user: What is 2 + 2?")
    view.locator(".state-json summary").click()
    expect(view.locator(".state-json pre")).to_contain_text('"memory"')
    expect(page.locator("#messages")).to_contain_text("2 + 2 = 4")
    item.locator("button.delete-session").click()
    item.locator("button.cancel-delete").click()
    expect(item.locator(".confirm")).to_have_count(0)
    item.locator("button.delete-session").click()
    item.locator("button.confirm-delete").click()
    expect(item).to_have_count(0)
    expect(page.locator("#session-label")).to_have_text("new session")


def test_nested_runs_are_indented_by_path_depth(server, page):
    page.goto(link(server, "lead", "Ask the helper about tides"))
    finished(page, path="lead")
    inner = rows(page, "pre_call", "lead/helper")
    expect(inner).to_have_count(1)
    outer = rows(page, "pre_call", "lead")

    def indent(locator: Any) -> str:
        return str(
            locator.evaluate(
                "el => { const g = el.closest('.step-group'); const s = getComputedStyle(el);"
                " const t = getComputedStyle(g); return [s.paddingInlineStart,"
                " t.marginInlineStart].join(' '); }"
            )
        )

    assert indent(inner) != indent(outer)
    expect(rows(page, "post_call", "lead/helper")).to_have_count(1)
    expect(page.locator("#messages .msg-assistant.final")).to_contain_text("all done")


def test_a_team_shows_its_members_runs_nested(server, page):
    page.goto(link(server, "crew", "a haiku"))
    finished(page, path="crew")
    expect(page.locator("#agent-info")).to_contain_text("team")
    expect(page.locator("#agent-info")).to_contain_text("members: writer, editor")
    expect(rows(page, "post_call", "crew/writer")).to_have_count(1)
    expect(rows(page, "post_call", "crew/editor")).to_have_count(1)
    expect(page.locator("#messages .msg-assistant.final")).to_contain_text("Edited. Draft: a haiku")


def test_usage_and_cost_per_step_and_per_run(server, page):
    page.goto(link(server, "demo", DEMO_QUESTION))
    finished(page)
    figures = re.compile(r"\d+ in · \d+ out · \$\d+\.\d{4}")
    expect(rows(page, "post_reasoning").first.locator(".usage")).to_contain_text(figures)
    expect(rows(page, "post_call").locator(".run-total")).to_contain_text(figures)
    # the harness prices its models, so the cost is shown, not zero
    expect(rows(page, "post_call").locator(".run-total")).not_to_contain_text("$0.0000")
    expect(page.locator(".step-usage").first).to_contain_text("step usage")
    expect(page.locator("#summary .run-usage")).to_contain_text(figures)
    expect(rows(page, "post_reasoning").first.locator(".duration")).to_contain_text("model call")
    expect(rows(page, "post_acting").first.locator(".duration")).to_contain_text(" ms")


def synthetic_events() -> list[Any]:
    """One event of each kind the test agents do not emit, as the server serializes them."""
    common: dict[str, Any] = {"run_id": "r1", "session_id": "s1", "agent": "bot", "path": ["bot"]}
    call = ToolUseBlock(id="c1", name="fetch", input={"url": "https://example.com"})
    events: list[Any] = [
        PreCallEvent(input=[Msg.user("hi")], seq=0, **common),
        RetryEvent(
            attempt=2,
            delay_s=0.5,
            code=ErrorCode.RATE_LIMITED,
            message="slow down",
            seq=1,
            **common,
        ),
        FallbackEvent(from_model="big", to_model="small", code=ErrorCode.TIMEOUT, seq=2, **common),
        ContextTrimmedEvent(
            dropped=("m1", "m2"),
            truncated=("m3",),
            tokens_before=9000,
            tokens_after=3000,
            budget=4000,
            seq=3,
            **common,
        ),
        RetrievalEvent(
            query="tides",
            hits=(Hit(id="d1", text="Tides follow the moon.", score=0.9),),
            tokens=12,
            seq=4,
            **common,
        ),
        GuardEvent(
            stage="injection",
            action="flag",
            target="tool_result",
            verdict=GuardVerdict(
                flagged=True, score=0.97, reasons=("role tag",), stage="injection"
            ),
            seq=5,
            **common,
        ),
        ActingChunkEvent(
            tool_call_id="c1", tool_name="fetch", chunk={"done": 0.5}, seq=6, **common
        ),
        ErrorEvent(code=ErrorCode.TOOL_ERROR, message="boom", source="tool:fetch", seq=7, **common),
        HandoffEvent(from_agent="bot", to_agent="billing", reason="money", seq=8, **common),
        CustomEvent(name="progress", data={"pct": 40}, seq=9, **common),
        InterruptedEvent(checkpoint="after_tool", reason="Stop.", seq=10, **common),
        PostActingEvent(
            tool_call=call,
            result=ToolResultBlock(id="c1", name="fetch", output="404", is_error=True),
            seq=11,
            duration_ms=12.5,
            modified_by=("redact",),
            **common,
        ),
    ]
    return [json.loads(EVENT_ADAPTER.dump_json(e)) for e in events]


def test_every_kind_of_event_gets_a_readable_row(server, page):
    watch = PageWatch(page)
    page.goto(link(server, "demo"))
    expect(page.locator("#agent")).to_have_value("demo")
    page.evaluate(
        """async (events) => {
            const { Timeline } = await import("/playground/timeline.js");
            const list = document.querySelector("#timeline");
            const timeline = new Timeline(list);
            for (const ev of events) timeline.add(ev);
        }""",
        synthetic_events(),
    )
    expected = {
        "retry": "attempt 2",
        "fallback": "big → small after TIMEOUT",
        "context_trimmed": "2 dropped · 1 truncated",
        "retrieval": "Tides follow the moon.",
        "guard": "injection → flag on tool_result (score 0.97)",
        "acting_chunk": '"done":0.5',
        "error": "boom",
        "handoff": "bot → billing: money",
        "custom": "progress",
        "interrupted": "at after_tool: Stop.",
        "post_acting": "404",
    }
    for kind, text in expected.items():
        expect(rows(page, kind)).to_contain_text(text)
    expect(rows(page, "context_trimmed")).to_contain_text("tokens 9000 → 3000 (budget 4000)")
    expect(rows(page, "error")).to_have_class(re.compile(r"\bis-error\b"))
    failed = rows(page, "post_acting")
    expect(failed).to_have_class(re.compile(r"\bis-error\b"))
    failed.locator(".changes-summary").click()
    expect(failed.locator(".no-changes")).to_contain_text("does not record changes")
    assert watch.all() == []


def test_the_line_diff_and_the_sse_frame_parser(server, page):
    page.goto(link(server, "demo"))
    expect(page.locator("#agent")).to_have_value("demo")
    found = page.evaluate(
        """async () => {
            const { lineDiff } = await import("/playground/diff.js");
            const { parseFrame } = await import("/playground/api.js");
            const ops = lineDiff(["a", "b", "c", "d"], ["a", "x", "c", "d", "e"]);
            return {
                diff: ops.map((o) => o.op + o.line),
                same: lineDiff(["a"], ["a"]).map((o) => o.op + o.line),
                frame: parseFrame('event: custom\\r\\ndata: {"type":"custom",\\ndata: "seq":3}'),
                comment: parseFrame(": keep-alive"),
            };
        }"""
    )
    assert found["diff"] == [" a", "-b", "+x", " c", " d", "+e"]
    assert found["same"] == [" a"]
    assert found["frame"] == {"type": "custom", "seq": 3}
    assert found["comment"] is None


def _lcs(a: list[str], b: list[str]) -> int:
    lengths = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            lengths[i][j] = (
                lengths[i + 1][j + 1] + 1
                if a[i] == b[j]
                else max(lengths[i + 1][j], lengths[i][j + 1])
            )
    return lengths[0][0]


_LINES = st.lists(st.sampled_from(["a", "b", "c", "{", "}", '  "x": 1,', ""]), max_size=12)


def test_the_line_diff_rebuilds_both_sides_with_a_longest_common_part(server, page):
    page.goto(link(server, "demo"))
    expect(page.locator("#agent")).to_have_value("demo")

    @settings(max_examples=60, deadline=None)
    @given(before=_LINES, after=_LINES)
    def check(before: list[str], after: list[str]) -> None:
        ops = page.evaluate(
            """async ([a, b]) => {
                const { lineDiff } = await import("/playground/diff.js");
                return lineDiff(a, b).map((o) => [o.op, o.line]);
            }""",
            [before, after],
        )
        assert [line for op, line in ops if op in " -"] == before
        assert [line for op, line in ops if op in " +"] == after
        assert sum(op == " " for op, _ in ops) == _lcs(before, after)

    check()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def test_sse_frames_parse_back_to_the_events_json(server, page):
    page.goto(link(server, "demo"))
    expect(page.locator("#agent")).to_have_value("demo")

    @settings(max_examples=40, deadline=None)
    @given(value=_JSON, crlf=st.booleans())
    def check(value: Any, crlf: bool) -> None:
        lines = ["event: custom"] + [f"data: {x}" for x in json.dumps(value, indent=1).split("\n")]
        frame = ("\r\n" if crlf else "\n").join(lines)
        parsed = page.evaluate(
            """async (frame) => {
                const { parseFrame } = await import("/playground/api.js");
                return parseFrame(frame);
            }""",
            frame,
        )
        assert parsed == value

    check()
