"""`"provider:model"` strings → model clients.

`resolve("openai:gpt-4o-mini")` returns an `OpenAIChatModel`; `ReActAgent(model="...")` accepts the
same strings. Keyword arguments go to the client's constructor; a mapping argument is merged over
the provider's preset of that name (the `capabilities` of `deepseek`). Azure reads its endpoint from
`AZURE_OPENAI_ENDPOINT`; Gemini also reads `GOOGLE_API_KEY`. Register your own provider with
`register("myprovider", factory)`.

| prefix | client | API key from | base URL from |
|---|---|---|---|
| `openai` | `OpenAIChatModel` | `OPENAI_API_KEY` | `OPENAI_BASE_URL` |
| `azure` | `AzureOpenAIChatModel` (name = deployment) | `AZURE_OPENAI_API_KEY` | |
| `deepseek` | `OpenAIChatModel` (see below) | `DEEPSEEK_API_KEY` | `DEEPSEEK_BASE_URL` |
| `anthropic` | `AnthropicChatModel` | `ANTHROPIC_API_KEY` | `ANTHROPIC_BASE_URL` |
| `dashscope` | `DashScopeChatModel` | `DASHSCOPE_API_KEY` | `DASHSCOPE_BASE_URL` |
| `gemini`, `google` | `GeminiChatModel` | `GEMINI_API_KEY` | `GEMINI_BASE_URL` |
| `ollama` | `OllamaChatModel` | none | `OLLAMA_HOST` |

`deepseek` clients post to `https://api.deepseek.com` unless `DEEPSEEK_BASE_URL` or `base_url=`
says otherwise. DeepSeek speaks OpenAI's wire format without its `json_schema` response format, and
holds tools to a strict schema only on its beta endpoint, so its clients are built with
`capabilities=DEEPSEEK_CAPABILITIES`: structured output (`output_strategy="auto"`) uses the
final-answer tool there.

Example:
    ```python
    from rxagent.models import OpenAIChatModel, resolve

    model = resolve("openai:gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    assert isinstance(model, OpenAIChatModel) and model.model == "gpt-4o-mini"
    assert model.formatter.capabilities.supports_json_schema

    deepseek = resolve("deepseek:deepseek-chat", api_key="sk-test")
    assert deepseek.base_url == "https://api.deepseek.com"
    assert not deepseek.formatter.capabilities.supports_json_schema
    ```
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.models.base import ChatModel

__all__ = ["DEEPSEEK_CAPABILITIES", "providers", "register", "resolve"]

DEEPSEEK_CAPABILITIES: Final[Mapping[str, object]] = MappingProxyType(
    {
        "supports_json_schema": False,
        "supports_json_schema_with_tools": False,
        "supports_strict_tools": False,
        "preferred_output": "tool",
    }
)
"""How DeepSeek's API differs from OpenAI's (the `capabilities` of `"deepseek:..."` clients).

It has `response_format` `json_object` but not `json_schema`, and `"strict": true` tools only on
its beta endpoint (`https://api.deepseek.com/beta`), so structured output uses a non-strict
final-answer tool, with the tool choice forced.
"""

_BUILTIN: Final[dict[str, tuple[str, str, dict[str, Any]]]] = {
    "openai": ("rxagent.models.openai", "OpenAIChatModel", {}),
    "azure": ("rxagent.models.openai", "AzureOpenAIChatModel", {}),
    "deepseek": (
        "rxagent.models.openai",
        "OpenAIChatModel",
        {
            "base_url": "https://api.deepseek.com",
            "capabilities": DEEPSEEK_CAPABILITIES,
            "_key_env": "DEEPSEEK_API_KEY",
            "_base_url_env": "DEEPSEEK_BASE_URL",
        },
    ),
    "anthropic": ("rxagent.models.anthropic", "AnthropicChatModel", {}),
    "dashscope": ("rxagent.models.dashscope", "DashScopeChatModel", {}),
    "gemini": ("rxagent.models.gemini", "GeminiChatModel", {}),
    "google": ("rxagent.models.gemini", "GeminiChatModel", {}),
    "ollama": ("rxagent.models.ollama", "OllamaChatModel", {}),
}

_PROVIDER_BY_NAME: Final = (
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "gemini"),
    ("qwen", "dashscope"),
    ("deepseek", "deepseek"),
    ("llama", "ollama"),
    ("mistral", "ollama"),
    ("phi", "ollama"),
    ("gemma", "ollama"),
)
"""Model-name starts and their likely provider, for the example in an error message."""

_lock = threading.Lock()
_custom: dict[str, Callable[..., ChatModel]] = {}


def _example_for(spec: str) -> str:
    """A `"provider:name"` example for a spec without a provider: the likely one, else OpenAI's."""
    name = spec.strip(":")
    lowered = name.lower()
    for start, provider in _PROVIDER_BY_NAME:
        if lowered.startswith(start):
            return f"{provider}:{name}"
    return "openai:gpt-4o-mini"


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
        **kwargs: Passed to the client (`base_url`, `api_key`, `timeout`, `max_retries`,
            `capabilities`, ...); a mapping is merged over the provider's preset mapping.

    Raises:
        ConfigurationError: No prefix (the message suggests one for the name), an unknown prefix
            (with the closest known one, when there is one), or a missing API key.

    Example:
        ```python
        from rxagent.errors import ConfigurationError
        from rxagent.models import resolve

        try:
            resolve("opneai:gpt-4o-mini")
        except ConfigurationError as exc:
            assert "unknown provider 'opneai'; did you mean 'openai'?" in str(exc)
        else:
            raise AssertionError("a misspelt provider was accepted")
        ```
    """
    if not isinstance(spec, str):
        raise ConfigurationError(f"a model string must be a str, got {type(spec).__name__}")
    prefix, colon, name = spec.partition(":")
    if not colon or not prefix or not name:
        raise ConfigurationError(
            f"model={spec!r} needs the form 'provider:model-name', for example "
            f"{_example_for(spec)!r}; known providers: {', '.join(providers())}"
        )
    with _lock:
        custom = _custom.get(prefix)
    if custom is not None:
        return custom(name, **kwargs)
    builtin = _BUILTIN.get(prefix)
    if builtin is None:
        known = providers()
        import difflib  # only for this message: not imported by every run

        close = difflib.get_close_matches(prefix.lower(), known, n=1, cutoff=0.7)
        guess = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigurationError(
            f"model={spec!r}: unknown provider {prefix!r}; {guess}known providers: "
            f"{', '.join(known)} (add one with rxagent.models.register)"
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
    base_url_env = preset.get("_base_url_env")
    if base_url_env and os.environ.get(base_url_env):
        options["base_url"] = os.environ[base_url_env]
    for key, value in kwargs.items():
        default = options.get(key)
        if isinstance(default, Mapping) and isinstance(value, Mapping):
            value = {**default, **value}  # e.g. one more capability over the preset's
        options[key] = value
    cls = getattr(importlib.import_module(module), attr)
    model: ChatModel = cls(name, **options)
    return model
