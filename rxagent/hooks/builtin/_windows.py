"""Context windows of known models, by name.

`context_window_for(name)` looks a model up by the longest known prefix of its name, after
removing a provider prefix (`"openai:gpt-4o"`, `"openai/gpt-4o"`) and an Ollama tag
(`"llama3.1:8b"`). Unknown names give None; `ContextWindow` then uses
`DEFAULT_CONTEXT_WINDOW` and logs a warning once per name.

| name prefix | context window (tokens) |
|---|---|
| `gpt-5` | 400,000 |
| `gpt-4.1` (and `-mini`, `-nano`) | 1,047,576 |
| `gpt-4o` (and `-mini`), `gpt-4-turbo`, `chatgpt-4o` | 128,000 |
| `gpt-4-32k` | 32,768 |
| `gpt-4` | 8,192 |
| `gpt-3.5-turbo` | 16,385 |
| `o1`, `o3`, `o3-mini`, `o4-mini` | 200,000 |
| `o1-mini` | 128,000 |
| `claude-` (every Claude model) | 200,000 |
| `gemini-1.5-pro` | 2,097,152 |
| `gemini-1.5`, `gemini-2` (2.0 and 2.5) | 1,048,576 |
| `qwen` (DashScope: `qwen-plus`, `qwen-turbo`, `qwen2.5-*`, `qwen3-*`) | 131,072 |
| `qwen-max` | 32,768 |
| `llama3` (Ollama `llama3`, `llama3:8b`) | 8,192 |
| `llama3.1`, `llama3.2`, `llama3.3`, `llama-3.1`, `llama-3.2`, `llama-3.3` | 131,072 |
| `mistral-large`, `mistral-small`, `mistral-nemo` | 131,072 / 32,768 / 131,072 |
| `deepseek-chat`, `deepseek-reasoner` | 65,536 |
"""

from __future__ import annotations

import functools
from types import MappingProxyType
from typing import Final

__all__ = ["DEFAULT_CONTEXT_WINDOW", "KNOWN_CONTEXT_WINDOWS", "context_window_for"]

DEFAULT_CONTEXT_WINDOW: Final = 128_000
"""The window assumed for a model that neither declares one nor is in the table."""

KNOWN_CONTEXT_WINDOWS: Final = MappingProxyType(
    {
        "gpt-5": 400_000,
        "gpt-4.1": 1_047_576,
        "gpt-4o": 128_000,
        "chatgpt-4o": 128_000,
        "gpt-4-turbo": 128_000,
        "gpt-4-1106": 128_000,
        "gpt-4-0125": 128_000,
        "gpt-4-32k": 32_768,
        "gpt-4": 8_192,
        "gpt-3.5-turbo": 16_385,
        "o1": 200_000,
        "o1-mini": 128_000,
        "o3": 200_000,
        "o4-mini": 200_000,
        "claude-": 200_000,
        "gemini-1.5-pro": 2_097_152,
        "gemini-1.5": 1_048_576,
        "gemini-2": 1_048_576,
        "qwen": 131_072,
        "qwen-max": 32_768,
        "llama3": 8_192,
        "llama3.1": 131_072,
        "llama3.2": 131_072,
        "llama3.3": 131_072,
        "llama-3.1": 131_072,
        "llama-3.2": 131_072,
        "llama-3.3": 131_072,
        "mistral-large": 131_072,
        "mistral-small": 32_768,
        "mistral-nemo": 131_072,
        "deepseek-chat": 65_536,
        "deepseek-reasoner": 65_536,
    }
)
"""Known context windows, by model-name prefix (the longest matching prefix wins)."""

_PROVIDERS: Final = frozenset(
    {"openai", "azure", "anthropic", "gemini", "google", "dashscope", "ollama", "deepseek"}
)
_BY_LENGTH: Final = tuple(sorted(KNOWN_CONTEXT_WINDOWS.items(), key=lambda kv: -len(kv[0])))


def _base_name(model_name: str) -> str:
    name = model_name.strip().lower()
    provider, colon, rest = name.partition(":")
    if colon and provider in _PROVIDERS:
        name = rest
    name = name.rpartition("/")[2]
    return name.partition(":")[0]  # an Ollama tag such as "llama3:8b"


@functools.lru_cache(maxsize=1024)
def context_window_for(model_name: str) -> int | None:
    """Return the context window of a known model, or None for an unknown name.

    Args:
        model_name: The model's name, optionally with a provider prefix or an Ollama tag.

    Example:
        ```python
        from rxagent.hooks.builtin import context_window_for

        assert context_window_for("gpt-4o-mini") == 128_000
        assert context_window_for("openai:gpt-4.1") == 1_047_576
        assert context_window_for("claude-sonnet-4-5") == 200_000
        assert context_window_for("llama3:8b") == 8_192
        assert context_window_for("my-local-model") is None
        ```
    """
    name = _base_name(model_name)
    for prefix, window in _BY_LENGTH:
        if name.startswith(prefix):
            return window
    return None
