"""`"provider:model"` strings → model clients.

`resolve("openai:gpt-4o-mini")` returns an `OpenAIChatModel`; `ReActAgent(model="...")` accepts the
same strings. Keyword arguments go to the client's constructor. Azure reads its endpoint from
`AZURE_OPENAI_ENDPOINT`; Gemini also reads `GOOGLE_API_KEY`. Register your own provider with
`register("myprovider", factory)`.

| prefix | client | API key from | base URL from |
|---|---|---|---|
| `openai` | `OpenAIChatModel` | `OPENAI_API_KEY` | `OPENAI_BASE_URL` |
| `azure` | `AzureOpenAIChatModel` (name = deployment) | `AZURE_OPENAI_API_KEY` | |
| `deepseek` | `OpenAIChatModel` on `https://api.deepseek.com` | `DEEPSEEK_API_KEY` | |
| `anthropic` | `AnthropicChatModel` | `ANTHROPIC_API_KEY` | `ANTHROPIC_BASE_URL` |
| `dashscope` | `DashScopeChatModel` | `DASHSCOPE_API_KEY` | `DASHSCOPE_BASE_URL` |
| `gemini`, `google` | `GeminiChatModel` | `GEMINI_API_KEY` | `GEMINI_BASE_URL` |
| `ollama` | `OllamaChatModel` | none | `OLLAMA_HOST` |

Example:
    ```python
    from rxagent.models import OpenAIChatModel, resolve

    model = resolve("openai:gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    assert isinstance(model, OpenAIChatModel) and model.model == "gpt-4o-mini"
    ```
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.models.base import ChatModel

__all__ = ["providers", "register", "resolve"]

_BUILTIN: Final[dict[str, tuple[str, str, dict[str, Any]]]] = {
    "openai": ("rxagent.models.openai", "OpenAIChatModel", {}),
    "azure": ("rxagent.models.openai", "AzureOpenAIChatModel", {}),
    "deepseek": (
        "rxagent.models.openai",
        "OpenAIChatModel",
        {"base_url": "https://api.deepseek.com", "_key_env": "DEEPSEEK_API_KEY"},
    ),
    "anthropic": ("rxagent.models.anthropic", "AnthropicChatModel", {}),
    "dashscope": ("rxagent.models.dashscope", "DashScopeChatModel", {}),
    "gemini": ("rxagent.models.gemini", "GeminiChatModel", {}),
    "google": ("rxagent.models.gemini", "GeminiChatModel", {}),
    "ollama": ("rxagent.models.ollama", "OllamaChatModel", {}),
}

_lock = threading.Lock()
_custom: dict[str, Callable[..., ChatModel]] = {}


def register(prefix: str, factory: Callable[..., ChatModel], *, replace: bool = False) -> None:
    """Make `"prefix:name"` strings resolve through `factory(name, **kwargs)`.

    Raises:
        ConfigurationError: The prefix is empty, has a colon, or is taken (unless `replace`).

    Example:
        ```python
        from rxagent.models import register, resolve
        from rxagent.testing import ScriptedModel

        register("canned", lambda name, **kw: ScriptedModel(["Hi!"], name=name), replace=True)
        assert resolve("canned:greeter").name == "greeter"
        ```
    """
    if not isinstance(prefix, str) or not prefix or ":" in prefix:
        raise ConfigurationError(
            f"register(prefix=...) takes a name without a colon, like 'myprovider', got {prefix!r}"
        )
    if not callable(factory):
        raise ConfigurationError(f"register({prefix!r}, factory=...) needs a callable")
    with _lock:
        if not replace and (prefix in _custom or prefix in _BUILTIN):
            raise ConfigurationError(
                f"the provider prefix {prefix!r} is already registered; pass replace=True to "
                "override it"
            )
        _custom[prefix] = factory


def providers() -> list[str]:
    """Return every provider prefix `resolve` knows, sorted."""
    return sorted({*_BUILTIN, *_custom})


def resolve(spec: str, **kwargs: Any) -> ChatModel:
    """Return the model client for `"provider:model-name"`.

    Args:
        spec: The provider prefix and the provider's model name, separated by the first colon
            (`"ollama:llama3.2:3b"` is provider `ollama`, model `llama3.2:3b`).
        **kwargs: Passed to the client (`base_url`, `api_key`, `timeout`, `max_retries`, ...).

    Raises:
        ConfigurationError: No prefix, an unknown prefix, or a missing API key.
    """
    if not isinstance(spec, str):
        raise ConfigurationError(f"a model string must be a str, got {type(spec).__name__}")
    prefix, colon, name = spec.partition(":")
    if not colon or not prefix or not name:
        raise ConfigurationError(
            f"model={spec!r} needs the form 'provider:model-name', for example "
            f"'openai:gpt-4o-mini'; known providers: {', '.join(providers())}"
        )
    with _lock:
        custom = _custom.get(prefix)
    if custom is not None:
        return custom(name, **kwargs)
    builtin = _BUILTIN.get(prefix)
    if builtin is None:
        raise ConfigurationError(
            f"model={spec!r}: unknown provider {prefix!r}; known providers: "
            f"{', '.join(providers())} (add one with rxagent.models.register)"
        )
    module, attr, preset = builtin
    options = {k: v for k, v in preset.items() if not k.startswith("_")}
    key_env = preset.get("_key_env")
    if key_env and "api_key" not in kwargs and os.environ.get(key_env):
        options["api_key"] = os.environ[key_env]
    elif key_env and "api_key" not in kwargs:
        raise ConfigurationError(
            f"model={spec!r} needs an API key: pass api_key=... or set {key_env}"
        )
    options.update(kwargs)
    cls = getattr(importlib.import_module(module), attr)
    model: ChatModel = cls(name, **options)
    return model
