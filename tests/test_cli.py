"""The `rxagent` command: `rxagent demo` (live view and `--json`), `--version`, `--help`."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import rxagent
from rxagent import (
    EVENT_ADAPTER,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PreActingEvent,
    PreReasoningEvent,
    ReActAgent,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent._demo import (
    CAPABILITIES,
    DEMO_EXPRESSION,
    DEMO_QUESTION,
    DemoModel,
    DocSection,
    build_demo_agent,
    calculator,
    compose_answer,
    evaluate_arithmetic,
    find_docs_dir,
    load_corpus,
    search_docs,
    search_sections,
    word_count,
)
from rxagent._demo._docsearch import split_markdown
from rxagent.cli import main
from rxagent.cli._demo_command import what_next
from rxagent.models import ModelOptions
from rxagent.testing import ScriptedModel, assert_event_protocol, tool_call

# -- rxagent demo --json ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_events() -> list[Any]:
    """The events of one `rxagent demo --json --fast` run, parsed back from stdout."""
    capture = pytest.MonkeyPatch()
    lines: list[str] = []

    class _Out:
        def write(self, text: str) -> int:
            lines.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    capture.setattr(sys, "stdout", _Out())
    try:
        code = main(["demo", "--json", "--fast"])
    finally:
        capture.undo()
    assert code == 0
    output = "".join(lines)
    assert output.endswith("\n")
    return [EVENT_ADAPTER.validate_json(line) for line in output.splitlines()]


def test_json_output_is_only_events(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--json", "--fast"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    lines = captured.out.splitlines()
    assert lines
    for line in lines:
        EVENT_ADAPTER.validate_json(line)  # every line is one event, nothing else


def test_json_run_starts_with_pre_call_and_ends_with_a_successful_post_call(
    demo_events: list[Any],
) -> None:
    assert demo_events[0].type == "pre_call"
    assert demo_events[0].input[0].text == DEMO_QUESTION
    last = demo_events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.ok
    assert last.result.stop_reason == "no_tool_calls"
    assert last.result.tools_used == ("search_docs", "calculator")
    assert_event_protocol(demo_events)


def test_json_run_calls_both_tools_in_parallel(demo_events: list[Any]) -> None:
    pre = [e for e in demo_events if isinstance(e, PreActingEvent)]
    assert {e.tool_call.name for e in pre} == {"search_docs", "calculator"}
    assert len({e.step for e in pre}) == 1  # one response, one batch
    first_post = next(i for i, e in enumerate(demo_events) if isinstance(e, PostActingEvent))
    started = [i for i, e in enumerate(demo_events) if isinstance(e, PreActingEvent)]
    assert all(i < first_post for i in started)  # both started before either finished
    post = [e for e in demo_events if isinstance(e, PostActingEvent)]
    assert all(e.duration_ms >= 0 for e in post)


def _result_of(events: list[Any], tool: str) -> ToolResultBlock:
    return next(
        e.result for e in events if isinstance(e, PostActingEvent) and e.tool_call.name == tool
    )


def test_json_run_answer_quotes_the_real_tool_results(demo_events: list[Any]) -> None:
    calc = _result_of(demo_events, "calculator")
    assert not calc.is_error
    assert calc.output == "395" == str(17 * 23 + 4)
    docs = _result_of(demo_events, "search_docs")
    hits = json.loads(docs.text)
    assert not docs.is_error
    assert 1 <= len(hits) <= 3
    assert all({"source", "heading", "snippet"} <= hit.keys() for hit in hits)
    reply = demo_events[-1].reply.text
    assert f"{DEMO_EXPRESSION} = 395" in reply
    assert hits[0]["source"] in reply
    assert hits[0]["snippet"] in reply


def test_json_run_shows_the_prompt_hook(demo_events: list[Any]) -> None:
    requests = [e for e in demo_events if isinstance(e, PreReasoningEvent)]
    assert len(requests) == 2
    for request in requests:
        assert request.modified_by == ("cite_tool_results",)
        added = [m for m in request.messages if m.metadata.get("added_by") == "cite_tool_results"]
        assert len(added) == 1
        assert added[0].role == "system"
        assert request.messages[0].role == "system"
        assert request.messages[1] == added[0]


def test_json_run_streams_thinking_text_and_tool_arguments(demo_events: list[Any]) -> None:
    kinds = {e.delta.type for e in demo_events if e.type == "reasoning_chunk"}
    assert kinds == {"thinking_delta", "text_delta", "tool_call_delta"}


# -- rxagent demo (live view) ----------------------------------------------------------------------


def test_live_view_shows_the_run_and_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--fast"]) == 0
    out = capsys.readouterr().out
    for expected in (
        "rxagent demo",
        DEMO_QUESTION,
        "step 0",
        "step 1",
        "cite_tool_results rewrote the request",
        "+ system message: Today is",
        "thinking",
        "search_docs(query='hooks', limit=3)",
        "calculator(expression='17 * 23 + 4')",
        "calculator → 395",
        "search_docs → 3 hits",
        "17 * 23 + 4 = 395",
        "summary",
    ):
        assert expected in out, expected
    assert re.search(r"^\s+result\s+ok · stop reason no_tool_calls$", out, re.M)
    assert re.search(r"^\s+steps\s+2$", out, re.M)
    assert re.search(r"^\s+tool calls\s+2 \(search_docs, calculator\)$", out, re.M)
    assert re.search(r"^\s+tokens\s+\d+ in · \d+ out · \d+ total · 2 requests$", out, re.M)
    assert re.search(r"^\s+events\s+\d+$", out, re.M)
    assert re.search(r"^\s+wall time\s+\d+\.\d\d s \(run \d+\.\d\d s\)$", out, re.M)
    assert re.search(r"✓ call_\d+\s+calculator → 395 \(\d+\.\d ms\)", out)
    assert "\x1b[" not in out  # not a terminal: no colour codes
    assert not any(line != line.rstrip() for line in out.splitlines())
    assert out.splitlines()[-2:] == list(what_next())  # it ends with what to try next
    assert out.splitlines()[-1].endswith("cli.md")


def test_what_next_names_the_docs_wherever_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = find_docs_dir()
    assert docs is not None  # a source checkout
    monkeypatch.chdir(tmp_path)  # the docs are not below the working directory
    assert what_next()[1].endswith(f"docs: {docs / 'cli.md'}")
    monkeypatch.setattr("rxagent._demo.find_docs_dir", lambda: None)  # an installed wheel
    assert what_next()[1].endswith("docs: rxagent --help")
    monkeypatch.setattr("rxagent._demo.find_docs_dir", lambda: tmp_path)  # no cli.md there
    assert what_next()[1].endswith("docs: .")


@pytest.mark.parametrize(("error", "code"), [(KeyboardInterrupt, 130), (BrokenPipeError, 1)])
def test_the_demo_stopped_by_ctrl_c_or_a_closed_pipe(
    error: type[BaseException], code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def stopped(*args: object) -> None:
        raise error

    monkeypatch.setattr("rxagent.cli._demo_command._run_events", stopped)
    monkeypatch.setattr("rxagent.cli._demo_command.silence_stdout", lambda: None)
    assert main(["demo", "--fast"]) == code


def test_live_view_streams_with_a_delay(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--delay", "0.0005"]) == 0
    assert "17 * 23 + 4 = 395" in capsys.readouterr().out


# -- version, help, usage errors -------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rxagent {rxagent.__version__}"


def test_help_lists_demo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "demo" in out
    assert "--version" in out


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: rxagent" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["demo", "--delay", "-1"], ["demo", "--delay", "x"], ["nope"]])
def test_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage:" in capsys.readouterr().err


def test_console_script_runs_as_a_module() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rxagent.cli", "demo", "--json", "--fast"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    events = [EVENT_ADAPTER.validate_json(line) for line in done.stdout.splitlines()]
    assert events[0].type == "pre_call"
    assert events[-1].type == "post_call"
    assert events[-1].result.ok


@pytest.mark.parametrize("json_lines", [False, True])
def test_a_closed_pipe_ends_the_demo_quietly(json_lines: bool) -> None:
    argv = [sys.executable, "-m", "rxagent.cli", "demo", "--delay", "0.002"]
    argv += ["--json"] if json_lines else []
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8"
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        first = [proc.stdout.readline() for _ in range(3)]
        proc.stdout.close()  # like `rxagent demo | head -3`
        stderr = proc.stderr.read()
        code = proc.wait(timeout=60)
    assert all(first)
    assert code == 1
    assert stderr == ""  # no traceback, no "coroutine ... was never awaited"


# -- calculator ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("17 * 23 + 4", "395"),
        ("2 ** 10", "1024"),
        ("7 / 2", "3.5"),
        ("6 / 3", "2"),
        ("-(3 + 4) * 2", "-14"),
        ("+7 // 2", "3"),
        ("7 % 3", "1"),
        ("0.1 + 0.2", "0.3"),
        ("2 ** -1", "0.5"),
    ],
)
def test_calculator_evaluates_arithmetic(expression: str, expected: str) -> None:
    assert calculator(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os')", "function calls are not allowed"),
        ("__import__('os').system('echo pwned')", "not allowed"),
        ("x + 1", "names are not allowed"),
        ("(1).__class__", "attribute access is not allowed"),
        ("[1, 2][0]", "are not allowed"),
        ("'a' * 3", "only numbers are allowed"),
        ("True + 1", "only numbers are allowed"),
        ("1 < 2", "comparisons are not allowed"),
        ("1 +", "invalid expression"),
        ("", "empty"),
        ("1 / 0", "division by zero"),
        ("9 ** 9 ** 9", "too large"),
        ("(-8) ** 0.5", "(-8) ** 0.5 is not a real number"),
        ("1" * 201, "longer than 200"),
    ],
)
def test_calculator_rejects_unsafe_or_bad_input(expression: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        calculator(expression)


def test_calculator_never_evaluates_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("builtins.eval", lambda *a, **k: pytest.fail("eval was called"))
    assert evaluate_arithmetic("1 + 1") == 2


async def test_unsafe_calculator_input_gives_a_clear_error_result() -> None:
    unsafe = "__import__('os').system('echo pwned')"
    model = ScriptedModel([tool_call("calculator", expression=unsafe), "I could not compute it."])
    agent = ReActAgent("calc", "", model, tools=[calculator])
    results = [e.result async for e in agent.events("compute") if isinstance(e, PostActingEvent)]
    assert len(results) == 1
    assert results[0].is_error
    assert "function calls are not allowed" in results[0].text
    assert "only numbers, + - * / // % ** and parentheses" in results[0].text


# -- search_docs -----------------------------------------------------------------------------------


def test_search_docs_finds_hook_documentation() -> None:
    hits = search_docs("hooks", limit=3)
    assert 1 <= len(hits) <= 3
    assert "hook" in f"{hits[0]['source']} {hits[0]['heading']} {hits[0]['snippet']}".lower()
    assert all(len(hit["snippet"]) <= 200 for hit in hits)


@pytest.mark.parametrize(("query", "limit"), [("", 3), ("the and of", 3), ("hooks", 0)])
def test_search_docs_rejects_bad_arguments(query: str, limit: int) -> None:
    with pytest.raises(ValueError, match=r"limit must be|no keywords"):
        search_docs(query, limit=limit)


def test_search_docs_without_docs_folder_uses_docstrings() -> None:
    sources = {section.source for section in load_corpus(None)}
    assert {"rxagent", "rxagent.hooks", "rxagent.ReActAgent", "rxagent.hook"} <= sources
    hits = search_sections("hooks", load_corpus(None), 3)
    assert hits
    assert any("hook" in hit["source"].lower() for hit in hits)


def test_search_reads_markdown_sections(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text(
        "# Guide\n\nIntro text.\n\n## Hook ordering\n\nHooks run by priority.\n\n"
        "```python\n# not a heading\n```\n",
        encoding="utf-8",
    )
    corpus = load_corpus(tmp_path)
    mine = [s for s in corpus if s.source == "docs/guide.md"]
    assert [s.heading for s in mine] == ["Guide", "Hook ordering"]
    assert "# not a heading" in mine[1].body
    assert search_sections("hook priority", corpus, 1)[0]["heading"] == "Hook ordering"


def test_split_markdown_keeps_text_before_the_first_heading() -> None:
    sections = split_markdown("docs/x.md", "preamble\n# Title\nbody\n")
    assert [(s.heading, s.body) for s in sections] == [("docs/x.md", "preamble"), ("Title", "body")]


def test_search_ranks_and_snippets() -> None:
    sections = (
        DocSection("docs/a.md", "Tools", "Tools are typed functions. " * 20),
        DocSection("docs/b.md", "Hooks", "Intro words here. " * 10 + "Hooks run by priority."),
    )
    hits = search_sections("hook priority", sections, 5)
    assert [h["source"] for h in hits] == ["docs/b.md"]
    assert hits[0]["snippet"].startswith("…")
    assert "Hooks run by priority." in hits[0]["snippet"]


def test_word_count() -> None:
    assert word_count("one two  three\nfour") == 4


# -- documentation examples -----------------------------------------------------------------------

_DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
_EXAMPLES = re.compile(r"```python\n(.*?)```", re.S)


@pytest.mark.parametrize(
    "block", _EXAMPLES.findall(_DOCS.read_text(encoding="utf-8")) if _DOCS.exists() else []
)
def test_cli_guide_examples_run(block: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(block, str(_DOCS), "exec"), {"__name__": "__docs__"})
    assert capsys.readouterr().out


@pytest.mark.parametrize(
    "module",
    [
        "rxagent.cli",
        "rxagent._demo._agent",
        "rxagent._demo._calculator",
        "rxagent._demo._docsearch",
        "rxagent._demo._view",
    ],
)
def test_docstring_examples_run(module: str, capsys: pytest.CaptureFixture[str]) -> None:
    mod = importlib.import_module(module)
    owned = [mod, *(v for v in vars(mod).values() if getattr(v, "__module__", None) == module)]
    docs = [inspect.getdoc(obj) or "" for obj in owned]
    blocks = [b for doc in docs for b in _EXAMPLES.findall(doc)]
    for block in blocks:
        exec(compile(textwrap.dedent(block), module, "exec"), {"__name__": "__docs__"})
    capsys.readouterr()


# -- the demo model and answer ---------------------------------------------------------------------


def test_answer_reports_tool_failures_truthfully() -> None:
    call = ToolUseBlock(id="call_2", name="calculator", input={"expression": "1 / 0"})
    failed = ToolResultBlock(
        id="call_2", name="calculator", output="ValueError: division by zero", is_error=True
    )
    messages = [Msg.user("1 / 0?"), Msg.assistant([call]), Msg.tool(failed)]
    answer = compose_answer(messages, [], ModelOptions())
    assert answer == "The calculator could not evaluate 1 / 0: ValueError: division by zero"
    assert compose_answer([Msg.user("hi")], [], ModelOptions()) == CAPABILITIES


def test_answer_reports_an_empty_search() -> None:
    call = ToolUseBlock(id="call_1", name="search_docs", input={"query": "zebra"})
    empty = ToolResultBlock(id="call_1", name="search_docs", output="[]")
    answer = compose_answer([Msg.assistant([call]), Msg.tool(empty)], [], ModelOptions())
    assert answer.startswith("The docs search for 'zebra' found nothing")
    assert answer.endswith(CAPABILITIES)  # nothing found: say what the demo can do


def test_demo_agent_is_offline_and_truthful() -> None:
    result = build_demo_agent(delay=0.0005).call_sync(DEMO_QUESTION)
    assert result.ok
    assert result.steps == 2
    assert "= 395" in result.text


def test_demo_model_rejects_a_negative_delay() -> None:
    with pytest.raises(ValueError, match="delay"):
        DemoModel(delay=-1)


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("demo", "run", "chat", "serve", "sessions", "--debug"):
        assert command in out, command
