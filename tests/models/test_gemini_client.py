"""GeminiChatModel against FakeGeminiServer: URLs, auth, streams, retries, faults and agent runs."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import ReActAgent, tool
from rxagent.errors import (
    AgentRunError,
    AuthenticationError,
    ConfigurationError,
    ContextTooLongError,
    ErrorCode,
    InvalidRequestError,
    ProviderError,
    RateLimitedError,
)
from rxagent.events import (
    ErrorEvent,
    PostActingEvent,
    PostCallEvent,
    PostReasoningEvent,
    ReasoningChunkEvent,
    RetryEvent,
)
from rxagent.messages import Msg, ThinkingBlock, ToolResultBlock
from rxagent.models import GeminiChatModel, ModelOptions, Usage, resolve
from rxagent.models.base import ModelDelta, TextDelta, ThinkingDelta, ToolCallDelta
from rxagent.models.retry import RetryPolicy
from rxagent.testing import RecordingSleep, Turn, text, thinking, tool_call
from rxagent.testing.providers import FakeGeminiServer, Reply
from rxagent.testing.providers._base import ScriptItem

SIG = "c2lnbmF0dXJlLTE="
CONTEXT_MESSAGE = "The input token count (2000000) exceeds the maximum number of tokens allowed."


def gemini(server: FakeGeminiServer, **kw: Any) -> GeminiChatModel:
    kw.setdefault("api_key", "k")
    return GeminiChatModel("gemini-2.5-flash", base_url=server.base_url, **kw)


async def collect(model: GeminiChatModel, text: str = "hi") -> list[ModelDelta]:
    return [d async for d in model.stream([Msg.user(text)], [], ModelOptions())]


async def drain(model: GeminiChatModel, seen: list[ModelDelta]) -> None:
    async for delta in model.stream([Msg.user("go")], [], ModelOptions()):
        seen.append(delta)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


# -- configuration -----------------------------------------------------------------------------


def test_urls_auth_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_BASE_URL", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google")
    model = GeminiChatModel("gemini-2.5-pro")
    assert model.api_key == "from-google"
    assert model._url(stream=True) == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro"
        ":streamGenerateContent?alt=sse"
    )
    assert model._url(stream=False).endswith("/v1beta/models/gemini-2.5-pro:generateContent")
    assert model._headers["x-goog-api-key"] == "from-google"
    assert "Authorization" not in model._headers
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini")
    monkeypatch.setenv("GEMINI_BASE_URL", "http://proxy.local/gemini/v1alpha/")
    model = GeminiChatModel("tunedModels/mine")
    assert model.api_key == "from-gemini"
    assert (
        model._url(stream=False)
        == "http://proxy.local/gemini/v1alpha/tunedModels/mine:generateContent"
    )
    other = GeminiChatModel("models/gemini-2.0-flash", base_url="http://h", api_version="v1")
    assert other._url(stream=False) == "http://h/v1/models/gemini-2.0-flash:generateContent"


def test_missing_key_and_bad_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        GeminiChatModel("gemini-2.5-flash")
    with pytest.raises(ConfigurationError, match="api_version"):
        GeminiChatModel("gemini-2.5-flash", api_key="k", api_version="/")


def test_registry_prefixes() -> None:
    for prefix in ("gemini", "google"):
        model = resolve(f"{prefix}:gemini-2.5-flash", api_key="k", base_url="http://127.0.0.1:9")
        assert isinstance(model, GeminiChatModel)
        assert model.model == "gemini-2.5-flash"


# -- streaming and whole responses -----------------------------------------------------------------


async def test_stream_request_and_deltas() -> None:
    turn: Turn = [thinking("Let me think.", signature=SIG), text("Hello world")]
    async with FakeGeminiServer([turn], chunk_size=4) as server, gemini(server) as model:
        deltas = [
            d
            async for d in model.stream(
                [Msg.system("Be nice."), Msg.user("hi")], [], ModelOptions(temperature=0.2)
            )
        ]
    [request] = server.requests
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert request.query == {"alt": "sse"}
    assert request.headers["x-goog-api-key"] == "k"
    assert request.body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "Be nice."}]},
        "generationConfig": {"temperature": 0.2},
    }
    thoughts = [d for d in deltas if isinstance(d, ThinkingDelta)]
    assert "".join(d.text for d in thoughts) == "Let me think."
    assert {d.index for d in thoughts} == {0}
    assert thoughts[-1].signature == SIG
    texts = [d for d in deltas if isinstance(d, TextDelta)]
    assert len(texts) == 3
    assert {d.index for d in texts} == {1}
    assert "".join(d.text for d in texts) == "Hello world"
    assert [type(d).__name__ for d in deltas[-2:]] == ["UsageDelta", "FinishDelta"]


async def test_whole_response_and_finish_reasons() -> None:
    turns = [Reply("cut", finish="length"), Reply("", finish="content_filter")]
    async with FakeGeminiServer(turns) as server, gemini(server, stream=False) as model:
        cut = await model.complete([Msg.user("long")])
        blocked = await model.complete([Msg.user("bad")])
    assert server.requests[0].path.endswith(":generateContent")
    assert server.requests[0].query == {}
    assert (cut.message.text, cut.finish_reason) == ("cut", "length")
    assert (blocked.message.content, blocked.finish_reason) == ((), "content_filter")


@pytest.mark.parametrize("stream", [True, False])
async def test_usage_with_cached_tokens(stream: bool) -> None:
    usage = Usage(input_tokens=1200, output_tokens=40, cache_read_tokens=1024, requests=1)
    async with FakeGeminiServer([Reply("ok", usage=usage)]) as server:
        async with gemini(server, stream=stream) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.usage == usage  # reported once, not summed over the chunks


@pytest.mark.parametrize("stream", [True, False])
async def test_tool_calls_without_ids(stream: bool) -> None:
    turn = [tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)]
    async with FakeGeminiServer([turn], call_ids=False) as server:
        async with gemini(server, stream=stream) as model:
            deltas = [d async for d in model.stream([Msg.user("x")], [], ModelOptions())]
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert [(d.index, d.id, d.name) for d in calls] == [(0, None, "add"), (1, None, "add")]
    assert [d.args for d in calls] == ['{"a": 1, "b": 2}', '{"a": 3, "b": 4}']
    assert deltas[-1].type == "finish_delta"
    assert deltas[-1].reason == "tool_calls"


# -- retries and faults ----------------------------------------------------------------------------


async def test_429_is_retried_with_the_servers_wait() -> None:
    sleeps = RecordingSleep()
    async with FakeGeminiServer(["Hello after a retry."]) as server:
        server.fail(1, status=429, headers={"retry-after": "3"})
        server.fail(2, status=503)
        policy = RetryPolicy(max_retries=3, initial_delay_s=0.5, jitter=0.0, sleep=sleeps)
        async with gemini(server, max_retries=policy) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "Hello after a retry."
    assert sleeps.delays == [3.0, 1.0]
    assert len(server.requests) == 3
    assert response.usage.requests == 3


@pytest.mark.parametrize(
    ("fault", "cls"),
    [
        ({"status": 400, "message": "bad field"}, InvalidRequestError),
        ({"status": 400, "error_type": "API_KEY_INVALID"}, AuthenticationError),
        ({"status": 401, "message": "no key"}, AuthenticationError),
        ({"status": 403, "message": "forbidden"}, AuthenticationError),
        (
            {"status": 400, "error_type": "INVALID_ARGUMENT", "message": CONTEXT_MESSAGE},
            ContextTooLongError,
        ),
    ],
)
async def test_client_errors_are_never_retried(
    fault: dict[str, Any], cls: type[AgentRunError]
) -> None:
    sleeps = RecordingSleep()
    async with FakeGeminiServer(["never"]) as server:
        server.fail(1, **fault)
        async with gemini(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            with pytest.raises(cls) as info:
                await collect(model)
    assert sleeps.delays == []
    assert len(server.requests) == 1
    assert info.value.provider == "gemini"
    assert info.value.status == fault["status"]
    assert not info.value.recoverable


async def test_an_error_before_the_first_delta_is_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeGeminiServer(["second time lucky"]) as server:
        server.fail(1, mid_stream_error=0, error_type="UNAVAILABLE")
        async with gemini(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            deltas = await collect(model)
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "second time lucky"
    assert len(sleeps.delays) == 1


async def test_a_mid_stream_error_after_the_first_delta_raises_recoverable() -> None:
    sleeps = RecordingSleep()
    async with FakeGeminiServer(["a fairly long answer"], chunk_size=4) as server:
        server.fail(1, mid_stream_error=2, error_type="RESOURCE_EXHAUSTED", message="quota")
        async with gemini(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            seen: list[ModelDelta] = []
            with pytest.raises(RateLimitedError) as info:
                await drain(model, seen)
    assert [d.text for d in seen if isinstance(d, TextDelta)] == ["a fa", "irly"]
    assert info.value.recoverable
    assert info.value.provider_code == "RESOURCE_EXHAUSTED"
    assert sleeps.delays == []


async def test_a_dropped_connection_is_recoverable() -> None:
    async with FakeGeminiServer(["a fairly long answer"], chunk_size=4) as server:
        server.fail(1, drop_after=2)
        async with gemini(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await collect(model)
    assert info.value.recoverable
    assert info.value.code == ErrorCode.PROVIDER_ERROR


async def test_a_stream_without_a_finish_reason_is_recoverable() -> None:
    def no_finish(request: Any) -> Any:
        return "never finished"

    async with FakeGeminiServer(no_finish) as server:
        server.render_stream = lambda response, request: iter(  # type: ignore[method-assign]
            [b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]}}]}\r\n\r\n']
        )
        async with gemini(server, max_retries=0) as model:
            with pytest.raises(ProviderError, match="ended early") as info:
                await collect(model)
    assert info.value.recoverable


async def test_a_slow_first_byte_times_out() -> None:
    sleeps = RecordingSleep()
    async with FakeGeminiServer(["late", "on time"]) as server:
        server.fail(1, first_byte_delay=0.3)
        async with gemini(server, timeout=0.1, max_retries=RetryPolicy(sleep=sleeps)) as model:
            deltas = await collect(model)
    assert sleeps.delays  # the timeout was retried
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "late"


async def test_an_html_page_from_a_proxy_is_typed() -> None:
    async with FakeGeminiServer(["x"]) as server:
        server.fail(
            1, status=502, body=b"<html><h1>502 Bad Gateway</h1></html>", content_type="text/html"
        )
        async with gemini(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await collect(model)
    err = info.value
    assert (err.provider, err.status) == ("gemini", 502)
    assert err.excerpt is not None
    assert "502 Bad Gateway" in err.excerpt


async def test_fake_server_refuses_streams_without_alt_sse() -> None:
    async with FakeGeminiServer(["x"]) as server:
        model = gemini(server, max_retries=0)
        model._stream_url = model._stream_url.replace("?alt=sse", "")
        async with model:
            with pytest.raises(InvalidRequestError, match="alt=sse"):
                await collect(model)


# -- agent runs ------------------------------------------------------------------------------------


async def test_agent_run_with_a_tool_call_and_the_signature_echoed() -> None:
    turns: list[ScriptItem] = [
        [thinking("", signature=SIG), tool_call("add", a=2, b=3)],
        "2 + 3 = 5",
    ]
    async with FakeGeminiServer(turns, call_ids=False) as server:
        model = gemini(server)
        agent = ReActAgent("calc", "You add numbers.", model, tools=[add])
        async with model:
            events = [e async for e in agent.events("What is 2 + 3?")]
    result = events[-1]
    assert isinstance(result, PostCallEvent)
    assert result.result.ok
    assert result.reply.text == "2 + 3 = 5"
    assert result.result.tools_used == ("add",)
    [acted] = [e for e in events if isinstance(e, PostActingEvent)]
    assert acted.tool_call.id.startswith("call_")
    assert acted.result.output == "5"
    first = next(e for e in events if isinstance(e, PostReasoningEvent))
    assert first.response.blocks[0] == ThinkingBlock(thinking="", signature=SIG)
    assert any(isinstance(e, ReasoningChunkEvent) for e in events)
    # the second request sends the call back with its signature, and the result with its id
    second = server.requests[1].body
    assert second["systemInstruction"] == {"parts": [{"text": "You add numbers."}]}
    model_turn, results = second["contents"][1], second["contents"][2]
    # Gemini sent no id, so none goes back (the agent's call_<n> stays in memory only)
    assert model_turn == {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}, "thoughtSignature": SIG}
        ],
    }
    assert results == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "add", "response": {"result": "5"}}}],
    }
    decl = second["tools"][0]["functionDeclarations"][0]
    assert decl["name"] == "add"
    assert decl["parametersJsonSchema"]["required"] == ["a", "b"]


@pytest.mark.parametrize("mode", ["model", "always"])
async def test_ids_gemini_gave_are_echoed(mode: Any) -> None:
    turns: list[ScriptItem] = [
        [tool_call("add", id="g-41", a=1, b=1), tool_call("add", a=2, b=2)],
        "ok",
    ]
    async with FakeGeminiServer(turns) as server:
        model = gemini(server, call_ids=mode)
        async with model:
            result = await ReActAgent("calc", model=model, tools=[add]).call("go")
    assert result.ok
    second = server.requests[1].body["contents"]
    sent = [p["functionCall"].get("id") for p in second[1]["parts"]]
    answers = [p["functionResponse"].get("id") for p in second[2]["parts"]]
    assert sent == answers == ["g-41", "call_1_1"]  # call_<request>_<n>: the fake gave it
    assert [p["functionResponse"]["response"] for p in second[2]["parts"]] == [
        {"result": "2"},
        {"result": "4"},
    ]


def test_bad_call_ids_mode() -> None:
    with pytest.raises(ConfigurationError, match="call_ids"):
        GeminiChatModel("gemini-2.5-flash", api_key="k", call_ids="often")  # type: ignore[arg-type]


async def test_retries_appear_as_run_events() -> None:
    sleeps = RecordingSleep()
    async with FakeGeminiServer([tool_call("add", a=1, b=2), "3"]) as server:
        server.fail(1, status=429, headers={"retry-after": "2"})
        server.fail(2, status=500)
        model = gemini(
            server, max_retries=RetryPolicy(initial_delay_s=0.5, jitter=0.0, sleep=sleeps)
        )
        agent = ReActAgent("calc", model=model, tools=[add])
        async with model:
            events = [e async for e in agent.events("1 + 2?")]
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert [(r.attempt, r.delay_s, r.code) for r in retries] == [
        (2, 2.0, "RATE_LIMITED"),
        (3, 1.0, "PROVIDER_ERROR"),
    ]
    first_chunk = next(i for i, e in enumerate(events) if isinstance(e, ReasoningChunkEvent))
    assert events.index(retries[-1]) < first_chunk
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.result.ok
    assert last.reply.text == "3"
    assert sleeps.delays == [2.0, 1.0]


async def test_a_malformed_function_call_is_retried_before_content() -> None:
    sleeps = RecordingSleep()
    turns: list[ScriptItem] = [Reply("", finish="MALFORMED_FUNCTION_CALL"), "fine now"]
    async with FakeGeminiServer(turns) as server:
        model = gemini(server, max_retries=RetryPolicy(sleep=sleeps))
        agent = ReActAgent("calc", model=model, tools=[add])
        async with model:
            events = [e async for e in agent.events("go")]
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert [(r.code, r.attempt) for r in retries] == [("PROVIDER_ERROR", 2)]
    assert "MALFORMED_FUNCTION_CALL" in retries[0].message
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.reply.text == "fine now"


async def test_a_malformed_function_call_after_text_restarts_the_step() -> None:
    turns: list[ScriptItem] = [Reply("Let me call", finish="MALFORMED_FUNCTION_CALL"), "fine now"]
    async with FakeGeminiServer(turns) as server:
        model = gemini(server, max_retries=0)
        agent = ReActAgent("calc", model=model, tools=[add])
        async with model:
            events = [e async for e in agent.events("go")]
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [(e.code, e.recoverable) for e in errors] == [("PROVIDER_ERROR", True)]
    assert len([e for e in events if e.type == "pre_reasoning"]) == 2
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.reply.text == "fine now"


async def test_tool_result_images_are_sent_as_function_response_parts() -> None:
    from rxagent.messages import ImageBlock, TextBlock, ToolUseBlock

    history = [
        Msg.user("screenshot please"),
        Msg.assistant([ToolUseBlock(id="c1", name="shot", input={})]),
        Msg.tool(
            ToolResultBlock(
                id="c1",
                name="shot",
                output=(
                    TextBlock(text="here"),
                    ImageBlock(data="iVBORw0KGgo=", media_type="image/png"),
                ),
            )
        ),
    ]
    async with FakeGeminiServer(["a cat"]) as server, gemini(server) as model:
        response = await model.complete(history)
    assert response.message.text == "a cat"
    [part] = server.requests[0].body["contents"][2]["parts"]
    assert part["functionResponse"]["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    ]
    assert part["functionResponse"]["response"] == {"result": "here"}
    assert response.usage.requests == 1
