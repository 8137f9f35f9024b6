"""The five provider clients as the client conformance suite sees them, and its shared helpers.

Each `Provider` says how to build the client against its fake server and what its wire can
carry (tool call ids, cached tokens, the frames a stream sends before content), and reads back
what a request body sent, so one scenario runs unchanged for every provider.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from rxagent.messages import Msg
from rxagent.models import (
    AnthropicChatModel,
    DashScopeChatModel,
    GeminiChatModel,
    ModelDelta,
    ModelOptions,
    OllamaChatModel,
    OpenAIChatModel,
    TextDelta,
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
SLOW: Final = 10.0
"""A first byte that does not come within any test's timeout (the fake server ends the wait
when the client goes away)."""


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
    sent_calls: Callable[[Any], list[tuple[str | None, str]]]
    """The tool calls (id, name) of the assistant turns a request body sends back, in order."""
    tool_results: Callable[[Any], list[tuple[str | None, str]]]
    """The tool results (id of the call answered, text) a request body sends back, in order."""

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


def _chat_calls(messages: Any) -> list[tuple[str | None, str]]:
    """Calls in OpenAI-style assistant messages (OpenAI, DashScope, Ollama)."""
    return [
        (call.get("id"), call["function"]["name"])
        for m in messages
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or ()
    ]


def _chat_results(messages: Any) -> list[tuple[str | None, str]]:
    """Results in OpenAI-style `tool` messages (OpenAI, DashScope, Ollama)."""
    return [(m.get("tool_call_id"), m["content"]) for m in messages if m["role"] == "tool"]


def _anthropic_parts(body: Any, kind: str) -> list[Any]:
    return [
        part
        for m in body["messages"]
        if isinstance(m["content"], list)
        for part in m["content"]
        if part["type"] == kind
    ]


def _gemini_parts(body: Any, kind: str) -> list[Any]:
    return [part[kind] for content in body["contents"] for part in content["parts"] if kind in part]


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
    sent_calls=lambda body: _chat_calls(body["messages"]),
    tool_results=lambda body: _chat_results(body["messages"]),
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
    sent_calls=lambda body: [(p["id"], p["name"]) for p in _anthropic_parts(body, "tool_use")],
    tool_results=lambda body: [
        (p["tool_use_id"], p["content"]) for p in _anthropic_parts(body, "tool_result")
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
    sent_calls=lambda body: _chat_calls(body["input"]["messages"]),
    tool_results=lambda body: _chat_results(body["input"]["messages"]),
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
    sent_calls=lambda body: [
        (call.get("id"), call["name"]) for call in _gemini_parts(body, "functionCall")
    ],
    tool_results=lambda body: [
        (answer.get("id"), answer["response"]["result"])
        for answer in _gemini_parts(body, "functionResponse")
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
    sent_calls=lambda body: _chat_calls(body["messages"]),
    tool_results=lambda body: _chat_results(body["messages"]),
)

PROVIDERS: Final = (OPENAI, ANTHROPIC, DASHSCOPE, GEMINI, OLLAMA)


async def collect(model: HTTPChatModel, seen: list[ModelDelta] | None = None) -> list[ModelDelta]:
    """The deltas of one streamed request; into `seen` as they come, when given."""
    deltas = seen if seen is not None else []
    async for delta in model.stream([Msg.user("hi")], [], ModelOptions()):
        deltas.append(delta)
    return deltas


def texts(deltas: list[ModelDelta]) -> list[str]:
    """The text fragments among `deltas`, in order."""
    return [d.text for d in deltas if isinstance(d, TextDelta)]
