"""Messages and content blocks: the one message model every provider is translated to and from.

`Msg` and every block are frozen pydantic models, discriminated by `type`, and round-trip through
JSON. Lists inside them are tuples and dicts are read-only, so a message is immutable all the way
down; change one with `model_copy(update=...)` or build a new one.

Example:
    ```python
    from rxagent import Msg, TextBlock, ToolUseBlock

    reply = Msg(
        role="assistant",
        content=[TextBlock(text="Let me add that."),
                 ToolUseBlock(id="call_1", name="add", input={"a": 1, "b": 2})],
    )
    assert reply.text == "Let me add that."
    assert reply.tool_calls[0].name == "add"
    assert Msg.model_validate_json(reply.model_dump_json()) == reply
    ```
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Final, Literal, TypeAlias

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, model_validator

from rxagent._fast import trusted

__all__ = [
    "Block",
    "FrozenDict",
    "ImageBlock",
    "Msg",
    "Role",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "freeze",
    "new_id",
    "thaw",
]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]


def _plain(cls: type[Msg], content: object, kwargs: dict[str, Any]) -> bool:
    """Whether `Msg.<role>(content)` is plain text and nothing else: nothing to validate."""
    return type(content) is str and not kwargs and cls is Msg


def new_id() -> str:
    """Return a new random id (32 hex characters)."""
    return os.urandom(16).hex()


class FrozenDict(dict[str, Any]):
    """A `dict` that refuses mutation, so events stay immutable all the way down.

    It is still a `dict`: it compares, serializes and unpacks like one. Use `thaw()` for a
    mutable deep copy.
    """

    __slots__ = ()

    def _readonly(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "this mapping is part of a frozen rxagent message or event and cannot be changed; "
            "build a new one (for example with rxagent.messages.thaw()) and pass it to "
            "event.replace(...) or model_copy(update=...)"
        )

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _readonly
    __ior__ = _readonly

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self


def freeze(value: Any) -> Any:
    """Return `value` with every dict made a `FrozenDict` and every list a tuple (deeply)."""
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Return a mutable deep copy of `value`: mappings become dicts and tuples become lists."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value


def _freeze_mapping(value: dict[str, Any]) -> dict[str, Any]:
    frozen: dict[str, Any] = freeze(value)
    return frozen


FrozenJsonDict: TypeAlias = Annotated[dict[str, Any], AfterValidator(_freeze_mapping)]

_NO_METADATA: Final = FrozenDict()


def _no_metadata() -> FrozenDict:
    """The default `Msg.metadata`: one shared empty `FrozenDict`, since it cannot change.

    A new one per message was about 3% of what a stored message holds.
    """
    return _NO_METADATA


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextBlock(_Frozen):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str
    """The text."""


class ThinkingBlock(_Frozen):
    """Model reasoning. `signature` is the provider's opaque token and is sent back unchanged."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    """The reasoning text (may be empty when the provider redacts it)."""
    signature: str | None = None
    """The provider's signature over the reasoning, round-tripped as is."""


class ToolUseBlock(_Frozen):
    """A tool call requested by the model."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    """The call id; its result carries the same id."""
    name: str
    """The tool's name."""
    input: FrozenJsonDict = Field(default_factory=FrozenDict)
    """The parsed arguments (read-only)."""
    raw_input: str | None = None
    """The argument text as the model sent it, kept when it was not a valid JSON object."""


class ImageBlock(_Frozen):
    """An image, given by `url` or by base64 `data` with its `media_type`."""

    type: Literal["image"] = "image"
    url: str | None = None
    """An http(s) or data URL."""
    data: str | None = None
    """Base64 image bytes."""
    media_type: str | None = None
    """The MIME type of `data`, for example `"image/png"`."""

    @model_validator(mode="after")
    def _one_source(self) -> ImageBlock:
        if self.url is None and self.data is None:
            raise ValueError("ImageBlock needs either url=... or data=... with media_type=...")
        if self.data is not None and self.media_type is None:
            raise ValueError("ImageBlock with data=... also needs media_type (e.g. 'image/png')")
        return self


class ToolResultBlock(_Frozen):
    """The result of one tool call; `id` matches the `ToolUseBlock` it answers.

    `output` has one of two types, never anything else: a `str`, or a tuple of content blocks.
    A tool's return value is converted to one of them (see `rxagent.tools`): a `str` stays as
    it is, a `TextBlock` / `ImageBlock` or a list of them becomes a tuple of blocks, and anything
    else (numbers, dicts, pydantic models) becomes its JSON text, so `3` is `"3"` and a dict is
    read back with `json.loads(result.output)`. A list given here is stored as a tuple. `text`
    reads the output as text in either case.

    Example:
        ```python
        from rxagent.messages import ImageBlock, TextBlock, ToolResultBlock

        plain = ToolResultBlock(id="call_1", name="add", output="5")
        chart = ToolResultBlock(
            id="call_2",
            name="chart",
            output=[TextBlock(text="Sales"), ImageBlock(url="https://example.com/c.png")],
        )
        assert isinstance(plain.output, str) and plain.text == "5"
        assert isinstance(chart.output, tuple) and chart.text == "Sales"
        ```
    """

    type: Literal["tool_result"] = "tool_result"
    id: str
    """The id of the call this answers."""
    name: str
    """The tool's name."""
    output: str | tuple[Block, ...]
    """The result: text (a tool's JSON-converted value included), or content blocks (text and
    images from tools)."""
    is_error: bool = False
    """True when the call failed; the output then says why."""

    @property
    def text(self) -> str:
        """The output as text (text blocks joined by newlines)."""
        if isinstance(self.output, str):
            return self.output
        return "\n".join(b.text for b in self.output if isinstance(b, TextBlock))


Block: TypeAlias = Annotated[
    TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ImageBlock,
    Discriminator("type"),
]
"""Any content block, discriminated by its `type`."""


class Msg(_Frozen):
    """One message of a conversation.

    `content` is a string or a tuple of blocks (a list is accepted and stored as a tuple).
    """

    role: Role
    """Who speaks: `"system"`, `"user"`, `"assistant"` or `"tool"`."""
    content: str | tuple[Block, ...]
    """The text, or the content blocks."""
    name: str | None = None
    """The speaker's name, for multi-agent conversations."""
    metadata: FrozenJsonDict = Field(default_factory=_no_metadata)
    """Free-form JSON data that travels with the message (read-only)."""
    id: str = Field(default_factory=new_id)
    """A unique id."""

    # -- constructors ----------------------------------------------------------------------

    @classmethod
    def user(cls, content: str | Iterable[Block], **kwargs: Any) -> Msg:
        """Build a user message.

        Example:
            ```python
            from rxagent import Msg

            assert Msg.user("hi").role == "user"
            ```
        """
        if _plain(cls, content, kwargs):
            return trusted(Msg, role="user", content=content)
        return cls(role="user", content=_content(content), **kwargs)

    @classmethod
    def assistant(cls, content: str | Iterable[Block], **kwargs: Any) -> Msg:
        """Build an assistant message."""
        if _plain(cls, content, kwargs):
            return trusted(Msg, role="assistant", content=content)
        return cls(role="assistant", content=_content(content), **kwargs)

    @classmethod
    def system(cls, content: str, **kwargs: Any) -> Msg:
        """Build a system message."""
        if _plain(cls, content, kwargs):
            return trusted(Msg, role="system", content=content)
        return cls(role="system", content=content, **kwargs)

    @classmethod
    def tool(cls, result: ToolResultBlock, **kwargs: Any) -> Msg:
        """Build the tool message that carries one tool result."""
        return cls(role="tool", content=(result,), **kwargs)

    # -- views -----------------------------------------------------------------------------

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The content as blocks (a string content is one `TextBlock`)."""
        if isinstance(self.content, str):
            return (TextBlock(text=self.content),) if self.content else ()
        return self.content

    @property
    def text(self) -> str:
        """The text blocks joined (no separator), or the string content."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> tuple[ToolUseBlock, ...]:
        """The tool calls in this message, in order."""
        if isinstance(self.content, str):
            return ()
        return tuple(b for b in self.content if isinstance(b, ToolUseBlock))

    @property
    def tool_results(self) -> tuple[ToolResultBlock, ...]:
        """The tool results in this message, in order."""
        if isinstance(self.content, str):
            return ()
        return tuple(b for b in self.content if isinstance(b, ToolResultBlock))


def _content(content: str | Iterable[Block]) -> str | tuple[Block, ...]:
    return content if isinstance(content, str) else tuple(content)


ToolResultBlock.model_rebuild()
