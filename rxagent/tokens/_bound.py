"""A cheap upper bound on a request's tokens, so a request that clearly fits is never tokenized.

Byte-level BPE tokenizers (tiktoken) never make a token of less than one UTF-8 byte, and the
estimate's rates (4 Latin characters, 1.5 CJK characters or one emoji per token) give fewer
tokens than bytes too. So the UTF-8 size of a message's payload, plus a generous per-message
overhead, bounds its tokens from above. Images count as a fixed cost larger than any provider's.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from rxagent.messages import (
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from rxagent.messages import Block, Msg
    from rxagent.models.base import ToolSchema

__all__ = ["message_bound", "request_bound", "tools_bound"]

MESSAGE_OVERHEAD: Final = 32
"""Tokens allowed per message for role, name and framing (providers use 3 to 10)."""
IMAGE_BOUND: Final = 4_096
"""Tokens allowed per image (providers charge at most about 1,600 for one image)."""
TOOLS_PREAMBLE_BOUND: Final = 512
"""Tokens allowed once for a request with tools (Anthropic's tool-use preamble is 346)."""


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _block_bound(block: Block) -> int:
    if isinstance(block, TextBlock):
        return _bytes(block.text)
    if isinstance(block, ThinkingBlock):
        return _bytes(block.thinking) + _bytes(block.signature or "")
    if isinstance(block, ToolUseBlock):
        args = block.raw_input if block.raw_input is not None else json.dumps(block.input)
        return _bytes(block.name) + _bytes(args) + MESSAGE_OVERHEAD
    if isinstance(block, ToolResultBlock):
        if isinstance(block.output, str):
            return _bytes(block.output) + MESSAGE_OVERHEAD
        return sum(_block_bound(b) for b in block.output) + MESSAGE_OVERHEAD
    return IMAGE_BOUND


def message_bound(msg: Msg) -> int:
    """An upper bound on a message's tokens with any provider's chat format.

    Not cached: it costs one UTF-8 encode of the payload (about 1.5 µs, even for 10 kB of text),
    less than adding a cache entry, and an entry per message kept about 0.5 kB alive for every
    message of every idle session (a run measures each message of its history once anyway).
    """
    content = msg.content
    payload = _bytes(content) if isinstance(content, str) else sum(map(_block_bound, content))
    return payload + _bytes(msg.name or "") + MESSAGE_OVERHEAD


_TOOLS: list[tuple[object, int]] = []  # the last tool list bounded: tool lists repeat per step


def tools_bound(tools: Sequence[ToolSchema]) -> int:
    """An upper bound on the tokens of tool schemas (the last list's bound is kept)."""
    if _TOOLS and _TOOLS[0][0] is tools:
        return _TOOLS[0][1]
    total = TOOLS_PREAMBLE_BOUND if tools else 0
    for tool in tools:
        total += _bytes(tool.name) + _bytes(tool.description)
        total += _bytes(json.dumps(tool.parameters)) + MESSAGE_OVERHEAD
    _TOOLS[:] = [(tools, total)]  # holding the list keeps the identity check sound
    return total


def request_bound(messages: Iterable[Msg], tools: Sequence[ToolSchema]) -> int:
    """An upper bound on the tokens of a whole request: messages, tool schemas, reply priming.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.tokens import counter_for
        from rxagent.tokens._bound import request_bound

        history = [Msg.system("Be brief."), Msg.user("漢字 and emoji 🙂")]
        assert request_bound(history, ()) >= counter_for("gpt-4o").count_messages(history)
        ```
    """
    return MESSAGE_OVERHEAD + sum(map(message_bound, messages)) + tools_bound(tools)
