"""rxagent events to the Vercel AI SDK's UI message stream (protocol `v1`), without I/O.

One run is one assistant `UIMessage`: `start` opens it, each reasoning step is a
`start-step`/`finish-step` pair, and `finish` closes it. The mapping:

| rxagent event | UI message chunks |
|---|---|
| first event (`PreCallEvent`) | `start` (`messageId` = run id, `messageMetadata` = session, run, agent) |
| `PreReasoningEvent` | `finish-step` for an open step, then `start-step` |
| `ReasoningChunkEvent`, text | `text-start` (first piece of a block), `text-delta` |
| `ReasoningChunkEvent`, thinking | `reasoning-start` (first piece of a block), `reasoning-delta` |
| `ReasoningChunkEvent`, tool call | `tool-input-start` once id and name are known, `tool-input-delta` |
| `PostReasoningEvent` | `text-end`/`reasoning-end`; per tool call `tool-input-available` |
| `PreActingEvent` | `tool-input-available` again if a hook changed the input |
| `ActingChunkEvent` | `data-tool-progress` (`id` = tool call id, so it updates in place) |
| `PostActingEvent` | `tool-output-available`, or `tool-output-error` when `is_error` |
| `ErrorEvent`, recoverable | `data-error` (transient) |
| `ErrorEvent`, not recoverable | `error` |
| `RetryEvent` / `CustomEvent` | `data-retry` / `data-custom` (transient) |
| `FallbackEvent` | `data-fallback` (transient): `fromModel`, `toModel`, `code`, `message` |
| `HandoffEvent` | `data-handoff` (transient): `from`, `to`, `reason` |
| a nested run's event (another `run_id`, a longer `path`) | `data-nested` (transient): `path`, `event` (its JSON); not its PreReasoning |
| `GuardEvent` | `data-guard` (transient): `stage`, `action`, `target`, `toolCallId`, `flagged`, `score`, `reasons`, `retryAfter` |
| `RetrievalEvent` | `data-retrieval` (transient): `query`, `tokens`, `dropped`, `hits` (`id`, `score`, `source`, `position`) |
| `ApprovalRequestedEvent` | `tool-input-start`/`tool-input-available` if not announced yet, then `tool-approval-request` (`approvalId`, `toolCallId`) |
| `InterruptedEvent` | closes the open parts |
| `PostCallEvent` | a text part for a reply that was not streamed, `tool-output-error` for calls that never ran, `finish-step`, `abort` when interrupted, `finish` |

Every `*-start` gets its `*-end`, and every `tool-input-start` exactly one
`tool-output-available`, `tool-output-error` or (a call parked for a human)
`tool-approval-request`, whatever the run does. Events of a nested
agent's run (another `run_id`) are not part of the message.
"""  # noqa: E501 - the table rows cannot wrap

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, final

from rxagent.events import (
    ActingChunkEvent,
    ApprovalRequestedEvent,
    CustomEvent,
    ErrorEvent,
    FallbackEvent,
    GuardEvent,
    HandoffEvent,
    InterruptedEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    PreActingEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
    RetrievalEvent,
    RetryEvent,
)
from rxagent.messages import new_id
from rxagent.models.base import TextDelta, ThinkingDelta
from rxagent.server._ui_wire import finish_chunks, json_ready, not_run_reason, tool_input

if TYPE_CHECKING:
    from rxagent.events import BaseEvent
    from rxagent.messages import ToolResultBlock, ToolUseBlock
    from rxagent.models.base import ToolCallDelta
    from rxagent.server._ui_wire import UIChunk

__all__ = ["UIMessageStreamTranslator"]


@dataclass(slots=True)
class _StreamedCall:
    """A tool-call block of the model call in progress."""

    id: str | None = None
    name: str | None = None
    args: list[str] = field(default_factory=list)
    announced: bool = False


_NO_INPUT: Final = object()


@final
class UIMessageStreamTranslator:
    """Turns the events of one run into UI message chunks, one event at a time.

    Feed every event of the run to `translate()` in order and send what it returns; call
    `close()` if the events stop before the `PostCallEvent` (it ends the message properly).

    Args:
        message_id: The assistant message's id; by default the run id.

    Example:
        ```python
        import asyncio
        from rxagent import ReActAgent
        from rxagent.server._ui_chunks import UIMessageStreamTranslator
        from rxagent.testing import ScriptedModel


        async def chunks() -> list[dict]:
            agent = ReActAgent("bot", "", ScriptedModel(["Hello!"]))
            translator = UIMessageStreamTranslator()
            return [c async for ev in agent.events("hi") for c in translator.translate(ev)]


        types = [c["type"] for c in asyncio.run(chunks())]
        assert types == ["start", "start-step", "text-start", "text-delta", "text-end",
                         "finish-step", "finish"]
        ```
    """

    __slots__ = (
        "_calls",
        "_counter",
        "_finished",
        "_message_id",
        "_model_finish",
        "_pieces",
        "_reasoning",
        "_run_id",
        "_shown_text",
        "_signatures",
        "_started",
        "_step_open",
        "_streamed",
        "_text",
    )

    def __init__(self, *, message_id: str | None = None) -> None:
        self._message_id = message_id
        self._run_id = ""
        self._model_finish: str | None = None  # the last model call's finish reason
        self._started = False
        self._finished = False
        self._step_open = False
        self._counter = 0
        self._text: dict[int, str] = {}  # open text parts: block position -> part id
        self._reasoning: dict[int, str] = {}  # open reasoning parts: block position -> part id
        self._signatures: dict[int, str] = {}
        self._pieces: dict[int, list[str]] = {}  # text of the model call in progress
        self._streamed: dict[int, _StreamedCall] = {}  # its tool-call blocks
        self._shown_text = ""  # the text of the last completed model call
        self._calls: dict[str, Any] = {}  # announced calls without output -> announced input

    @property
    def finished(self) -> bool:
        """True once `finish` was produced (by the PostCall or by `close()`)."""
        return self._finished

    def translate(self, event: BaseEvent) -> list[UIChunk]:
        """Return the chunks for `event` (often none); nothing after the message finished."""
        out: list[UIChunk] = []
        if self._finished or self._nested(event, out):
            return out
        self._ensure_start(event, out)
        match event:
            case PreReasoningEvent():
                self._end_step(out)
                out.append({"type": "start-step"})
                self._step_open = True
            case ReasoningChunkEvent():
                self._on_chunk(event, out)
            case PostReasoningEvent():
                self._on_post_reasoning(event, out)
            case PreActingEvent():
                self._on_pre_acting(event.tool_call, out)
            case ActingChunkEvent():
                data = {"toolCallId": event.tool_call_id, "toolName": event.tool_name}
                data["chunk"] = json_ready(event.chunk)
                out.append({"type": "data-tool-progress", "id": event.tool_call_id, "data": data})
            case PostActingEvent():
                self._on_post_acting(event, out)
            case ErrorEvent():
                self._on_error(event, out)
            case RetryEvent() | FallbackEvent():
                out.append(_model_notice(event))
            case CustomEvent() | HandoffEvent():
                out.append(_data_part(event))
            case GuardEvent() | RetrievalEvent():
                out.append(_audit_chunk(event))
            case ApprovalRequestedEvent():
                self._on_approval_requested(event, out)
            case InterruptedEvent():
                self._abandon_model_call("interrupted", out)
            case PostCallEvent():
                self._on_post_call(event, out)
        return out

    def _nested(self, event: BaseEvent, out: list[UIChunk]) -> bool:
        """Whether `event` is a nested run's (another run id); then it is a data part at most.

        A nested agent's run is not part of this message's text: its events go out as
        transient `data-nested` parts (not its PreReasoning, the whole request), so a UI can
        follow a team's members.
        """
        if not event.run_id or self._run_id in ("", event.run_id):
            return False
        if len(event.path) > 1 and not isinstance(event, PreReasoningEvent):
            data = {"path": list(event.path), "event": event.model_dump(mode="json")}
            out.append({"type": "data-nested", "data": data, "transient": True})
        return True

    def close(self, error: str | None = None) -> list[UIChunk]:
        """End the message if it has not finished: close what is open, then `finish`.

        Args:
            error: Why the events stopped early; sent as an `error` chunk when given.
        """
        out: list[UIChunk] = []
        if self._finished:
            return out
        if not self._started:
            self._start(self._message_id or new_id(), {}, out)
        reason = error or "the run ended early"
        self._abandon_model_call(reason, out)
        for call_id in list(self._calls):
            self._output_error(call_id, reason, out)
        self._end_step(out)
        if error is not None:
            out.append({"type": "error", "errorText": error})
        out.append({"type": "finish", "finishReason": "error" if error else "other"})
        self._finished = True
        return out

    # -- message and steps ----------------------------------------------------------------------

    def _ensure_start(self, event: BaseEvent, out: list[UIChunk]) -> None:
        if self._started:
            return
        self._run_id = event.run_id
        metadata = {"sessionId": event.session_id, "runId": event.run_id, "agent": event.agent}
        self._start(self._message_id or event.run_id or new_id(), metadata, out)

    def _start(self, message_id: str, metadata: dict[str, Any], out: list[UIChunk]) -> None:
        self._started = True
        self._message_id = message_id
        chunk: UIChunk = {"type": "start", "messageId": message_id}
        if metadata:
            chunk["messageMetadata"] = metadata
        out.append(chunk)

    def _end_step(self, out: list[UIChunk]) -> None:
        if self._step_open:
            self._close_parts(out)
            out.append({"type": "finish-step"})
            self._step_open = False

    def _part_id(self, kind: str) -> str:
        self._counter += 1
        return f"{kind}-{self._counter}"

    # -- the model call ------------------------------------------------------------------------

    def _on_chunk(self, event: ReasoningChunkEvent, out: list[UIChunk]) -> None:
        delta, position = event.delta, event.index
        if not self._step_open:  # chunks outside a step: open one, so parts nest properly
            out.append({"type": "start-step"})
            self._step_open = True
        if isinstance(delta, TextDelta):
            if not delta.text:
                return
            part = self._text.get(position)
            if part is None:
                part = self._text[position] = self._part_id("text")
                out.append({"type": "text-start", "id": part})
            self._pieces.setdefault(position, []).append(delta.text)
            out.append({"type": "text-delta", "id": part, "delta": delta.text})
        elif isinstance(delta, ThinkingDelta):
            part = self._reasoning.get(position)
            if part is None:
                part = self._reasoning[position] = self._part_id("reasoning")
                out.append({"type": "reasoning-start", "id": part})
            if delta.signature is not None:
                self._signatures[position] = delta.signature
            if delta.text:
                out.append({"type": "reasoning-delta", "id": part, "delta": delta.text})
        else:
            self._on_tool_delta(delta, position, out)

    def _on_tool_delta(self, delta: ToolCallDelta, position: int, out: list[UIChunk]) -> None:
        streamed = self._streamed.setdefault(position, _StreamedCall())
        streamed.id = streamed.id or delta.id
        streamed.name = streamed.name or delta.name
        if streamed.announced:
            if delta.args:
                chunk = {"type": "tool-input-delta", "toolCallId": streamed.id}
                out.append(chunk | {"inputTextDelta": delta.args})
            return
        if delta.args:
            streamed.args.append(delta.args)
        # a call without a provider id gets the agent's id only in the response: until then its
        # input is held back, so the client only ever sees the id the session remembers; the
        # calls after it wait too, so tool parts keep the response's order
        earlier_waiting = any(not s.announced for p, s in self._streamed.items() if p < position)
        if streamed.id and streamed.name and not earlier_waiting:
            streamed.announced = True
            self._announce(streamed.id, streamed.name, "".join(streamed.args), out)

    def _close_parts(self, out: list[UIChunk]) -> None:
        ends = [(p, "text-end", i) for p, i in self._text.items()]
        ends += [(p, "reasoning-end", i) for p, i in self._reasoning.items()]
        for position, kind, part in sorted(ends):
            chunk: UIChunk = {"type": kind, "id": part}
            signature = self._signatures.get(position) if kind == "reasoning-end" else None
            if signature is not None:
                chunk["providerMetadata"] = {"rxagent": {"signature": signature}}
            out.append(chunk)
        self._text.clear()
        self._reasoning.clear()
        self._signatures.clear()

    def _abandon_model_call(self, reason: str, out: list[UIChunk]) -> None:
        """The model call ended without a response: close its parts and its announced calls."""
        self._close_parts(out)
        for streamed in self._streamed.values():
            if streamed.announced and streamed.id in self._calls:
                self._output_error(streamed.id, reason, out)
        self._streamed.clear()
        self._pieces.clear()

    def _on_post_reasoning(self, event: PostReasoningEvent, out: list[UIChunk]) -> None:
        self._model_finish = event.finish_reason
        self._close_parts(out)
        self._shown_text = "".join("".join(self._pieces[p]) for p in sorted(self._pieces))
        ordered = [self._streamed[p] for p in sorted(self._streamed)]
        announced = {s.id: s for s in ordered if s.announced}
        held_back = [s for s in ordered if not s.announced]
        for call in event.response.tool_calls:
            if announced.pop(call.id, None) is None:
                streamed = _take_held_back(held_back, call.id)
                self._announce(call.id, call.name, "".join(streamed.args) if streamed else "", out)
            self._input_available(call, out)
        for streamed in announced.values():
            assert streamed.id is not None  # announced calls have their id
            self._output_error(streamed.id, "a hook removed the call from the response", out)
        self._streamed.clear()
        self._pieces.clear()

    # -- tool calls ----------------------------------------------------------------------------

    def _announce(self, call_id: str, name: str, args: str, out: list[UIChunk]) -> None:
        out.append({"type": "tool-input-start", "toolCallId": call_id, "toolName": name})
        if args:
            out.append({"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": args})
        self._calls[call_id] = _NO_INPUT

    def _on_approval_requested(self, event: ApprovalRequestedEvent, out: list[UIChunk]) -> None:
        call = event.tool_call
        if call.id not in self._calls:
            self._announce(call.id, call.name, "", out)
            self._input_available(call, out)
        elif self._calls[call.id] != tool_input(call):
            self._input_available(call, out)
        request = {"type": "tool-approval-request", "approvalId": event.approval_id}
        out.append({**request, "toolCallId": call.id})
        del self._calls[call.id]  # it waits for a decision: no output in this message

    def _input_available(self, call: ToolUseBlock, out: list[UIChunk]) -> None:
        value = tool_input(call)
        out.append(
            {"type": "tool-input-available", "toolCallId": call.id, "toolName": call.name,
             "input": value}
        )  # fmt: skip
        self._calls[call.id] = value

    def _on_pre_acting(self, call: ToolUseBlock, out: list[UIChunk]) -> None:
        if call.id not in self._calls:
            self._announce(call.id, call.name, "", out)
        elif self._calls[call.id] == tool_input(call):
            return
        self._input_available(call, out)  # a hook changed the input: the client sees what runs

    def _on_post_acting(self, event: PostActingEvent, out: list[UIChunk]) -> None:
        call = event.tool_call
        if call.id not in self._calls:
            self._announce(call.id, call.name, "", out)
            self._input_available(call, out)
        result: ToolResultBlock = event.result
        if result.is_error:
            self._output_error(call.id, result.text or "the tool failed", out)
            return
        output: Any = result.output
        if not isinstance(output, str):
            output = [block.model_dump(mode="json") for block in output]
        out.append({"type": "tool-output-available", "toolCallId": call.id, "output": output})
        del self._calls[call.id]

    def _output_error(self, call_id: str, error: str, out: list[UIChunk]) -> None:
        out.append({"type": "tool-output-error", "toolCallId": call_id, "errorText": error})
        self._calls.pop(call_id, None)

    # -- the end -------------------------------------------------------------------------------

    def _on_error(self, event: ErrorEvent, out: list[UIChunk]) -> None:
        if not event.recoverable:
            self._abandon_model_call(event.message, out)
            out.append({"type": "error", "errorText": f"{event.code}: {event.message}"})
            return
        if event.source == "model":  # the stream broke; the step starts again
            self._abandon_model_call(event.message, out)
        data = {"code": str(event.code), "message": event.message, "source": event.source}
        out.append({"type": "data-error", "data": data, "transient": True})

    def _on_post_call(self, event: PostCallEvent, out: list[UIChunk]) -> None:
        result = event.result
        not_run = not_run_reason(result)
        self._abandon_model_call(not_run, out)
        reply = event.reply.text
        if reply and reply != self._shown_text:  # a reply that was not streamed as it is
            part = self._part_id("text")
            out.append({"type": "text-start", "id": part})
            out.append({"type": "text-delta", "id": part, "delta": reply})
            out.append({"type": "text-end", "id": part})
        for call_id in list(self._calls):
            self._output_error(call_id, not_run, out)
        self._end_step(out)
        out.extend(finish_chunks(result, self._model_finish))
        self._finished = True


def _take_held_back(held_back: list[_StreamedCall], call_id: str) -> _StreamedCall | None:
    """The held-back block of a call: the one with its id, else the first without an id."""
    for i, streamed in enumerate(held_back):
        if streamed.id == call_id:
            return held_back.pop(i)
    for i, streamed in enumerate(held_back):
        if streamed.id is None:
            return held_back.pop(i)
    return None


def _model_notice(event: RetryEvent | FallbackEvent) -> UIChunk:
    """The transient `data-retry` / `data-fallback` chunk of a model request tried again."""
    data: dict[str, Any]
    if isinstance(event, RetryEvent):
        data = {"attempt": event.attempt, "delaySeconds": event.delay_s}
        kind = "data-retry"
    else:
        data = {"fromModel": event.from_model, "toModel": event.to_model}
        kind = "data-fallback"
    data |= {"code": str(event.code), "message": event.message}
    return {"type": kind, "data": data, "transient": True}


def _audit_chunk(event: GuardEvent | RetrievalEvent) -> UIChunk:
    """The transient `data-guard` or `data-retrieval` chunk of a guard verdict or a retrieval."""
    if isinstance(event, RetrievalEvent):
        hits = [
            {
                "id": hit.id,
                "score": hit.score,
                "source": hit.metadata.get("source"),
                "position": hit.metadata.get("position"),
            }
            for hit in event.hits
        ]
        retrieval = {"query": event.query, "tokens": event.tokens, "hits": hits}
        retrieval["dropped"] = list(event.dropped)
        return {"type": "data-retrieval", "data": retrieval, "transient": True}
    verdict = event.verdict
    guard: dict[str, Any] = {
        "stage": event.stage,
        "action": event.action,
        "target": event.target,
        "toolCallId": event.tool_call_id,
        "flagged": verdict.flagged,
        "score": verdict.score,
        "reasons": list(verdict.reasons),
        "retryAfter": verdict.retry_after,
    }
    return {"type": "data-guard", "data": guard, "transient": True}


def _data_part(event: CustomEvent | HandoffEvent) -> UIChunk:
    """The transient data part of a custom event or a handoff."""
    if isinstance(event, HandoffEvent):
        handoff = {"from": event.from_agent, "to": event.to_agent, "reason": event.reason}
        return {"type": "data-handoff", "data": handoff, "transient": True}
    custom = {"name": event.name, "data": json_ready(event.data)}
    return {"type": "data-custom", "data": custom, "transient": True}
