"""The typed events of a run.

Every event is a frozen pydantic model discriminated by `type`, with the common fields `run_id`,
`session_id`, `agent`, `path`, `step`, `seq`, `timestamp`, `modified_by` and `changes`.
`EVENT_ADAPTER` serializes and parses any of them.

| event | modifiable fields |
|---|---|
| `PreCallEvent` | none (hooks may `raise Reject`) |
| `PreReasoningEvent` | `messages`, `tools`, `options` |
| `ReasoningChunkEvent` | none |
| `PostReasoningEvent` | `response`, `stop` |
| `PreActingEvent` | `tool_call` (its `input` only) |
| `ActingChunkEvent` | none |
| `PostActingEvent` | `result`, `stop` |
| `PostCallEvent` | `reply` |
| `ErrorEvent` | none |
| `OutputChunkEvent` | none |
| `ApprovalRequestedEvent` | none |
| `GuardEvent` | none |
| `FallbackEvent` | none |
| `RetrievalEvent` | none |
| `HandoffEvent` | none |

Example:
    ```python
    from rxagent import EVENT_ADAPTER, Msg, PreCallEvent

    ev = PreCallEvent(input=[Msg.user("hi")], agent="demo", seq=0)
    again = EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(ev))
    assert again == ev and isinstance(again.input, tuple)
    ```
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Discriminator, Field, JsonValue, TypeAdapter

from rxagent._fast import construct
from rxagent.errors import ErrorCode, HookContractError
from rxagent.messages import Msg, ToolResultBlock, ToolUseBlock
from rxagent.models.base import ModelOptions, TextDelta, ThinkingDelta, ToolCallDelta, ToolSchema
from rxagent.models.base import Usage as Usage
from rxagent.result import AgentResult

if TYPE_CHECKING:
    import builtins

__all__ = [
    "EVENT_ADAPTER",
    "EVENT_TYPES",
    "ActingChunkEvent",
    "AgentEvent",
    "ApprovalRequestedEvent",
    "BaseEvent",
    "ChunkDelta",
    "ContextTrimmedEvent",
    "CustomEvent",
    "ErrorEvent",
    "FallbackEvent",
    "FieldChange",
    "GuardAction",
    "GuardEvent",
    "GuardTarget",
    "GuardVerdict",
    "HandoffEvent",
    "Hit",
    "InterruptedEvent",
    "OutputChunkEvent",
    "PostActingEvent",
    "PostCallEvent",
    "PostReasoningEvent",
    "PreActingEvent",
    "PreCallEvent",
    "PreReasoningEvent",
    "ReasoningChunkEvent",
    "RetrievalEvent",
    "RetryEvent",
]

E = TypeVar("E", bound="BaseEvent")


class FieldChange(BaseModel):
    """One field a hook changed in an event: who, which field, and its value before the change.

    Recorded in `BaseEvent.changes` when the agent runs with `record_changes=True`. `before` is
    the field's value dumped in JSON mode (what `EVENT_ADAPTER` writes for that field), so a
    client diffs it against the same field of the event's JSON; `undo_changes()` rebuilds the
    event as it was before the hooks.

    Example:
        ```python
        from rxagent import EVENT_ADAPTER, FieldChange, Msg, PreReasoningEvent

        change = FieldChange(by="rules", field="messages", before=[])
        ev = PreReasoningEvent(messages=[Msg.system("Be brief.")], changes=(change,))
        assert EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(ev)).changes == (change,)
        assert ev.undo_changes().messages == ()
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    by: str
    """The name of the hook that changed the field (as in `modified_by`)."""
    field: str
    """The field it changed (one of the event type's `MODIFIABLE`)."""
    before: JsonValue
    """The field's value before this hook changed it, in JSON mode."""


class BaseEvent(BaseModel):
    """Fields every event has. Subclass it (with a `type` literal) for your own events."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    MODIFIABLE: ClassVar[frozenset[str]] = frozenset()
    """The fields hooks may change with `replace()`."""

    type: str
    """The discriminator: the event name in snake_case, without "event"."""
    run_id: str = ""
    """The run this event belongs to."""
    session_id: str = ""
    """The session the run belongs to."""
    agent: str = ""
    """The name of the agent that emitted it."""
    path: tuple[str, ...] = ()
    """Agent names from the outermost agent to this one (for nested agents)."""
    step: int = 0
    """The ReAct iteration, starting at 0."""
    seq: int = 0
    """Position in the run; strictly increasing in emission order."""
    timestamp: float = Field(default_factory=time.time)
    """When it was emitted (seconds since the epoch)."""
    modified_by: tuple[str, ...] = ()
    """Names of the hooks that returned a changed event, in order."""
    changes: tuple[FieldChange, ...] = ()
    """What hooks changed, one `FieldChange` per changed field, in order; empty unless the agent
    records changes (`ReActAgent(record_changes=True)`)."""

    @classmethod
    def _construct(cls: builtins.type[E], fields: dict[str, Any]) -> E:
        """Build an event from trusted, complete field values without validation (hot path)."""
        return construct(cls, fields)

    @classmethod
    def is_modifiable(cls) -> bool:
        """True when hooks may change this event type."""
        return bool(cls.MODIFIABLE)

    def undo_changes(self: E) -> E:
        """Return the event with its recorded `changes` undone, newest first.

        Each changed field gets back its value from before the first hook changed it;
        `modified_by` and `changes` are empty. Exact when the agent recorded changes while the
        hooks ran (a change made with recording off left no trace to undo).

        Example:
            ```python
            import asyncio
            from rxagent import HookChain, Msg, PreReasoningEvent, hook


            @hook(PreReasoningEvent)
            def add_rules(event: PreReasoningEvent) -> PreReasoningEvent:
                return event.replace(messages=[*event.messages, Msg.system("Be brief.")])


            chain = HookChain([add_rules], record_changes=True)
            sent = PreReasoningEvent(messages=[Msg.user("hi")])
            out = asyncio.run(chain.dispatch(sent))
            assert [(c.by, c.field) for c in out.changes] == [("add_rules", "messages")]
            assert out.undo_changes() == sent
            ```
        """
        data = self.model_dump(mode="json")
        for change in reversed(self.changes):
            data[change.field] = change.before
        data["modified_by"] = ()
        data["changes"] = ()
        return type(self).model_validate(data)

    def replace(self: E, **changes: Any) -> E:
        """Return a copy with the given modifiable fields changed (validated).

        Raises:
            HookContractError: When a field is not modifiable for this event type.

        Example:
            ```python
            from rxagent import Msg, PreReasoningEvent

            ev = PreReasoningEvent(messages=[Msg.user("hi")])
            ev2 = ev.replace(messages=[Msg.system("Be brief."), *ev.messages])
            assert len(ev2.messages) == 2 and len(ev.messages) == 1
            ```
        """
        fixed = changes.keys() - self.MODIFIABLE
        if fixed:
            allowed = ", ".join(sorted(self.MODIFIABLE)) or "none: it is a notification"
            field = sorted(fixed)[0]
            raise HookContractError(
                f"{type(self).__name__}.{field} cannot be changed by a hook; "
                f"modifiable fields are: {allowed}",
                field=field,
            )
        data = dict(self.__dict__)
        data.update(changes)
        return self.model_validate(data)


class PreCallEvent(BaseEvent):
    """The first event of a run: the new input. Hooks may `raise Reject` to refuse the run."""

    type: Literal["pre_call"] = "pre_call"
    input: tuple[Msg, ...]
    """The messages this run adds to the session."""


class PreReasoningEvent(BaseEvent):
    """Before each model call. Hooks may change the request's messages, tools and options.

    Changes apply to this request only; they never change memory.
    """

    MODIFIABLE: ClassVar[frozenset[str]] = frozenset({"messages", "tools", "options"})
    type: Literal["pre_reasoning"] = "pre_reasoning"
    messages: tuple[Msg, ...]
    """The messages sent to the model (system prompt first)."""
    tools: tuple[ToolSchema, ...] = ()
    """The tools offered (empty once tools are withdrawn)."""
    options: ModelOptions = Field(default_factory=ModelOptions)
    """The generation options."""
    model: str = ""
    """The model's name."""


ChunkDelta: TypeAlias = Annotated[TextDelta | ThinkingDelta | ToolCallDelta, Discriminator("type")]
"""The delta a `ReasoningChunkEvent` carries."""


class ReasoningChunkEvent(BaseEvent):
    """One streamed piece of the model's response."""

    type: Literal["reasoning_chunk"] = "reasoning_chunk"
    delta: ChunkDelta
    """The piece: text, thinking or a tool-call fragment."""
    index: int = 0
    """The position of the block it belongs to in the response."""


class OutputChunkEvent(BaseEvent):
    """The structured output so far, while its JSON streams (runs with an `output_type`).

    It comes right after the `ReasoningChunkEvent` that moved the output on, inside that model
    call's Pre/PostReasoning pair, and only when the partial output changed. The JSON is the
    reply's text (native and prompted strategies) or the final-answer tool's arguments (tool
    strategy). The validated output is `AgentResult.output`; a partial output is a preview.
    """

    type: Literal["output_chunk"] = "output_chunk"
    partial: Any = None
    """The output so far, an instance of `rxagent.output.partial_type(output_type)`: the same
    shape with every field optional, `None` until its value starts; strings grow and lists
    gain items as the JSON arrives. Serialized, it is the JSON of those fields."""
    index: int = 0
    """The position of the block the JSON streams in (as `ReasoningChunkEvent.index`)."""


class PostReasoningEvent(BaseEvent):
    """After each model call. Hooks may change the response, or set `stop` to end the run.

    The (possibly changed) response is what memory stores and what the rest of the run sees.
    """

    MODIFIABLE: ClassVar[frozenset[str]] = frozenset({"response", "stop"})
    type: Literal["post_reasoning"] = "post_reasoning"
    response: Msg
    """The assistant message."""
    usage: Usage = Field(default_factory=Usage)
    """What the call cost."""
    stop: bool = False
    """Set by a hook to end the run after this step (its tool calls are not run)."""
    finish_reason: str | None = None
    """Why the model stopped, as its provider said: `"stop"`, `"length"` (the output-token
    limit cut the reply), `"tool_calls"`, `"content_filter"`, `"pause"`; None when unknown."""


class PreActingEvent(BaseEvent):
    """Before each tool call. Hooks may change the call's `input` or `raise Reject`."""

    MODIFIABLE: ClassVar[frozenset[str]] = frozenset({"tool_call"})
    type: Literal["pre_acting"] = "pre_acting"
    tool_call: ToolUseBlock
    """The call; only its `input` may change."""


class ActingChunkEvent(BaseEvent):
    """Progress reported by a running tool."""

    type: Literal["acting_chunk"] = "acting_chunk"
    tool_call_id: str
    """The call reporting progress."""
    tool_name: str = ""
    """The tool's name."""
    chunk: Any = None
    """The progress value (JSON-ready)."""


class PostActingEvent(BaseEvent):
    """After each tool call. Hooks may change the result, or set `stop` to end the run."""

    MODIFIABLE: ClassVar[frozenset[str]] = frozenset({"result", "stop"})
    type: Literal["post_acting"] = "post_acting"
    tool_call: ToolUseBlock
    """The call as executed."""
    result: ToolResultBlock
    """Its result; the changed result is what memory stores."""
    stop: bool = False
    """Set by a hook to end the run after this step."""
    duration_ms: float = 0.0
    """How long the tool ran."""


class PostCallEvent(BaseEvent):
    """The last event of a run, always, even on failure. Hooks may change the reply."""

    MODIFIABLE: ClassVar[frozenset[str]] = frozenset({"reply"})
    type: Literal["post_call"] = "post_call"
    reply: Msg
    """The final reply."""
    result: AgentResult[Any]
    """The run's result (its `reply` equals `reply`)."""


class ErrorEvent(BaseEvent):
    """A failure where it happens: model, tool, hook or guard."""

    type: Literal["error"] = "error"
    code: ErrorCode
    """What kind of failure."""
    message: str
    """What went wrong."""
    source: str = "agent"
    """`"model"`, `"tool:<name>"`, `"hook:<name>"`, `"guard:<stage>"`, `"output"` (an answer
    that did not validate as the `output_type`) or `"agent"`."""
    recoverable: bool = False
    """True when the run goes on after it."""
    exception: str | None = None
    """The type name of the underlying exception."""


class InterruptedEvent(BaseEvent):
    """The run noticed an interrupt (or its `request_timeout`) at a checkpoint."""

    type: Literal["interrupted"] = "interrupted"
    checkpoint: Literal["before_reasoning", "chunk", "before_acting", "after_tool"]
    """Where it was noticed."""
    reason: str = ""
    """The interrupt message's text, if any."""


class ContextTrimmedEvent(BaseEvent):
    """The request was cut to fit the model's context window (memory is untouched)."""

    type: Literal["context_trimmed"] = "context_trimmed"
    dropped: tuple[str, ...] = ()
    """Ids of the messages left out of this request."""
    truncated: tuple[str, ...] = ()
    """Ids of the messages whose tool results were shortened, with a visible marker."""
    summarized: tuple[str, ...] = ()
    """Ids of the messages replaced by a summary (the `summarize` strategy)."""
    tokens_before: int
    """Tokens of the messages after the system prompt, before trimming (compare with `budget`)."""
    tokens_after: int
    """Tokens of the messages after the system prompt, after trimming."""
    budget: int
    """The tokens the messages may use: window - system - tools - max output."""
    strategy: Literal["drop", "summarize"] = "drop"
    """How dropped history was handled."""


class RetryEvent(BaseEvent):
    """A model request is retried after a transient failure."""

    type: Literal["retry"] = "retry"
    attempt: int
    """The attempt about to start (2 for the first retry)."""
    delay_s: float
    """The wait before it."""
    code: ErrorCode
    """The failure being retried."""
    message: str = ""
    """What failed."""


class ApprovalRequestedEvent(BaseEvent):
    """A tool call waits for a human: the run parks after it (see `ReActAgent.approve`).

    It comes outside any model or tool call: after the PostActing of the batch's calls that
    needed no approval, and before the PostCall, whose `result.pending_approvals` holds its
    `approval_id`. The call has no PreActing yet; it gets one in the run that resumes it.
    """

    type: Literal["approval_requested"] = "approval_requested"
    approval_id: str
    """The id to pass to `agent.approve()` or `agent.reject()`."""
    tool_call: ToolUseBlock
    """The call waiting for approval; these arguments are the ones executed once approved."""
    reason: str = ""
    """Why approval is asked: the tool needs it, a PreActing hook changed the approved
    arguments, or the session is still waiting for a decision."""


GuardTarget: TypeAlias = Literal["input", "tool_call", "tool_result", "output", "retrieved"]
"""What a guard stage looked at: the run's input, a tool call about to run, a tool's result,
the final reply, or a chunk a `Retrieve` hook found (screened by the stages that check tool
results)."""

GuardAction: TypeAlias = Literal["pass", "flag", "reject", "redact", "quarantine", "replace"]
"""What came of a verdict: nothing (`pass`), a record for audit (`flag`), the run or the tool
call refused (`reject`), the text rewritten (`redact` for the reply, `quarantine` and `replace`
for a tool result)."""


class GuardVerdict(BaseModel):
    """The decision of one guard stage on one text, with the evidence for it.

    Example:
        ```python
        from rxagent.guards import GuardVerdict

        verdict = GuardVerdict(flagged=True, score=0.97, reasons=("role tag",), stage="injection")
        assert verdict.flagged and "role tag" in verdict.reasons
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    flagged: bool
    """Whether the stage judges the text unsafe (its score reached the stage's threshold)."""
    score: float = Field(ge=0.0, le=1.0)
    """How strongly the stage's evidence points to an unsafe text, from 0 to 1."""
    reasons: tuple[str, ...] = ()
    """The features that fired, by name (for example `"override phrase (en)"`)."""
    stage: str
    """The stage that decided (`"injection"` for `InjectionDetector`)."""
    retry_after: float | None = Field(default=None, ge=0.0)
    """Seconds until the same request would pass (a rate limit); None when waiting won't help."""


class GuardEvent(BaseEvent):
    """A guard stage's verdict on the input, a tool call, a tool result or the reply.

    Verdicts that flag (and, with `GuardPipeline(report_passes=True)`, passes too) are
    published. A rejected input comes right after PreCall, before an
    `ErrorEvent(source="guard:<stage>", code=GUARD_REJECTED)` and the PostCall; a tool-call or
    tool-result verdict comes between that call's PreActing and PostActing; a `retrieved`
    verdict comes right after the PreReasoning whose request the chunk was for.
    """

    type: Literal["guard"] = "guard"
    stage: str
    """The stage's name (`"rate_limit"`, `"injection"`, ...)."""
    verdict: GuardVerdict
    """What the stage decided, with its score and reasons."""
    action: GuardAction
    """What came of it."""
    target: GuardTarget = "input"
    """What the stage looked at."""
    tool_call_id: str | None = None
    """The call, for a `tool_call` or `tool_result` verdict."""


class FallbackEvent(BaseEvent):
    """A model request failed before its first delta and moves on to the next model.

    Emitted by `rxagent.interceptors.FallbackModels` inside the step's model call, between its
    PreReasoning and PostReasoning; the request to `to_model` follows.
    """

    type: Literal["fallback"] = "fallback"
    from_model: str
    """The model that failed."""
    to_model: str
    """The model tried next."""
    code: ErrorCode
    """The failure that moved the request on."""
    message: str = ""
    """What failed."""


class Hit(BaseModel):
    """One chunk a knowledge base found for a query (`rxagent.rag.KnowledgeBase.search`).

    Example:
        ```python
        from rxagent.rag import Hit

        hit = Hit(id="guide", text="Run pip install rxagent.", score=0.8, metadata={"position": 0})
        assert hit.metadata["position"] == 0 and hit.vector is None
        ```
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """The id of the document the chunk belongs to (as `add_texts` returned it)."""
    text: str
    """The chunk's text."""
    score: float
    """How well it matches: higher is better; comparable only within one search."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """The document's metadata given to `add_texts`, plus `source` (the metadata's `source`, or
    the document id), `position` (the chunk's index in its document) and `heading` (the title of
    its section, when it has one)."""
    vector: tuple[float, ...] | None = Field(default=None, exclude=True, repr=False)
    """The chunk's dense vector, when the search asked for it (rerankers use it); never
    serialized."""


class RetrievalEvent(BaseEvent):
    """A `Retrieve` hook searched a knowledge base and added what it found to the request.

    It comes right after the `PreReasoningEvent` whose request carries the
    `[Retrieved Context]` section. The section is part of that request only, never of memory.
    """

    type: Literal["retrieval"] = "retrieval"
    query: str
    """What was searched for (the current user message)."""
    hits: tuple[Hit, ...] = ()
    """The chunks in the section, numbered from 1 in this order."""
    tokens: int = 0
    """The tokens of the section."""
    dropped: tuple[str, ...] = ()
    """Ids of documents whose chunks were found but left out: over the token budget, or
    rejected by a guard."""


class HandoffEvent(BaseEvent):
    """The conversation moves from one agent to another (a `handoff(...)` tool was called).

    It comes inside the Acting span of the handoff tool's call, before the target's nested run
    (`path == (*path, to_agent)`); the session then stays with the target, so the next user
    message goes to it, until it hands the conversation back.
    """

    type: Literal["handoff"] = "handoff"
    from_agent: str
    """The agent that hands the conversation over."""
    to_agent: str
    """The agent that takes it."""
    reason: str = ""
    """Why, as the model put it (the handoff tool's `reason` argument), or why it was routed."""
    tool_call_id: str | None = None
    """The handoff tool's call, inside whose Pre/PostActing the switch happens."""


class CustomEvent(BaseEvent):
    """An event a hook or tool emits with `current_run().emit(CustomEvent, name=..., data=...)`."""

    type: Literal["custom"] = "custom"
    name: str
    """What it is."""
    data: Any = None
    """Its JSON-ready payload."""


AgentEvent: TypeAlias = Annotated[
    PreCallEvent
    | PreReasoningEvent
    | ReasoningChunkEvent
    | PostReasoningEvent
    | PreActingEvent
    | ActingChunkEvent
    | PostActingEvent
    | PostCallEvent
    | ErrorEvent
    | InterruptedEvent
    | ContextTrimmedEvent
    | RetryEvent
    | CustomEvent
    | OutputChunkEvent
    | ApprovalRequestedEvent
    | GuardEvent
    | FallbackEvent
    | RetrievalEvent
    | HandoffEvent,
    Discriminator("type"),
]
"""Any built-in event, discriminated by `type`."""

EVENT_ADAPTER: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)
"""Serializes and parses every built-in event (`dump_json`, `validate_json`, `validate_python`)."""

EVENT_TYPES: tuple[type[BaseEvent], ...] = (
    PreCallEvent,
    PreReasoningEvent,
    ReasoningChunkEvent,
    PostReasoningEvent,
    PreActingEvent,
    ActingChunkEvent,
    PostActingEvent,
    PostCallEvent,
    ErrorEvent,
    InterruptedEvent,
    ContextTrimmedEvent,
    RetryEvent,
    CustomEvent,
    OutputChunkEvent,
    ApprovalRequestedEvent,
    GuardEvent,
    FallbackEvent,
    RetrievalEvent,
    HandoffEvent,
)
"""Every built-in event class."""
