"""Fake provider servers: local HTTP servers that speak each provider's exact wire format.

Each server is scripted with the same turns as `ScriptedModel`, records what it receives, and
injects faults on request (an HTTP status, an error inside the stream, a dropped connection, a
slow first byte). Use them to test code that talks HTTP to a provider, with rxagent's clients or
with the provider's own SDK.

Example:
    ```python
    import asyncio

    from rxagent.messages import Msg
    from rxagent.models import OpenAIChatModel
    from rxagent.testing import tool_call
    from rxagent.testing.providers import FakeOpenAIServer


    async def main() -> None:
        async with FakeOpenAIServer([tool_call("add", a=1, b=2), "3"]) as server:
            async with OpenAIChatModel("gpt-4o-mini", base_url=server.base_url, api_key="k") as m:
                first = await m.complete([Msg.user("1 + 2?")])
                assert first.message.tool_calls[0].name == "add"
                assert (await m.complete([Msg.user("again")])).message.text == "3"
        assert len(server.requests) == 2


    asyncio.run(main())
    ```
"""

from typing import TYPE_CHECKING, Final

from rxagent._lazy import lazy_exports

if TYPE_CHECKING:
    from rxagent.testing.providers._base import FakeProviderServer as FakeProviderServer
    from rxagent.testing.providers._base import Fault as Fault
    from rxagent.testing.providers._base import RecordedRequest as RecordedRequest
    from rxagent.testing.providers._base import Reply as Reply
    from rxagent.testing.providers._embeddings import fake_embedding as fake_embedding
    from rxagent.testing.providers.anthropic import FakeAnthropicServer as FakeAnthropicServer
    from rxagent.testing.providers.dashscope import FakeDashScopeServer as FakeDashScopeServer
    from rxagent.testing.providers.gemini import FakeGeminiServer as FakeGeminiServer
    from rxagent.testing.providers.ollama import FakeOllamaServer as FakeOllamaServer
    from rxagent.testing.providers.openai import FakeOpenAIServer as FakeOpenAIServer

_EXPORTS: Final[dict[str, str]] = {
    "FakeProviderServer": "rxagent.testing.providers._base",
    "Fault": "rxagent.testing.providers._base",
    "RecordedRequest": "rxagent.testing.providers._base",
    "Reply": "rxagent.testing.providers._base",
    "fake_embedding": "rxagent.testing.providers._embeddings",
    "FakeAnthropicServer": "rxagent.testing.providers.anthropic",
    "FakeDashScopeServer": "rxagent.testing.providers.dashscope",
    "FakeGeminiServer": "rxagent.testing.providers.gemini",
    "FakeOllamaServer": "rxagent.testing.providers.ollama",
    "FakeOpenAIServer": "rxagent.testing.providers.openai",
}

__all__ = [
    "FakeAnthropicServer",
    "FakeDashScopeServer",
    "FakeGeminiServer",
    "FakeOllamaServer",
    "FakeOpenAIServer",
    "FakeProviderServer",
    "Fault",
    "RecordedRequest",
    "Reply",
    "fake_embedding",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
