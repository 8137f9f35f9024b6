"""Strategies for JSON values, blocks, messages and conversations (see `strategies`)."""

from __future__ import annotations

import functools
import string
from typing import TYPE_CHECKING, Any, Final

from hypothesis import strategies as st

from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "DEFAULT_TOOL_NAMES",
    "Draw",
    "SearchStrategy",
    "blocks",
    "conversations",
    "hex_ids",
    "idents",
    "json_values",
    "messages",
    "messages_of",
    "name_args",
    "result_for",
    "small_ints",
    "text_blocks",
    "tool_use_blocks",
    "words",
]

SearchStrategy = st.SearchStrategy
Draw = st.DrawFn

DEFAULT_TOOL_NAMES: Final = ("add", "echo")
"""The tools scripts and conversations call by default: `add(a: int, b: int)` and
`echo(text: str)`, shipped in `rxagent.testing.tools`."""

_ROLES: Final[tuple[Role, ...]] = ("system", "user", "assistant", "tool")

# building blocks shared by the strategy modules
idents = st.tuples(
    st.sampled_from(string.ascii_lowercase),
    st.text(alphabet=string.ascii_lowercase + string.digits + "_", max_size=11),
).map("".join)
hex_ids = st.uuids().map(lambda u: u.hex)
words = st.text(min_size=1, max_size=30)
small_ints = st.integers(min_value=0, max_value=1_000_000)


def json_values() -> SearchStrategy[Any]:
    """Draw JSON values: null, booleans, numbers, strings, and lists and objects of them.

    Floats are finite, so values compare equal after a JSON round trip.

    Example:
        ```python
        import json
        from hypothesis import given, settings
        from rxagent.testing.strategies import json_values


        @settings(max_examples=10)
        @given(json_values())
        def test_json(value) -> None:
            assert json.loads(json.dumps(value)) == value


        test_json()
        ```
    """
    return _json_values()


@functools.cache
def _json_values() -> SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(10**9), max_value=10**9)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20)
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(words, inner, max_size=3),
        max_leaves=8,
    )


@functools.cache
def name_args(name: str) -> SearchStrategy[dict[str, Any]]:
    """Arguments by tool name: `add`, `echo` as `rxagent.testing.tools` take them, else `value`."""
    if name == "add":
        numbers = st.integers(min_value=-1000, max_value=1000)
        return st.fixed_dictionaries({"a": numbers, "b": numbers})
    if name == "echo":
        return st.fixed_dictionaries({"text": st.text(max_size=30)})
    return st.fixed_dictionaries({"value": json_values()})


# -- blocks and messages ---------------------------------------------------------------------


def text_blocks() -> SearchStrategy[TextBlock]:
    """Draw non-empty text blocks.

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent.testing.strategies import text_blocks


        @settings(max_examples=5)
        @given(text_blocks())
        def test_text(block) -> None:
            assert block.type == "text" and block.text


        test_text()
        ```
    """
    return _text_blocks()


@functools.cache
def _text_blocks() -> SearchStrategy[TextBlock]:
    return st.builds(TextBlock, text=words)


@functools.cache
def _thinking_blocks() -> SearchStrategy[ThinkingBlock]:
    return st.builds(ThinkingBlock, thinking=st.text(max_size=30), signature=st.none() | hex_ids)


@functools.cache
def tool_use_blocks(names: tuple[str, ...] = ()) -> SearchStrategy[ToolUseBlock]:
    if not names:  # random names with generic arguments
        return st.builds(ToolUseBlock, id=hex_ids, name=idents, input=name_args(""))
    return st.one_of(
        *(st.builds(ToolUseBlock, id=hex_ids, name=st.just(n), input=name_args(n)) for n in names)
    )


@functools.cache
def _image_blocks() -> SearchStrategy[ImageBlock]:
    by_url = st.builds(ImageBlock, url=idents.map(lambda n: f"https://example.com/{n}.png"))
    by_data = st.builds(
        ImageBlock,
        data=st.binary(min_size=1, max_size=12).map(lambda b: b.hex()),
        media_type=st.sampled_from(("image/png", "image/jpeg")),
    )
    return by_url | by_data


@functools.cache
def _tool_outputs() -> SearchStrategy[str | tuple[Block, ...]]:
    return st.text(max_size=30) | st.lists(text_blocks() | _image_blocks(), max_size=2).map(tuple)


@functools.cache
def _tool_result_blocks() -> SearchStrategy[ToolResultBlock]:
    return st.builds(
        ToolResultBlock, id=hex_ids, name=idents, output=_tool_outputs(), is_error=st.booleans()
    )


def result_for(draw: Draw, call: ToolUseBlock) -> ToolResultBlock:
    output = draw(_tool_outputs())
    return ToolResultBlock(id=call.id, name=call.name, output=output, is_error=draw(st.booleans()))


def blocks() -> SearchStrategy[Block]:
    """Draw any content block: text, thinking, tool use, tool result or image.

    Example:
        ```python
        from hypothesis import given, settings
        from pydantic import TypeAdapter
        from rxagent.messages import Block
        from rxagent.testing.strategies import blocks

        adapter = TypeAdapter(Block)


        @settings(max_examples=10)
        @given(blocks())
        def test_block_round_trip(block) -> None:
            assert adapter.validate_json(adapter.dump_json(block)) == block


        test_block_round_trip()
        ```
    """
    return st.one_of(
        text_blocks(),
        _thinking_blocks(),
        tool_use_blocks(),
        _tool_result_blocks(),
        _image_blocks(),
    )


@functools.cache
def _content(role: Role) -> SearchStrategy[str | tuple[Block, ...]]:
    if role == "system":
        return words
    if role == "tool":
        return _tool_result_blocks().map(lambda b: (b,))
    if role == "user":
        kinds: SearchStrategy[Block] = text_blocks() | _image_blocks()
    else:
        kinds = text_blocks() | _thinking_blocks() | tool_use_blocks()
    return words | st.lists(kinds, min_size=1, max_size=3).map(tuple)


def messages(roles: Sequence[Role] = _ROLES) -> SearchStrategy[Msg]:
    """Draw messages with content that suits their role.

    System messages are text; user messages text or text and images; assistant messages text or
    text, thinking and tool calls; tool messages one tool result.

    Args:
        roles: The roles to draw from.

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent.messages import Msg
        from rxagent.testing.strategies import messages


        @settings(max_examples=10)
        @given(messages(roles=["user", "assistant"]))
        def test_msg_round_trip(msg) -> None:
            assert msg.role in ("user", "assistant")
            assert Msg.model_validate_json(msg.model_dump_json()) == msg


        test_msg_round_trip()
        ```
    """
    if not roles:
        raise ValueError("messages() needs at least one role")
    return st.one_of(*(messages_of(role) for role in dict.fromkeys(roles)))


@functools.cache
def messages_of(role: Role) -> SearchStrategy[Msg]:
    return st.builds(
        Msg,
        role=st.just(role),
        content=_content(role),
        name=st.none() | idents,
        metadata=st.dictionaries(idents, json_values(), max_size=2),
        id=hex_ids,
    )


@st.composite
def _conversations(
    draw: Draw, min_turns: int, max_turns: int, tool_names: Sequence[str], system: bool | None
) -> list[Msg]:
    history: list[Msg] = []
    if draw(st.booleans()) if system is None else system:
        history.append(Msg(role="system", content=draw(words), id=draw(hex_ids)))
    calls = 0
    for _ in range(draw(st.integers(min_value=min_turns, max_value=max_turns))):
        history.append(Msg(role="user", content=draw(words), id=draw(hex_ids)))
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            batch: list[ToolUseBlock] = []
            for _ in range(draw(st.integers(min_value=1, max_value=3))):
                calls += 1
                name = draw(st.sampled_from(tool_names))
                batch.append(
                    ToolUseBlock(id=f"call_{calls}", name=name, input=draw(name_args(name)))
                )
            lead = draw(st.lists(text_blocks() | _thinking_blocks(), max_size=1))
            history.append(Msg(role="assistant", content=(*lead, *batch), id=draw(hex_ids)))
            history.extend(
                Msg(role="tool", content=(result_for(draw, call),), id=draw(hex_ids))
                for call in batch
            )
        history.append(Msg(role="assistant", content=draw(words), id=draw(hex_ids)))
    return history


def conversations(
    *,
    min_turns: int = 1,
    max_turns: int = 3,
    tool_names: Sequence[str] = DEFAULT_TOOL_NAMES,
    system: bool | None = None,
) -> SearchStrategy[list[Msg]]:
    """Draw valid histories: user and assistant turns, tool calls each followed by its result.

    Each turn is a user message, zero to two assistant messages with tool calls (each followed
    by one tool message per call, in call order), then an assistant text answer. Call ids are
    `call_1`, `call_2`, ... across the conversation, as the agent assigns them.

    Args:
        min_turns: The fewest user turns.
        max_turns: The most user turns.
        tool_names: The tools the assistant calls.
        system: Whether to start with a system message (None: sometimes).

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent.testing.strategies import conversations


        @settings(max_examples=10)
        @given(conversations())
        def test_every_call_answered(history) -> None:
            calls = {c.id for m in history for c in m.tool_calls}
            results = {r.id for m in history for r in m.tool_results}
            assert calls == results


        test_every_call_answered()
        ```
    """
    if min_turns < 0 or max_turns < min_turns:
        raise ValueError(f"need 0 <= min_turns <= max_turns, got {min_turns}, {max_turns}")
    return _conversations(min_turns, max_turns, tuple(tool_names), system)
