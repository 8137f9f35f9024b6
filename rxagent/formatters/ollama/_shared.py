"""Shared by requests, responses and `parse_request`: provider name, error prefix, tool calls."""

from __future__ import annotations

import json
from typing import Any, Final

from rxagent.messages import ToolUseBlock, freeze

__all__ = ["PROVIDER", "TOOL_ERROR_PREFIX", "tool_use_block"]

PROVIDER: Final = "ollama"

TOOL_ERROR_PREFIX: Final = "Error: "
"""How the content of an `is_error` tool result starts (Ollama has no error flag)."""


def tool_use_block(call_id: str, name: str, args: Any) -> ToolUseBlock:
    """The block of one wire tool call, whose arguments are an object or a JSON string.

    A string that holds a JSON object is parsed into `input`; any other string is kept as
    `raw_input`, so a call with broken arguments still reaches the agent (which reports it).
    """
    if not isinstance(args, str):
        return ToolUseBlock(id=call_id, name=name, input=args)
    try:
        parsed = json.loads(args) if args.strip() else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return ToolUseBlock(id=call_id, name=name, input=freeze(parsed))
    return ToolUseBlock(id=call_id, name=name, raw_input=args)
