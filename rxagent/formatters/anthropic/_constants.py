"""The Anthropic formatter's constants, shared by its request, response and error modules."""

from __future__ import annotations

from typing import Final

__all__ = [
    "CACHE_TARGETS",
    "DEFAULT_API_VERSION",
    "DEFAULT_MAX_TOKENS",
    "NO_SAMPLING_API_VERSION",
    "PROVIDER",
    "REDACTED_THINKING_PREFIX",
    "SHAPE_ERRORS",
]

PROVIDER: Final = "anthropic"
DEFAULT_MAX_TOKENS: Final = 4096
"""`max_tokens` when `ModelOptions.max_output_tokens` is unset (Anthropic requires one)."""
REDACTED_THINKING_PREFIX: Final = "redacted_thinking:"
"""A `ThinkingBlock` whose signature starts with this is a `redacted_thinking` block; the rest of
the signature is its `data`. A real signature is base64 and never contains the colon."""
DEFAULT_API_VERSION: Final = "2023-06-01"
"""The `anthropic-version` header sent by default."""
NO_SAMPLING_API_VERSION: Final = "2026-10-21"
"""The first `anthropic-version` whose Messages API refuses `temperature` (and `top_p`, `top_k`)."""
CACHE_TARGETS: Final = ("system", "tools", "history")
"""The prompt-cache breakpoints `extra["cache_breakpoints"]` may name."""
SHAPE_ERRORS: Final = (KeyError, TypeError, ValueError, AttributeError, IndexError)
"""What reading a body of the wrong shape raises; each becomes a typed error at the boundary."""
