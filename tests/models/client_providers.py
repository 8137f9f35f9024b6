"""The five provider clients as the client conformance suite sees them.

Each `Provider` says how to build the client against its fake server and what its wire can
carry (tool call ids, cached tokens, the frames a stream sends before content), and reads back
what a request body sent, so one scenario runs unchanged for every provider.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from rxagent.models import (
    AnthropicChatModel,
    DashScopeChatModel,
    GeminiChatModel,
    OllamaChatModel,
    OpenAIChatModel,
    Usage,
)
from rxagent.models._http import HTTPChatModel
from rxagent.testing.providers import (
    FakeAnthropicServer,
    FakeDashScopeServer,
    FakeGeminiServer,
    FakeOllamaServer,
    FakeOpenAIServer,
    FakeProviderServer,
    Fault,
)
from rxagent.testing.providers._base import ScriptItem

KEY: Final = "sk-test-0123456789abcdef"
"""The API key every client is built with (long enough to be redacted wherever it shows)."""


@dataclass(frozen=True)
class Provider:
    """One provider's client, its fake server, and the facts a scenario needs about its wire."""

    name: str
    client: type[HTTPChatModel]
    fake: type[FakeProviderServer]
    model: str
    preamble: int
    """Frames a stream sends before its first content (role chunk, `message_start`, ...)."""
    usage: Usage
    """A usage with every count the wire carries (cached tokens where the provider has them)."""
    call_ids: bool
    """Whether the wire carries tool call ids (by the fake server's default)."""
    context_too_long: Fault
    """The provider's own answer to a prompt longer than the context window."""
    rate_limit_code: str | None
    """The provider code of a 429 (the fake server's default error type for it)."""
    key_header: Callable[[str], tuple[str, str]]
    """The header, name and value, that carries an API key."""
    tool_names: Callable[[Any], list[str]]
    """The tools a request body declares."""
    tool_results: Callable[[Any], list[str]]
    """The tool results a request body sends back, in order."""

    def server(self, turns: Sequence[ScriptItem] = (), **kwargs: Any) -> FakeProviderServer:
        """The fake server, scripted with `turns` (`chunk_size=...` and faults as usual)."""
        return self.fake(turns, **kwargs)

    def build(self, server: FakeProviderServer, **kwargs: Any) -> HTTPChatModel:
        """The client, pointed at `server`, with `KEY` unless `api_key` is given."""
        kwargs.setdefault("api_key", KEY)
        return self.client(self.model, base_url=server.base_url, **kwargs)


def _bearer(key: str) -> tuple[str, str]:
    return "Authorization", f"Bearer {key}"


def _function_names(tools: Any) -> list[str]:
    return [t["function"]["name"] for t in tools]


def _role_tool(messages: Any) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


OPENAI: Final = Provider(
    name="openai",
    client=OpenAIChatModel,
    fake=FakeOpenAIServer,
    model="gpt-4o-mini",
    preamble=1,
    usage=Usage(input_tokens=40, output_tokens=9, cache_read_tokens=32, requests=1),
    call_ids=True,
    context_too_long=Fault(
        status=400,
        error_type="context_length_exceeded",
        message="This model's maximum context length is 128000 tokens.",
    ),
    rate_limit_code="rate_limit_exceeded",
    key_header=_bearer,
    tool_names=lambda body: _function_names(body["tools"]),
    tool_results=lambda body: _role_tool(body["messages"]),
)

ANTHROPIC: Final = Provider(
    name="anthropic",
    client=AnthropicChatModel,
    fake=FakeAnthropicServer,
    model="claude-test",
    preamble=3,
    usage=Usage(
        input_tokens=1200,
        output_tokens=40,
        cache_read_tokens=1000,
        cache_write_tokens=150,
        requests=1,
    ),
    call_ids=True,
    context_too_long=Fault(status=413, message="Request exceeds the maximum allowed size."),
    rate_limit_code="rate_limit_error",
    key_header=lambda key: ("x-api-key", key),
    tool_names=lambda body: [t["name"] for t in body["tools"]],
    tool_results=lambda body: [
        part["content"]
        for m in body["messages"]
        if isinstance(m["content"], list)
        for part in m["content"]
        if part["type"] == "tool_result"
    ],
)

DASHSCOPE: Final = Provider(
    name="dashscope",
    client=DashScopeChatModel,
    fake=FakeDashScopeServer,
    model="qwen-plus",
    preamble=0,
    usage=Usage(
        input_tokens=120,
        output_tokens=6,
        cache_read_tokens=100,
        cache_write_tokens=20,
        requests=1,
    ),
    call_ids=True,
    context_too_long=Fault(
        status=400,
        error_type="InvalidParameter",
        message="Range of input length should be [1, 30720]",
    ),
    rate_limit_code="Throttling.RateQuota",
    key_header=_bearer,
    tool_names=lambda body: _function_names(body["parameters"]["tools"]),
    tool_results=lambda body: _role_tool(body["input"]["messages"]),
)

GEMINI: Final = Provider(
    name="gemini",
    client=GeminiChatModel,
    fake=FakeGeminiServer,
    model="gemini-2.5-flash",
    preamble=0,
    usage=Usage(input_tokens=1200, output_tokens=40, cache_read_tokens=1024, requests=1),
    call_ids=True,
    context_too_long=Fault(
        status=400,
        error_type="INVALID_ARGUMENT",
        message="The input token count (2000000) exceeds the maximum number of tokens allowed.",
    ),
    rate_limit_code="RESOURCE_EXHAUSTED",
    key_header=lambda key: ("x-goog-api-key", key),
    tool_names=lambda body: [d["name"] for t in body["tools"] for d in t["functionDeclarations"]],
    tool_results=lambda body: [
        part["functionResponse"]["response"]["result"]
        for content in body["contents"]
        for part in content["parts"]
        if "functionResponse" in part
    ],
)

OLLAMA: Final = Provider(
    name="ollama",
    client=OllamaChatModel,
    fake=FakeOllamaServer,
    model="llama3.2",
    preamble=0,
    usage=Usage(input_tokens=31, output_tokens=7, requests=1),
    call_ids=False,
    context_too_long=Fault(status=400, message="input length exceeds maximum context length"),
    rate_limit_code=None,
    key_header=_bearer,
    tool_names=lambda body: _function_names(body["tools"]),
    tool_results=lambda body: _role_tool(body["messages"]),
)

PROVIDERS: Final = (OPENAI, ANTHROPIC, DASHSCOPE, GEMINI, OLLAMA)
