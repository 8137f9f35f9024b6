"""The ChatModel seam: what the loop asks of a model, and the typed deltas a model streams back.

A `ChatModel` turns `(messages, tools, options)` into an async iterator of `ModelDelta`s. Providers
(OpenAI, Anthropic, ...) and the test models in `rxagent.testing` all implement it. A non-streaming
call is the same iterator, drained; `ResponseBuilder` assembles deltas into the response `Msg`.

Delta `index` identifies a block within one response: deltas of the same kind and index extend the
same block, and blocks are ordered by their first delta.

Example:
    ```python
    from rxagent.models import ResponseBuilder, TextDelta, ToolCallDelta

    b = ResponseBuilder()
    b.add(TextDelta(index=0, text="Adding"))
    b.add(ToolCallDelta(index=1, id="call_1", name="add"))
    b.add(ToolCallDelta(index=1, args='{"a": 1, '))
    b.add(ToolCallDelta(index=1, args='"b": 2}'))
    msg = b.build()
    assert msg.text == "Adding"
    assert dict(msg.tool_calls[0].input) == {"a": 1, "b": 2}
    ```
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
    Literal,
    Protocol,
    TypeAlias,
    runtime_checkable,
)

from pydantic import BaseModel, ConfigDict, Discriminator, Field

from rxagent._fast import trusted
from rxagent.messages import (
    Block,
    FrozenDict,
    FrozenJsonDict,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    freeze,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

__all__ = [
    "ZERO_USAGE",
    "Capabilities",
    "ChatModel",
    "FinishDelta",
    "ModelDelta",
    "ModelOptions",
    "ModelResponse",
    "OutputMode",
    "ResponseBuilder",
    "SchemaDialect",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolSchema",
    "Usage",
    "UsageDelta",
    "drain",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(_Frozen):
    """Token and request counts. Usages add up with `+`.

    Example:
        ```python
        from rxagent import Usage

        total = Usage(input_tokens=10, output_tokens=2, requests=1) + Usage(input_tokens=5)
        assert total.input_tokens == 15 and total.total_tokens == 17
        ```
    """

    input_tokens: int = 0
    """Prompt tokens, including cached ones."""
    output_tokens: int = 0
    """Completion tokens, including reasoning."""
    cache_read_tokens: int = 0
    """Prompt tokens read from the provider's cache."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's cache."""
    requests: int = 0
    """Model requests."""
    cost: float = 0.0
    """What the requests cost in US dollars, from the agent's price table
    (`rxagent.interceptors.Prices`); 0 for a model the table has no price for."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if not other.requests and other == ZERO_USAGE:  # adding nothing: this one, as it is
            return self
        if not self.requests and self == ZERO_USAGE:
            return other
        return trusted(
            Usage,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            requests=self.requests + other.requests,
            cost=self.cost + other.cost,
        )


ZERO_USAGE: Final = Usage()
"""The zero usage, one shared frozen object: where a run's and a response's counting starts."""


class ToolSchema(_Frozen):
    """What the model is told about one tool."""

    name: str
    """The tool's name."""
    description: str = ""
    """What the tool does, for the model."""
    parameters: FrozenJsonDict = Field(
        default_factory=lambda: FrozenDict({"type": "object", "properties": FrozenDict()})
    )
    """The JSON schema of the arguments object."""
    strict: bool = False
    """Ask the provider to hold the arguments to `parameters` exactly (OpenAI `strict`; the
    schema must follow OpenAI's strict rules). Providers without the switch ignore it."""


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | str
"""`"auto"`, `"none"`, `"required"`, or a tool name to force that tool."""


class ModelOptions(_Frozen):
    """Per-request generation options. Unset (`None`) fields use the provider's default.

    Example:
        ```python
        from rxagent import ModelOptions

        base = ModelOptions(temperature=0.2)
        assert base.merged(ModelOptions(seed=7)) == ModelOptions(temperature=0.2, seed=7)
        ```
    """

    temperature: float | None = None
    """Sampling temperature."""
    max_output_tokens: int | None = None
    """The most tokens the reply may have."""
    tool_choice: ToolChoice | None = None
    """How the model must use tools."""
    parallel_tool_calls: bool | None = None
    """Whether the model may ask for several tools at once."""
    response_format: FrozenJsonDict | None = None
    """A provider-neutral response format, for example `{"type": "json_schema", ...}`."""
    stop: tuple[str, ...] | None = None
    """Stop sequences."""
    seed: int | None = None
    """Sampling seed."""
    extra: FrozenJsonDict = Field(default_factory=FrozenDict)
    """Provider-specific fields, passed through to the request body."""

    def merged(self, override: ModelOptions | None) -> ModelOptions:
        """Return these options with every field set in `override` taking its value."""
        if override is None:
            return self
        changes = {k: getattr(override, k) for k in override.model_fields_set}
        if "extra" in changes:
            changes["extra"] = FrozenDict({**self.extra, **override.extra})
        return self.model_copy(update=changes)


class TextDelta(_Frozen):
    """A piece of response text."""

    type: Literal["text_delta"] = "text_delta"
    index: int = 0
    """The block this piece belongs to."""
    text: str
    """The piece."""


class ThinkingDelta(_Frozen):
    """A piece of reasoning; the last piece may carry the provider's signature."""

    type: Literal["thinking_delta"] = "thinking_delta"
    index: int = 0
    """The block this piece belongs to."""
    text: str = ""
    """The piece."""
    signature: str | None = None
    """The provider's signature for the whole thinking block."""


class ToolCallDelta(_Frozen):
    """A fragment of a tool call: the first carries `id` and `name`, the rest argument JSON."""

    type: Literal["tool_call_delta"] = "tool_call_delta"
    index: int = 0
    """The block this fragment belongs to."""
    id: str | None = None
    """The call id (first fragment). `None` lets the agent assign `call_<n>`."""
    name: str | None = None
    """The tool name (first fragment)."""
    args: str = ""
    """A piece of the arguments' JSON text."""


class UsageDelta(_Frozen):
    """Token usage of this response (several add up)."""

    type: Literal["usage_delta"] = "usage_delta"
    usage: Usage
    """The usage."""


class FinishDelta(_Frozen):
    """The end of the response, with the provider's reason (`"stop"`, `"tool_calls"`, ...)."""

    type: Literal["finish_delta"] = "finish_delta"
    reason: str | None = None
    """Why the model stopped."""


ModelDelta: TypeAlias = Annotated[
    TextDelta | ThinkingDelta | ToolCallDelta | UsageDelta | FinishDelta, Discriminator("type")
]
"""One streamed piece of a model response."""


class ModelResponse(_Frozen):
    """A whole model response."""

    message: Msg
    """The assistant message."""
    usage: Usage = Field(default_factory=Usage)
    """What it cost."""
    finish_reason: str | None = None
    """Why the model stopped."""


@runtime_checkable
class ChatModel(Protocol):
    """A chat model: streams typed deltas for a conversation.

    Attributes:
        name: The model's name, for events and logs.
        context_window: The model's context window in tokens, when known.
    """

    name: str
    context_window: int | None

    def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSchema], options: ModelOptions
    ) -> AsyncIterator[ModelDelta]:
        """Stream the response to `messages` as deltas."""
        ...


OutputMode: TypeAlias = Literal["native", "tool", "prompted"]
"""How a provider is asked for structured output (see `rxagent.output`):

- `"native"`: the provider's own JSON-schema mode (`ModelOptions.response_format`);
- `"tool"`: a final-answer tool whose arguments are the output;
- `"prompted"`: the schema in the system prompt, the answer read from the reply's text.
"""

SchemaDialect: TypeAlias = Literal["json_schema", "openai_strict", "gemini"]
"""The JSON-schema rules a provider's native mode and tool parameters follow.

- `"json_schema"`: JSON Schema as pydantic writes it;
- `"openai_strict"`: OpenAI strict mode (`rxagent.output.openai_strict_schema`);
- `"gemini"`: Gemini's documented subset (`rxagent.output.gemini_schema`).
"""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a provider's wire format can carry.

    A model's formatter declares them (`formatter.capabilities`); they decide how a run asks for
    structured output. A message block the provider cannot carry is either converted by a rule
    the formatter documents, or refused with `InvalidRequestError` naming the block and the fix.
    It is never dropped silently.

    Example:
        ```python
        from dataclasses import replace

        from rxagent.models.base import Capabilities

        plain = Capabilities()
        assert plain.supports_tools and plain.preferred_output == "prompted"
        assert not replace(plain, supports_tools=False).supports_tools
        ```
    """

    supports_tools: bool = True
    """Tool schemas and tool calls."""
    supports_vision: bool = False
    """Image blocks in user messages."""
    supports_json_schema: bool = False
    """A native structured-output mode that takes a JSON schema."""
    supports_tool_choice_required: bool = False
    """Forcing the model to call some tool (`tool_choice="required"`)."""
    supports_named_tool_choice: bool = False
    """Forcing the model to call one named tool (`tool_choice="<name>"`)."""
    supports_strict_tools: bool = False
    """Tool arguments held to the tool's schema exactly (`ToolSchema.strict`)."""
    supports_json_schema_with_tools: bool = False
    """The native structured-output mode works in a request that also offers tools."""
    json_schema_dialect: SchemaDialect = "json_schema"
    """The JSON-schema rules of the native mode and of tool parameters."""
    preferred_output: OutputMode = "prompted"
    """The structured-output strategy `output_strategy="auto"` starts from."""


_BlockKey: TypeAlias = tuple[str, int]


class ResponseBuilder:
    """Assembles streamed deltas into one assistant `Msg`.

    `add()` returns the position of the block the delta belongs to (blocks are ordered by first
    appearance), which the loop reports as `ReasoningChunkEvent.index`.

    Args:
        id_factory: Makes an id for a tool call that arrives without one.
    """

    __slots__ = ("_blocks", "_id_factory", "_positions", "finish_reason", "usage")

    @property
    def started(self) -> bool:
        """True once a content delta (text, thinking or tool call) has arrived."""
        return bool(self._blocks)

    def __init__(self, id_factory: Callable[[], str] | None = None) -> None:
        self._positions: dict[_BlockKey, int] = {}
        self._blocks: list[list[Any]] = []  # [kind, text-or-args, id, name, signature]
        self._id_factory = id_factory
        self.usage = ZERO_USAGE
        self.finish_reason: str | None = None

    def _slot(self, kind: str, index: int) -> tuple[int, list[Any]]:
        key = (kind, index)
        pos = self._positions.get(key)
        if pos is None:
            pos = self._positions[key] = len(self._blocks)
            self._blocks.append([kind, [], None, None, None])
        return pos, self._blocks[pos]

    def add(self, delta: ModelDelta) -> int:
        """Add one delta; return its block position (-1 for usage and finish deltas)."""
        if isinstance(delta, TextDelta):
            pos, slot = self._slot("text", delta.index)
            slot[1].append(delta.text)
            return pos
        if isinstance(delta, ToolCallDelta):
            pos, slot = self._slot("tool", delta.index)
            if delta.id:
                slot[2] = delta.id
            if delta.name:
                slot[3] = delta.name
            if delta.args:
                slot[1].append(delta.args)
            return pos
        if isinstance(delta, ThinkingDelta):
            pos, slot = self._slot("thinking", delta.index)
            slot[1].append(delta.text)
            if delta.signature is not None:
                slot[4] = delta.signature
            return pos
        if isinstance(delta, UsageDelta):
            self.usage = self.usage + delta.usage
        else:
            self.finish_reason = delta.reason
        return -1

    def build(self, **msg_fields: Any) -> Msg:
        """Return the assembled assistant message."""
        blocks: list[Block] = []
        for position, (kind, parts, call_id, name, signature) in enumerate(self._blocks):
            if kind == "text":
                text = "".join(parts)
                if text:
                    blocks.append(trusted(TextBlock, text=text))
            elif kind == "thinking":
                blocks.append(trusted(ThinkingBlock, thinking="".join(parts), signature=signature))
            else:
                blocks.append(self._tool_block("".join(parts), call_id, name, position))
        if msg_fields:
            return Msg(role="assistant", content=tuple(blocks), **msg_fields)
        return trusted(Msg, role="assistant", content=tuple(blocks))

    def _tool_block(
        self, args: str, call_id: str | None, name: str | None, position: int
    ) -> ToolUseBlock:
        if not call_id:  # made up, unique within the response: `call_<its block's number>`
            call_id = self._id_factory() if self._id_factory else f"call_{position + 1}"
        raw: str | None = None
        parsed: Any
        try:
            parsed = json.loads(args) if args.strip() else {}
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            parsed, raw = {}, args
        return trusted(
            ToolUseBlock, id=call_id, name=name or "", input=freeze(parsed), raw_input=raw
        )

    def response(self, **msg_fields: Any) -> ModelResponse:
        """Return the assembled `ModelResponse`."""
        return ModelResponse(
            message=self.build(**msg_fields), usage=self.usage, finish_reason=self.finish_reason
        )


async def drain(
    model: ChatModel,
    messages: Sequence[Msg],
    tools: Sequence[ToolSchema] = (),
    options: ModelOptions | None = None,
) -> ModelResponse:
    """Call `model` and wait for its whole response: its stream, drained and closed.

    For a model call outside a run's loop (a hook's summary, a guard's judge); the loop itself
    streams the deltas to subscribers as they come.

    Example:
        ```python
        import asyncio

        from rxagent.messages import Msg
        from rxagent.models.base import drain
        from rxagent.testing import ScriptedModel

        response = asyncio.run(drain(ScriptedModel(["Four."]), [Msg.user("2 + 2?")]))
        assert response.message.text == "Four." and response.usage.requests == 1
        ```
    """
    builder = ResponseBuilder()
    stream = model.stream(list(messages), list(tools), options or ModelOptions())
    try:
        async for delta in stream:
            builder.add(delta)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    return builder.response()
