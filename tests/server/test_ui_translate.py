"""rxagent events -> AI SDK UI message chunks: every chunk type, ids, and well-formedness."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rxagent import (
    CustomEvent,
    Msg,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReActAgent,
    ReasoningChunkEvent,
    current_run,
    hook,
    tool,
)
from rxagent.error_messages import DEFAULT_ERROR_MESSAGES
from rxagent.errors import ErrorCode
from rxagent.events import (
    ActingChunkEvent,
    ErrorEvent,
    GuardEvent,
    GuardVerdict,
    InterruptedEvent,
    RetryEvent,
)
from rxagent.messages import TextBlock, ToolResultBlock, ToolUseBlock
from rxagent.models.base import TextDelta, ThinkingDelta, ToolCallDelta, Usage
from rxagent.result import AgentResult, ErrorInfo
from rxagent.server._ui_chunks import UIMessageStreamTranslator
from rxagent.server._ui_wire import DONE_FRAME, encode_ui_chunk, encode_ui_chunks
from rxagent.testing import ScriptedModel, text, thinking, tool_call

# -- a checker that assembles the message the way the AI SDK's readUIMessageStream does ---------

_REQUIRED: dict[str, tuple[str, ...]] = {
    "start": (),
    "finish": (),
    "start-step": (),
    "finish-step": (),
    "text-start": ("id",),
    "text-delta": ("id", "delta"),
    "text-end": ("id",),
    "reasoning-start": ("id",),
    "reasoning-delta": ("id", "delta"),
    "reasoning-end": ("id",),
    "tool-input-start": ("toolCallId", "toolName"),
    "tool-input-delta": ("toolCallId", "inputTextDelta"),
    "tool-input-available": ("toolCallId", "toolName", "input"),
    "tool-output-available": ("toolCallId", "output"),
    "tool-output-error": ("toolCallId", "errorText"),
    "error": ("errorText",),
    "abort": (),
}
_FINISH_REASONS = {"stop", "length", "content-filter", "tool-calls", "error", "other"}


@dataclass
class Assembled:
    """What a UI stream builds: the parts, and what else it said."""

    message_id: str = ""
    parts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    data: list[dict[str, Any]] = field(default_factory=list)
    finish: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    aborted: bool = False

    @property
    def text(self) -> str:
        return "".join(p["text"] for p in self.parts if p["type"] == "text")

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [p for p in self.parts if p["type"].startswith("tool-")]


def assemble(chunks: list[dict[str, Any]]) -> Assembled:
    """Check that `chunks` form one well-formed UI message stream, and build its message.

    - `start` first, `finish` last, each exactly once; steps never nest;
    - every `*-start` id is new and gets its `*-end` before the step ends; deltas sit between;
    - `tool-input-delta` only while the input streams; `tool-input-available` after the start;
    - every `tool-input-start` gets exactly one `tool-output-available` or `tool-output-error`,
      and no output comes for a call that was not started;
    - every chunk has its required fields and survives JSON.
    """
    assert chunks, "no chunks"
    assert json.loads(json.dumps(chunks)) == chunks, "chunks are not plain JSON"
    assert chunks[0]["type"] == "start", chunks[0]
    assert chunks[-1]["type"] == "finish", chunks[-1]
    message = Assembled(message_id=chunks[0].get("messageId", ""))
    open_parts: dict[str, dict[str, Any]] = {}  # text / reasoning parts by id
    seen_ids: set[str] = set()
    tools: dict[str, dict[str, Any]] = {}  # every tool part by call id
    step_open = False
    for position, chunk in enumerate(chunks):
        kind = chunk["type"]
        where = f"chunk #{position} {chunk}"
        if kind.startswith("data-"):
            assert "data" in chunk, where
            message.data.append(chunk)
            continue
        assert kind in _REQUIRED, f"unknown chunk type: {where}"
        for name in _REQUIRED[kind]:
            assert name in chunk, f"{name} missing: {where}"
        if kind == "start":
            assert position == 0, f"a second start: {where}"
            message.metadata.update(chunk.get("messageMetadata", {}))
        elif kind == "finish":
            assert position == len(chunks) - 1, f"finish is not last: {where}"
            assert chunk.get("finishReason", "other") in _FINISH_REASONS, where
            message.metadata.update(chunk.get("messageMetadata", {}))
            message.finish = chunk
        elif kind == "start-step":
            assert not step_open, f"steps nest: {where}"
            step_open = True
            message.parts.append({"type": "step-start"})
        elif kind == "finish-step":
            assert step_open, f"finish-step without start-step: {where}"
            assert not open_parts, f"parts {sorted(open_parts)} still open at {where}"
            step_open = False
        elif kind.startswith(("text-", "reasoning-")):
            _part_chunk(chunk, open_parts, seen_ids, message, where)
        elif kind.startswith("tool-"):
            _tool_chunk(chunk, tools, message, where)
        elif kind == "error":
            message.errors.append(chunk["errorText"])
        elif kind == "abort":
            message.aborted = True
    assert not step_open, "the last step has no finish-step"
    assert not open_parts, f"parts {sorted(open_parts)} never ended"
    unfinished = [
        i for i, p in tools.items() if p["state"] not in ("output-available", "output-error")
    ]
    assert not unfinished, f"tool calls {unfinished} got no output"
    return message


def _part_chunk(
    chunk: dict[str, Any],
    open_parts: dict[str, dict[str, Any]],
    seen_ids: set[str],
    message: Assembled,
    where: str,
) -> None:
    part_type, stage = chunk["type"].split("-")
    if stage == "start":
        assert chunk["id"] not in seen_ids, f"part id reused: {where}"
        seen_ids.add(chunk["id"])
        new: dict[str, Any] = {"type": part_type, "text": "", "state": "streaming"}
        if part_type == "reasoning":
            new["id"] = chunk["id"]
        open_parts[chunk["id"]] = new
        message.parts.append(new)
        return
    part = open_parts.get(chunk["id"]) if stage == "delta" else open_parts.pop(chunk["id"], None)
    assert part is not None, f"no open part: {where}"
    assert part["type"] == part_type, f"the part is a {part['type']}: {where}"
    if stage == "delta":
        part["text"] += chunk["delta"]
        return
    part["state"] = "done"
    if "providerMetadata" in chunk:
        part["providerMetadata"] = chunk["providerMetadata"]


def _tool_chunk(
    chunk: dict[str, Any], tools: dict[str, dict[str, Any]], message: Assembled, where: str
) -> None:
    kind, call_id = chunk["type"], chunk["toolCallId"]
    part = tools.get(call_id)
    if kind == "tool-input-start":
        assert part is None, f"a second tool-input-start for {call_id}: {where}"
        part = {"type": f"tool-{chunk['toolName']}", "toolCallId": call_id}
        part |= {"state": "input-streaming", "rawInput": ""}
        tools[call_id] = part
        message.parts.append(part)
        return
    assert part is not None, f"{kind} for a call that was never started: {where}"
    done = part["state"] in ("output-available", "output-error")
    assert not done, f"{kind} after the call's output: {where}"
    if kind == "tool-input-delta":
        assert part["state"] == "input-streaming", f"a delta after the input was complete: {where}"
        part["rawInput"] += chunk["inputTextDelta"]
    elif kind == "tool-input-available":
        part |= {"type": f"tool-{chunk['toolName']}", "state": "input-available"}
        part["input"] = chunk["input"]
    elif kind == "tool-output-available":
        part |= {"state": "output-available", "output": chunk["output"]}
    else:
        part |= {"state": "output-error", "errorText": chunk["errorText"]}


def types_of(chunks: list[dict[str, Any]]) -> list[str]:
    return [c["type"] for c in chunks]


# -- running agents and feeding hand-made events ----------------------------------------------


@tool
def weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


@tool
def broken(x: int = 0) -> str:
    """A tool that always fails.

    Args:
        x: Ignored.
    """
    raise ValueError("the tool broke")


@tool
async def slow_count(n: int = 2) -> str:
    """Counts, reporting progress and a custom event.

    Args:
        n: How far.
    """
    run = current_run()
    for i in range(n):
        run.progress({"done": i + 1, "of": n})
    run.emit(CustomEvent, name="counted", data={"n": n})
    return str(n)


def run_chunks(agent: ReActAgent, prompt: str = "hi") -> tuple[list[Any], list[dict[str, Any]]]:
    async def go() -> tuple[list[Any], list[dict[str, Any]]]:
        translator = UIMessageStreamTranslator()
        events, chunks = [], []
        async for event in agent.events(prompt):
            events.append(event)
            chunks.extend(translator.translate(event))
        assert translator.finished
        assert translator.translate(events[-1]) == []  # nothing after finish
        return events, chunks

    return asyncio.run(go())


class Feed:
    """Hand-made events of one run (for what a scripted run does not produce)."""

    def __init__(self) -> None:
        self.seq = 0
        self.translator = UIMessageStreamTranslator()
        self.chunks: list[dict[str, Any]] = []

    def __call__(self, cls: type[Any], **fields: Any) -> list[dict[str, Any]]:
        self.seq += 1
        common = {"run_id": "run-1", "session_id": "s-1", "agent": "bot", "seq": self.seq}
        out = self.translator.translate(cls(**common, **fields))
        self.chunks.extend(out)
        return out

    def post_call(self, reply: str = "done", **result: Any) -> list[dict[str, Any]]:
        msg = Msg.assistant(reply)
        return self(PostCallEvent, reply=msg, result=AgentResult[Any](reply=msg, **result))


def chunk_delta(delta: Any, index: int = 0) -> dict[str, Any]:
    return {"delta": delta, "index": index}


# -- runs ------------------------------------------------------------------------------------


def test_a_tool_call_then_an_answer_maps_to_one_message_with_two_steps():
    model = ScriptedModel(
        [[text("Let me look."), tool_call("weather", city="Paris")], "It is sunny."], chunk_size=5
    )
    events, chunks = run_chunks(ReActAgent("bot", "", model, tools=[weather]))
    assert types_of(chunks) == [
        "start",
        "start-step",
        *["text-start", "text-delta", "text-delta", "text-delta"],
        "text-end",
        *["tool-input-start", "tool-input-delta"],  # the held-back input, in one piece
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        *["text-start", "text-delta", "text-delta", "text-delta"],
        "text-end",
        "finish-step",
        "finish",
    ]
    message = assemble(chunks)
    assert message.message_id == events[0].run_id
    assert message.metadata["sessionId"] == "default"
    assert message.metadata["agent"] == "bot"
    assert message.text == "Let me look.It is sunny."
    [part] = message.tools
    assert part == {
        "type": "tool-weather",
        "toolCallId": "call_1",  # the agent's id, the one the session remembers
        "state": "output-available",
        "rawInput": '{"city": "Paris"}',
        "input": {"city": "Paris"},
        "output": "sunny in Paris",
    }
    assert message.finish["finishReason"] == "stop"
    assert message.metadata["ok"] is True
    assert message.metadata["stopReason"] == "no_tool_calls"
    assert message.metadata["usage"]["requests"] == 2


def test_a_tool_call_with_a_provider_id_streams_its_input_live():
    model = ScriptedModel([tool_call("weather", id="prov-1", city="Rome"), "ok"], chunk_size=4)
    _, chunks = run_chunks(ReActAgent("bot", "", model, tools=[weather]))
    start = chunks.index(
        {"type": "tool-input-start", "toolCallId": "prov-1", "toolName": "weather"}
    )
    deltas = [c for c in chunks if c["type"] == "tool-input-delta"]
    assert len(deltas) == 4
    assert chunks[start + 1 : start + 5] == deltas
    assert "".join(d["inputTextDelta"] for d in deltas) == '{"city": "Rome"}'
    assert assemble(chunks).tools[0]["input"] == {"city": "Rome"}


def test_calls_after_a_held_back_call_wait_so_tool_parts_keep_the_response_order():
    calls = [tool_call("weather", city="A"), tool_call("weather", id="p2", city="B")]
    model = ScriptedModel([calls, "ok"], chunk_size=4)
    _, chunks = run_chunks(ReActAgent("bot", "", model, tools=[weather]))
    starts = [c["toolCallId"] for c in chunks if c["type"] == "tool-input-start"]
    assert starts == ["call_1", "p2"]
    message = assemble(chunks)
    assert [p["input"] for p in message.tools] == [{"city": "A"}, {"city": "B"}]
    assert [p["rawInput"] for p in message.tools] == ['{"city": "A"}', '{"city": "B"}']


def test_thinking_becomes_a_reasoning_part_with_its_signature():
    model = ScriptedModel([[thinking("Think.", signature="sig-9"), text("Hi")]], chunk_size=3)
    _, chunks = run_chunks(ReActAgent("bot", "", model))
    message = assemble(chunks)
    reasoning = message.parts[1]
    assert reasoning["type"] == "reasoning"
    assert reasoning["text"] == "Think."
    assert reasoning["providerMetadata"] == {"rxagent": {"signature": "sig-9"}}
    assert types_of(chunks)[2:5] == ["reasoning-start", "reasoning-delta", "reasoning-delta"]


def test_tool_progress_is_a_data_part_per_call_and_custom_events_are_transient():
    model = ScriptedModel([tool_call("slow_count", n=2), "counted"])
    _, chunks = run_chunks(ReActAgent("bot", "", model, tools=[slow_count]))
    message = assemble(chunks)
    progress = [c for c in message.data if c["type"] == "data-tool-progress"]
    assert progress == [
        {
            "type": "data-tool-progress",
            "id": "call_1",
            "data": {
                "toolCallId": "call_1",
                "toolName": "slow_count",
                "chunk": {"done": i, "of": 2},
            },
        }
        for i in (1, 2)
    ]
    [custom] = [c for c in message.data if c["type"] == "data-custom"]
    assert custom == {
        "type": "data-custom",
        "data": {"name": "counted", "data": {"n": 2}},
        "transient": True,
    }
    assert message.tools[0]["output"] == "2"


def test_a_failing_tool_gives_a_tool_output_error_and_a_transient_data_error():
    model = ScriptedModel([tool_call("broken"), "sorry"])
    _, chunks = run_chunks(ReActAgent("bot", "", model, tools=[broken]))
    message = assemble(chunks)
    [part] = message.tools
    assert part["state"] == "output-error"
    assert "the tool broke" in part["errorText"]
    [notice] = [c for c in message.data if c["type"] == "data-error"]
    assert notice["transient"] is True
    assert notice["data"]["code"] == "TOOL_ERROR"
    assert notice["data"]["source"] == "tool:broken"
    assert message.errors == []
    assert message.finish["finishReason"] == "stop"


def test_a_failed_run_sends_an_error_chunk_and_its_reply():
    _, chunks = run_chunks(ReActAgent("bot", "", ScriptedModel([])))
    message = assemble(chunks)
    [error] = message.errors
    assert error.startswith("PROVIDER_ERROR: ")
    assert "scripted turn" in error
    assert message.text == DEFAULT_ERROR_MESSAGES[ErrorCode.PROVIDER_ERROR]
    assert message.finish["finishReason"] == "error"
    assert message.metadata["ok"] is False
    assert message.metadata["error"]["code"] == "PROVIDER_ERROR"


def test_calls_that_never_run_are_closed_with_the_reason_memory_records():
    @hook(PostReasoningEvent)
    def stop_here(event: PostReasoningEvent) -> PostReasoningEvent:
        return event.replace(stop=True)

    model = ScriptedModel([[text("Looking."), tool_call("weather", city="Oslo")]])
    _, chunks = run_chunks(ReActAgent("bot", "", model, tools=[weather], hooks=[stop_here]))
    message = assemble(chunks)
    [part] = message.tools
    assert part["state"] == "output-error"
    assert part["input"] == {"city": "Oslo"}
    assert part["errorText"] == "not executed: the run ended (hook_stop)"
    assert message.text == "Looking."  # the reply was streamed: it is not repeated


def test_an_interrupted_run_closes_its_calls_and_aborts():
    agents: list[ReActAgent] = []

    @hook(PreActingEvent)
    def interrupt(event: PreActingEvent) -> None:
        agents[0].interrupt("default", Msg.assistant("Stopped by the user."))

    model = ScriptedModel([tool_call("weather", city="Oslo")])
    agent = ReActAgent("bot", "", model, tools=[weather], hooks=[interrupt])
    agents.append(agent)
    _, chunks = run_chunks(agent)
    message = assemble(chunks)
    assert message.aborted
    assert message.finish["finishReason"] == "other"
    assert message.metadata["stopReason"] == "interrupted"
    assert message.text == "Stopped by the user."  # the reply was not streamed: it is sent
    assert all(p["state"] == "output-error" for p in message.tools)


# -- hand-made events ----------------------------------------------------------------------------


def test_a_broken_stream_closes_its_parts_and_calls_and_the_step_starts_again():
    feed = Feed()
    feed(PreCallEvent, input=[Msg.user("hi")])
    feed(PreReasoningEvent, messages=[])
    feed(ReasoningChunkEvent, **chunk_delta(TextDelta(text="Hel")))
    feed(ReasoningChunkEvent, **chunk_delta(ToolCallDelta(index=1, id="c1", name="weather"), 1))
    broke = feed(
        ErrorEvent,
        code=ErrorCode.PROVIDER_ERROR,
        message="stream broke",
        source="model",
        recoverable=True,
    )
    assert types_of(broke) == ["text-end", "tool-output-error", "data-error"]
    assert broke[1] == {
        "type": "tool-output-error",
        "toolCallId": "c1",
        "errorText": "stream broke",
    }
    again = feed(PreReasoningEvent, messages=[])
    assert types_of(again) == ["finish-step", "start-step"]
    feed(ReasoningChunkEvent, **chunk_delta(TextDelta(text="Hello")))
    feed(PostReasoningEvent, response=Msg.assistant("Hello"))
    final = feed.post_call("Hello")
    assert types_of(final) == ["finish-step", "finish"]  # "Hello" was streamed: not repeated
    message = assemble(feed.chunks)
    assert message.text == "HelHello"
    assert [p["type"] for p in message.parts].count("step-start") == 2


def test_a_hook_that_changes_the_response_or_the_input_is_followed():
    feed = Feed()
    feed(PreCallEvent, input=[Msg.user("hi")])
    feed(PreReasoningEvent, messages=[])
    feed(
        ReasoningChunkEvent,
        **chunk_delta(ToolCallDelta(id="keep", name="weather", args='{"city": "A"}')),
    )
    feed(ReasoningChunkEvent, **chunk_delta(ToolCallDelta(index=1, id="drop", name="weather"), 1))
    feed(ReasoningChunkEvent, **chunk_delta(ToolCallDelta(index=2, name="weather"), 2))  # held back
    keep = ToolUseBlock(id="keep", name="weather", input={"city": "A"})
    added = ToolUseBlock(id="new", name="weather", input={"city": "B"})
    bad = ToolUseBlock(id="bad", name="weather", input={}, raw_input='{"city": ')
    post = feed(PostReasoningEvent, response=Msg(role="assistant", content=[keep, added, bad]))
    assert post == [
        {
            "type": "tool-input-available",
            "toolCallId": "keep",
            "toolName": "weather",
            "input": {"city": "A"},
        },
        {
            "type": "tool-input-start",
            "toolCallId": "new",
            "toolName": "weather",
        },  # took the held-back block
        {
            "type": "tool-input-available",
            "toolCallId": "new",
            "toolName": "weather",
            "input": {"city": "B"},
        },
        {"type": "tool-input-start", "toolCallId": "bad", "toolName": "weather"},
        {
            "type": "tool-input-available",
            "toolCallId": "bad",
            "toolName": "weather",
            "input": '{"city": ',
        },
        {
            "type": "tool-output-error",
            "toolCallId": "drop",
            "errorText": "a hook removed the call from the response",
        },
    ]
    assert feed(PreActingEvent, tool_call=keep) == []  # unchanged input: nothing new
    changed = keep.model_copy(update={"input": {"city": "C"}})
    assert feed(PreActingEvent, tool_call=changed) == [
        {
            "type": "tool-input-available",
            "toolCallId": "keep",
            "toolName": "weather",
            "input": {"city": "C"},
        }
    ]
    blocks = ToolResultBlock(id="keep", name="weather", output=(TextBlock(text="sunny"),))
    assert feed(PostActingEvent, tool_call=changed, result=blocks) == [
        {
            "type": "tool-output-available",
            "toolCallId": "keep",
            "output": [{"type": "text", "text": "sunny"}],
        }
    ]
    feed(PreActingEvent, tool_call=added)
    feed(
        PostActingEvent,
        tool_call=added,
        result=ToolResultBlock(id="new", name="weather", output="ok"),
    )
    unseen = ToolUseBlock(id="late", name="weather", input={})
    late = feed(
        PostActingEvent,
        tool_call=unseen,
        result=ToolResultBlock(id="late", name="weather", output="x"),
    )
    assert types_of(late) == ["tool-input-start", "tool-input-available", "tool-output-available"]
    final = feed.post_call("done", stop_reason="approval_pending", pending_approvals=("ap-1",))
    assert final[-1]["finishReason"] == "tool-calls"
    assert final[-1]["messageMetadata"]["pendingApprovals"] == ["ap-1"]
    message = assemble(feed.chunks)
    states = {p["toolCallId"]: (p["state"], p.get("errorText")) for p in message.tools}
    assert states["bad"] == ("output-error", "awaiting approval")  # parked: never ran
    assert message.text == "done"


def test_retries_tool_progress_of_unknown_calls_and_interrupted_streams():
    feed = Feed()
    feed(PreCallEvent, input=[Msg.user("hi")])
    assert feed(RetryEvent, attempt=2, delay_s=0.5, code=ErrorCode.RATE_LIMITED, message="429") == [
        {
            "type": "data-retry",
            "data": {"attempt": 2, "delaySeconds": 0.5, "code": "RATE_LIMITED", "message": "429"},
            "transient": True,
        }
    ]
    # a chunk outside a step still lands inside one
    assert types_of(feed(ReasoningChunkEvent, **chunk_delta(ThinkingDelta(text="")))) == [
        "start-step",
        "reasoning-start",
    ]
    assert feed(ReasoningChunkEvent, **chunk_delta(TextDelta(index=1, text=""), 1)) == []
    assert types_of(feed(InterruptedEvent, checkpoint="chunk", reason="stop")) == ["reasoning-end"]
    child = PreReasoningEvent(messages=[], run_id="child-run", path=("bot", "helper"))
    assert feed.translator.translate(child) == []  # a nested agent's events are not parts
    progress = feed(ActingChunkEvent, tool_call_id="zz", tool_name="t", chunk=(1, 2))
    assert progress[0]["data"]["chunk"] == [1, 2]
    error = ErrorInfo(code=ErrorCode.INTERRUPTED, message="stop")
    final = feed.post_call(
        "stop", ok=False, error=error, interrupted=True, stop_reason="interrupted"
    )
    assert types_of(final) == [
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "abort",
        "finish",
    ]
    assert final[-2] == {"type": "abort", "reason": "stop"}
    assemble(feed.chunks)


def test_close_ends_a_message_whose_events_stopped_early():
    feed = Feed()
    feed(PreCallEvent, input=[Msg.user("hi")])
    feed(PreReasoningEvent, messages=[])
    feed(ReasoningChunkEvent, **chunk_delta(ToolCallDelta(id="c1", name="weather")))
    feed(ReasoningChunkEvent, **chunk_delta(TextDelta(index=1, text="x"), 1))
    tail = feed.translator.close("the server failed: boom")
    assert types_of(tail) == ["text-end", "tool-output-error", "finish-step", "error", "finish"]
    assert tail[-1] == {"type": "finish", "finishReason": "error"}
    assert feed.translator.close() == []
    assert feed.translator.finished
    assemble(feed.chunks + tail)

    fresh = UIMessageStreamTranslator(message_id="m-1")
    empty = fresh.close()
    assert empty == [
        {"type": "start", "messageId": "m-1"},
        {"type": "finish", "finishReason": "other"},
    ]
    assemble(empty)


def test_the_wire_format_is_sse_data_frames_of_compact_json():
    assert encode_ui_chunk({"type": "text-delta", "id": "t", "delta": "é\n"}) == (
        b'data: {"type":"text-delta","id":"t","delta":"\xc3\xa9\\n"}\n\n'
    )
    assert encode_ui_chunks([{"type": "start"}, {"type": "finish"}]) == (
        b'data: {"type":"start"}\n\ndata: {"type":"finish"}\n\n'
    )
    assert DONE_FRAME == b"data: [DONE]\n\n"
    # JSON.parse takes no NaN, and an odd object must not end the stream
    odd = encode_ui_chunk({"type": "data-x", "data": [float("nan"), float("inf"), object]})
    assert json.loads(odd.removeprefix(b"data: "))["data"] == [None, None, str(object)]
    feed = Feed()
    feed(PreCallEvent, input=[Msg.user("hi")])
    nan = {"pct": float("nan")}
    [progress] = feed(ActingChunkEvent, tool_call_id="c", tool_name="t", chunk=nan)
    assert progress["data"]["chunk"] == {"pct": None}


def test_usage_metadata_uses_the_ai_sdk_names():
    feed = Feed()
    feed(PreCallEvent, input=[Msg.user("hi")])
    usage = Usage(
        input_tokens=3, output_tokens=4, cache_read_tokens=1, cache_write_tokens=2, requests=1
    )
    final = feed.post_call("hi", usage=usage)
    assert final[-1]["messageMetadata"]["usage"] == {
        "inputTokens": 3,
        "outputTokens": 4,
        "totalTokens": 7,
        "cachedInputTokens": 1,
        "cacheWriteTokens": 2,
        "requests": 1,
    }


# -- the property --------------------------------------------------------------------------------

_WORDS = st.text(alphabet="abc xyz.", min_size=1, max_size=12)
_BLOCK = st.one_of(
    _WORDS.map(text),
    st.tuples(st.text(alphabet="abc ", max_size=8), st.sampled_from([None, "sig"])).map(
        lambda t: thinking(t[0], signature=t[1])
    ),
    st.tuples(st.sampled_from(["weather", "broken", "slow_count", "missing"]), st.booleans()),
)
_TURN = st.lists(_BLOCK, min_size=1, max_size=4)


def _script(turns: list[list[Any]]) -> list[list[Any]]:
    """Tool-call blocks get arguments, and ids (unique) when the flag says so."""
    script, counter = [], 0
    for turn in turns:
        blocks = []
        for block in turn:
            if isinstance(block, tuple):
                counter += 1
                name, with_id = block
                args = {"city": "X"} if name in ("weather", "missing") else {}
                blocks.append(tool_call(name, id=f"p{counter}" if with_id else None, **args))
            else:
                blocks.append(block)
        script.append(blocks)
    return script


@given(
    turns=st.lists(_TURN, min_size=0, max_size=4),
    chunk_size=st.integers(1, 6),
    parallel=st.booleans(),
)
def test_every_scripted_run_gives_a_well_formed_stream(turns, chunk_size, parallel):
    model = ScriptedModel(_script(turns), chunk_size=chunk_size)
    agent = ReActAgent(
        "bot",
        "",
        model,
        tools=[weather, broken, slow_count],
        max_iters=4,
        parallel_tool_calls=parallel,
    )
    events, chunks = run_chunks(agent)
    message = assemble(chunks)
    # each call the model made is one tool part, with the id the session remembers
    made = [c for e in events if isinstance(e, PostReasoningEvent) for c in e.response.tool_calls]
    assert [p["toolCallId"] for p in message.tools] == [c.id for c in made]
    results = {e.tool_call.id: e.result for e in events if isinstance(e, PostActingEvent)}
    for part, call in zip(message.tools, made, strict=True):
        assert part["type"] == f"tool-{call.name}"
        assert part["input"] == dict(call.input)
        result = results.get(call.id)
        if result is None:
            assert part["state"] == "output-error"
        elif result.is_error:
            assert part["state"] == "output-error"
            assert part["errorText"] == (result.text or "the tool failed")
        else:
            assert part["state"] == "output-available"
            assert part["output"] == result.output
    # the text parts hold what the model said, then the reply when it was not said as it is
    said = "".join(e.response.text for e in events if isinstance(e, PostReasoningEvent))
    post = events[-1]
    assert isinstance(post, PostCallEvent)
    assert message.text in (said, said + post.reply.text)
    assert message.metadata["ok"] == post.result.ok
    assert (message.finish["finishReason"] == "error") == (
        not post.result.ok and not post.result.interrupted
    )


def test_guard_verdicts_become_transient_data_parts():
    feed = Feed()
    feed(PreCallEvent, input=[Msg.user("hi")])
    verdict = GuardVerdict(
        flagged=True, score=1.0, reasons=("rate limit",), stage="rate_limit", retry_after=3.5
    )
    assert feed(GuardEvent, stage="rate_limit", verdict=verdict, action="reject") == [
        {
            "type": "data-guard",
            "data": {
                "stage": "rate_limit",
                "action": "reject",
                "target": "input",
                "toolCallId": None,
                "flagged": True,
                "score": 1.0,
                "reasons": ["rate limit"],
                "retryAfter": 3.5,
            },
            "transient": True,
        }
    ]
