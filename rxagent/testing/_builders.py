"""Build model responses for test models, and stream them as typed deltas.

A *turn* is one model response: a `str`, an assistant `Msg`, one block, or a sequence of them
(several `tool_call()`s in one turn are parallel calls). `turn_to_deltas` streams a turn the way a
provider would:

- text in `chunk_size`-character `TextDelta`s;
- thinking in `ThinkingDelta`s, the last one carrying the signature;
- each tool call as `ToolCallDelta(index, id, name, args="")`, then its argument JSON in
  `chunk_size`-character fragments;
- then a `UsageDelta` (a character-count estimate) and a `FinishDelta`.

Each delta's `index` is its block's position in the response, so `ResponseBuilder` rebuilds the same
blocks and reports the same positions.

Example:
    ```python
    from rxagent.models import ResponseBuilder
    from rxagent.testing import text, tool_call
    from rxagent.testing._builders import turn_to_deltas

    builder = ResponseBuilder()
    for delta in turn_to_deltas([text("Adding."), tool_call("add", a=1, b=2)], chunk_size=4):
        builder.add(delta)
    reply = builder.build()
    assert reply.text == "Adding." and dict(reply.tool_calls[0].input) == {"a": 1, "b": 2}
    assert builder.finish_reason == "tool_calls"
    ```
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from rxagent._cache import IdentityCache
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models.base import (
    FinishDelta,
    ModelDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageDelta,
)

__all__ = [
    "PreparedTurn",
    "Turn",
    "estimate_tokens",
    "messages_chars",
    "prepare_turn",
    "text",
    "thinking",
    "tool_call",
    "turn_to_blocks",
    "turn_to_deltas",
]

Turn: TypeAlias = str | Msg | Block | Sequence[str | Msg | Block]
"""One model response: text, an assistant `Msg`, a block, or a sequence of them.

A sequence is several blocks of one response; several `tool_call()`s in it are parallel calls.
"""

_STOP: Final = FinishDelta(reason="stop")
_TOOL_CALLS: Final = FinishDelta(reason="tool_calls")


def text(s: str) -> TextBlock:
    """Return a text block: what the model says.

    Example:
        ```python
        from rxagent.testing import text

        assert text("Hello").text == "Hello"
        ```
    """
    return TextBlock(text=s)


def thinking(s: str, signature: str | None = None) -> ThinkingBlock:
    """Return a thinking block: the model's reasoning, with an optional provider signature.

    Example:
        ```python
        from rxagent.testing import thinking

        block = thinking("The user wants a sum.", signature="sig-1")
        assert block.thinking.startswith("The user") and block.signature == "sig-1"
        ```
    """
    return ThinkingBlock(thinking=s, signature=signature)


def tool_call(name: str, /, *, id: str | None = None, **args: Any) -> ToolUseBlock:
    """Return a tool call: the model asks for tool `name` with keyword arguments `args`.

    Args:
        name: The tool's name.
        id: The call id. `None` (the default) lets the agent assign its deterministic
            `call_<n>`; the block then carries `id=""` and the streamed delta `id=None`.
        **args: The tool's arguments; they must be JSON-serializable.

    Example:
        ```python
        from rxagent.testing import tool_call

        call = tool_call("add", a=1, b=2)
        assert call.name == "add" and dict(call.input) == {"a": 1, "b": 2} and call.id == ""
        assert tool_call("echo", id="call_7", text="hi").id == "call_7"
        ```
    """
    return ToolUseBlock(id=id or "", name=name, input=args)


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    """A turn checked and streamed once, so playing it costs no validation."""

    blocks: tuple[Block, ...]
    """The response's blocks (empty text blocks dropped)."""
    deltas: tuple[ModelDelta, ...]
    """The content deltas, without usage and finish."""
    output_tokens: int
    """The estimated output tokens."""
    finish: FinishDelta
    """`"tool_calls"` when the turn calls a tool, else `"stop"`."""

    def closing(self, messages: Sequence[Msg]) -> tuple[UsageDelta, FinishDelta]:
        """Return the usage and finish deltas that end this turn as a reply to `messages`."""
        usage = Usage(
            input_tokens=estimate_tokens(messages_chars(messages)),
            output_tokens=self.output_tokens,
            requests=1,
        )
        return UsageDelta(usage=usage), self.finish


def estimate_tokens(chars: int) -> int:
    """Estimate tokens from characters, as test models do: `chars // 4 + 1`."""
    return chars // 4 + 1


def _args_json(call: ToolUseBlock) -> str:
    if call.raw_input is not None:
        return call.raw_input
    try:
        return json.dumps(call.input)  # a FrozenDict of tuples is valid JSON input
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"the arguments of tool call {call.name!r} are not JSON-serializable: {exc}"
        ) from exc


def _block_chars(block: Block) -> int:
    if isinstance(block, TextBlock):
        return len(block.text)
    if isinstance(block, ThinkingBlock):
        return len(block.thinking)
    if isinstance(block, ToolUseBlock):
        return len(block.name) + len(_args_json(block))
    if isinstance(block, ToolResultBlock):
        return len(block.text)
    return 0


def _msg_chars(msg: Msg) -> int:
    content = msg.content
    return len(content) if isinstance(content, str) else sum(map(_block_chars, content))


_cached_chars: Final = IdentityCache(_msg_chars, limit=100_000)


def messages_chars(messages: Sequence[Msg]) -> int:
    """Count the payload characters of `messages`: text, thinking, tool calls and results.

    Messages are frozen, so counts are cached per message object: a growing history costs
    O(new messages) per request, which keeps test models out of benchmark numbers.
    """
    return sum(map(_cached_chars, messages))


def _as_blocks(item: object, where: str) -> tuple[Block, ...]:
    if isinstance(item, str):
        return (TextBlock(text=item),)
    if isinstance(item, Msg):
        if item.role != "assistant":
            raise ValueError(
                f"{where}: a model response must be an assistant message, got role {item.role!r}"
            )
        return item.blocks
    if isinstance(item, TextBlock | ThinkingBlock | ToolUseBlock):
        return (item,)
    if isinstance(item, ToolResultBlock | ImageBlock):
        raise TypeError(
            f"{where}: a model response holds text, thinking and tool calls only, "
            f"not a {type(item).__name__}"
        )
    raise TypeError(
        f"{where}: expected a str, an assistant Msg, text()/thinking()/tool_call() or a list "
        f"of them, got {type(item).__name__}: {item!r}"
    )


def turn_to_blocks(turn: Turn, *, where: str = "turn") -> tuple[Block, ...]:
    """Return the blocks of one response. Empty text blocks are dropped, as a provider would.

    Args:
        turn: The response.
        where: Names the turn in error messages.

    Raises:
        TypeError: For something that is not a model response (a tool result, an image, ...).
        ValueError: For a `Msg` whose role is not `"assistant"`.

    Example:
        ```python
        from rxagent.testing import text, tool_call
        from rxagent.testing._builders import turn_to_blocks

        assert turn_to_blocks("hi") == (text("hi"),)
        assert len(turn_to_blocks(["Both:", tool_call("add", a=1, b=2), tool_call("echo")])) == 3
        ```
    """
    if isinstance(turn, str | Msg) or not isinstance(turn, Sequence):
        blocks = _as_blocks(turn, where)
    else:
        blocks = tuple(b for item in turn for b in _as_blocks(item, where))
    return tuple(b for b in blocks if not (isinstance(b, TextBlock) and not b.text))


def _chunks(s: str, size: int) -> list[str]:
    return [s[i : i + size] for i in range(0, len(s), size)]


def _block_deltas(index: int, block: Block, chunk_size: int) -> list[ModelDelta]:
    if isinstance(block, TextBlock):
        return [TextDelta(index=index, text=piece) for piece in _chunks(block.text, chunk_size)]
    if isinstance(block, ThinkingBlock):
        pieces = _chunks(block.thinking, chunk_size) or [""]
        last = len(pieces) - 1
        return [
            ThinkingDelta(index=index, text=piece, signature=block.signature if i == last else None)
            for i, piece in enumerate(pieces)
        ]
    assert isinstance(block, ToolUseBlock)  # turn_to_blocks let nothing else through
    head: ModelDelta = ToolCallDelta(index=index, id=block.id or None, name=block.name, args="")
    args = _chunks(_args_json(block), chunk_size)
    return [head, *(ToolCallDelta(index=index, args=piece) for piece in args)]


def prepare_turn(turn: Turn, chunk_size: int, *, where: str = "turn") -> PreparedTurn:
    """Check `turn` and build its content deltas once (see the module docs for the layout).

    Raises:
        ValueError: When `chunk_size` is below 1, or for a non-assistant `Msg`.
        TypeError: For something that is not a model response, or non-JSON tool arguments.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    blocks = turn_to_blocks(turn, where=where)
    deltas: list[ModelDelta] = []
    for index, block in enumerate(blocks):
        deltas.extend(_block_deltas(index, block, chunk_size))
    calls_tools = any(isinstance(b, ToolUseBlock) for b in blocks)
    return PreparedTurn(
        blocks=blocks,
        deltas=tuple(deltas),
        output_tokens=estimate_tokens(sum(map(_block_chars, blocks))),
        finish=_TOOL_CALLS if calls_tools else _STOP,
    )


def turn_to_deltas(
    turn: Turn, *, chunk_size: int = 8, messages: Sequence[Msg] = ()
) -> list[ModelDelta]:
    """Stream one response as deltas, ending with its `UsageDelta` and `FinishDelta`.

    Args:
        turn: The response.
        chunk_size: Characters per text, thinking or argument fragment.
        messages: The request the response answers; it sets the usage's input estimate.

    Example:
        ```python
        from rxagent.models import TextDelta, ToolCallDelta, UsageDelta
        from rxagent.testing import tool_call
        from rxagent.testing._builders import turn_to_deltas

        deltas = turn_to_deltas(["Hi!", tool_call("add", a=1)], chunk_size=2)
        assert deltas[:2] == [TextDelta(index=0, text="Hi"), TextDelta(index=0, text="!")]
        assert deltas[2] == ToolCallDelta(index=1, id=None, name="add", args="")
        assert "".join(d.args for d in deltas if isinstance(d, ToolCallDelta)) == '{"a": 1}'
        assert isinstance(deltas[-2], UsageDelta) and deltas[-1].reason == "tool_calls"
        ```
    """
    prepared = prepare_turn(turn, chunk_size)
    return [*prepared.deltas, *prepared.closing(messages)]
