"""Built-in hooks.

- `ContextWindow` keeps every model request within the model's context window (PreReasoning,
  priority 1000). Its algorithm is the pure function `trim_to_budget`.
- `context_window_for` looks up the context window of a known model.
"""

from rxagent.hooks.builtin._summary import MAX_CACHED_SUMMARIES as MAX_CACHED_SUMMARIES
from rxagent.hooks.builtin._summary import SUMMARIES_KEY as SUMMARIES_KEY
from rxagent.hooks.builtin._summary import SUMMARY_HEADER as SUMMARY_HEADER
from rxagent.hooks.builtin._summary import SUMMARY_INSTRUCTIONS as SUMMARY_INSTRUCTIONS
from rxagent.hooks.builtin._summary import SUMMARY_MESSAGE_TOKENS as SUMMARY_MESSAGE_TOKENS
from rxagent.hooks.builtin._trim import TrimResult as TrimResult
from rxagent.hooks.builtin._trim import trim_to_budget as trim_to_budget
from rxagent.hooks.builtin._truncate import MIN_TOOL_RESULT_TOKENS as MIN_TOOL_RESULT_TOKENS
from rxagent.hooks.builtin._truncate import TRUNCATION_MARKER as TRUNCATION_MARKER
from rxagent.hooks.builtin._windows import DEFAULT_CONTEXT_WINDOW as DEFAULT_CONTEXT_WINDOW
from rxagent.hooks.builtin._windows import KNOWN_CONTEXT_WINDOWS as KNOWN_CONTEXT_WINDOWS
from rxagent.hooks.builtin._windows import context_window_for as context_window_for
from rxagent.hooks.builtin.context import DEFAULT_MAX_OUTPUT_TOKENS as DEFAULT_MAX_OUTPUT_TOKENS
from rxagent.hooks.builtin.context import SUMMARY_MAX_TOKENS as SUMMARY_MAX_TOKENS
from rxagent.hooks.builtin.context import ContextWindow as ContextWindow
from rxagent.hooks.builtin.context import Strategy as Strategy

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "KNOWN_CONTEXT_WINDOWS",
    "MAX_CACHED_SUMMARIES",
    "MIN_TOOL_RESULT_TOKENS",
    "SUMMARIES_KEY",
    "SUMMARY_HEADER",
    "SUMMARY_INSTRUCTIONS",
    "SUMMARY_MAX_TOKENS",
    "SUMMARY_MESSAGE_TOKENS",
    "TRUNCATION_MARKER",
    "ContextWindow",
    "Strategy",
    "TrimResult",
    "context_window_for",
    "trim_to_budget",
]
